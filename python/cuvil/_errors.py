"""Errors raised by the cuvil package."""


class CompileError(Exception):
    """A model that Cuvil cannot compile, with what to do about it.

    The message names the op and where it came from (the user's Python file
    and line, or the ONNX node). The compiler (cuvil._C) fills the fields
    from its first error: `op` the operation it is about ("cuvil.matmul",
    or an unsupported ONNX operator such as "NonZero"), `location` the
    user's "file:line[:col]", `node` the model's node name; None when the
    error has none.
    """

    def __init__(self, message, op=None, location=None, node=None):
        super().__init__(message)
        self.op = op
        self.location = location
        self.node = node


class LoadError(ValueError):
    """A file that cuvil.load (or CompiledModule) cannot load as a model.

    The message says what is wrong with the file and what to do: it is
    missing or unreadable, not an ELF shared object, truncated, built for
    another machine or C ABI version, not a Cuvil model, or its metadata is
    malformed. Nothing of the file has run when this is raised: it is
    checked from its bytes before it is loaded. `path` is the file.
    """

    def __init__(self, message, path=None):
        super().__init__(message)
        self.path = path
