"""ONNX GatherND and ScatterND compiled and checked against numpy loops
written from the ONNX operator definitions, with batch dimensions, a
dynamic batch, repeated tuples and a tuple out of range at call time."""

import itertools

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper

import cuvil


def graph(node, inputs, output, opset=16):
    model = helper.make_model(
        helper.make_graph([node], "nd", inputs, [output]),
        opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def gather_nd_reference(data, indices, batch_dims):
    """ONNX GatherND: each tuple of indices' last axis picks a slice of
    data after its batch dimensions."""
    m = indices.shape[-1]
    out = np.empty(indices.shape[:-1] + data.shape[batch_dims + m:], data.dtype)
    for position in itertools.product(*map(range, indices.shape[:-1])):
        batch = position[:batch_dims]
        coords = tuple(int(c) for c in indices[position])
        out[position] = data[batch + coords]
    return out


def scatter_nd_reference(data, indices, updates, reduction):
    out = data.copy()
    combine = {"none": lambda old, new: new, "add": np.add,
               "mul": np.multiply}[reduction]
    for position in itertools.product(*map(range, indices.shape[:-1])):
        coords = tuple(int(c) for c in indices[position])
        out[coords] = combine(out[coords], updates[position])
    return out


def test_gather_nd_picks_slices_with_negative_coordinates():
    node = helper.make_node("GatherND", ["data", "indices"], ["y"])
    model = graph(node, [helper.make_tensor_value_info("data", TensorProto.FLOAT, [4, 5, 3]),
                         helper.make_tensor_value_info("indices", TensorProto.INT64, [6, 2])],
                  helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 3]))
    compiled = cuvil.compile(model)
    rng = np.random.default_rng(0)
    data = rng.standard_normal((4, 5, 3)).astype(np.float32)
    indices = np.stack([rng.integers(-4, 4, 6), rng.integers(-5, 5, 6)], axis=1)
    got = compiled(torch.from_numpy(data), torch.from_numpy(indices)).numpy()
    np.testing.assert_array_equal(got, gather_nd_reference(data, indices % [4, 5], 0))


def test_gather_nd_with_a_batch_dimension_and_a_dynamic_batch():
    node = helper.make_node("GatherND", ["data", "indices"], ["y"], batch_dims=1)
    model = graph(node, [helper.make_tensor_value_info("data", TensorProto.INT64, ["n", 5, 3]),
                         helper.make_tensor_value_info("indices", TensorProto.INT64, ["n", 2, 1])],
                  helper.make_tensor_value_info("y", TensorProto.INT64, ["n", 2, 3]))
    compiled = cuvil.compile(model, max_batch=4)
    rng = np.random.default_rng(1)
    for batch in (1, 4):
        data = rng.integers(-2**62, 2**62, (batch, 5, 3))
        indices = rng.integers(0, 5, (batch, 2, 1))
        got = compiled(torch.from_numpy(data), torch.from_numpy(indices)).numpy()
        np.testing.assert_array_equal(got, gather_nd_reference(data, indices, 1))


@pytest.mark.parametrize("reduction", ["none", "add", "mul"])
def test_scatter_nd_applies_tuples_in_order(reduction):
    node = helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"],
                            reduction=reduction)
    model = graph(node, [helper.make_tensor_value_info("data", TensorProto.FLOAT, [4, 3, 2]),
                         helper.make_tensor_value_info("indices", TensorProto.INT64, [5, 1]),
                         helper.make_tensor_value_info("updates", TensorProto.FLOAT, [5, 3, 2])],
                  helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3, 2]))
    compiled = cuvil.compile(model)
    rng = np.random.default_rng(2)
    data = rng.standard_normal((4, 3, 2)).astype(np.float32)
    updates = rng.standard_normal((5, 3, 2)).astype(np.float32)
    # Row 1 twice: added (or multiplied) twice, or its last update kept.
    indices = np.array([[1], [3], [1], [-4], [2]])
    got = compiled(torch.from_numpy(data), torch.from_numpy(indices),
                   torch.from_numpy(updates)).numpy()
    want = scatter_nd_reference(data, indices % 4, updates, reduction)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_a_tuple_out_of_range_is_an_error_not_a_write_outside_the_tensor():
    node = helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"])
    model = graph(node, [helper.make_tensor_value_info("data", TensorProto.FLOAT, [3, 3]),
                         helper.make_tensor_value_info("indices", TensorProto.INT64, [2, 2]),
                         helper.make_tensor_value_info("updates", TensorProto.FLOAT, [2])],
                  helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 3]))
    compiled = cuvil.compile(model)
    data, updates = torch.zeros(3, 3), torch.ones(2)
    for bad in ([[0, 0], [3, 1]], [[0, -4], [1, 1]]):
        with pytest.raises(RuntimeError, match="invalid argument"):
            compiled(data, torch.tensor(bad), updates)
    got = compiled(data, torch.tensor([[0, -1], [2, 0]]), updates)
    assert torch.equal(got, torch.tensor([[0., 0., 1.], [0., 0., 0.], [1., 0., 0.]]))
