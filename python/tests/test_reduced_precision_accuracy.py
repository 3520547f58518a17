"""Reduced precision from Python: post-training int8 quantization
(cuvil.quantization.Int8) and bfloat16 (cuvil.quantization.BF16).

Accuracy is measured on a real task with data that ships offline: small
models trained here on scikit-learn's bundled datasets (load_digits: an MLP
and a CNN; load_breast_cancer: a tabular MLP), calibrated (int8) on the
training split and scored on the test split. The issue's bar: int8
accuracy within 1 point of float32, bfloat16 within 0.2. Architectures
with random weights are held to cosine similarity >= 0.99 of their outputs
with float32.
"""

import numpy as np
import pytest
import torch
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.model_selection import train_test_split

import cuvil
from cuvil.quantization import BF16, Int8


def train(model, x, y, epochs, lr=0.01):
    """Full-batch Adam on cross-entropy; deterministic for a fixed seed."""
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    for _ in range(epochs):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return model.eval()


def accuracy(logits, y):
    return float((np.asarray(logits).argmax(1) == y).mean())


def split(x, y):
    return train_test_split(x.astype(np.float32), y.astype(np.int64),
                            test_size=0.25, random_state=0, stratify=y)


def digits():
    data = load_digits()
    return split(data.data / 16.0, data.target)


def breast_cancer():
    data = load_breast_cancer()
    x_train, x_test, y_train, y_test = split(data.data, data.target)
    mean, std = x_train.mean(0), x_train.std(0) + 1e-6
    return (x_train - mean) / std, (x_test - mean) / std, y_train, y_test


class DigitsCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = torch.nn.Linear(32 * 4 * 4, 64)
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        x = torch.relu(self.conv1(x.reshape(-1, 1, 8, 8)))
        x = torch.max_pool2d(torch.relu(self.conv2(x)), 2)
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


def mlp(*sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def study(model, data, epochs, bf16=False, **options):
    """(float32 accuracy, int8 or bf16 accuracy, the compiled model)."""
    x_train, x_test, y_train, y_test = data
    torch.manual_seed(0)
    model = train(model, x_train, y_train, epochs)
    with torch.no_grad():
        fp32 = accuracy(model(torch.from_numpy(x_test)), y_test)
    batches = [x_train[i:i + 64] for i in range(0, len(x_train), 64)]
    compiled = cuvil.compile(
        model, [("x", torch.float32, (None, x_train.shape[1]))], max_batch=64,
        quantize=BF16(**options) if bf16 else Int8(batches, **options))
    logits = np.concatenate([compiled(x_test[i:i + 64])
                             for i in range(0, len(x_test), 64)])
    return fp32, accuracy(logits, y_test), compiled


def quantized_layers(compiled):
    return [layer for layer in compiled.quantization_report["layers"]
            if layer["quantized"]]


@pytest.mark.parametrize("name,model,data,epochs", [
    ("digits_mlp", lambda: mlp(64, 128, 64, 10), digits, 150),
    ("breast_cancer_mlp", lambda: mlp(30, 64, 32, 2), breast_cancer, 150),
])
def test_int8_mlp_accuracy_within_one_point(name, model, data, epochs):
    fp32, int8, compiled = study(model(), data(), epochs)
    print(f"{name}: float32 {fp32:.4f}, int8 {int8:.4f}")
    assert fp32 > 0.9, "the float32 model did not learn the task"
    assert abs(fp32 - int8) <= 0.01
    # Every linear layer ran in int8, on the machine's int8 kernel.
    assert len(quantized_layers(compiled)) == 3
    assert compiled.metadata["kernels"]["qgemm4"] != "none"


@pytest.mark.parametrize("name,model,data,epochs", [
    ("digits_mlp", lambda: mlp(64, 128, 64, 10), digits, 150),
    ("breast_cancer_mlp", lambda: mlp(30, 64, 32, 2), breast_cancer, 150),
    ("digits_cnn", DigitsCnn, digits, 60),
])
def test_bf16_accuracy_within_a_fifth_of_a_point(name, model, data, epochs):
    """Linear layers and the CNN's convolutions on bfloat16 values, on this
    CPU's bf16 kernels."""
    fp32, bf16, compiled = study(model(), data(), epochs, bf16=True)
    print(f"{name}: float32 {fp32:.4f}, bf16 {bf16:.4f}")
    assert fp32 > 0.9
    assert abs(fp32 - bf16) <= 0.002
    assert compiled.metadata["kernels"]["bgemm8"] != "none"
    convolutions = compiled.metadata["kernels"]["bconvb"]
    assert (convolutions != "none") == (name == "digits_cnn")
    assert compiled.quantization_report is None


def test_bf16_keep_fp32():
    """BF16's keep-fp32 list, by op kind: every linear layer stays float32,
    so no bfloat16 kernel is linked, and the outputs are float32's."""
    torch.manual_seed(0)
    model = mlp(8, 16, 4).eval()
    signature = [("x", torch.float32, (None, 8))]
    compiled = cuvil.compile(model, signature, max_batch=4,
                             quantize=BF16(keep_fp32="Gemm"))
    assert compiled.metadata["kernels"]["bgemm8"] == "none"
    x = torch.randn(3, 8)
    with torch.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(compiled(x.numpy()), expected, rtol=1e-5, atol=1e-6)


def transformer_layer_study(quantize):
    """nn.TransformerEncoderLayer with random weights (fixed seed) compiled
    with quantize() (called after the layer is made): (compiled, cosine
    similarity and max relative error of its outputs against PyTorch's)."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0,
                                             batch_first=True).eval()
    compiled = cuvil.compile(layer, [("x", torch.float32, (None, 16, 64))],
                             max_batch=4, quantize=quantize())
    x = torch.randn(3, 16, 64)
    with torch.no_grad():
        expected = layer(x)
    got = torch.from_numpy(np.asarray(compiled(x.numpy())))
    cosine = torch.nn.functional.cosine_similarity(got.flatten(),
                                                   expected.flatten(), dim=0)
    relative = float((got - expected).abs().max() / expected.abs().max())
    return compiled, float(cosine), relative


def test_bf16_transformer_layer_cosine():
    """The layer's linear layers in bfloat16, summed in float32: the
    relative error bfloat16's 8-bit significand allows."""
    compiled, cosine, relative = transformer_layer_study(BF16)
    print(f"transformer layer bf16: cosine {cosine:.6f}, "
          f"max relative error {relative:.4f}")
    assert cosine >= 0.9995
    assert relative < 0.05
    assert compiled.metadata["kernels"]["bgemm8"] != "none"


def test_int8_integer_io_accuracy_within_one_point():
    """Int8(integer_io=True): the digits MLP takes uint8 pixels and returns
    uint8 logits, each with the scale and zero point its description gives;
    the test set scored on them is within a point of float32."""
    x_train, x_test, y_train, y_test = digits()
    torch.manual_seed(0)
    model = train(mlp(64, 128, 64, 10), x_train, y_train, 150)
    with torch.no_grad():
        fp32 = accuracy(model(torch.from_numpy(x_test)), y_test)
    compiled = cuvil.compile(
        model, [("x", torch.float32, (None, 64))], max_batch=64,
        quantize=Int8([x_train[i:i + 64] for i in range(0, len(x_train), 64)],
                      integer_io=True))
    (x_spec,), (y_spec,) = compiled.inputs, compiled.outputs
    assert x_spec["dtype"] == y_spec["dtype"] == "uint8"
    q = x_spec["quantization"]
    # Pixels in [0, 1]: the first layer's uint8 puts 0 at zero point 0.
    assert q["zero_point"] == 0 and q["scale"] == pytest.approx(1 / 255, rel=1e-6)
    qx = np.clip(np.rint(x_test / np.float32(q["scale"])) + q["zero_point"],
                 0, 255).astype(np.uint8)
    out = np.concatenate([compiled(qx[i:i + 64]) for i in range(0, len(qx), 64)])
    assert out.dtype == np.uint8
    o = y_spec["quantization"]
    logits = (out.astype(np.float32) - o["zero_point"]) * o["scale"]
    int8 = accuracy(logits, y_test)
    print(f"digits_mlp integer I/O: float32 {fp32:.4f}, int8 {int8:.4f}")
    assert fp32 > 0.9 and abs(fp32 - int8) <= 0.01
    # The torch path (uint8 tensors) gives the same bytes.
    assert np.array_equal(compiled(torch.from_numpy(qx[:64])).numpy(), out[:64])
    with pytest.raises(ValueError, match="has dtype float32; the model takes uint8"):
        compiled(torch.from_numpy(x_test[:8]))
    # The report says the same, with the ranges calibration observed.
    x_io, y_io = compiled.quantization_report["io"]
    assert (x_io["name"], x_io["input"], y_io["name"], y_io["input"]) == (
        "x", True, y_spec["name"], False)
    assert (y_io["scale"], y_io["zero_point"]) == (o["scale"], o["zero_point"])
    assert y_io["observed_min"] < 0 < y_io["observed_max"]


def test_int8_cnn_accuracy_within_one_point():
    fp32, int8, compiled = study(DigitsCnn(), digits(), 60)
    print(f"digits_cnn: float32 {fp32:.4f}, int8 {int8:.4f}")
    assert fp32 > 0.9
    assert abs(fp32 - int8) <= 0.01
    # Convolutions and linear layers all run in int8.
    assert [layer["node"] for layer in quantized_layers(compiled)] == [
        "/conv1/Conv", "/conv2/Conv", "/fc1/Gemm", "/fc2/Gemm"]
    assert compiled.quantization_report["float32"] == []


def resnet18_study(quantize, threads=1):
    """torchvision's ResNet-18 with random weights (fixed seed) compiled
    with quantize(shape) (batch norms folded first) for `threads`:
    (compiled, cosine similarity and max relative error of its logits
    against PyTorch's)."""
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"
                           / "models"))
    import export_models
    torch.manual_seed(0)
    model, example = export_models.MODELS["resnet18"]()
    model.eval()
    shape = tuple(example.shape[1:])
    compiled = cuvil.compile(model, [("x", torch.float32, (None,) + shape)],
                             max_batch=4, quantize=quantize(shape),
                             threads=threads)
    x = torch.randn(2, *shape)
    with torch.no_grad():
        expected = model(x)
    got = torch.from_numpy(np.asarray(compiled(x.numpy())))
    cosine = float(torch.nn.functional.cosine_similarity(
        got.flatten(), expected.flatten(), dim=0))
    relative = float((got - expected).abs().max() / expected.abs().max())
    return compiled, cosine, relative


def test_resnet18_cosine():
    """Every convolution and the classifier in int8, calibrated on random
    inputs. On two threads the batch runs as one chunk of samples per
    thread (sample_parallel's auto: a network of products), each
    sample's bits what it gets alone."""
    compiled, cosine, relative = resnet18_study(
        lambda shape: Int8([torch.randn(4, *shape) for _ in range(2)]),
        threads=2)
    assert len(quantized_layers(compiled)) == 21  # 20 convolutions + fc
    print(f"resnet18 int8: cosine {cosine:.5f}, max relative error {relative:.4f}")
    assert cosine >= 0.99
    assert compiled.metadata["sample_parallel"]
    shape = tuple(compiled.inputs[0]["shape"][1:])
    x = np.random.default_rng(0).standard_normal((3,) + shape,
                                                 dtype=np.float32)
    batch = np.asarray(compiled(x))
    for i in range(3):
        assert np.array_equal(np.asarray(compiled(x[i:i + 1]))[0], batch[i])


def test_resnet18_bf16_cosine():
    """Every convolution and the classifier in bfloat16, summed in float32:
    the error bfloat16's 8-bit significand allows over 18 layers."""
    compiled, cosine, relative = resnet18_study(lambda shape: BF16())
    print(f"resnet18 bf16: cosine {cosine:.6f}, max relative error {relative:.4f}")
    assert compiled.metadata["kernels"]["bconvb"] != "none"
    assert cosine >= 0.999
    assert relative < 0.05


def test_observers_and_the_report():
    data = digits()
    reports = {}
    for observer in ("minmax", "percentile", "entropy"):
        _, int8, compiled = study(mlp(64, 128, 64, 10), data, 150,
                                  observer=observer, percentile=99.9)
        report = compiled.quantization_report
        assert report["observer"] == observer
        assert report["samples"] == len(data[0])
        reports[observer] = report["layers"]
        assert int8 > 0.9
    for minmax, clipped in zip(reports["minmax"], reports["percentile"]):
        # Percentiles clip inside the extremes, which all observers see.
        assert clipped["observed_min"] == minmax["observed_min"]
        assert minmax["range_min"] <= clipped["range_min"] <= clipped["range_max"]
        assert clipped["range_max"] <= minmax["range_max"]
    for layer in reports["minmax"]:
        # uint8 covering [min(lo, 0), max(hi, 0)] in 255 steps.
        lo, hi = min(layer["range_min"], 0), max(layer["range_max"], 0)
        assert layer["scale"] == pytest.approx((hi - lo) / 255, rel=1e-6)
        assert layer["zero_point"] == round(-lo / layer["scale"])
    # After a ReLU the activation is non-negative: zero point 0.
    assert reports["minmax"][1]["observed_min"] == 0.0
    assert reports["minmax"][1]["zero_point"] == 0


def test_calibration_observes_the_activations_the_model_computes():
    torch.manual_seed(0)
    model = mlp(8, 16, 4).eval()
    x = torch.randn(40, 8)
    compiled = cuvil.compile(model, [("x", torch.float32, (None, 8))],
                             max_batch=16, quantize=Int8([x[:16], x[16:32],
                                                          x[32:]]))
    layers = compiled.quantization_report["layers"]
    with torch.no_grad():
        hidden = torch.relu(model[0](x))
    assert layers[0]["observed_min"] == float(x.min())
    assert layers[0]["observed_max"] == float(x.max())
    assert layers[1]["observed_min"] == 0.0
    assert layers[1]["observed_max"] == pytest.approx(float(hidden.max()),
                                                      rel=1e-5)


def test_keep_fp32_by_module_path():
    torch.manual_seed(0)
    model = mlp(8, 16, 4).eval()
    x = torch.randn(32, 8)
    compiled = cuvil.compile(model, [("x", torch.float32, (None, 8))],
                             max_batch=32,
                             quantize=Int8([x], keep_fp32=["2"]))
    report = compiled.quantization_report
    assert [layer["node"] for layer in report["layers"]] == ["/0/Gemm"]
    assert "kept in float32, as asked (keep-fp32 '2')" in report["float32"][0]
    with torch.no_grad():
        expected = model(x)
    cosine = torch.nn.functional.cosine_similarity(
        torch.from_numpy(np.asarray(compiled(x.numpy()))).flatten(),
        expected.flatten(), dim=0)
    assert cosine > 0.999


def test_transformer_layer_cosine():
    """nn.TransformerEncoderLayer with random weights: its linear layers on
    [batch, sequence, embedding] activations (a dynamic batch, reshaped
    inside the attention) run in int8, the attention products in float32."""
    compiled, cosine, relative = transformer_layer_study(
        lambda: Int8([torch.randn(4, 16, 64) for _ in range(4)]))
    assert len(quantized_layers(compiled)) >= 3
    print(f"transformer layer int8: cosine {cosine:.5f}, "
          f"max relative error {relative:.4f}")
    assert cosine >= 0.99


def test_calibration_errors():
    model = mlp(8, 4).eval()
    signature = [("x", torch.float32, (None, 8))]
    with pytest.raises(ValueError, match="calibration batch 1 has 2 inputs; "
                       r"the model takes 1 \(x\)"):
        cuvil.compile(model, signature, max_batch=4,
                      quantize=Int8([(np.zeros((2, 8)), np.zeros((2, 8)))]))
    with pytest.raises(ValueError, match="calibration holds no batches"):
        cuvil.compile(model, signature, max_batch=4, quantize=Int8([]))
    with pytest.raises(ValueError, match="names 'y', which is not an input"):
        cuvil.compile(model, signature, max_batch=4,
                      quantize=Int8([{"y": np.zeros((2, 8))}]))
    with pytest.raises(ValueError, match="observer must be one of"):
        Int8([np.zeros((1, 8))], observer="kl")
    with pytest.raises(TypeError, match="quantize must be a "
                       "cuvil.quantization.Int8, BF16 or FP16"):
        cuvil.compile(model, signature, max_batch=4, quantize="int8")
    with pytest.raises(cuvil.CompileError, match=r"calibration array 'x' has "
                       r"shape \[2, 7\]"):
        cuvil.compile(model, signature, max_batch=4,
                      quantize=Int8([np.zeros((2, 7), np.float32)]))
