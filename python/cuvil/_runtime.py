"""Runs compiled models through their C ABI (docs/abi.md) with ctypes.

Needs numpy only: torch is used when the caller passes torch tensors, and is
never imported otherwise. ctypes releases the GIL for the duration of each
call into the .so, so Python threads run models concurrently; each thread
gets its own context (workspace and worker threads) from the .so. The common
call with torch tensors or numpy arrays runs in C (cuvil._lean, the CPython
API only), which also releases the GIL around the model.
"""

import ctypes
import functools
import json
import os
import shutil
import sys
import tempfile
import threading
import weakref

import numpy as np

from cuvil import _artifact, _lean
from cuvil._dtypes import ROWS
from cuvil._errors import LoadError

# Metadata dtype -> numpy dtype, for the types numpy has (cuvil/abi/DTypes.def).
_NUMPY_DTYPES = {name: np.dtype(numpy) for name, _, _, numpy, _ in ROWS if numpy}


def _address(array):
    """The data address of a numpy array (cheaper than array.ctypes.data)."""
    if array.flags.writeable and array.nbytes:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    return array.ctypes.data


def _batched(shape, batch):
    """An output's shape for `batch`: the batch wherever its dimension is
    dynamic (a recurrent layer's final states [layers, batch, hidden] have it
    in dimension 1)."""
    if batch is None:
        return shape
    return tuple(batch if d is None else d for d in shape)


def _templates(torch, outputs, cache, batch):
    """The output templates for `batch` (None: static shapes), kept in
    `cache`: one zero-stride tensor per output that torch.empty_like turns
    into a fresh contiguous output of its shape and dtype. Empty when an
    output has no elements (the general path allocates those)."""
    templates = []
    for spec in outputs:
        shape = _batched(spec["shape"], batch)
        if None in shape or 0 in shape:
            templates = []
            break
        one = torch.empty((1,) * len(shape), dtype=getattr(torch, spec["dtype"]))
        templates.append(one.expand(shape))
    templates = cache[batch] = tuple(templates)
    return templates


def _numpy_templates(outputs, cache, batch):
    """_templates for numpy arrays: one zero-stride array per output that
    numpy.empty_like(order="C") turns into a fresh output. Empty when an
    output has no elements or no numpy type (bfloat16)."""
    templates = []
    for spec in outputs:
        shape = _batched(spec["shape"], batch)
        dtype = _NUMPY_DTYPES.get(spec["dtype"])
        if None in shape or 0 in shape or dtype is None:
            templates = []
            break
        templates.append(np.broadcast_to(np.empty((1,) * len(shape), dtype),
                                         shape))
    templates = cache[batch] = tuple(templates)
    return templates


class _Context:
    """One cuvil_context (workspace + worker pthreads), freed with Python's."""

    def __init__(self, library, threads):
        self._library = library
        self.handle = ctypes.c_void_p()
        status = library.cuvil_context_create(threads, ctypes.byref(self.handle))
        if status != 0:
            raise RuntimeError("cuvil_context_create failed: "
                               + library.cuvil_status_message(status).decode())

    def __del__(self):
        if self.handle:
            self._library.cuvil_context_destroy(self.handle)
            self.handle = ctypes.c_void_p()


def _declare(library):
    library.cuvil_model_metadata.restype = ctypes.c_char_p
    library.cuvil_model_metadata.argtypes = []
    library.cuvil_status_message.restype = ctypes.c_char_p
    library.cuvil_status_message.argtypes = [ctypes.c_int]
    library.cuvil_context_create.restype = ctypes.c_int
    library.cuvil_context_create.argtypes = [
        ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
    library.cuvil_context_run.restype = ctypes.c_int
    library.cuvil_context_run.argtypes = [
        ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
    library.cuvil_context_error.restype = ctypes.c_char_p
    library.cuvil_context_error.argtypes = [ctypes.c_void_p]
    library.cuvil_context_destroy.restype = None
    library.cuvil_context_destroy.argtypes = [ctypes.c_void_p]


def _read_model_file(path, name):
    """The bytes of a model file, read (never mapped: a file truncated while
    mapped faults its reader) before anything of it can run."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise LoadError(f"no compiled model at {name}", name) from None
    except IsADirectoryError:
        raise LoadError(f"{name} is a folder, not a compiled model (.so)",
                        name) from None
    except OSError as error:
        raise LoadError(f"cannot read {name}: {error.strerror}", name) from None


_TENSOR_KEYS = {"name": str, "dtype": str, "shape": list}


def _parse_metadata(text, name):
    """The metadata JSON of a checked artifact, or LoadError if it is not
    what docs/abi.md describes (a foreign or damaged file can pass the ELF
    checks yet hold anything here)."""
    def bad(what):
        return LoadError(f"{name} has malformed metadata ({what}); rebuild "
                         "it with cuvilc", name)
    try:
        metadata = json.loads(text)
    except ValueError as error:
        raise bad(f"not JSON: {error}") from None
    if not isinstance(metadata, dict):
        raise bad("not a JSON object")
    for group in ("inputs", "outputs"):
        tensors = metadata.get(group)
        if not isinstance(tensors, list):
            raise bad(f"no '{group}' list")
        for tensor in tensors:
            if not isinstance(tensor, dict) or any(
                    not isinstance(tensor.get(k), t) for k, t in _TENSOR_KEYS.items()):
                raise bad(f"an entry of '{group}' lacks a name, dtype or shape")
            if not all(type(d) is int and d >= -1 for d in tensor["shape"]):
                raise bad(f"tensor '{tensor['name']}' has a bad shape")
            q = tensor.get("quantization")
            if q is not None and not (
                    isinstance(q, dict)
                    and isinstance(q.get("scale"), (int, float))
                    and q["scale"] > 0
                    and type(q.get("zero_point")) is int):
                raise bad(f"tensor '{tensor['name']}' has a bad quantization")
    if type(metadata.get("max_batch", 0)) is not int or metadata.get("max_batch", 0) < 0:
        raise bad("'max_batch' is not a count")
    return metadata


def _describe(tensor):
    """A metadata tensor as CompiledModule.inputs / outputs describe it."""
    described = {"name": tensor["name"], "dtype": tensor["dtype"],
                 "shape": tuple(None if d == -1 else d for d in tensor["shape"])}
    if "quantization" in tensor:  # integer I/O
        described["quantization"] = dict(tensor["quantization"])
    return described


def _repr(kind, inputs, outputs):
    def fmt(t):
        dims = "x".join("?" if d is None else str(d) for d in t["shape"])
        return f"{t['name']}: {t['dtype']}[{dims}]"
    return (f"{kind}({', '.join(map(fmt, inputs))} -> "
            f"{', '.join(map(fmt, outputs))})")


def _save_files(files, path):
    """Writes `files` (suffix -> bytes, or the path of a file to copy): the
    .so to `path`, the others beside it, each atomically."""
    path = os.fspath(path)
    stem = path[:-3] if path.endswith(".so") else path
    for suffix, source in files.items():
        target = path if suffix == ".so" else stem + suffix
        # Atomic: a failed save leaves no partial file behind.
        directory = os.path.dirname(os.path.abspath(target))
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=".cuvil-")
        try:
            with os.fdopen(fd, "wb") as f:
                if isinstance(source, bytes):
                    f.write(source)
                else:
                    with open(source, "rb") as original:
                        shutil.copyfileobj(original, f)
            os.chmod(temporary, 0o755 if suffix == ".so" else 0o644)
            os.replace(temporary, target)
        except BaseException:
            os.unlink(temporary)
            raise
    return path


class CompiledModule:
    """A compiled model: call it like the original, save it as a .so.

    `inputs` and `outputs` describe the tensors: dicts with `name`, `dtype`
    (a numpy-style name) and `shape` (None marks the dynamic batch); a
    tensor passed quantized (integer I/O) also has `quantization`:
    {"scale": s, "zero_point": z}, its real values s * (q - z).

    The file is checked from its bytes before it is loaded (a whole ELF
    shared object for this machine, with Cuvil's ABI note, entry points and
    metadata: cuvil/abi); anything else raises cuvil.LoadError, and none of
    its code has run. Loading it then runs its code: load only models you
    built or trust.
    """

    def __init__(self, path, files=None, owned_dir=None, name=None):
        self._path = os.fspath(path)
        name = name or self._path
        # What save() writes, by suffix: bytes, or the path of a file to copy.
        self._files = files or {".so": self._path}
        if owned_dir is not None:
            weakref.finalize(self, shutil.rmtree, owned_dir, True)
        data = _read_model_file(self._path, name)
        try:
            _, metadata_json = _artifact.check(data, name)
        except ValueError as error:
            raise LoadError(str(error), name) from None
        self.metadata = _parse_metadata(metadata_json, name)
        # cuvil.compile(quantize=...) sets what quantization chose (a dict:
        # observer, samples, layers with ranges and scales, float32 notes).
        self.quantization_report = None
        # cuvil.compile sets which kernel computes each layer and why (the
        # lines of cuvilc --explain-kernels); a loaded .so has none.
        self.kernel_report = []
        try:
            self._library = ctypes.CDLL(self._path, mode=os.RTLD_LOCAL)
        except OSError as error:
            raise LoadError(f"cannot load {name} as a compiled model: "
                            f"{error}", name) from None
        _declare(self._library)
        self.inputs = [self._describe(t) for t in self.metadata["inputs"]]
        self.outputs = [self._describe(t) for t in self.metadata["outputs"]]
        # The batch bound of a dynamic batch; None for static shapes.
        dynamic = any(None in t["shape"] for t in self.inputs)
        self.max_batch = self.metadata.get("max_batch") if dynamic else None
        self._local = threading.local()
        # Per-tensor facts the call path reads: (spec, numpy dtype, shape).
        self._torch_input_dtypes = None
        self._input_plan = [(t, np.dtype(_NUMPY_DTYPES.get(t["dtype"], np.uint8)),
                             t["shape"]) for t in self.inputs]
        # The lean path (cuvil._lean) for torch tensors: per input, the dims
        # after a dynamic batch (or all of them) and whether the batch is
        # dynamic; None when some other dimension is dynamic.
        self._lean_inputs = []
        for t in self.inputs:
            shape = t["shape"]
            dynamic = bool(shape) and shape[0] is None
            rest = shape[1:] if dynamic else shape
            if None in rest:
                self._lean_inputs = None
                break
            self._lean_inputs.append((t["dtype"], rest, dynamic))
        # Output templates per batch (_templates, _numpy_templates).
        self._output_templates = {}
        self._numpy_output_templates = {}
        self._run_address = ctypes.cast(self._library.cuvil_context_run,
                                        ctypes.c_void_p).value

    @staticmethod
    def _describe(tensor):
        return _describe(tensor)

    def __repr__(self):
        return _repr("CompiledModule", self.inputs, self.outputs)

    def _thread_state(self):
        """This thread's context and pointer arrays (created on first use)."""
        state = getattr(self._local, "state", None)
        if state is None:
            state = self._local.state = (
                _Context(self._library, 0),
                (ctypes.c_void_p * len(self.inputs))(),
                (ctypes.c_void_p * len(self.outputs))())
        return state

    def _shape_error(self, spec, value):
        expected = "x".join("?" if d is None else str(d) for d in spec["shape"])
        return ValueError(f"input '{spec['name']}' has shape "
                          f"{tuple(value.shape)}; the model takes "
                          f"[{expected}]")

    def __call__(self, *inputs):
        # The hot path of every call from Python: kept to plain attribute
        # checks (a few microseconds); the model's own work is in the .so.
        torch = sys.modules.get("torch")
        if self._lean_inputs is not None:
            # The lean call for the first input's kind (numpy or torch).
            if inputs and type(inputs[0]) is np.ndarray:
                state = getattr(self._local, "lean_numpy", None)
                if state is None:
                    state = self._lean_numpy_state()
            elif torch is not None:
                state = (getattr(self._local, "lean", None)
                         or self._lean_state(torch))
            else:
                state = False
            result = _lean.call(state, inputs) if state else None
            if result is not None:
                if type(result) is int:
                    self._raise(self._thread_state()[0], result)
                return result
        if len(inputs) != len(self.inputs):
            raise ValueError(f"the model takes {len(self.inputs)} input(s) "
                             f"({', '.join(t['name'] for t in self.inputs)}), "
                             f"got {len(inputs)}")
        tensor_type = torch.Tensor if torch is not None else ()
        context, inputs_c, outputs_c = self._thread_state()
        use_torch = False
        batch = None
        alive = []  # contiguous copies stay alive until the call returns
        torch_dtypes = self._torch_dtypes(torch)
        index = 0
        for value, (spec, numpy_dtype, want) in zip(inputs, self._input_plan):
            if isinstance(value, tensor_type):
                use_torch = True
                if value.dtype != torch_dtypes[index]:
                    raise ValueError(
                        f"input '{spec['name']}' has dtype "
                        f"{str(value.dtype).replace('torch.', '')}; the model "
                        f"takes {spec['dtype']}")
                if not value.is_cpu:
                    raise ValueError(f"input '{spec['name']}' is on "
                                     f"{value.device}; pass a CPU tensor")
                if value.requires_grad:
                    value = value.detach()
                if not value.is_contiguous():
                    value = value.contiguous()
                address = value.data_ptr()
            elif isinstance(value, np.ndarray):
                if value.dtype != numpy_dtype:
                    raise ValueError(f"input '{spec['name']}' has dtype "
                                     f"{value.dtype.name}; the model takes "
                                     f"{spec['dtype']}")
                if not value.flags.c_contiguous:
                    value = np.ascontiguousarray(value)
                address = _address(value)
            else:
                raise ValueError(f"input '{spec['name']}' must be a numpy "
                                 f"array or a torch tensor, not "
                                 f"{type(value).__name__}")
            shape = value.shape
            if len(shape) != len(want):
                raise self._shape_error(spec, value)
            for got, expected in zip(shape, want):
                if expected is None:  # the batch
                    if batch is None:
                        batch = got
                    elif got != batch:
                        raise ValueError("inputs disagree on the batch size "
                                         f"(dimension 0): {batch} and {got}")
                elif got != expected:
                    raise self._shape_error(spec, value)
            alive.append(value)
            inputs_c[index] = address
            index += 1
        if batch is not None and not 1 <= batch <= self.max_batch:
            raise ValueError(f"batch {batch} is outside 1..{self.max_batch}, "
                             "the range this model was compiled for "
                             "(max_batch)")
        outputs = []
        for index, spec in enumerate(self.outputs):
            shape = _batched(spec["shape"], batch)
            numpy_dtype = _NUMPY_DTYPES.get(spec["dtype"])
            if numpy_dtype is not None:
                array = np.empty(shape, dtype=numpy_dtype)
                outputs_c[index] = _address(array)
                outputs.append(torch.from_numpy(array) if use_torch else array)
            elif use_torch:  # bfloat16: no numpy type
                tensor = torch.empty(shape, dtype=getattr(torch, spec["dtype"]))
                outputs_c[index] = tensor.data_ptr()
                outputs.append(tensor)
            else:
                raise ValueError(f"output '{spec['name']}' is {spec['dtype']}, "
                                 "which numpy has no type for; call with "
                                 "torch tensors")
        status = self._library.cuvil_context_run(context.handle, batch or 1,
                                                 inputs_c, outputs_c)
        if status != 0:
            self._raise(context, status)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _lean_state(self, torch):
        """This thread's state for cuvil._lean.call: the common call
        (contiguous CPU torch tensors without grad, of the model's dtypes and
        shapes) runs in C; it returns None for anything else, and the
        general path below runs the call or explains what is wrong."""
        context = self._thread_state()[0]
        specs = tuple((getattr(torch, dtype), tuple(dims), dynamic)
                      for dtype, dims, dynamic in self._lean_inputs)
        state = self._local.lean = (
            self._run_address, context.handle.value, torch.Tensor, specs,
            self.max_batch or 0, self._output_templates,
            # Not a bound method: the state must not keep the module alive.
            functools.partial(_templates, torch, self.outputs,
                              self._output_templates),
            torch.empty_like, torch.contiguous_format, False)
        return state

    def _lean_numpy_state(self):
        """_lean_state for numpy arrays (C-contiguous, of the model's dtypes
        and shapes), or False when an input has no numpy type."""
        dtypes = [_NUMPY_DTYPES.get(dtype) for dtype, _, _ in self._lean_inputs]
        if None in dtypes:
            self._local.lean_numpy = False
            return False
        context = self._thread_state()[0]
        specs = tuple((numpy_dtype, tuple(dims), dynamic)
                      for numpy_dtype, (_, dims, dynamic)
                      in zip(dtypes, self._lean_inputs))
        state = self._local.lean_numpy = (
            self._run_address, context.handle.value, np.ndarray, specs,
            self.max_batch or 0, self._numpy_output_templates,
            functools.partial(_numpy_templates, self.outputs,
                              self._numpy_output_templates),
            np.empty_like, "C", True)
        return state

    def _raise(self, context, status):
        detail = self._library.cuvil_context_error(context.handle)
        raise RuntimeError((detail or self._library.cuvil_status_message(
            status)).decode())

    def _torch_dtypes(self, torch):
        """The inputs' torch dtypes, once torch is there (it is optional)."""
        if torch is None:
            return None
        if self._torch_input_dtypes is None:
            self._torch_input_dtypes = [getattr(torch, t["dtype"])
                                        for t in self.inputs]
        return self._torch_input_dtypes

    def save(self, path):
        """Writes the .so to `path`, with its header (and external weights)
        beside it: `model.so`, `model.h`, `model.weights.bin`."""
        return _save_files(self._files, path)


# ELF e_machine values of the machines Cuvil builds for, by the names the
# artifact checker gives them (cuvil/abi).
ELF_MACHINES = {62: "x86-64", 183: "aarch64"}


class CrossCompiledModule:
    """A model compiled for another machine (cuvil.compile(target=
    "aarch64-linux-gnu") here on x86-64): the same .so, header and C ABI,
    checked from its bytes as a model for that machine. It cannot run here:
    save() it, and run it there (docs/edge.md: a board, or qemu-aarch64).

    `inputs`, `outputs` and `metadata` are as for a CompiledModule; `target`
    is the metadata's {"triple", "cpu", "features"}.
    """

    def __init__(self, files, machine, name="the compiled model"):
        self._files = dict(files)
        try:
            _, metadata_json = _artifact.check(self._files[".so"], name, machine)
        except ValueError as error:
            raise LoadError(str(error), name) from None
        self.metadata = _parse_metadata(metadata_json, name)
        self.inputs = [_describe(t) for t in self.metadata["inputs"]]
        self.outputs = [_describe(t) for t in self.metadata["outputs"]]
        self.target = dict(self.metadata.get("target", {}))

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"this model is built for {self.target.get('triple')} "
            f"({self.target.get('cpu')}) and cannot run on this machine: "
            "save() it and run it there, or under qemu-aarch64 (docs/edge.md)")

    def save(self, path):
        """Writes the .so to `path`, with its header (and external weights)
        beside it: `model.so`, `model.h`, `model.weights.bin`."""
        return _save_files(self._files, path)

    def __repr__(self):
        return _repr(f"CrossCompiledModule[{self.target.get('triple')}]",
                     self.inputs, self.outputs)


def load(path):
    """Loads a compiled model .so (its .h and .weights.bin go with it).

    `path` is a file: a bare name means the file in the current directory,
    never a library search. The model runs from a private copy of the bytes
    that were checked, so replacing or truncating the file later cannot
    change or fault the loaded model. Raises cuvil.LoadError (a ValueError)
    for a missing or malformed file, before any of its code runs.
    """
    path = os.path.abspath(os.fspath(path))
    data = _read_model_file(path, path)
    stem = path[:-3] if path.endswith(".so") else path
    directory = tempfile.mkdtemp(prefix="cuvil-load-")
    try:
        private = os.path.join(directory, "model.so")
        with open(private, "wb") as f:
            f.write(data)
        files = {".so": private}
        if os.path.exists(stem + ".h"):
            files[".h"] = stem + ".h"
        weights = stem + ".weights.bin"
        if os.path.exists(weights):
            # The .so maps the file beside itself (docs/abi.md).
            os.symlink(weights, os.path.join(directory, "model.weights.bin"))
            files[".weights.bin"] = weights
        return CompiledModule(private, files, owned_dir=directory, name=path)
    except BaseException:
        shutil.rmtree(directory, True)
        raise
