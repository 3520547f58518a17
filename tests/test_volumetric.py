"""ONNX Conv, ConvTranspose, MaxPool and AveragePool of NCDHW inputs
compiled by cuvilc (on the 2-D ops: ConvertVolumetric.cpp) and checked
against PyTorch's conv3d, conv_transpose3d, max_pool3d and avg_pool3d:
strides, symmetric and asymmetric pads, dilations, groups, bias,
output_padding and output_shape, ceil_mode, count_include_pad both ways,
auto_pad, a dynamic batch; and the 3-D attribute errors."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parents[1]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from cuvil_e2e import compile_model  # noqa: E402
from qdq_reference import constant, save  # noqa: E402

FLOAT = TensorProto.FLOAT
SHAPE = [3, 9, 10, 11]


def excluding_pads(x, kernel, stride, pads):
    """The average over each window's input elements only, for pads
    (begin d, h, w, end d, h, w) that may differ at the two ends."""
    torch_pads = [pads[2], pads[5], pads[1], pads[4], pads[0], pads[3]]
    total = F.avg_pool3d(F.pad(x, torch_pads), kernel, stride, divisor_override=1)
    count = F.avg_pool3d(F.pad(torch.ones_like(x), torch_pads), kernel, stride,
                         divisor_override=1)
    return total / count


# (ONNX node attributes, PyTorch reference of the float64 input)
CASES = [
    (dict(op="MaxPool", kernel_shape=[3, 3, 3], strides=[2, 2, 2], pads=[1] * 6),
     lambda x: F.max_pool3d(x, 3, 2, 1)),
    (dict(op="MaxPool", kernel_shape=[2, 3, 2], strides=[1, 2, 3],
          dilations=[2, 1, 2], ceil_mode=1),
     lambda x: F.max_pool3d(x, (2, 3, 2), (1, 2, 3), 0, (2, 1, 2), ceil_mode=True)),
    (dict(op="AveragePool", kernel_shape=[3, 2, 3], strides=[2, 2, 1],
          pads=[1, 0, 1, 1, 0, 1]),
     lambda x: F.avg_pool3d(x, (3, 2, 3), (2, 2, 1), (1, 0, 1),
                            count_include_pad=False)),
    (dict(op="AveragePool", kernel_shape=[3, 3, 3], strides=[2, 2, 2], pads=[1] * 6,
          ceil_mode=1, count_include_pad=1),
     lambda x: F.avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=True)),
    (dict(op="AveragePool", kernel_shape=[2, 3, 2], strides=[2, 2, 2],
          auto_pad="SAME_UPPER"),
     # out = ceil(in / 2): D 9 -> pads (0, 1), H 10 -> (0, 1), W 11 -> (0, 1).
     lambda x: excluding_pads(x, (2, 3, 2), 2, [0, 0, 0, 1, 1, 1])),
]


def test_3d_pools_match_pytorch(tmp_path):
    nodes, outputs = [], []
    for i, (attrs, _) in enumerate(CASES):
        attrs = dict(attrs)
        nodes.append(helper.make_node(attrs.pop("op"), ["x"], [f"y{i}"], **attrs))
        outputs.append(helper.make_tensor_value_info(f"y{i}", FLOAT, ["N"] + [None] * 4))
    path = tmp_path / "pool3d.onnx"
    save(path, nodes, [helper.make_tensor_value_info("x", FLOAT, ["N"] + SHAPE)],
         outputs, [], opset=13)
    compiled = compile_model(CUVILC, path, tmp_path / "pool3d.so", "--max-batch=4")
    x = np.random.default_rng(3).standard_normal([2] + SHAPE).astype(np.float32)
    results = compiled(x, batch=2)
    for (attrs, reference), y in zip(CASES, results):
        want = reference(torch.from_numpy(x).double()).numpy()
        assert y.shape == want.shape, attrs
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6, err_msg=str(attrs))


def conv_case(rng, name, out_channels, group, kernel, bias=True, **attrs):
    """A Conv node and its weights (float32), and PyTorch's reference."""
    weight = rng.standard_normal([out_channels, SHAPE[0] // group, *kernel])
    weight = (weight / np.sqrt(weight[0].size)).astype(np.float32)
    b = rng.standard_normal(out_channels).astype(np.float32) if bias else None
    inputs = ["x", f"{name}_w"] + ([f"{name}_b"] if bias else [])
    node = helper.make_node("Conv", inputs, [name], group=group, **attrs)
    tensors = [constant(f"{name}_w", weight)] + ([constant(f"{name}_b", b)] if bias else [])
    return node, tensors, weight, b


def test_3d_convolutions_match_pytorch(tmp_path):
    rng = np.random.default_rng(11)
    cases = [  # (node, initializers, reference of the float64 input)
        conv_case(rng, "plain", 4, 1, [3, 3, 3], pads=[1] * 6),
        conv_case(rng, "strided", 6, 3, [2, 3, 2], bias=False, strides=[2, 1, 2],
                  dilations=[2, 1, 1], pads=[0, 1, 1, 1, 1, 0]),
        conv_case(rng, "same", 3, 1, [3, 2, 3], strides=[2, 2, 2], auto_pad="SAME_UPPER"),
    ]
    references = [
        lambda x, w, b: F.conv3d(x, w, b, padding=1),
        # Asymmetric pads: (D 0/1, H 1/1, W 1/0), written out with F.pad.
        lambda x, w, b: F.conv3d(F.pad(x, [1, 0, 1, 1, 0, 1]), w, b, stride=(2, 1, 2),
                                 dilation=(2, 1, 1), groups=3),
        # SAME_UPPER, stride 2: D 9 (k 3) -> pads (1, 1), H 10 (k 2) -> (0, 0),
        # W 11 (k 3) -> (1, 1).
        lambda x, w, b: F.conv3d(F.pad(x, [1, 1, 0, 0, 1, 1]), w, b, stride=2),
    ]
    path = tmp_path / "conv3d.onnx"
    save(path, [case[0] for case in cases],
         [helper.make_tensor_value_info("x", FLOAT, ["N"] + SHAPE)],
         [helper.make_tensor_value_info(case[0].output[0], FLOAT, ["N"] + [None] * 4)
          for case in cases],
         [t for case in cases for t in case[1]], opset=13)
    compiled = compile_model(CUVILC, path, tmp_path / "conv3d.so", "--max-batch=4")
    x = rng.standard_normal([3] + SHAPE).astype(np.float32)
    results = compiled(x, batch=3)
    for (node, _, w, b), reference, y in zip(cases, references, results):
        def as64(a):
            return None if a is None else torch.from_numpy(a).double()
        want = reference(as64(x), as64(w), as64(b)).numpy()
        assert y.shape == want.shape, node.output[0]
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5, err_msg=node.output[0])


def test_3d_transposed_convolutions_match_pytorch(tmp_path):
    rng = np.random.default_rng(12)

    def weights(in_channels, out_per_group, kernel):
        w = rng.standard_normal([in_channels, out_per_group, *kernel])
        return (w / np.sqrt(w[0].size)).astype(np.float32)

    cases = [  # (name, attributes, weight, bias, PyTorch reference)
        ("plain", dict(), weights(3, 2, [3, 3, 3]), None,
         lambda x, w, b: F.conv_transpose3d(x, w, b)),
        ("strided", dict(strides=[2, 3, 2], pads=[1, 0, 1, 1, 0, 1],
                         output_padding=[1, 2, 0], dilations=[2, 1, 1], group=3),
         weights(3, 2, [2, 3, 3]), rng.standard_normal(6).astype(np.float32),
         lambda x, w, b: F.conv_transpose3d(x, w, b, stride=(2, 3, 2), padding=(1, 0, 1),
                                            output_padding=(1, 2, 0), groups=3,
                                            dilation=(2, 1, 1))),
        # output_shape against the full 18 x 20 x 22: D 17 pads 1 (at the
        # start, as ONNX splits an odd total without SAME_UPPER), H 20 none,
        # W 23 one output padding.
        ("shaped", dict(strides=[2, 2, 2], output_shape=[17, 20, 23]),
         weights(3, 4, [2, 2, 2]), rng.standard_normal(4).astype(np.float32),
         lambda x, w, b: F.conv_transpose3d(x, w, b, stride=2,
                                            output_padding=(0, 0, 1))[:, :, 1:]),
    ]
    nodes, tensors = [], []
    for name, attrs, w, b, _ in cases:
        inputs = ["x", f"{name}_w"] + ([f"{name}_b"] if b is not None else [])
        nodes.append(helper.make_node("ConvTranspose", inputs, [name], **attrs))
        tensors += [constant(f"{name}_w", w)] + (
            [constant(f"{name}_b", b)] if b is not None else [])
    path = tmp_path / "deconv3d.onnx"
    save(path, nodes, [helper.make_tensor_value_info("x", FLOAT, ["N"] + SHAPE)],
         [helper.make_tensor_value_info(name, FLOAT, ["N"] + [None] * 4)
          for name, *_ in cases], tensors, opset=13)
    compiled = compile_model(CUVILC, path, tmp_path / "deconv3d.so", "--max-batch=4")
    x = rng.standard_normal([2] + SHAPE).astype(np.float32)
    for (name, _, w, b, reference), y in zip(cases, compiled(x, batch=2)):
        as64 = [None if a is None else torch.from_numpy(a).double() for a in (x, w, b)]
        want = reference(*as64).numpy()
        assert y.shape == want.shape, name
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("attrs,message", [
    (dict(kernel_shape=[2, 2]), "expects 3 kernel sizes"),
    (dict(kernel_shape=[2, 2, 2], pads=[1, 1, 1]), "and 6 pads"),
    (dict(kernel_shape=[2, 0, 2]), "kernel sizes, strides and dilations in [1, 2^30)"),
    (dict(kernel_shape=[2, 2, 2], auto_pad="SAME"), "unknown auto_pad 'SAME'"),
])
def test_3d_pool_errors_name_the_node(tmp_path, attrs, message):
    path = tmp_path / "bad.onnx"
    save(path, [helper.make_node("MaxPool", ["x"], ["y"], name="pool_node", **attrs)],
         [helper.make_tensor_value_info("x", FLOAT, [1] + SHAPE)],
         [helper.make_tensor_value_info("y", FLOAT, [None] * 5)], [], opset=13)
    result = subprocess.run([CUVILC, str(path), "-o", str(tmp_path / "bad.so")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "pool_node" in result.stderr and message in result.stderr, result.stderr
    assert not (tmp_path / "bad.so").exists()


@pytest.mark.parametrize("op", ["Conv", "ConvTranspose"])
def test_3d_conv_errors_name_the_node(tmp_path, op):
    path = tmp_path / "bad.onnx"
    weight = np.zeros([3, 3, 3, 3, 3], np.float32)
    save(path, [helper.make_node(op, ["x", "w"], ["y"], name="conv_node",
                                 kernel_shape=[3, 3, 2])],
         [helper.make_tensor_value_info("x", FLOAT, [1] + SHAPE)],
         [helper.make_tensor_value_info("y", FLOAT, [None] * 5)],
         [constant("w", weight)], opset=13)
    result = subprocess.run([CUVILC, str(path), "-o", str(tmp_path / "bad.so")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "conv_node" in result.stderr, result.stderr
    assert f"{op} kernel_shape [3, 3, 2] differs from the weight" in result.stderr
    assert not (tmp_path / "bad.so").exists()


def test_3d_transposed_conv_bias_error_names_the_node(tmp_path):
    path = tmp_path / "bad.onnx"
    save(path, [helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"],
                                 name="deconv_node")],
         [helper.make_tensor_value_info("x", FLOAT, [1] + SHAPE)],
         [helper.make_tensor_value_info("y", FLOAT, [None] * 5)],
         [constant("w", np.zeros([3, 2, 2, 2, 2], np.float32)),
          constant("b", np.zeros([3], np.float32))], opset=13)
    result = subprocess.run([CUVILC, str(path), "-o", str(tmp_path / "bad.so")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "deconv_node" in result.stderr, result.stderr
    assert ("ConvTranspose expects a bias of one 'f32' per output channel (2), "
            "got 'tensor<3xf32>'") in result.stderr, result.stderr
    assert not (tmp_path / "bad.so").exists()
