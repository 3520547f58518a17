"""Every user-facing error of the Python API: what it raises and says."""

import numpy as np
import pytest
import torch

import cuvil

HERE = __file__


def line_of(text):
    """The line of this file holding `text` (which must appear once)."""
    with open(HERE) as f:
        lines = [i + 1 for i, line in enumerate(f) if text in line]
    assert len(lines) == 2, (text, lines)  # the code, and this lookup
    return lines[0]


@torch.jit.script
def simple_classifier(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x @ torch.eye(10) * 0.1, dim=1)


def test_signature_that_does_not_fit_a_script_function():
    # The example: (1, 12) into a 10x10 matrix product.
    with pytest.raises(cuvil.CompileError) as error:
        cuvil.compile(simple_classifier, [("x", torch.float32, (1, 12))])
    line = line_of("x @ torch.eye(10)")
    assert error.value.op == "aten::matmul"
    assert error.value.location == f"{HERE}:{line}"
    assert "1x12 and 10x10" in str(error.value)


class TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(4, 8)
        self.second = torch.nn.Linear(8, 2)

    def forward(self, x):
        hidden = torch.relu(self.first(x))
        return self.second(hidden)


def test_signature_that_does_not_fit_a_module():
    with pytest.raises(cuvil.CompileError) as error:
        cuvil.compile(TwoLayers(), [("x", torch.float32, (3, 5))])
    line = line_of("self.first(x)")
    assert error.value.op == "Linear"
    assert error.value.location == f"{HERE}:{line}"
    assert "hidden = torch.relu" in str(error.value)


def branchy(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def test_data_dependent_control_flow_in_traced_code():
    with pytest.raises(cuvil.CompileError) as error:
        cuvil.compile(branchy, [("x", torch.float32, (2, 3))])
    assert error.value.location == f"{HERE}:{line_of('if x.sum()')}"
    assert "data-dependent control flow" in str(error.value)
    assert "torch.where" in str(error.value)


@torch.jit.script
def scripted_branch(x: torch.Tensor) -> torch.Tensor:
    if bool(x.sum() > 0):
        return torch.fft.ifft(x).abs()
    return x - 1


def test_an_op_inside_a_scripted_branch_is_reported_with_its_line():
    # Control flow compiles; what is inside a branch is checked like the rest.
    with pytest.raises(cuvil.CompileError) as error:
        cuvil.compile(scripted_branch, [("x", torch.float32, (2, 8))])
    line = line_of("return torch.fft.ifft(x)")
    assert error.value.op in ("fft_ifft", "abs")
    assert f"({HERE}:{line})" in str(error.value)
    assert "Nothing was compiled" in str(error.value)


def spectrum(x):
    return torch.fft.fft(x).abs()


def test_op_without_a_lowering_names_the_op_and_line():
    with pytest.raises(cuvil.CompileError) as error:
        cuvil.compile(spectrum, [("x", torch.float32, (2, 8))])
    line = line_of("torch.fft.fft")
    # Every op without a lowering is listed at once (here also the complex
    # abs), each with its node and line.
    assert "'fft_fft' (domain org.pytorch.aten" in str(error.value)
    assert error.value.op in ("abs", "fft_fft")
    assert error.value.location == f"{HERE}:{line}"


class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        # Exports aten::col2im, which Cuvil does not compile.
        self.norm = torch.nn.Fold((4, 4), 2)

    def forward(self, x):
        return self.norm(x)  # marker: forward


FOLD_SIGNATURE = [("x", torch.float32, (1, 8, 9))]


@torch.jit.script
def scripted_fold(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    return torch.nn.functional.fold(y, (4, 4), 2)  # marker: scripted call


class ScriptedTagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.Fold((4, 4), 2)

    def forward(self, x):
        if bool(x.sum() > 0):
            x = x * 2
        return self.helper(x)

    def helper(self, x):
        return self.norm(x)  # marker: scripted module call


@pytest.mark.parametrize("kind", ["module", "callable", "library module",
                                  "scripted function", "scripted module"])
def test_an_op_error_points_at_the_users_line_for_every_kind_of_capture(kind):
    """The innermost frame outside torch and Cuvil's own package: the user's
    forward, the user's function, for a torch module passed as it is the
    user's call of cuvil.compile (never Cuvil's _capture.py), and for
    scripted code the user's call of torch's function or module (TorchScript
    inlines it, and ONNX keeps only the position inside torch)."""
    tagger = Tagger()
    model = {"module": tagger,
             "callable": lambda x: tagger.norm(x),  # marker: lambda
             "library module": tagger.norm,
             "scripted function": scripted_fold,
             "scripted module": torch.jit.script(ScriptedTagger())}[kind]
    with pytest.raises(cuvil.CompileError) as error:
        cuvil.compile(model, FOLD_SIGNATURE)  # marker: compile
    text = {"module": "marker: forward", "callable": "marker: lambda",
            "library module": "marker: compile",
            "scripted function": "marker: scripted call",
            "scripted module": "marker: scripted module call"}[kind]
    assert error.value.op == "col2im"
    # TorchScript's positions also give the column.
    where = f"{HERE}:{line_of(text)}"
    assert error.value.location == where or \
        error.value.location.startswith(where + ":"), error.value.location
    assert "_capture.py" not in str(error.value)


def test_compiler_errors_carry_the_op_and_node_as_fields():
    # An ONNX model whose MatMul does not type-check: the fields come from
    # the compiler's diagnostic (cuvil._C builds the CompileError).
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="/fc/MatMul")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(np.eye(10, dtype=np.float32), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    with pytest.raises(cuvil.CompileError) as error:
        cuvil.compile(model)
    assert error.value.op == "cuvil.matmul"
    assert error.value.node == "/fc/MatMul"
    assert error.value.location is None  # no Python line in this model
    assert "contracting dimensions differ" in str(error.value)


def test_dynamic_dimension_other_than_the_batch():
    with pytest.raises(cuvil.CompileError, match="dimension 1 of input 'x'"):
        cuvil.compile(lambda x: x + 1, [("x", torch.float32, (2, None))])


@pytest.mark.parametrize("signature, message", [
    ("x", "list of"),
    ([("x", torch.float32)], "not a \\(name, dtype, shape\\) tuple"),
    ([("x", torch.complex64, (2,))], "unsupported dtype"),
    ([("x", torch.float32, (2, -3))], "dimension -3"),
    ([("x", torch.float32, 7)], "must be a tuple"),
    ([("x", torch.float32, (2,)), ("x", torch.float32, (2,))], "twice"),
    ([], "empty"),
])
def test_malformed_signature(signature, message):
    with pytest.raises(ValueError, match=message):
        cuvil.compile(lambda x: x, signature)


def test_torch_model_without_signature():
    with pytest.raises(ValueError, match="input_signature is required"):
        cuvil.compile(lambda x: x)


def test_not_a_model():
    with pytest.raises(TypeError, match="cannot compile a int"):
        cuvil.compile(42, [("x", torch.float32, (2,))])


def test_missing_and_wrong_kind_of_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        cuvil.compile(str(tmp_path / "missing.onnx"))
    with pytest.raises(ValueError, match="ONNX"):
        cuvil.compile(str(tmp_path / "model.pt"))
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"\x08\x07 this is not protobuf \xff\xff")
    with pytest.raises(cuvil.CompileError, match="not a valid ONNX model"):
        cuvil.compile(broken)


@pytest.mark.parametrize("options, message", [
    ({"threads": 0}, "threads"),
    ({"max_batch": 0}, "max_batch"),
    ({"max_batch": 4}, "dynamic batch"),
])
def test_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        cuvil.compile(lambda x: x + 1, [("x", torch.float32, (2,))], **options)


def test_bad_target_and_cpu():
    with pytest.raises(cuvil.CompileError, match="target"):
        cuvil.compile(lambda x: x + 1, [("x", torch.float32, (2,))],
                      target="riscv64-linux-gnu")
    with pytest.raises(cuvil.CompileError, match="cpu"):
        cuvil.compile(lambda x: x + 1, [("x", torch.float32, (2,))],
                      cpu="pentium-of-the-future")


def test_dynamic_batch_without_max_batch_warns():
    with pytest.warns(UserWarning, match="bounded to 1"):
        compiled = cuvil.compile(lambda x: x + 1,
                                 [("x", torch.float32, (None, 2))])
    assert compiled.max_batch == 1


@pytest.fixture(scope="module")
def batched():
    return cuvil.compile(lambda x, y: x * y,
                         [("x", torch.float32, (-1, 3)),
                          ("y", torch.float32, (-1, 3))], max_batch=4)


@pytest.mark.parametrize("inputs, message", [
    ((np.ones((2, 3), np.float32),), "takes 2 input"),
    ((np.ones((2, 3), np.float32), np.ones((2, 4), np.float32)), "shape"),
    ((np.ones((2, 3), np.float64), np.ones((2, 3), np.float32)), "dtype float64"),
    ((np.ones((5, 3), np.float32), np.ones((5, 3), np.float32)), "outside 1..4"),
    ((np.ones((2, 3), np.float32), np.ones((3, 3), np.float32)), "disagree"),
    ((np.ones((0, 3), np.float32), np.ones((0, 3), np.float32)), "outside 1..4"),
    (([1.0, 2.0, 3.0], np.ones((1, 3), np.float32)), "numpy array or a torch"),
    ((torch.ones(2, 3, dtype=torch.int32), torch.ones(2, 3)), "dtype int32"),
    # Torch tensors take a leaner path; what it does not run, it explains
    # like the general one.
    ((torch.ones(2, 3),), "takes 2 input"),
    ((torch.ones(2, 3), torch.ones(2, 4)), "shape"),
    ((torch.ones(2, 3), torch.ones(2, 3, 1)), "shape"),
    ((torch.ones(5, 3), torch.ones(5, 3)), "outside 1..4"),
    ((torch.ones(2, 3), torch.ones(3, 3)), "disagree"),
    ((torch.ones(2, 3), torch.ones(2, 3, dtype=torch.float64)), "dtype float64"),
])
def test_wrong_call_time_inputs(batched, inputs, message):
    with pytest.raises(ValueError, match=message):
        batched(*inputs)


def test_load_errors(tmp_path):
    # One exception type, a ValueError (test_load.py has the hostile files).
    with pytest.raises(cuvil.LoadError, match="no compiled model"):
        cuvil.load(tmp_path / "nothing.so")
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"not an ELF file")
    with pytest.raises(ValueError, match="junk.so"):
        cuvil.load(junk)
    libm = "/lib/x86_64-linux-gnu/libm.so.6"
    with pytest.raises(cuvil.LoadError, match="not a Cuvil model"):
        cuvil.load(libm)
