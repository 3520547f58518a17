"""torch.topk (ONNX TopK) compiled and checked against PyTorch, and against
numpy's stable sort where PyTorch leaves the order of equal values open."""

import numpy as np
import pytest
import torch

import cuvil


class TopK(torch.nn.Module):
    def __init__(self, k, dim=-1, largest=True):
        super().__init__()
        self.k, self.dim, self.largest = k, dim, largest

    def forward(self, x):
        values, indices = torch.topk(x, self.k, dim=self.dim,
                                     largest=self.largest)
        return values * 2, indices


def check(compiled, model, x):
    values, indices = compiled(x)
    want_values, want_indices = model(x)
    assert indices.dtype == torch.int64
    assert torch.equal(values, want_values)
    assert torch.equal(indices, want_indices)


def test_largest_along_the_last_axis_with_a_dynamic_batch():
    model = TopK(5)
    compiled = cuvil.compile(model, [("x", torch.float32, (None, 20))],
                             max_batch=8)
    torch.manual_seed(0)
    for batch in (1, 3, 8):
        check(compiled, model, torch.randn(batch, 20))


@pytest.mark.parametrize("k", [1, 4, 9])
def test_smallest_along_a_middle_axis(k):
    model = TopK(k, dim=1, largest=False)
    compiled = cuvil.compile(model, [("x", torch.float32, (4, 9, 3))])
    torch.manual_seed(k)
    check(compiled, model, torch.randn(4, 9, 3))


@pytest.mark.parametrize("largest", [True, False])
def test_equal_values_come_in_order_of_position(largest):
    model = TopK(6, largest=largest)
    compiled = cuvil.compile(model, [("x", torch.float32, (5, 10))])
    x = torch.randint(0, 3, (5, 10)).float()
    values, indices = compiled(x)
    keys = -x.numpy() if largest else x.numpy()
    order = np.argsort(keys, axis=1, kind="stable")[:, :6]
    assert np.array_equal(indices.numpy(), order)
    assert np.array_equal(values.numpy(),
                          2 * np.take_along_axis(x.numpy(), order, axis=1))


def test_nan_ranks_above_every_number_as_in_pytorch():
    nan = float("nan")
    x = torch.tensor([[1.0, nan, 3.0, -2.0, nan, 0.5]])
    for largest in (True, False):
        model = TopK(3, largest=largest)
        compiled = cuvil.compile(model, [("x", torch.float32, (1, 6))])
        values, indices = compiled(x)
        want_values, want_indices = model(x)
        assert torch.equal(indices, want_indices)
        assert torch.allclose(values, want_values, equal_nan=True)


def test_int64_values_keep_every_bit():
    model = TopK(3)
    compiled = cuvil.compile(model, [("x", torch.int64, (2, 5))])
    base = 2 ** 62
    x = torch.tensor([[base + 1, base + 3, base + 2, -base, base],
                      [7, -1, 9, 9, 8]])
    values, indices = compiled(x)
    assert torch.equal(indices, torch.tensor([[1, 2, 0], [2, 3, 4]]))
    assert torch.equal(values, 2 * torch.tensor([[base + 3, base + 2, base + 1],
                                                 [9, 9, 8]]))


def test_a_batch_shorter_than_k_is_an_error_at_call_time(tmp_path):
    # Tracing needs a batch of at least k, so the model is exported with
    # the batch dynamic and compiled from ONNX.
    model, path = TopK(3, dim=0), tmp_path / "topk_batch.onnx"
    torch.onnx.export(model, torch.randn(5, 4), str(path), opset_version=14,
                      input_names=["x"], output_names=["values", "indices"],
                      dynamic_axes={"x": {0: "batch"}})
    compiled = cuvil.compile(str(path), max_batch=6)
    x = torch.randn(5, 4)
    check(compiled, model, x)
    with pytest.raises(RuntimeError, match="invalid argument"):
        compiled(torch.randn(2, 4))
