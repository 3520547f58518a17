"""torch.gather and Tensor.scatter / scatter_add (ONNX GatherElements and
ScatterElements) compiled and checked against PyTorch, with a dynamic batch
and an index out of range at call time."""

import pytest
import torch

import cuvil


class Gather(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, index):
        return torch.gather(x, self.dim, index) * 2


class Scatter(torch.nn.Module):
    def forward(self, x, index, src):
        return x.scatter(1, index, src) + 1


class ScatterAdd(torch.nn.Module):
    def forward(self, x, index, src):
        return x.scatter_add(1, index, src)


def test_gather_along_columns_with_a_dynamic_batch():
    compiled = cuvil.compile(Gather(1), [("x", torch.float32, (None, 7)),
                                         ("index", torch.int64, (None, 4))],
                             max_batch=6)
    torch.manual_seed(0)
    for batch in (1, 6):
        x = torch.randn(batch, 7)
        index = torch.randint(0, 7, (batch, 4))
        assert torch.equal(compiled(x, index), Gather(1)(x, index))


def test_gather_along_rows_reads_fewer_columns_than_data_has():
    compiled = cuvil.compile(Gather(0), [("x", torch.float32, (5, 6)),
                                         ("index", torch.int64, (3, 4))])
    x = torch.randn(5, 6)
    index = torch.randint(0, 5, (3, 4))
    assert torch.equal(compiled(x, index), Gather(0)(x, index))


def test_scatter_writes_the_updates_over_a_copy():
    compiled = cuvil.compile(Scatter(), [("x", torch.float32, (3, 8)),
                                         ("index", torch.int64, (3, 2)),
                                         ("src", torch.float32, (3, 2))])
    x, src = torch.randn(3, 8), torch.randn(3, 2)
    # Distinct columns per row: PyTorch leaves duplicates' winner undefined.
    index = torch.stack([torch.randperm(8)[:2] for _ in range(3)])
    assert torch.equal(compiled(x, index, src), Scatter()(x, index, src))


def test_scatter_add_sums_duplicate_indices():
    compiled = cuvil.compile(ScatterAdd(), [("x", torch.float32, (2, 4)),
                                            ("index", torch.int64, (2, 6)),
                                            ("src", torch.float32, (2, 6))])
    x, src = torch.randn(2, 4), torch.randn(2, 6)
    index = torch.tensor([[0, 0, 3, 3, 3, 1], [2, 2, 2, 2, 0, 0]])
    assert torch.allclose(compiled(x, index, src), ScatterAdd()(x, index, src),
                          rtol=1e-6, atol=1e-6)


def test_an_index_out_of_range_is_an_error_not_a_read_outside_the_tensor():
    compiled = cuvil.compile(Gather(1), [("x", torch.float32, (2, 3)),
                                         ("index", torch.int64, (2, 2))])
    with pytest.raises(RuntimeError, match="invalid argument"):
        compiled(torch.randn(2, 3), torch.tensor([[0, 1], [2, 3]]))
    with pytest.raises(RuntimeError, match="invalid argument"):
        compiled(torch.randn(2, 3), torch.tensor([[0, 1], [-4, 0]]))
    # Negative indices within range count from the end, as ONNX says.
    x = torch.randn(2, 3)
    got = compiled(x, torch.tensor([[-1, 0], [-3, -2]]))
    assert torch.equal(got, Gather(1)(x, torch.tensor([[2, 0], [0, 1]])))
