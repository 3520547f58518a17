"""numpy references for quantized ONNX graphs: the formulas of the ONNX
operators (QuantizeLinear, DequantizeLinear, convolution), written out, and
the small graph-building helpers the quantization tests share."""

import numpy as np
import onnx
from onnx import helper, numpy_helper


def quantize(x, scale, zero, dtype, axis=None):
    """ONNX QuantizeLinear: saturate(round_half_even(x / scale) + zero)."""
    info = np.iinfo(dtype)
    scale, zero = np.float32(scale), np.asarray(zero, np.float32)
    if axis is not None:
        shape = [1] * x.ndim
        shape[axis] = -1
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    q = np.rint(x.astype(np.float32) / scale) + zero
    return np.clip(q, info.min, info.max).astype(dtype)


def dequantize(q, scale, zero, axis=None):
    """ONNX DequantizeLinear: (q - zero) * scale in float32."""
    scale, zero = np.float32(scale), np.asarray(zero, np.float32)
    if axis is not None:
        shape = [1] * q.ndim
        shape[axis] = -1
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    return ((q.astype(np.float32) - zero) * scale).astype(np.float32)


def save(path, nodes, inputs, outputs, initializers, opset=13):
    graph = helper.make_graph(nodes, "qdq", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def constant(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def conv2d_reference(x, w, bias, stride, pad):
    """NCHW x OIHW in float64, zero padding (the dequantized zero point)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad))
    xp[:, :, pad:pad + h, pad:pad + wd] = x
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            y += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return y + bias[None, :, None, None]
