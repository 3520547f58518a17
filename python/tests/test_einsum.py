"""torch.einsum (ONNX Einsum) compiled and checked against PyTorch: batched
products, attention, diagonals, sums, "...", the implicit output, three
operands, a dynamic batch, and the errors of bad equations."""

import pytest
import torch
from onnx import TensorProto, helper

import cuvil


class Einsum(torch.nn.Module):
    def __init__(self, equation):
        super().__init__()
        self.equation = equation

    def forward(self, *operands):
        return torch.einsum(self.equation, *operands) + 1


CASES = [
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 6)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 8), (2, 3, 6, 8)]),
    ("ii->i", [(5, 5)]),
    ("bii->bi", [(2, 4, 4)]),
    ("ij->", [(3, 7)]),
    ("ij->ji", [(3, 7)]),
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (2, 3, 5, 2)]),
    ("i,j->ij", [(4,), (6,)]),
    ("i,i->", [(9,), (9,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("bcd,bce->de", [(2, 3, 4), (2, 3, 5)]),
]


@pytest.mark.parametrize("equation,shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_matches_pytorch(equation, shapes):
    model = Einsum(equation)
    torch.manual_seed(len(equation))
    operands = [torch.randn(*shape) for shape in shapes]
    compiled = cuvil.compile(model, [(f"x{i}", torch.float32, s)
                                     for i, s in enumerate(shapes)])
    torch.testing.assert_close(compiled(*operands), model(*operands),
                               rtol=1e-5, atol=1e-5)


def test_attention_scores_with_a_dynamic_batch():
    model = Einsum("bqd,bkd->bqk")
    compiled = cuvil.compile(model, [("q", torch.float32, (None, 6, 16)),
                                     ("k", torch.float32, (None, 7, 16))],
                             max_batch=4)
    for batch in (1, 4):
        q, k = torch.randn(batch, 6, 16), torch.randn(batch, 7, 16)
        torch.testing.assert_close(compiled(q, k), model(q, k),
                                   rtol=1e-5, atol=1e-5)


def einsum_model(equation, shapes):
    inputs = [helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, s)
              for i, s in enumerate(shapes)]
    node = helper.make_node("Einsum", [i.name for i in inputs], ["y"],
                            equation=equation, name="einsum")
    model = helper.make_model(
        helper.make_graph([node], "einsum", inputs,
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]),
        opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("equation,shapes,message", [
    ("ij,jk->ik", [(2, 3)], "has 2 input terms for 1 inputs"),
    ("ijk->ik", [(2, 3)], "has a term 'ijk' for an operand of rank 2"),
    ("i1->i", [(2, 3)], "with a character that is not a letter"),
    ("ij->iz", [(2, 3)], "whose labels are not each in an input"),
    ("ii->i", [(2, 3)], "takes a diagonal over equal static dimensions"),
])
def test_bad_equations_are_named(equation, shapes, message):
    with pytest.raises(cuvil.CompileError, match=message):
        cuvil.compile(einsum_model(equation, shapes))


class Matmul(torch.nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


@pytest.mark.parametrize("dtype", [torch.float64, torch.int64, torch.int32])
def test_float64_and_integer_products_run_and_broadcast(dtype):
    # Not float32: a loop summing in the element type, as numpy does.
    compiled = cuvil.compile(Matmul(), [("a", dtype, (2, 3, 4, 5)),
                                        ("b", dtype, (3, 5, 6))])
    torch.manual_seed(0)
    if dtype.is_floating_point:
        a, b = torch.randn(2, 3, 4, 5, dtype=dtype), torch.randn(3, 5, 6, dtype=dtype)
    else:
        a = torch.randint(-1000, 1000, (2, 3, 4, 5), dtype=dtype)
        b = torch.randint(-1000, 1000, (3, 5, 6), dtype=dtype)
    got = compiled(a, b)
    assert got.dtype == dtype
    torch.testing.assert_close(got, torch.matmul(a, b), rtol=1e-12, atol=1e-12)
    einsum = cuvil.compile(Einsum("bij,jk->bik"), [("x0", dtype, (3, 4, 5)),
                                                   ("x1", dtype, (5, 3))])
    x, y = a[0], b[0, :, :3]
    torch.testing.assert_close(einsum(x, y), torch.einsum("bij,jk->bik", x, y) + 1)
