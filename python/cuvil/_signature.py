"""Input signatures: [(name, dtype, shape), ...] with -1 or None dynamic."""

import numpy as np

from cuvil._dtypes import ROWS

# dtype names as the compiled model's metadata spells them (numpy-style).
SUPPORTED_DTYPES = tuple(name for name, *_ in ROWS)


class InputSpec:
    """One input: name, dtype (a numpy-style name) and shape (None: dynamic)."""

    def __init__(self, name, dtype, shape):
        self.name = name
        self.dtype = dtype
        self.shape = shape

    @property
    def dynamic_dims(self):
        return [i for i, d in enumerate(self.shape) if d is None]

    def __repr__(self):
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        return f"InputSpec({self.name!r}, {self.dtype}, ({dims}))"


def dtype_name(dtype):
    """A numpy-style name for a torch dtype, numpy dtype or string."""
    text = str(dtype)
    if text.startswith("torch."):
        text = text[len("torch."):]
    elif not isinstance(dtype, str):
        try:
            text = np.dtype(dtype).name
        except TypeError:
            pass
    aliases = {"float": "float32", "double": "float64", "half": "float16",
               "long": "int64", "int": "int32", "short": "int16",
               "bool_": "bool"}
    text = aliases.get(text, text)
    if text not in SUPPORTED_DTYPES:
        raise ValueError(f"unsupported dtype {dtype!r}; Cuvil takes "
                         + ", ".join(SUPPORTED_DTYPES))
    return text


def parse(input_signature):
    """Validates a signature; returns a list of InputSpec."""
    if input_signature is None:
        return None
    if isinstance(input_signature, (str, bytes)) or not hasattr(
            input_signature, "__iter__"):
        raise ValueError("input_signature must be a list of "
                         "(name, dtype, shape) tuples, e.g. "
                         "[('x', torch.float32, (1, 10))]")
    specs, names = [], set()
    for entry in input_signature:
        if not isinstance(entry, (tuple, list)) or len(entry) != 3:
            raise ValueError(f"input_signature entry {entry!r} is not a "
                             "(name, dtype, shape) tuple")
        name, dtype, shape = entry
        if not isinstance(name, str) or not name:
            raise ValueError(f"input name {name!r} must be a non-empty str")
        if name in names:
            raise ValueError(f"input name {name!r} appears twice")
        names.add(name)
        try:
            dims = tuple(shape)
        except TypeError:
            raise ValueError(f"shape of input {name!r} must be a tuple of "
                             f"ints, got {shape!r}") from None
        checked = []
        for d in dims:
            if d is None or d == -1:
                checked.append(None)
            elif isinstance(d, (int, np.integer)) and not isinstance(
                    d, bool) and d >= 0:
                checked.append(int(d))
            else:
                raise ValueError(f"dimension {d!r} of input {name!r} is not "
                                 "a size (an int >= 0, or -1/None for "
                                 "dynamic)")
        specs.append(InputSpec(name, dtype_name(dtype), tuple(checked)))
    if not specs:
        raise ValueError("input_signature is empty")
    return specs
