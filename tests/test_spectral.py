"""ONNX DFT and STFT (opset 17) compiled by cuvilc and checked against
numpy.fft in float64: forward and inverse, complex and real (one-sided)
signals, a DFT length that pads or cuts the signal, and windowed frames."""

import pathlib
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parents[1]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from cuvil_e2e import compile_model  # noqa: E402
from qdq_reference import constant, save  # noqa: E402

FLOAT = TensorProto.FLOAT


def as_complex(x):
    return x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0].astype(complex)


@pytest.mark.parametrize("complex_input,inverse,onesided,length", [
    (True, False, False, None), (True, True, False, None),
    (False, False, True, None), (False, False, False, 12), (True, False, False, 7)])
def test_dft_matches_numpy(tmp_path, complex_input, inverse, onesided, length):
    shape = [3, 10, 4, 2 if complex_input else 1]
    inputs = ["x"] + (["n"] if length else [])
    bins = length or 10
    bins = bins // 2 + 1 if onesided else bins
    path = tmp_path / "dft.onnx"
    save(path, [helper.make_node("DFT", inputs, ["y"], axis=1, inverse=int(inverse),
                                 onesided=int(onesided))],
         [helper.make_tensor_value_info("x", FLOAT, shape)],
         [helper.make_tensor_value_info("y", FLOAT, [3, bins, 4, 2])],
         [constant("n", np.array(length, np.int64))] if length else [], opset=17)
    compiled = compile_model(CUVILC, path, tmp_path / "dft.so")
    x = np.random.default_rng(bins).standard_normal(shape).astype(np.float32)
    (y,) = compiled(x)
    signal = as_complex(x.astype(np.float64))
    transform = np.fft.ifft if inverse else np.fft.fft
    want = transform(signal, n=length, axis=1)[:, :bins]
    np.testing.assert_allclose(y[..., 0], want.real, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(y[..., 1], want.imag, rtol=1e-4, atol=1e-4)


def test_windowed_stft_matches_numpy(tmp_path):
    length, step, frame = 200, 12, 32
    window = np.hanning(frame).astype(np.float32)
    frames = 1 + (length - frame) // step
    path = tmp_path / "stft.onnx"
    save(path, [helper.make_node("STFT", ["x", "step", "w"], ["y"])],
         [helper.make_tensor_value_info("x", FLOAT, [2, length, 1])],
         [helper.make_tensor_value_info("y", FLOAT, [2, frames, frame // 2 + 1, 2])],
         [constant("step", np.array(step, np.int64)), constant("w", window)], opset=17)
    compiled = compile_model(CUVILC, path, tmp_path / "stft.so")
    x = np.random.default_rng(1).standard_normal((2, length, 1)).astype(np.float32)
    (y,) = compiled(x)
    starts = np.arange(frames) * step
    framed = np.stack([x[:, s:s + frame, 0] for s in starts], axis=1).astype(np.float64)
    want = np.fft.rfft(framed * window, axis=-1)
    np.testing.assert_allclose(y[..., 0], want.real, rtol=1e-4, atol=2e-4)
    np.testing.assert_allclose(y[..., 1], want.imag, rtol=1e-4, atol=2e-4)
