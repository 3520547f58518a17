"""Small ONNX models for the serving tests, compiled with cuvilc, with
NumPy references."""

import dataclasses
import pathlib
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


@dataclasses.dataclass
class Model:
    so: pathlib.Path
    reference: object  # callable: dict of inputs -> dict of outputs


def _save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def _mlp(seed):
    """y = relu(x W + b), z = sigmoid(y) with x: [N, 16] FP32, N <= 8."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"], name="matmul"),
         helper.make_node("Add", ["xw", "b"], ["pre"], name="add"),
         helper.make_node("Relu", ["pre"], ["y"], name="relu"),
         helper.make_node("Sigmoid", ["y"], ["z"], name="sigmoid")],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 8])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])

    def reference(inputs):
        y = np.maximum(inputs["x"].astype(np.float64) @ w + b, 0)
        return {"y": y, "z": 1 / (1 + np.exp(-y))}

    return graph, reference


def _typed():
    """Integer and boolean inputs: total = sum(ids * mask) per row (FP32),
    doubled = ids + ids (INT64)."""
    graph = helper.make_graph(
        [helper.make_node("Cast", ["ids"], ["idsf"], to=TensorProto.FLOAT, name="cast_ids"),
         helper.make_node("Cast", ["mask"], ["maskf"], to=TensorProto.FLOAT, name="cast_mask"),
         helper.make_node("Mul", ["idsf", "maskf"], ["kept"], name="mul"),
         helper.make_node("ReduceSum", ["kept", "axes"], ["total"], keepdims=1, name="sum"),
         helper.make_node("Add", ["ids", "ids"], ["doubled"], name="double")],
        "typed",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", 4]),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, ["N", 4])],
        [helper.make_tensor_value_info("total", TensorProto.FLOAT, ["N", 1]),
         helper.make_tensor_value_info("doubled", TensorProto.INT64, ["N", 4])],
        [numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")])

    def reference(inputs):
        ids, mask = inputs["ids"], inputs["mask"]
        return {"total": (ids * mask).sum(axis=1, keepdims=True).astype(np.float64),
                "doubled": ids * 2}

    return graph, reference


def _static():
    """A static [2, 3] model (no batch dimension): y = x * 2 + 1."""
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["x2"], name="mul"),
         helper.make_node("Add", ["x2", "one"], ["y"], name="add")],
        "static",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2, 3])],
        [numpy_helper.from_array(np.array(2.0), "two"),
         numpy_helper.from_array(np.array(1.0), "one")])
    return graph, lambda inputs: {"y": inputs["x"] * 2 + 1}


def build_all(cuvilc, out):
    out = pathlib.Path(out)
    specs = {
        "mlp": (_mlp(0), ["--max-batch=8"]),
        "mlp_v2": (_mlp(1), ["--max-batch=8"]),
        "typed": (_typed(), ["--max-batch=8"]),
        "static": (_static(), []),
    }
    built = {name: _compile(cuvilc, out, name, graph, reference, flags)
             for name, ((graph, reference), flags) in specs.items()}
    built["mlp_q"] = _int8_io_mlp(cuvilc, out)
    return built


def _int8_io_mlp(cuvilc, out):
    """The MLP quantized to int8 with integer I/O (x, y and z uint8). Its
    reference is the .so itself: the server carries its bytes."""
    graph, _ = _mlp(0)
    calibration = out / "mlp_q_calibration.npz"
    np.savez(calibration,
             x=np.random.default_rng(5).standard_normal((64, 16)).astype(np.float32))
    return _compile(cuvilc, out, "mlp_q", graph, None,
                    ["--max-batch=8", "--quantize=int8", "--integer-io",
                     f"--calibration={calibration}"])


def build_mlp(cuvilc, out, name, flags, seed=0):
    """The MLP (x: [N, 16] -> y, z: [N, 8]) compiled with `flags`."""
    graph, reference = _mlp(seed)
    return _compile(cuvilc, pathlib.Path(out), name, graph, reference, flags)


def _compile(cuvilc, out, name, graph, reference, flags):
    onnx_path = out / f"{name}.onnx"
    _save(graph, onnx_path)
    so = out / f"{name}.so"
    subprocess.run([cuvilc, str(onnx_path), "--quiet", "-o", str(so), *flags],
                   check=True, capture_output=True, text=True)
    return Model(so, reference)
