"""Builds small ONNX models for the importer's lit tests.

    python3 make_model.py CASE OUT.onnx

Each case is a function below; most are deliberately broken in one way.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def model(nodes, inputs, outputs, initializers=(), opset=OPSET, name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    return m


def tensor(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def mlp():
    """x @ W + b -> relu -> softmax, with weights as initializers."""
    rng = np.random.default_rng(0)
    w = const("W", rng.standard_normal((10, 16)).astype(np.float32))
    b = const("b", np.zeros(16, np.float32))
    return model([
        helper.make_node("MatMul", ["x", "W"], ["h"], name="fc/MatMul"),
        helper.make_node("Add", ["h", "b"], ["hb"], name="fc/Add"),
        helper.make_node("Relu", ["hb"], ["r"], name="relu"),
        helper.make_node("Softmax", ["r"], ["y"], name="softmax", axis=1),
    ], [tensor("x", [1, 10])], [tensor("y", [1, 16])], [w, b])


def flatten_dynamic():
    """x.view(x.size(0), -1) as exporters write it, on a dynamic batch."""
    return model([
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"], name="unsqueeze"),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape"),
    ], [tensor("x", ["batch", 8, 2, 2])], [tensor("y", ["batch", 32])],
        [const("zero", np.array(0, np.int64)), const("axes0", np.array([0], np.int64)),
         const("minus1", np.array([-1], np.int64))])


def conv_bn():
    """Conv (SAME_UPPER auto-pad, stride 2) + BatchNormalization + MaxPool."""
    rng = np.random.default_rng(1)
    c = [const(n, np.ones(4, np.float32)) for n in ("g", "be", "m", "v")]
    return model([
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", strides=[2, 2],
                         auto_pad="SAME_UPPER", kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c", "g", "be", "m", "v"], ["bn"],
                         name="bn"),
        helper.make_node("MaxPool", ["bn"], ["y"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2], ceil_mode=1),
    ], [tensor("x", [1, 3, 9, 9])], [tensor("y", [1, 4, 3, 3])],
        [const("w", rng.standard_normal((4, 3, 3, 3)).astype(np.float32))] + c)


def external_data(path, broken=None):
    """A weight stored in a file beside the model."""
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    folder = os.path.dirname(os.path.abspath(path))
    with open(os.path.join(folder, "weights.bin"), "wb") as f:
        f.write(b"\0" * 16 + w.tobytes())
    t = TensorProto()
    t.name = "W"
    t.data_type = TensorProto.FLOAT
    t.dims.extend([3, 4])
    t.data_location = TensorProto.EXTERNAL
    offset, location = "16", "weights.bin"
    if broken == "offset":
        offset = "1000"
    if broken == "missing":
        location = "nothere.bin"
    if broken == "escape":
        location = "../weights.bin"
    if broken == "link":
        location = "link.bin"  # the test makes it a symbolic link
    for k, v in (("location", location), ("offset", offset), ("length", "48")):
        entry = t.external_data.add()
        entry.key, entry.value = k, v
    return model([helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")],
                 [tensor("x", [2, 3])], [tensor("y", [2, 4])], [t])


def unsupported():
    """Three unsupported ops, one of them twice, in two domains."""
    return model([
        helper.make_node("Relu", ["x"], ["a"], name="ok"),
        helper.make_node("NonZero", ["a"], ["b"], name="nz_1"),
        helper.make_node("Unique", ["a"], ["c"], name="unique"),
        helper.make_node("NonZero", ["a"], ["e"], name="nz_2"),
        helper.make_node("FusedThing", ["a"], ["f"], name="custom",
                         domain="com.example"),
    ], [tensor("x", [4])], [tensor("c", [2])])


def dangling():
    return model([helper.make_node("Add", ["x", "ghost"], ["y"], name="add")],
                 [tensor("x", [4])], [tensor("y", [4])])


def dtype_mismatch():
    return model([helper.make_node("Add", ["x", "i"], ["y"], name="mixed_add")],
                 [tensor("x", [4]), tensor("i", [4], TensorProto.INT64)],
                 [tensor("y", [4])])


def shape_mismatch():
    """The quick-start classifier given a 1x12 input."""
    return model([helper.make_node("MatMul", ["x", "eye"], ["y"], name="/MatMul")],
                 [tensor("x", [1, 12])], [tensor("y", [1, 10])],
                 [const("eye", np.eye(10, dtype=np.float32))])


def negative_dim():
    m = mlp()
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = -3
    return m


def bad_initializer_size():
    m = mlp()
    m.graph.initializer[0].raw_data = m.graph.initializer[0].raw_data[:-4]
    return m


def unsupported_dtype():
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [tensor("x", [4], TensorProto.STRING)], [tensor("y", [4])])


def old_opset():
    m = mlp()
    m.opset_import[0].version = 19
    return m


def missing_output():
    m = mlp()
    m.graph.output[0].name = "not_produced"
    return m


def runtime_reshape():
    """Reshape whose target is computed from data, not shapes."""
    return model([
        helper.make_node("Cast", ["x"], ["xi"], name="cast", to=TensorProto.INT64),
        helper.make_node("Reshape", ["x", "xi"], ["y"], name="reshape"),
    ], [tensor("x", [2])], [tensor("y", [2])])


# Source positions as torch.onnx.export(verbose=True) records them.
SCRIPTED_DOC = ('  File "/home/user/model.py", line 7\n'
                "def classify(x: torch.Tensor) -> torch.Tensor:\n"
                "    return torch.softmax(x @ torch.eye(10) * 0.1, dim=1)\n"
                "                         ~~~~~~~~~~~~~~~~ <--- HERE\n")
TRACED_DOC = ("/usr/lib/python3/dist-packages/torch/nn/modules/linear.py(114): "
              "forward\n"
              "/usr/lib/python3/dist-packages/torch/nn/modules/module.py(1182): "
              "_slow_forward\n"
              "/home/user/net.py(21): forward\n"
              "/usr/lib/python3/dist-packages/torch/jit/_trace.py(118): wrapper\n")


def scripted_shape_mismatch():
    """shape_mismatch, exported from TorchScript: errors name the Python line."""
    m = shape_mismatch()
    m.graph.node[0].doc_string = SCRIPTED_DOC
    return m


def traced_unsupported():
    """Unsupported ops of a traced module: each listed with its user line."""
    m = unsupported()
    m.graph.node[1].doc_string = TRACED_DOC
    m.graph.node[2].doc_string = SCRIPTED_DOC
    # A stack entirely inside torch: the innermost frame is kept.
    m.graph.node[3].doc_string = TRACED_DOC.split("/home")[0]
    m.graph.node[4].doc_string = "no position in here\n(not a frame): x"
    return m


def duplicate_output():
    """Two nodes write 'h': which one a reader gets is undefined."""
    m = mlp()
    m.graph.node[1].output[0] = "h"
    return m


def self_duplicate_output():
    return model([helper.make_node("Split", ["x"], ["a", "a"], name="split", axis=0)],
                 [tensor("x", [4])], [tensor("a", [2])])


def duplicate_input():
    return model([helper.make_node("Add", ["x", "x"], ["y"], name="add")],
                 [tensor("x", [4]), tensor("x", [4])], [tensor("y", [4])])


def duplicate_initializer():
    """Two initializers named 'W' (the last used to win silently)."""
    m = mlp()
    w = onnx.TensorProto()
    w.CopyFrom(m.graph.initializer[0])
    m.graph.initializer.append(w)
    return m


def string_attribute():
    """Softmax axis="one": an attribute of the wrong type, not a default."""
    m = mlp()
    del m.graph.node[3].attribute[:]
    m.graph.node[3].attribute.append(helper.make_attribute("axis", "one"))
    return m


def float_attribute():
    m = mlp()
    del m.graph.node[3].attribute[:]
    m.graph.node[3].attribute.append(helper.make_attribute("axis", 1.5))
    return m


def typeless_attribute():
    """An attribute that declares INT but holds nothing."""
    m = mlp()
    del m.graph.node[3].attribute[:]
    a = m.graph.node[3].attribute.add()
    a.name, a.type = "axis", onnx.AttributeProto.INT
    return m


def zero_stride():
    """Conv with auto_pad SAME and a stride of 0 (found by the fuzzer: the
    padding computation divides by the stride)."""
    m = conv_bn()
    conv = m.graph.node[0]
    for attribute in conv.attribute:
        if attribute.name == "strides":
            attribute.ints[:] = [0, 2]
    return m


def overflow_input():
    """Dimensions whose product overflows int64."""
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [tensor("x", [1 << 40, 1 << 30])], [tensor("y", [1 << 40, 1 << 30])])


def overflow_result():
    """Each input fits; the broadcast of the two does not."""
    return model([helper.make_node("Add", ["x", "y"], ["z"], name="add")],
                 [tensor("x", [1 << 40, 1]), tensor("y", [1, 1 << 40])],
                 [tensor("z", [1 << 40, 1 << 40])])


def overflow_initializer():
    m = mlp()
    m.graph.initializer[0].dims[:] = [1 << 62, 4]
    return m


def integer_mean():
    """Mean is defined on floats only."""
    return model([helper.make_node("Mean", ["a", "b"], ["y"], name="mean")],
                 [tensor("a", [4], TensorProto.INT32), tensor("b", [4], TensorProto.INT32)],
                 [tensor("y", [4], TensorProto.INT32)])


def float_mod():
    """Mod of floats without fmod=1, which ONNX forbids."""
    return model([helper.make_node("Mod", ["a", "b"], ["y"], name="mod")],
                 [tensor("a", [4]), tensor("b", [4])], [tensor("y", [4])])


def wide_slope():
    """PRelu whose slope is wider than its input."""
    return model([helper.make_node("PRelu", ["x", "s"], ["y"], name="prelu")],
                 [tensor("x", [4]), tensor("s", [2, 4])], [tensor("y", [4])])


def resize_area():
    """Resize in a mode ONNX does not have."""
    return model([helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize",
                                   mode="area")],
                 [tensor("x", [1, 1, 4, 4])], [tensor("y", [1, 1, 8, 8])],
                 [const("scales", np.array([1, 1, 2, 2], np.float32))])


def resize_short_scales():
    """Resize with a scale for two of four dimensions."""
    return model([helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize")],
                 [tensor("x", [1, 1, 4, 4])], [tensor("y", [1, 1, 8, 8])],
                 [const("scales", np.array([2, 2], np.float32))])


def topk_two_ks():
    """TopK whose k input holds two values."""
    return model([helper.make_node("TopK", ["x", "k"], ["v", "i"], name="topk")],
                 [tensor("x", [3, 8])],
                 [tensor("v", [3, 2]), tensor("i", [3, 2], TensorProto.INT64)],
                 [const("k", np.array([2, 3], np.int64))])


def topk_too_many():
    """TopK asking for more elements than its axis has."""
    return model([helper.make_node("TopK", ["x", "k"], ["v", "i"], name="topk",
                                   axis=0)],
                 [tensor("x", [3, 8])],
                 [tensor("v", [4, 8]), tensor("i", [4, 8], TensorProto.INT64)],
                 [const("k", np.array([4], np.int64))])


def lrn_no_size():
    """LRN without its required size."""
    return model([helper.make_node("LRN", ["x"], ["y"], name="lrn")],
                 [tensor("x", [1, 4, 3, 3])], [tensor("y", [1, 4, 3, 3])])


def lrn_flat():
    """LRN on a 2-D input, which has no window of channels to sum over."""
    return model([helper.make_node("LRN", ["x"], ["y"], name="lrn", size=3)],
                 [tensor("x", [2, 4])], [tensor("y", [2, 4])])


def loss_reduction():
    """A loss reduced in a way ONNX does not define."""
    return model([helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"],
                                   name="nll", reduction="max")],
                 [tensor("x", [2, 3]), tensor("t", [2], TensorProto.INT64)],
                 [tensor("y", [])])


def loss_weights():
    """Cross-entropy with two class weights for three classes."""
    return model([helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["y"],
                                   name="sce")],
                 [tensor("x", [2, 3]), tensor("t", [2], TensorProto.INT64)],
                 [tensor("y", [])], [const("w", np.array([1, 2], np.float32))])


def loss_float_targets():
    """NLL whose targets are floats."""
    return model([helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"],
                                   name="nll")],
                 [tensor("x", [2, 3]), tensor("t", [2])], [tensor("y", [])])


def reverse_lengths():
    """ReverseSequence with three lengths for a batch of two."""
    return model([helper.make_node("ReverseSequence", ["x", "n"], ["y"], name="rev")],
                 [tensor("x", [5, 2, 3]), tensor("n", [3], TensorProto.INT64)],
                 [tensor("y", [5, 2, 3])])


def unpool_no_kernel():
    """MaxUnpool without kernel_shape."""
    return model([helper.make_node("MaxUnpool", ["x", "i"], ["y"], name="unpool")],
                 [tensor("x", [1, 1, 2, 2]), tensor("i", [1, 1, 2, 2], TensorProto.INT64)],
                 [tensor("y", [1, 1, 4, 4])])


def unpool_smaller():
    """MaxUnpool to an output_shape smaller than the unpooled shape."""
    return model([helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], name="unpool",
                                   kernel_shape=[2, 2], strides=[2, 2])],
                 [tensor("x", [1, 1, 2, 2]), tensor("i", [1, 1, 2, 2], TensorProto.INT64)],
                 [tensor("y", [1, 1, 3, 3])],
                 [const("s", np.array([1, 1, 3, 3], np.int64))])


def dynamic_quantize_double():
    """DynamicQuantizeLinear of float64 values."""
    return model([helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"],
                                   name="dql")],
                 [tensor("x", [4], TensorProto.DOUBLE)],
                 [tensor("y", [4], TensorProto.UINT8), tensor("s", []),
                  tensor("z", [], TensorProto.UINT8)])


def grid_sample_mode():
    """GridSample in a mode ONNX does not define."""
    return model([helper.make_node("GridSample", ["x", "g"], ["y"], name="warp",
                                   mode="area")],
                 [tensor("x", [1, 2, 4, 4]), tensor("g", [1, 3, 3, 2])],
                 [tensor("y", [1, 2, 3, 3])], opset=16)


def grid_sample_volume():
    """GridSample of a 5-D volume (opset 20's 3-D sampling)."""
    return model([helper.make_node("GridSample", ["x", "g"], ["y"], name="warp")],
                 [tensor("x", [1, 2, 4, 4, 4]), tensor("g", [1, 3, 3, 3, 3])],
                 [tensor("y", [1, 2, 3, 3, 3])], opset=16)


def dft_axis():
    """DFT over the trailing (real, imaginary) dimension."""
    return model([helper.make_node("DFT", ["x"], ["y"], name="dft", axis=2)],
                 [tensor("x", [1, 8, 2])], [tensor("y", [1, 8, 2])], opset=17)


def stft_long_frame():
    """STFT whose window is longer than the signal."""
    return model([helper.make_node("STFT", ["x", "s", "w"], ["y"], name="stft")],
                 [tensor("x", [1, 8, 1])], [tensor("y", [1, 1, 9, 2])],
                 [const("s", np.array(4, np.int64)), const("w", np.ones(16, np.float32))],
                 opset=17)


def compress_at_run_time():
    """Compress whose condition is a graph input."""
    return model([helper.make_node("Compress", ["x", "c"], ["y"], name="pick", axis=0)],
                 [tensor("x", [3, 2]), tensor("c", [3], TensorProto.BOOL)],
                 [tensor("y", [2, 2])])


def dft_huge():
    """A DFT length whose transform matrix would not fit in memory."""
    return model([helper.make_node("DFT", ["x", "n"], ["y"], name="dft", axis=1)],
                 [tensor("x", [1, 8, 1])], [tensor("y", [1, 1 << 40, 2])],
                 [const("n", np.array(1 << 40, np.int64))], opset=17)


def unpool_zero_stride():
    """MaxUnpool with a stride of 0."""
    return model([helper.make_node("MaxUnpool", ["x", "i"], ["y"], name="unpool",
                                   kernel_shape=[2, 2], strides=[0, 2])],
                 [tensor("x", [1, 1, 2, 2]), tensor("i", [1, 1, 2, 2], TensorProto.INT64)],
                 [tensor("y", [1, 1, 4, 4])])


def det_order():
    """Det of matrices too large to unroll the elimination of."""
    return model([helper.make_node("Det", ["x"], ["y"], name="det")],
                 [tensor("x", [2, 129, 129])], [tensor("y", [2])])


def pool3d_pads():
    """A 3-D MaxPool with 2-D pads."""
    return model([helper.make_node("MaxPool", ["x"], ["y"], name="pool",
                                   kernel_shape=[2, 2, 2], pads=[1, 1, 1, 1])],
                 [tensor("x", [1, 2, 4, 4, 4])], [tensor("y", [1, 2, 5, 5, 5])])


def mel_huge():
    """A mel filter bank of 2^39 spectrogram bins."""
    values = [("m", np.int64(8)), ("n", np.int64(1 << 40)), ("r", np.int64(8000)),
              ("lo", np.float32(0)), ("hi", np.float32(4000))]
    return model([helper.make_node("MelWeightMatrix", [n for n, _ in values], ["y"],
                                   name="mel")],
                 [], [tensor("y", [None, 8])], [const(n, v) for n, v in values], opset=17)


def conv3d_dilation():
    """A 3-D convolution whose depth dilation would overflow its window."""
    return model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv",
                                   dilations=[1 << 62, 1, 1])],
                 [tensor("x", [1, 1, 4, 4, 4])], [tensor("y", [1, 1, 2, 4, 4])],
                 [const("w", np.zeros([1, 1, 3, 1, 1], np.float32))])


def conv3d_deep():
    """A 3-D convolution with more depth taps than Cuvil unrolls."""
    return model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
                 [tensor("x", [1, 1, 300, 2, 2])], [tensor("y", [1, 1, 1, 2, 2])],
                 [const("w", np.zeros([1, 1, 300, 1, 1], np.float32))])


CASES = {f.__name__: f for f in (
    conv3d_dilation, conv3d_deep, det_order, pool3d_pads, mel_huge, dft_huge, unpool_zero_stride, compress_at_run_time, dft_axis, stft_long_frame, grid_sample_mode, grid_sample_volume, reverse_lengths, unpool_no_kernel, unpool_smaller, dynamic_quantize_double,
    loss_reduction, loss_weights, loss_float_targets, lrn_no_size, lrn_flat, topk_two_ks, topk_too_many, integer_mean, float_mod, wide_slope, resize_area, resize_short_scales,
    duplicate_output, self_duplicate_output, duplicate_input, duplicate_initializer,
    string_attribute, float_attribute, typeless_attribute, overflow_input,
    overflow_result, overflow_initializer, zero_stride,
    scripted_shape_mismatch, traced_unsupported,
    mlp, flatten_dynamic, conv_bn, unsupported, dangling, dtype_mismatch,
    shape_mismatch, negative_dim, bad_initializer_size, unsupported_dtype,
    old_opset, missing_output, runtime_reshape)}


def main():
    case, out = sys.argv[1], sys.argv[2]
    if case == "truncated":
        data = mlp().SerializeToString()
        with open(out, "wb") as f:
            f.write(data[: len(data) // 2])
        return
    if case.startswith("external"):
        broken = case.split("_", 1)[1] if "_" in case else None
        m = external_data(out, broken)
    else:
        m = CASES[case]()
    with open(out, "wb") as f:
        f.write(m.SerializeToString())


if __name__ == "__main__":
    main()
