"""Control flow: TorchScript `if` / `for` / `while` (exported as ONNX If and
Loop) compiled by cuvil.compile and checked against TorchScript itself on
inputs that take every branch, with a dynamic batch, nested in each other,
and in a scripted beam search; ONNX If / Loop / Scan models built by hand
(outer-scope values, scan outputs, reversed and moved scan axes) checked
against numpy; and the errors for shapes that would depend on the data."""

import pathlib
import sys

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

import cuvil

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"
                       / "models"))
import held_out_models  # noqa: E402

HERE = __file__


def line_of(text):
    with open(HERE) as source:
        return next(i for i, line in enumerate(source, 1) if text in line)


def close(got, expected, tolerance=1e-5):
    got = torch.as_tensor(np.asarray(got))
    scale = max(float(expected.abs().max()), 1.0)
    return got.shape == expected.shape and \
        float((got - expected).abs().max()) <= tolerance * scale


@torch.jit.script
def branches_and_loops(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if bool(x.sum() > 0):
        z = x * 2
    else:
        z = x - y
    for _ in range(3):
        z = z + y
    while bool(z.abs().sum() < 50.0):
        z = z * 2 + 1
    return z


def test_if_for_and_while_match_torchscript_on_every_path():
    compiled = cuvil.compile(branches_and_loops, [("x", torch.float32, (2, 3)),
                                                  ("y", torch.float32, (2, 3))])
    taken = set()
    for seed in range(8):
        generator = torch.Generator().manual_seed(seed)
        x = torch.rand(2, 3, generator=generator) * (1 if seed % 2 else -1)
        y = torch.rand(2, 3, generator=generator) * (0.1 if seed % 4 < 2 else 20)
        expected = branches_and_loops(x, y)
        assert close(compiled(x, y), expected), seed
        after_for = (x * 2 if x.sum() > 0 else x - y) + 3 * y
        taken.add((bool(x.sum() > 0), bool(after_for.abs().sum() < 50.0)))
    # Both branches, and the while loop run and skipped.
    assert taken == {(True, True), (True, False), (False, True),
                     (False, False)}


def test_loop_over_a_shape_with_an_if_inside_on_a_dynamic_batch():
    torch.manual_seed(0)
    model = torch.jit.script(held_out_models.Recurrence().eval())
    compiled = cuvil.compile(model, [("h", torch.float32, (None, 8)),
                                     ("shift", torch.float32, (None, 1))],
                             max_batch=6)
    for batch, shift in ((1, 0.0), (4, 2.0), (6, -2.0)):
        h = torch.randn(batch, 8)
        shifts = torch.full((batch, 1), shift)
        with torch.no_grad():
            expected = model(h, shifts)
        assert close(compiled(h, shifts), expected), (batch, shift)


@torch.jit.script
def loop_in_branch(x: torch.Tensor, n: int) -> torch.Tensor:
    if bool(x.max() > 1.0):
        for _ in range(n):
            x = torch.sqrt(x.abs() + 1.0)
        return x
    return torch.zeros_like(x) - 1.0


class LoopInBranch(torch.nn.Module):
    def forward(self, x):
        return loop_in_branch(x, 4)


def test_a_loop_inside_a_branch():
    compiled = cuvil.compile(torch.jit.script(LoopInBranch()),
                             [("x", torch.float32, (3, 4))])
    for scale in (5.0, 0.5):
        x = torch.rand(3, 4) * scale
        assert close(compiled(x), loop_in_branch(x, 4)), scale


def test_scripted_beam_search_matches_torchscript():
    torch.manual_seed(3)
    model = torch.jit.script(held_out_models.BeamSearch().eval())
    compiled = cuvil.compile(model, [("h0", torch.float32, (2, 16))])
    for seed in range(4):
        h0 = torch.randn(2, 16, generator=torch.Generator().manual_seed(seed))
        with torch.no_grad():
            tokens, scores = model(h0)
        got_tokens, got_scores = compiled(h0)
        assert np.array_equal(np.asarray(got_tokens), tokens.numpy()), seed
        assert close(got_scores, scores, 1e-4), seed


@torch.jit.script
def growing(x: torch.Tensor) -> torch.Tensor:
    for _ in range(3):  # x doubles each step
        x = torch.cat([x, x], dim=0)
    return x


def test_a_carried_value_that_grows_is_an_error_naming_it():
    with pytest.raises(cuvil.CompileError) as error:
        cuvil.compile(growing, [("x", torch.float32, (2, 3))])
    text = str(error.value)
    assert "Loop carried value #0" in text
    assert "tensor<2x3xf32>" in text and "tensor<4x3xf32>" in text
    assert "keep its shape" in text
    # At the user's loop.
    assert error.value.location.startswith(
        f"{HERE}:{line_of('# x doubles each step')}:")


# ONNX models built by hand, checked against numpy.

def scalar(name, dtype, value):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name, dtype, [], [value]))


def compile_onnx(graph, opset=17):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    return cuvil.compile(model)


def test_onnx_if_reads_outer_values():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3])
    then = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"])], "then", [],
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, [2, 3])])
    other = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["n"])], "else", [],
        [helper.make_tensor_value_info("n", TensorProto.FLOAT, [2, 3])])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["out"], then_branch=then,
                          else_branch=other)], "g", [c, x], [out])
    compiled = compile_onnx(graph)
    data = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_array_equal(compiled(np.array(True), data),
                                  np.maximum(data, 0))
    np.testing.assert_array_equal(compiled(np.array(False), data), -data)


@pytest.mark.parametrize("value, taken", [(0.25, "then"), (0.0, "else"),
                                          (float("nan"), "then")])
def test_a_constant_float_cast_to_bool_is_nonzero(value, taken):
    # Cast's bool is x != 0 (NaN included), folded at compile time here.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    then = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"])], "then", [],
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, [2])])
    other = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["n"])], "else", [],
        [helper.make_tensor_value_info("n", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["v"], value=helper.make_tensor(
            "v", TensorProto.FLOAT, [], [value])),
         helper.make_node("Cast", ["v"], ["c"], to=TensorProto.BOOL),
         helper.make_node("If", ["c"], ["out"], then_branch=then,
                          else_branch=other)],
        "g", [x], [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2])])
    data = np.array([-1.0, 2.0], np.float32)
    expected = np.maximum(data, 0) if taken == "then" else -data
    np.testing.assert_array_equal(compile_onnx(graph)(data), expected)


def test_onnx_loop_with_scan_outputs_and_an_early_stop_free_body():
    # y_{i+1} = y_i + x[i]; the scan output stacks every y_{i+1}.
    m = helper.make_tensor_value_info("m", TensorProto.INT64, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    table = helper.make_tensor_value_info("table", TensorProto.FLOAT, [5, 4])
    body = loop_body(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Gather", ["table", "i"], ["row"], axis=0),
         helper.make_node("Add", ["y_in", "row"], ["y_out"]),
         helper.make_node("Identity", ["y_out"], ["scan"])], [4])
    graph = helper.make_graph(
        [scalar("m", TensorProto.INT64, 5),
         helper.make_node("Loop", ["m", "", "y"], ["final", "rows"],
                          body=body)],
        "g", [y, table],
        [helper.make_tensor_value_info("final", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("rows", TensorProto.FLOAT, [5, 4])])
    compiled = compile_onnx(graph)
    rng = np.random.default_rng(1)
    y0 = rng.standard_normal(4).astype(np.float32)
    data = rng.standard_normal((5, 4)).astype(np.float32)
    final, rows = compiled(y0, data)
    expected = y0 + np.cumsum(data, axis=0)
    np.testing.assert_allclose(rows, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(final, expected[-1], rtol=1e-6, atol=1e-6)


def test_range_as_its_onnx_function_computes_it():
    # ONNX's Range function: a trip count ceil((limit - start) / delta)
    # computed from constants (folded at compile time), and a Loop whose
    # scan output is the carried value as each iteration finds it (before
    # the body's update replaces it).
    def const(name, value):
        return helper.make_node("Constant", [], [name], value=helper.make_tensor(
            name, TensorProto.FLOAT, [], [value]))
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Add", ["prev", "delta"], ["current"]),
         helper.make_node("Identity", ["prev"], ["row"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("prev", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("current", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("row", TensorProto.FLOAT, [])])
    nodes = [const("start", 1.0), const("limit", 6.5), const("delta", 1.5),
             helper.make_node("Sub", ["limit", "start"], ["span"]),
             helper.make_node("Div", ["span", "delta"], ["steps"]),
             helper.make_node("Ceil", ["steps"], ["up"]),
             helper.make_node("Relu", ["up"], ["count"]),
             helper.make_node("Cast", ["count"], ["trips"], to=TensorProto.INT64),
             helper.make_node("Cast", ["count"], ["go"], to=TensorProto.BOOL),
             helper.make_node("Loop", ["trips", "go", "start"], ["last", "range"],
                              body=body)]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    nodes.append(helper.make_node("Mul", ["x", "delta"], ["scaled"]))
    graph = helper.make_graph(nodes, "g", [x], [
        helper.make_tensor_value_info("range", TensorProto.FLOAT, [4]),
        helper.make_tensor_value_info("scaled", TensorProto.FLOAT, [4])])
    compiled = compile_onnx(graph, opset=13)
    got, _ = compiled(np.ones(4, np.float32))
    np.testing.assert_array_equal(got, np.arange(1.0, 6.5, 1.5, dtype=np.float32))


def test_onnx_scan_reverse_input_and_moved_output_axis():
    # A running sum over axis 1 of x, read last to first, written along
    # axis 1 of the output in reverse.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])
    s = helper.make_tensor_value_info("s", TensorProto.FLOAT, [2])
    body = helper.make_graph(
        [helper.make_node("Add", ["acc", "col"], ["next"]),
         helper.make_node("Identity", ["next"], ["out"])],
        "body",
        [helper.make_tensor_value_info("acc", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("col", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("next", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("out", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["s", "x"], ["total", "sums"], body=body,
                          num_scan_inputs=1, scan_input_axes=[1],
                          scan_input_directions=[1], scan_output_axes=[1],
                          scan_output_directions=[1])],
        "g", [s, x],
        [helper.make_tensor_value_info("total", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("sums", TensorProto.FLOAT, [2, 5])])
    compiled = compile_onnx(graph)
    rng = np.random.default_rng(2)
    s0 = rng.standard_normal(2).astype(np.float32)
    data = rng.standard_normal((2, 5)).astype(np.float32)
    total, sums = compiled(s0, data)
    running = s0[:, None] + np.cumsum(data[:, ::-1], axis=1)  # step j reads x[:, 4-j]
    np.testing.assert_allclose(total, running[:, -1], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(sums, running[:, ::-1], rtol=1e-6, atol=1e-6)


def scan8_model(batch=2, length=3, sequence_lens=None, **attributes):
    """ONNX's Scan before opset 9: states [B, 2] and x [B, length, 2], a
    running sum per batch element; sequence_lens, if given, a constant."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, length, 2])
    s = helper.make_tensor_value_info("s", TensorProto.FLOAT, [batch, 2])
    body = helper.make_graph(
        [helper.make_node("Add", ["acc", "row"], ["next"]),
         helper.make_node("Identity", ["next"], ["out"])], "body",
        [helper.make_tensor_value_info("acc", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("row", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("next", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("out", TensorProto.FLOAT, [2])])
    nodes = []
    if sequence_lens is not None:
        nodes.append(helper.make_node("Constant", [], ["lens"], value=helper.make_tensor(
            "lens", TensorProto.INT32, [batch], sequence_lens)))
    nodes.append(helper.make_node(
        "Scan", ["lens" if sequence_lens is not None else "", "s", "x"],
        ["total", "sums"], name="scan", body=body, num_scan_inputs=1,
        **attributes))
    graph = helper.make_graph(
        nodes, "g", [s, x],
        [helper.make_tensor_value_info("total", TensorProto.FLOAT, [batch, 2]),
         helper.make_tensor_value_info("sums", TensorProto.FLOAT,
                                       [batch, length, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])


@pytest.mark.parametrize("directions, sequence_lens",
                         [(None, None), ([1], [3, 3])],
                         ids=["forward", "reverse-full-lengths"])
def test_opset_8_scan_runs_each_batch_element(directions, sequence_lens):
    # Before opset 9 a Scan carries a batch dimension: each element's
    # states and rows are a Scan of their own.
    attributes = {"directions": directions} if directions else {}
    compiled = cuvil.compile(scan8_model(sequence_lens=sequence_lens,
                                         **attributes))
    rng = np.random.default_rng(3)
    s0 = rng.standard_normal((2, 2)).astype(np.float32)
    data = rng.standard_normal((2, 3, 2)).astype(np.float32)
    total, sums = compiled(s0, data)
    rows = data[:, ::-1] if directions else data
    running = s0[:, None, :] + np.cumsum(rows, axis=1)
    np.testing.assert_allclose(total, running[:, -1], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(sums, running, rtol=1e-6, atol=1e-6)


def window_model(size=2, ends_op="Add"):
    """x[:, s:s + size] with s a run-time input (ends computed from it)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])
    s = helper.make_tensor_value_info("s", TensorProto.INT64, [1])
    nodes = [helper.make_node("Constant", [], ["k"], value=helper.make_tensor(
                 "k", TensorProto.INT64, [1], [size])),
             helper.make_node(ends_op, ["s", "k"], ["e"]),
             helper.make_node("Constant", [], ["axes"], value=helper.make_tensor(
                 "axes", TensorProto.INT64, [1], [1])),
             helper.make_node("Slice", ["x", "s", "e", "axes"], ["y"],
                              name="window")]
    graph = helper.make_graph(nodes, "g", [x, s], [
        helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, size])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_a_window_at_a_run_time_start_slices_as_onnx_does():
    # ONNX counts a negative start from the end and clamps the window to
    # the dimension; a start whose window would not hold its 2 columns
    # (clamped, or crossing from the end to the front) is the call's error.
    compiled = cuvil.compile(window_model())
    data = np.arange(15, dtype=np.float32).reshape(3, 5)
    for start in range(-7, 7):
        expected = data[:, start:start + 2]  # Python slices as ONNX does
        if expected.shape[1] == 2:
            np.testing.assert_array_equal(
                compiled(data, np.array([start])), expected, err_msg=str(start))
        else:
            with pytest.raises(RuntimeError, match="invalid argument"):
                compiled(data, np.array([start]))


def test_a_loop_slices_its_rows_by_the_iteration():
    # for i in range(4): y += x[i:i + 1] (the ends: the start plus one), a
    # scan output stacking every y.
    body = loop_body(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Constant", [], ["one"], value=helper.make_tensor(
             "one", TensorProto.INT64, [], [1])),
         helper.make_node("Add", ["i", "one"], ["end"]),
         helper.make_node("Unsqueeze", ["i", "zero"], ["start1"]),
         helper.make_node("Unsqueeze", ["end", "zero"], ["end1"]),
         helper.make_node("Slice", ["table", "start1", "end1"], ["row"]),
         helper.make_node("Reshape", ["row", "shape"], ["flat"]),
         helper.make_node("Add", ["y_in", "flat"], ["y_out"]),
         helper.make_node("Identity", ["y_out"], ["scan"])], [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    table = helper.make_tensor_value_info("table", TensorProto.FLOAT, [4, 4])
    graph = helper.make_graph(
        [scalar("m", TensorProto.INT64, 4),
         helper.make_node("Constant", [], ["zero"], value=helper.make_tensor(
             "zero", TensorProto.INT64, [1], [0])),
         helper.make_node("Constant", [], ["shape"], value=helper.make_tensor(
             "shape", TensorProto.INT64, [1], [4])),
         helper.make_node("Loop", ["m", "", "y"], ["final", "rows"], body=body)],
        "g", [y, table],
        [helper.make_tensor_value_info("final", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("rows", TensorProto.FLOAT, [4, 4])])
    compiled = compile_onnx(graph)
    rng = np.random.default_rng(4)
    y0 = rng.standard_normal(4).astype(np.float32)
    data = rng.standard_normal((4, 4)).astype(np.float32)
    final, rows = compiled(y0, data)
    expected = y0 + np.cumsum(data, axis=0)
    np.testing.assert_allclose(rows, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(final, expected[-1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("model, message", [
    (lambda: window_model(ends_op="Mul"),
     "Slice with starts computed at run time (input 's') needs its ends to be "
     "the starts plus a constant (a window of fixed size)"),
    (lambda: window_model(size=0),
     "Slice with starts computed at run time (input 's') is empty: its ends "
     "are its starts plus 0"),
    (lambda: window_model(size=6),
     "Slice with starts computed at run time (input 's') takes a window of 6, "
     "more than the dimension's 5"),
], ids=["ends-not-start-plus-constant", "empty-window", "window-too-wide"])
def test_run_time_slices_of_unknown_size_are_errors(model, message):
    with pytest.raises(cuvil.CompileError) as error:
        cuvil.compile(model())
    assert message in str(error.value)
    assert error.value.node == "window"


def test_if_branches_of_different_shapes_are_an_error():
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    then = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["a"])], "then", [],
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [4])])
    other = helper.make_graph(
        [helper.make_node("Concat", ["x", "x"], ["b"], axis=0)], "else", [],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [8])])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["out"], name="pick",
                          then_branch=then, else_branch=other)],
        "g", [c, x], [helper.make_tensor_value_info("out", TensorProto.FLOAT,
                                                     [None])])
    with pytest.raises(cuvil.CompileError) as error:
        compile_onnx(graph)
    text = str(error.value)
    assert "'pick'" in text and "If output #0 ('out')" in text
    assert "tensor<4xf32>" in text and "tensor<8xf32>" in text


def test_scan_outputs_of_a_data_dependent_loop_are_an_error():
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    body = loop_body(
        [helper.make_node("ReduceSum", ["y_in"], ["total"], keepdims=0),
         scalar("limit", TensorProto.FLOAT, 10.0),
         helper.make_node("Less", ["total", "limit"], ["c_out"]),
         helper.make_node("Add", ["y_in", "y_in"], ["y_out"]),
         helper.make_node("Identity", ["y_out"], ["scan"])], [None, 4])
    graph = helper.make_graph(
        [scalar("m", TensorProto.INT64, 8),
         helper.make_node("Loop", ["m", "c", "y"], ["final", "rows"],
                          name="grow", body=body)],
        "g", [c, y],
        [helper.make_tensor_value_info("final", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("rows", TensorProto.FLOAT, [None, 4])])
    with pytest.raises(cuvil.CompileError) as error:
        compile_onnx(graph)
    text = str(error.value)
    assert "'grow'" in text and "scan outputs ('scan', ...)" in text
    assert "known only at run time" in text


def loop_body(nodes, scan_shape, condition_output="c_out"):
    """A Loop body over (i, c_in, y_in: float[4]) yielding (condition_output,
    y_out, scan) with scan of `scan_shape`."""
    return helper.make_graph(
        nodes, "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_in", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info(condition_output, TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_out", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("scan", TensorProto.FLOAT, scan_shape)])


def scan_model(x_shape, opset=17, **attributes):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)
    s = helper.make_tensor_value_info("s", TensorProto.FLOAT, [2])
    body = helper.make_graph(
        [helper.make_node("Add", ["acc", "col"], ["next"])], "body",
        [helper.make_tensor_value_info("acc", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("col", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("next", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["s", "x"], ["total"], name="scan",
                          body=body, num_scan_inputs=1, **attributes)],
        "g", [s, x], [helper.make_tensor_value_info("total", TensorProto.FLOAT,
                                                     [2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def if_model(condition_type, then_outputs=1):
    c = helper.make_tensor_value_info("c", condition_type, [])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    branch = helper.make_graph(
        [helper.make_node("Identity", ["x"], [f"a{i}"]) for i in range(then_outputs)],
        "then", [], [helper.make_tensor_value_info(f"a{i}", TensorProto.FLOAT, [4])
                     for i in range(then_outputs)])
    other = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["b"])], "else", [],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [4])])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["out"], name="pick", then_branch=branch,
                          else_branch=other)],
        "g", [c, x], [helper.make_tensor_value_info("out", TensorProto.FLOAT, [4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("model, message", [
    (lambda: if_model(TensorProto.FLOAT),
     "If expects a condition of one bool as input 0, got 'tensor<f32>'"),
    (lambda: if_model(TensorProto.BOOL, then_outputs=2),
     "If's then branch yields 2 values and its else branch 1"),
    (lambda: scan_model(["n", 5]),
     "Scan iterates over dimension 0 of 'tensor<?x5xf32>', which is known "
     "only at run time"),
    (lambda: scan8_model(batch=300),
     "Scan (opset 8) over a batch of 300: Cuvil builds one loop per batch "
     "element, at most 256; export with opset 9 or later"),
    (lambda: scan8_model(sequence_lens=[3, 2]),
     "Scan (opset 8) with sequence_lens shorter than the scan inputs' 3 "
     "steps is not supported; export with opset 9 or later"),
    (lambda: scan_model([2, 5], scan_input_axes=[0, 1]),
     "Scan's axes and directions need one entry per scan input and output"),
    (lambda: scan_model([2, 5], scan_input_axes=[2]),
     "Scan input axis 2 is out of range for 'tensor<2x5xf32>'"),
], ids=["if-condition-type", "if-branch-counts", "scan-dynamic-length",
        "scan8-batch-too-large", "scan8-short-sequence", "scan-axes-count",
        "scan-axis-range"])
def test_control_flow_errors_name_the_node(model, message):
    with pytest.raises(cuvil.CompileError) as error:
        cuvil.compile(model())
    assert message in str(error.value)
    assert error.value.node in ("pick", "scan")


def test_a_loop_body_with_the_wrong_inputs_is_an_error():
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"])], "body",
        [helper.make_tensor_value_info("c_in", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, [])])
    graph = helper.make_graph(
        [scalar("m", TensorProto.INT64, 3),
         helper.make_node("Loop", ["m", "", "y"], ["final"], name="walk",
                          body=body)],
        "g", [y], [helper.make_tensor_value_info("final", TensorProto.FLOAT, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(cuvil.CompileError) as error:
        cuvil.compile(model)
    assert "Loop carries 1 values, so its body takes 3 inputs and yields at " \
           "least 2 outputs, not 1 and 1" in str(error.value)
