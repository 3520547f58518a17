"""Errors raised by the cuvil package."""


class CompileError(Exception):
    """A model that Cuvil cannot compile, with what to do about it.

    The message names the op and where it came from (the user's Python file
    and line, or the ONNX node). `location` is "file:line" when known, and
    `op` the operator's name when known.
    """

    def __init__(self, message, op=None, location=None):
        super().__init__(message)
        self.op = op
        self.location = location
