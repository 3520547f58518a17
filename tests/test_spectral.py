"""ONNX DFT and STFT (opset 17) compiled by cuvilc and checked against
numpy.fft in float64: forward and inverse, complex and real (one-sided)
signals, a DFT length that pads or cuts the signal, and windowed frames;
MelWeightMatrix against ONNX's reference formula, with its errors."""

import pathlib
import subprocess
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


def mel_reference(mels, dft, rate, lower, upper):
    """ONNX's reference MelWeightMatrix (onnx/backend/test/case/node/
    melweightmatrix.py, with numpy's float32 edges), for any parameters."""
    lower, upper = np.float32(lower), np.float32(upper)
    bins = np.arange(0, mels + 2)
    low_mel = 2595 * np.log10(1 + lower / 700)
    high_mel = 2595 * np.log10(1 + upper / 700)
    step = (high_mel - low_mel) / bins.shape[0]
    hertz = 700 * (np.power(10, (bins * step + low_mel) / 2595) - 1)
    edges = (((dft + 1) * hertz) // rate).astype(int)
    out = np.zeros((dft // 2 + 1, mels))
    for i in range(mels):
        left, center, right = edges[i:i + 3]
        if center == left:
            out[center, i] = 1
        else:
            for j in range(left, center + 1):
                out[j, i] = (j - left) / (center - left)
        for j in range(center, right):
            out[j, i] = (right - j) / (right - center)
    return out


MEL_CASES = [(8, 16, 8192, 0.0, 4096.0), (40, 512, 16000, 20.0, 8000.0),
             (13, 255, 22050, 300.0, 5000.0),
             # The last edge lands on bin 9 of 9: a bound only, as in ONNX.
             (8, 16, 8192, 0.0, 5600.0)]


def test_mel_weight_matrices_match_onnxs_reference(tmp_path):
    nodes, initializers, outputs = [], [], []
    for i, params in enumerate(MEL_CASES):
        names = [f"{field}{i}" for field in ("mels", "dft", "rate", "low", "high")]
        initializers += [constant(name, np.array(v, np.int64 if k < 3 else np.float32))
                         for k, (name, v) in enumerate(zip(names, params))]
        nodes.append(helper.make_node("MelWeightMatrix", names, [f"w{i}"],
                                      output_datatype=TensorProto.DOUBLE if i else FLOAT))
        outputs.append(helper.make_tensor_value_info(
            f"w{i}", TensorProto.DOUBLE if i else FLOAT, [params[1] // 2 + 1, params[0]]))
    path = tmp_path / "mel.onnx"
    save(path, nodes, [], outputs, initializers, opset=17)
    compiled = compile_model(CUVILC, path, tmp_path / "mel.so")
    for params, w in zip(MEL_CASES, compiled()):
        np.testing.assert_allclose(w, mel_reference(*params), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("params,runtime,message", [
    ((8, 16, 8192, 0.0, 8192.0), False,
     "filter edge 8 falls on spectrogram bin 9, past the last one (8) for dft_length 16; "
     "lower upper_edge_hertz (8192)"),
    # Edges that overflow an integer are refused before they index anything.
    ((10, 16, 1, 0.0, 3e19), False, "filter edge 1 falls on spectrogram bin 277533"),
    ((8, 16, 8192, 100.0, 50.0), False, "0 <= lower_edge_hertz < upper_edge_hertz, got 8, 16, 8192, 100, 50"),
    ((8, 16, 8192, 0.0, 4096.0), True, "needs its num_mel_bins (input 'mels') at compile time"),
])
def test_mel_weight_matrix_errors_name_the_node(tmp_path, params, runtime, message):
    names = ["mels", "dft", "rate", "low", "high"]
    tensors = [constant(name, np.array(v, np.int64 if k < 3 else np.float32))
               for k, (name, v) in enumerate(zip(names, params))]
    inputs = [helper.make_tensor_value_info("mels", TensorProto.INT64, [])] if runtime else []
    path = tmp_path / "bad.onnx"
    save(path, [helper.make_node("MelWeightMatrix", names, ["w"], name="mel_node")],
         inputs, [helper.make_tensor_value_info("w", FLOAT, [None, None])],
         tensors[1:] if runtime else tensors, opset=17)
    result = subprocess.run([CUVILC, str(path), "-o", str(tmp_path / "bad.so")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "mel_node" in result.stderr and message in result.stderr, result.stderr
    assert not (tmp_path / "bad.so").exists()
