"""Captures Python models as ONNX bytes for the C++ compiler.

Python does capture only: a TorchScript function or module, a traced
module, an nn.Module or a plain callable is exported by torch.onnx in
memory, with each node's Python source position kept (the exporter's
verbose doc strings), so that compile errors in C++ point at the user's
line. Only positions are rewritten here (a scripted model's ops inside
torch's own functions move to the user's call of them); the one importer
is the C++ ONNX importer.
"""

import contextlib
import io
import linecache
import os
import re
import traceback
import warnings

from cuvil._errors import CompileError

# The opset the exporter writes; the importer takes 11..18.
OPSET = 17

# Python files of these packages are library code, not the user's.
_LIBRARY_DIRS = tuple(os.sep + name + os.sep for name in ("torch", "torchvision"))


def _is_library(filename):
    return any(part in filename for part in _LIBRARY_DIRS)


def _user_frame(tb):
    """The innermost traceback frame outside torch (the user's code)."""
    frames = traceback.extract_tb(tb)
    for frame in reversed(frames):
        if not _is_library(frame.filename) and frame.filename != __file__:
            return frame
    return frames[-1] if frames else None


_SOURCE_POSITION = re.compile(r'\s*File "(.+)", line (\d+)')


def _position(source_range):
    """(file, line) where a TorchScript source range starts, or None."""
    match = _SOURCE_POSITION.match(source_range)
    return (match.group(1), int(match.group(2))) if match else None


def _is_library_name(qualified_name):
    name = qualified_name.removeprefix("__torch__.")
    return name.startswith(("torch.", "torchvision."))


def _library_calls(model):
    """A scripted model's calls into torch's functions and modules, in
    program order: (the call's source range, every position of the code it
    runs). TorchScript inlines that code, and ONNX keeps only the innermost
    position, inside torch."""
    import torch

    unit = torch.jit._state._python_cu
    modules = list(model.modules()) if isinstance(model, torch.jit.ScriptModule) else []

    def method(type_name, name):
        for module in modules:
            if module._c._type().qualified_name() == type_name:
                return getattr(module, name, None)
        return None

    calls, walked = [], set()

    def walk(nodes):
        for node in nodes:
            callee, key = None, None
            if node.kind() == "prim::CallFunction":
                key = (str(node.inputsAt(0).type()), "")
                callee = unit.find_function(key[0])
            elif node.kind() == "prim::CallMethod":
                key = (str(node.inputsAt(0).type()), node.s("name"))
                callee = method(*key)
            type_name = key[0] if key else ""
            if callee is not None and _is_library_name(type_name):
                if _position(node.sourceRange()) is None:
                    continue  # a traced call: no source of its own
                calls.append((node.sourceRange(), {
                    p for n in callee.inlined_graph.nodes()
                    if (p := _position(n.sourceRange()))}))
            elif callee is not None and key not in walked:
                walked.add(key)  # the user's own function or method
                walk(callee.graph.nodes())
            for block in node.blocks():
                walk(block.nodes())

    if isinstance(model, torch.jit.ScriptFunction):
        walk(model.graph.nodes())
    for module in modules:
        if not _is_library_name(module._c._type().qualified_name()) and \
                hasattr(module, "forward"):
            walk(module.forward.graph.nodes())
    return calls


def _point_at_user_calls(calls, onnx_bytes):
    """Moves each node positioned inside torch's code to the user's call
    that runs it (`calls`: _library_calls's; the first such call, if
    several run the same code)."""
    try:
        import onnx
    except ImportError:  # positions stay torch's
        return onnx_bytes
    if not calls:
        return onnx_bytes
    proto = onnx.load_from_string(onnx_bytes)
    moved = False

    def visit(graph):
        nonlocal moved
        for node in graph.node:
            where = _position(node.doc_string)
            if where and _is_library(where[0]):
                for source, positions in calls:
                    if where in positions:
                        node.doc_string, moved = source, True
                        break
            for attribute in node.attribute:
                for sub in [attribute.g] + list(attribute.graphs):
                    visit(sub)

    visit(proto.graph)
    return proto.SerializeToString() if moved else onnx_bytes


def _as_module(function):
    """Wraps a plain callable so that torch.onnx can trace it."""
    import torch

    class Function(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.function = function

        def forward(self, *inputs):
            return self.function(*inputs)

    return Function()


def _example_inputs(specs, integer_fill=0):
    import torch

    generator = torch.Generator().manual_seed(0)
    tensors = []
    for spec in specs:
        # Dynamic dimensions get 2, so that the exporter does not treat
        # them as the constant 1 anywhere in the traced graph.
        shape = [2 if d is None else d for d in spec.shape]
        dtype = getattr(torch, spec.dtype)
        if dtype.is_floating_point:
            tensors.append(torch.randn(shape, generator=generator).to(dtype))
        else:
            # Zeros are valid indices and valid lengths (ones when the
            # model divides by an integer input: _eager_run).
            tensors.append(torch.full(shape, integer_fill, dtype=dtype))
    return tuple(tensors)


def _leaf_count(result):
    """Tensors in a (possibly nested) result, as the ONNX exporter flattens
    them: nn.LSTM returns (output, (h_n, c_n)), three outputs."""
    if isinstance(result, (tuple, list)):
        return sum(_leaf_count(item) for item in result)
    return 1


def _eager_run(model, specs):
    """One run on example inputs: (the inputs, the result). Integer inputs
    are zeros, or ones if zeros divide by zero."""
    import torch

    examples = _example_inputs(specs)
    with torch.no_grad():
        try:
            return examples, _run_in_eval_mode(model, examples)
        except RuntimeError as error:
            if "ZeroDivisionError" not in str(error):
                raise
            examples = _example_inputs(specs, integer_fill=1)
            return examples, _run_in_eval_mode(model, examples)


@contextlib.contextmanager
def _quiet_exporter():
    """Keeps node doc strings (verbose export) without printing the graph."""
    import torch

    log = torch.onnx.log
    torch.onnx.log = lambda *args: None
    try:
        yield
    finally:
        torch.onnx.log = log


_BOOL_WARNING = "Converting a tensor to a Python boolean"


def _control_flow_error(warning):
    line = linecache.getline(warning.filename, warning.lineno).strip()
    return CompileError(
        f"{warning.filename}:{warning.lineno}: data-dependent control flow "
        f"(`{line}`): a condition on tensor values cannot be traced, the "
        "compiled model would keep only the branch the example input took. "
        "Compute both sides and select with torch.where, or compile a "
        "torch.jit.script function or module (its `if`, `for` and `while` "
        "compile as ONNX If and Loop).",
        op="prim::If", location=f"{warning.filename}:{warning.lineno}")


def _script_failure(model, error):
    """A CompileError from a TorchScript interpreter failure during export."""
    text = str(error)
    match = re.search(r'File "([^"]+)", line (\d+)', text)
    location = f"{match.group(1)}:{match.group(2)}" if match else None
    # The node whose source range is the highlighted one names the op.
    op = None
    def code_of(source_range):
        # The source lines and the caret line, without the `File` header
        # (whose `, in fn` suffix differs between the two texts).
        return source_range.split("<--- HERE")[0].split("\n", 1)[-1].rstrip()

    graph = getattr(model, "graph", None)
    if match and graph is not None:
        highlight = code_of(text[match.start():])
        for node in graph.nodes():
            if not node.kind().startswith("prim::") and \
                    code_of(node.sourceRange()) == highlight:
                op = node.kind()
                break
    reason = text.strip().splitlines()[-1]
    return CompileError(
        f"{location or '<unknown>'}: {op or 'an op'} fails on the input "
        f"signature: {reason}", op=op, location=location)


def _trace_failure(error):
    """A CompileError from an exception raised while tracing Python code."""
    frame = _user_frame(error.__traceback__)
    # The innermost library frame (e.g. torch/nn/modules/linear.py forward)
    # says which layer failed.
    op = None
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if _is_library(code.co_filename):
            owner = tb.tb_frame.f_locals.get("self")
            op = type(owner).__name__ if owner is not None else code.co_name
        tb = tb.tb_next
    if op in ("Function", "Module", "_call_impl", "_slow_forward", None):
        op = None
    location = f"{frame.filename}:{frame.lineno}" if frame else None
    line = f" (`{frame.line}`)" if frame and frame.line else ""
    reason = str(error).strip().splitlines()[-1] if str(error).strip() else \
        type(error).__name__
    return CompileError(
        f"{location or '<unknown>'}{line}: {op + ' ' if op else ''}fails on "
        f"the input signature: {reason}", op=op, location=location)


def _run_in_eval_mode(model, inputs):
    """Calls `model` as inference would (eval mode), leaving its mode as is."""
    import torch

    if not isinstance(model, torch.nn.Module):
        return model(*inputs)
    modes = {module: module.training for module in model.modules()}
    model.eval()
    try:
        return model(*inputs)
    finally:
        for module, training in modes.items():
            module.training = training


def _custom_opsets(module):
    """The opsets of the domains cuvil.nn.TreeEnsemble modules write."""
    versions = {"ai.onnx.ml": 3, "ai.cuvil": 1}
    modules = module.modules() if hasattr(module, "modules") else ()
    return {m.onnx_domain: versions[m.onnx_domain] for m in modules
            if getattr(m, "onnx_domain", None) in versions}


def torch_to_onnx(model, specs):
    """Exports a torch model (script, traced, nn.Module or callable)."""
    import torch

    if isinstance(model, (torch.jit.ScriptFunction, torch.jit.ScriptModule)):
        exported, scripted = model, True
    elif isinstance(model, torch.nn.Module):
        exported, scripted = model, False
    elif callable(model):
        exported, scripted = _as_module(model), False
    else:
        raise TypeError(f"cannot compile a {type(model).__name__}: pass a "
                        "torch.jit.script function or module, a traced "
                        "module, an nn.Module, a callable on tensors, an "
                        "ONNX file path or an onnx.ModelProto")
    names = [spec.name for spec in specs]
    dynamic_axes = {spec.name: {i: f"{spec.name}_dim{i}"
                                for i in spec.dynamic_dims}
                    for spec in specs if spec.dynamic_dims}
    buffer = io.BytesIO()
    # Before exporting, which inlines a scripted function's calls in place.
    calls = _library_calls(model) if scripted else []
    # Grad stays enabled while exporting (nothing is differentiated):
    # without it torch.nn's attention layers take a "fast path" through
    # fused kernels that ONNX cannot express.
    with warnings.catch_warnings(record=True) as caught, _quiet_exporter():
        warnings.simplefilter("always")
        try:
            # One eager run: the output count names the outputs, and a
            # signature that does not fit fails here with a Python stack.
            examples, result = _eager_run(exported, specs)
            count = _leaf_count(result)
            output_names = ["output"] if count == 1 else [
                f"output_{i}" for i in range(count)]
            torch.onnx.export(
                exported, examples, buffer, input_names=names,
                output_names=output_names, dynamic_axes=dynamic_axes or None,
                opset_version=OPSET, verbose=True, do_constant_folding=True,
                custom_opsets=_custom_opsets(exported),
                training=torch.onnx.TrainingMode.EVAL,
                # Ops without an ONNX form stay as they are, so the C++
                # importer reports all of them at once, with source lines.
                operator_export_type=(
                    torch.onnx.OperatorExportTypes.ONNX_FALLTHROUGH))
        except CompileError:
            raise
        except Exception as error:  # noqa: BLE001 - any failure is the model's
            for warning in caught:
                if _BOOL_WARNING in str(warning.message) and \
                        not _is_library(warning.filename):
                    raise _control_flow_error(warning) from error
            if scripted and "TorchScript" in str(error):
                raise _script_failure(model, error) from None
            raise _trace_failure(error) from None
    for warning in caught:
        if _BOOL_WARNING in str(warning.message) and \
                not _is_library(warning.filename):
            raise _control_flow_error(warning)
    return _point_at_user_calls(calls, buffer.getvalue())
