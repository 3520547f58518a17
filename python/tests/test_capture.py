"""Every kind of model cuvil.compile takes, checked against PyTorch."""

import io

import numpy as np
import onnx
import pytest
import torch

import cuvil


class SmallNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return self.fc(y.mean(dim=(2, 3)))


def make_net():
    torch.manual_seed(0)
    net = SmallNet()
    # Non-trivial running statistics, so that eval mode matters.
    net.bn.running_mean.uniform_(-1, 1)
    net.bn.running_var.uniform_(0.5, 2)
    return net


SIGNATURE = [("x", torch.float32, (2, 3, 8, 8))]


def check(compiled, reference, *inputs):
    with torch.no_grad():
        expected = reference(*inputs)
    result = compiled(*inputs)
    scale = float(expected.abs().max())
    assert float((result - expected).abs().max()) <= 1e-4 * scale


def test_nn_module_is_compiled_in_eval_mode_and_left_as_it_was():
    net = make_net()
    net.train()
    compiled = cuvil.compile(net, SIGNATURE)
    assert net.training and net.bn.training  # the caller's mode is kept
    net.eval()
    check(compiled, net, torch.randn(2, 3, 8, 8))


def test_weights_are_frozen_at_compile_time():
    net = make_net().eval()
    compiled = cuvil.compile(net, SIGNATURE)
    x = torch.randn(2, 3, 8, 8)
    before = compiled(x)
    with torch.no_grad():
        net.fc.weight.add_(1.0)
    torch.testing.assert_close(compiled(x), before)


def test_script_module():
    net = make_net().eval()
    check(cuvil.compile(torch.jit.script(net), SIGNATURE), net,
          torch.randn(2, 3, 8, 8))


def test_traced_module():
    net = make_net().eval()
    traced = torch.jit.trace(net, torch.randn(2, 3, 8, 8))
    check(cuvil.compile(traced, SIGNATURE), net, torch.randn(2, 3, 8, 8))


def test_script_function():
    @torch.jit.script
    def gelu_mlp(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x @ w).sum(dim=1)

    compiled = cuvil.compile(gelu_mlp, [("x", torch.float32, (4, 16)),
                                        ("w", torch.float32, (16, 8))])
    check(compiled, gelu_mlp, torch.randn(4, 16), torch.randn(16, 8))


def test_plain_callable_with_closure_constants():
    weight = torch.randn(6, 6)

    def layer(x):
        return torch.tanh(x @ weight + 1.0)

    check(cuvil.compile(layer, [("x", torch.float32, (3, 6))]), layer,
          torch.randn(3, 6))


def test_integer_inputs():
    table = torch.randn(10, 4)

    def lookup(indices):
        return torch.nn.functional.embedding(indices, table)

    compiled = cuvil.compile(lookup, [("i", torch.int64, (5,))])
    indices = torch.tensor([0, 3, 9, 3, 1])
    torch.testing.assert_close(compiled(indices), lookup(indices))


def test_onnx_file_and_model_proto(tmp_path):
    net = make_net().eval()
    path = tmp_path / "net.onnx"
    torch.onnx.export(net, torch.randn(2, 3, 8, 8), str(path),
                      input_names=["x"], output_names=["y"], opset_version=14)
    x = torch.randn(2, 3, 8, 8)
    from_path = cuvil.compile(str(path))
    from_pathlib = cuvil.compile(path)
    from_proto = cuvil.compile(onnx.load(str(path)))
    for compiled in (from_path, from_pathlib, from_proto):
        assert compiled.inputs[0]["name"] == "x"
        assert compiled.outputs[0]["name"] == "y"
        check(compiled, net, x)


def test_onnx_with_signature_sets_a_dynamic_batch(tmp_path):
    net = make_net().eval()
    buffer = io.BytesIO()
    torch.onnx.export(net, torch.randn(2, 3, 8, 8), buffer, input_names=["x"],
                      opset_version=14)
    model = onnx.load_from_string(buffer.getvalue())
    compiled = cuvil.compile(model, [("x", np.float32, (-1, 3, 8, 8))],
                             max_batch=4)
    assert compiled.inputs[0]["shape"] == (None, 3, 8, 8)
    assert compiled.max_batch == 4
    for batch in (1, 3, 4):
        check(compiled, net, torch.randn(batch, 3, 8, 8))


@pytest.mark.parametrize("none_or_minus_one", [None, -1])
def test_dynamic_batch_from_python(none_or_minus_one):
    net = make_net().eval()
    compiled = cuvil.compile(
        net, [("x", torch.float32, (none_or_minus_one, 3, 8, 8))], max_batch=5)
    assert compiled.max_batch == 5
    for batch in (1, 2, 5):
        check(compiled, net, torch.randn(batch, 3, 8, 8))


def test_sample_parallel_batches_give_the_same_bits():
    # Chunks of samples on two threads (sample_parallel="on") against the
    # whole batch on one thread and each sample alone, bit for bit.
    net = make_net().eval()
    signature = [("x", torch.float32, (None, 3, 8, 8))]
    chunked = cuvil.compile(net, signature, max_batch=8, threads=2,
                            sample_parallel="on")
    whole = cuvil.compile(net, signature, max_batch=8, sample_parallel="off")
    assert chunked.metadata["sample_parallel"]
    assert not whole.metadata["sample_parallel"]
    x = torch.randn(5, 3, 8, 8)
    result = chunked(x)
    assert torch.equal(result, whole(x))
    for i in range(5):
        assert torch.equal(chunked(x[i:i + 1])[0], result[i])
    check(chunked, net, x)


def test_kernel_report_names_each_layer_and_why():
    # compiled.kernel_report: cuvilc --explain-kernels' lines, the first the
    # target, then each kernel call at the user's source line.
    compiled = cuvil.compile(make_net().eval(), SIGNATURE)
    report = compiled.kernel_report
    assert report[0].startswith("kernels for ")
    convs = [line for line in report if ": conv2d -> " in line]
    assert len(convs) == 1, report
    # The 3x3 convolution on 3 channels: im2col (too few channels and too
    # small an image for Winograd), its batch norm folded, relu fused.
    assert "test_capture.py" in convs[0], convs[0]
    assert "+ [relu]" in convs[0] and " -- " in convs[0], convs[0]
    assert any("matmul" in line or "gemm" in line for line in report), report
    # A model loaded from a file has no report.
    assert cuvil.CompiledModule(compiled._path).kernel_report == []


def test_sample_parallel_errors():
    with pytest.raises(ValueError, match="sample_parallel must be"):
        cuvil.compile(make_net().eval(), SIGNATURE, sample_parallel=True)
    # A softmax over the batch mixes the samples: "on" names the op.
    with pytest.raises(cuvil.CompileError, match="cannot run the batch's "
                       "samples apart") as error:
        cuvil.compile(lambda x: torch.softmax(x, 0),
                      [("x", torch.float32, (None, 4))], max_batch=4,
                      sample_parallel="on")
    assert "softmax" in (error.value.op or "").lower()


def test_options_reach_the_compiler(tmp_path):
    net = make_net().eval()
    compiled = cuvil.compile(net, SIGNATURE, cpu="x86-64-v2", threads=2,
                             external_weights=True)
    assert compiled.metadata["target"]["cpu"] == "x86-64-v2"
    assert "avx2" not in compiled.metadata["target"]["features"]
    check(compiled, net, torch.randn(2, 3, 8, 8))
    compiled.save(tmp_path / "net.so")
    assert (tmp_path / "net.weights.bin").stat().st_size > 8 * 3 * 3 * 3 * 4
    check(cuvil.load(tmp_path / "net.so"), net, torch.randn(2, 3, 8, 8))


def test_verbose_prints_progress(capfd):
    cuvil.compile(lambda x: x + 1, [("x", torch.float32, (2,))], verbose=True)
    err = capfd.readouterr().err
    assert "cuvil: " in err and "level2" in err


def test_batch_norm_left_in_onnx_is_folded_by_cuvil(tmp_path):
    # torch folds BN itself when exporting for inference; kept here
    # (PRESERVE, no constant folding) the ONNX BatchNormalization reaches
    # Cuvil, whose cuvil-fold-batch-norm pass folds it into the convolution.
    net = make_net().eval()
    path = tmp_path / "net_bn.onnx"
    torch.onnx.export(net, torch.randn(2, 3, 8, 8), str(path),
                      input_names=["x"], opset_version=14,
                      training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False)
    assert "BatchNormalization" in [n.op_type for n in onnx.load(str(path)).graph.node]
    check(cuvil.compile(path), net, torch.randn(2, 3, 8, 8))
