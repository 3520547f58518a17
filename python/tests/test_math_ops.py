"""Math functions, activations, logic, remainders, index and norm reductions
from PyTorch, compiled by cuvil.compile and checked against PyTorch on
inputs that reach every branch of each function (negative, zero, positive,
around each activation's knee)."""

import math

import pytest
import torch

import cuvil


def inputs(*shape, low=-4.0, high=4.0, seed=0):
    generator = torch.Generator().manual_seed(seed)
    x = torch.rand(*shape, generator=generator) * (high - low) + low
    x.view(-1)[:3] = torch.tensor([0.0, -0.5, 0.5])  # the knees
    return x


def check(model, *args, rtol=1e-5):
    signature = [(f"x{i}", a.dtype, tuple(a.shape)) for i, a in enumerate(args)]
    compiled = cuvil.compile(model, signature)
    with torch.no_grad():
        expected = model(*args)
    got = compiled(*args)
    if not isinstance(expected, tuple):
        expected, got = (expected,), (got,)
    for e, g in zip(expected, got):
        assert g.dtype == e.dtype and g.shape == e.shape
        if e.dtype.is_floating_point:
            scale = max(float(e.abs().max()), 1.0)
            assert float((g - e).abs().max()) <= rtol * scale, (e, g)
        else:
            assert torch.equal(g, e), (e, g)


# (name, function, input range): each a unary function of a float tensor.
# torch.onnx (1.13) exports no hyperbolic functions but tanh; the ONNX node
# tests check Cuvil's against ONNX's reference outputs.
UNARY = [
    ("sin", torch.sin, (-6, 6)),
    ("cos", torch.cos, (-6, 6)),
    ("tan", torch.tan, (-1.4, 1.4)),
    ("asin", torch.asin, (-1, 1)),
    ("acos", torch.acos, (-1, 1)),
    ("atan", torch.atan, (-8, 8)),
    ("floor", torch.floor, (-4, 4)),
    ("ceil", torch.ceil, (-4, 4)),
    ("sign", torch.sign, (-4, 4)),
    ("softplus", torch.nn.functional.softplus, (-30, 30)),
    ("softsign", torch.nn.functional.softsign, (-4, 4)),
    ("elu", lambda x: torch.nn.functional.elu(x, alpha=0.7), (-4, 4)),
    ("selu", torch.nn.functional.selu, (-4, 4)),
    ("celu", lambda x: torch.nn.functional.celu(x, alpha=1.5), (-4, 4)),
    ("leaky_relu", lambda x: torch.nn.functional.leaky_relu(x, 0.1), (-4, 4)),
    ("hardshrink", lambda x: torch.nn.functional.hardshrink(x, 0.5), (-2, 2)),
    ("softshrink", lambda x: torch.nn.functional.softshrink(x, 0.5), (-2, 2)),
]


class Unary(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


@pytest.mark.parametrize("name,fn,bounds", UNARY, ids=[u[0] for u in UNARY])
def test_unary_function_matches_pytorch(name, fn, bounds):
    x = inputs(4, 33, low=bounds[0], high=bounds[1])
    check(Unary(fn), x)


def test_round_takes_halves_to_even():
    x = torch.tensor([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999997, 3.7]])
    check(Unary(torch.round), x)


class Activations(torch.nn.Module):
    """A chain that fuses into one map, with a per-channel PReLU."""

    def __init__(self):
        super().__init__()
        self.prelu = torch.nn.PReLU(8)
        with torch.no_grad():
            self.prelu.weight.copy_(torch.linspace(-0.5, 0.5, 8))

    def forward(self, x):
        y = torch.nn.functional.leaky_relu(torch.sin(x), 0.2)
        return self.prelu(torch.nn.functional.elu(y) * 3.0 - 1.0)


def test_chained_activations_and_prelu_match_pytorch():
    check(Activations(), inputs(2, 8, 5, 5))


class Logic(torch.nn.Module):
    def forward(self, a, b):
        p, q = a > 0, b < 0.5
        keep = torch.logical_xor(torch.logical_and(p, q),
                                 ~torch.logical_or(p, torch.isnan(a)))
        return torch.where(keep, a, b), torch.isinf(a / b)


def test_logic_and_classification_match_pytorch():
    a, b = inputs(3, 17, seed=1), inputs(3, 17, seed=2)
    b.view(-1)[5] = 0.0  # a / 0 is an infinity
    check(Logic(), a, b)


class Remainders(torch.nn.Module):
    def forward(self, a, b, i, j):
        return torch.fmod(a, b), torch.remainder(i, j), torch.fmod(i, j)


def test_remainders_keep_the_sign_pytorch_gives_them():
    a, b = inputs(2, 9, seed=3) * 5, inputs(2, 9, seed=4)
    b[b.abs() < 0.1] = 0.75
    i = torch.tensor([[7, -7, 7, -7, 0, 13, -13, 5, 100]] * 2, dtype=torch.int32)
    j = torch.tensor([[3, 3, -3, -3, 4, 5, 5, -5, 7]] * 2, dtype=torch.int32)
    check(Remainders(), a, b, i, j)


class Indices(torch.nn.Module):
    def forward(self, x):
        return (torch.argmax(x, dim=1), torch.argmin(x, dim=-1, keepdim=True),
                torch.argmax(x.flatten(1), dim=1))


def test_argmax_and_argmin_match_pytorch():
    check(Indices(), inputs(3, 11, 6, seed=5))


class Norms(torch.nn.Module):
    def forward(self, x):
        return (torch.linalg.vector_norm(x, 2, dim=(1,)),
                x.abs().sum(dim=2, keepdim=True),
                torch.logsumexp(x * 10, dim=1),
                x.prod(dim=2),
                x.mean(dim=(0, 2)))


def test_norm_and_product_reductions_match_pytorch():
    check(Norms(), inputs(3, 7, 5, low=-2, high=2, seed=6), rtol=1e-5)


def test_integer_division_by_zero_is_zero_not_a_crash(tmp_path):
    """An integer divisor of 0 from a caller's input must not trap (x86
    faults on it); ONNX leaves the result undefined, Cuvil gives 0."""

    class Divide(torch.nn.Module):
        def forward(self, i, j):
            return torch.div(i, j, rounding_mode="trunc"), torch.fmod(i, j)

    compiled = cuvil.compile(Divide(), [("i", torch.int32, (5,)),
                                        ("j", torch.int32, (5,))])
    i = torch.tensor([7, -7, -2**31, 9, 0], dtype=torch.int32)
    j = torch.tensor([0, 2, -1, 0, 0], dtype=torch.int32)
    quotient, remainder = compiled(i, j)
    assert quotient.tolist() == [0, -3, -2**31, 0, 0]
    assert remainder.tolist() == [0, -1, 0, 0, 0]
    assert math.isfinite(float(quotient.sum()))


class Scans(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.InstanceNorm2d(3, affine=True)
        with torch.no_grad():
            self.norm.weight.copy_(torch.tensor([0.5, 1.0, 2.0]))
            self.norm.bias.copy_(torch.tensor([0.1, -0.2, 0.3]))

    def forward(self, x, labels):
        return (self.norm(x), torch.cumsum(x, dim=2),
                torch.nn.functional.one_hot(labels, 5).to(torch.float32))


def test_instance_norm_cumsum_and_one_hot_match_pytorch():
    x = inputs(2, 3, 6, 7, seed=7)
    labels = torch.tensor([[0, 4, 2], [1, 3, 4]], dtype=torch.int64)
    check(Scans(), x, labels)


def test_padded_average_pools_match_pytorch():
    """torch.onnx writes AvgPool2d(padding, count_include_pad=True) as Pad +
    AveragePool (Inception's branches): cuvil-fold-pads makes the zeros the
    pool's own, counted padding, here on a convolution's blocked output.
    count_include_pad=False and ceil mode keep their own forms."""

    class Pools(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(3)
            self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
            self.after = torch.nn.Conv2d(16, 16, 1)

        def forward(self, x):
            y = torch.relu(self.conv(x))
            a = torch.nn.functional.avg_pool2d(y, 3, stride=1, padding=1)
            b = torch.nn.functional.avg_pool2d(y, 3, stride=2, padding=1,
                                               count_include_pad=False)
            c = torch.nn.functional.avg_pool2d(y, 3, stride=2, padding=1,
                                               ceil_mode=True)
            return self.after(a), b, c

    check(Pools(), inputs(2, 3, 9, 10))


def test_max_pool_indices_match_pytorch():
    """max_pool2d / max_pool1d with return_indices (as MaxUnpool and
    segmentation decoders take them): torch.onnx writes MaxPool's Indices
    output (flattened over N and C) less each plane's offset. Ties take the
    first position, as PyTorch does; padding, strides, dilation and ceil
    mode move the windows."""

    class Pools(torch.nn.Module):
        def forward(self, x):
            a, i = torch.nn.functional.max_pool2d(x, 3, stride=2, padding=1,
                                                  return_indices=True)
            b, j = torch.nn.functional.max_pool2d(
                x, 2, stride=2, dilation=2, ceil_mode=True, return_indices=True)
            c, k = torch.nn.functional.max_pool1d(x.flatten(2), 4,
                                                  return_indices=True)
            return a, i, b, j, c, k

    x = inputs(2, 3, 9, 10).round()  # ties within windows
    check(Pools(), x)


def test_max_pool_indices_of_a_3d_pool_are_an_error():
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["y", "i"], name="pool3d",
                          kernel_shape=[2, 2, 2])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 3, 3, 3]),
         helper.make_tensor_value_info("i", TensorProto.INT64, [1, 1, 3, 3, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    with pytest.raises(cuvil.CompileError) as error:
        cuvil.compile(model)
    assert "MaxPool's Indices output of a 3-D pool is not supported" in str(error.value)
    assert error.value.node == "pool3d"


def test_functional_pad_matches_pytorch():
    """torch.onnx writes F.pad's pads through Reshape, a reversing Slice,
    Transpose and Cast of a constant: the importer folds them (a Pad whose
    pads it could not know was refused before)."""

    class Pads(torch.nn.Module):
        def forward(self, x):
            a = torch.nn.functional.pad(x, (1, 2, 0, 1), value=-0.5)
            b = torch.nn.functional.pad(x, (2, 1, 1, 2), mode="reflect")
            c = torch.nn.functional.pad(x, (0, 3, 1, 0), mode="replicate")
            return a, b, c

    check(Pads(), inputs(2, 3, 4, 5))




def lrn_reference(x, size, alpha, beta, bias):
    """ONNX LRN from its definition, in float64: channel c sums the squares
    of channels [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]."""
    x = x.double()
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    squares = torch.zeros_like(x)
    for c in range(x.shape[1]):
        lo, hi = max(0, c - before), min(x.shape[1] - 1, c + after)
        squares[:, c] = (x[:, lo:hi + 1] ** 2).sum(dim=1)
    return (x / (bias + alpha / size * squares) ** beta).float()


@pytest.mark.parametrize("size", [1, 4, 5])
def test_onnx_lrn_matches_its_definition_and_pytorch(size):
    # PyTorch exports LocalResponseNorm as pooling under an If, not as LRN;
    # LRN comes from ONNX models (AlexNet, the first GoogLeNet).
    from onnx import TensorProto, helper
    node = helper.make_node("LRN", ["x"], ["y"], size=size, alpha=2e-3,
                            beta=0.75, bias=2.0)
    shape = ["n", 7, 6, 5]
    model = helper.make_model(
        helper.make_graph([node], "lrn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)]),
        opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    compiled = cuvil.compile(model, max_batch=3)
    for batch in (1, 3):
        x = inputs(batch, 7, 6, 5, seed=batch) * 4
        got = compiled(x)
        torch.testing.assert_close(got, lrn_reference(x, size, 2e-3, 0.75, 2.0),
                                   rtol=1e-5, atol=1e-6)
        if size % 2:  # PyTorch centres even windows one channel earlier
            torch.testing.assert_close(got, torch.nn.functional.local_response_norm(
                x, size, alpha=2e-3, beta=0.75, k=2.0), rtol=1e-5, atol=1e-6)


def test_pytorch_local_response_norm_under_its_if():
    # PyTorch exports LocalResponseNorm as pooling under an If on the rank.
    module = torch.nn.LocalResponseNorm(3, alpha=1e-3, beta=0.75, k=2.0)
    compiled = cuvil.compile(module, [("x", torch.float32, (2, 6, 5, 5))])
    x = inputs(2, 6, 5, 5, seed=4) * 4
    torch.testing.assert_close(compiled(x), module(x), rtol=1e-5, atol=1e-6)
