"""Runs a compiled model with plain ctypes and numpy: no Cuvil installed.

    cuvilc examples/classifier.mlir -o classifier.so
    /usr/bin/python3 examples/ctypes_example.py classifier.so

Everything comes from the documented C ABI (docs/abi.md): the metadata says
the inputs and outputs, a context owns the workspace and threads.
"""

import ctypes
import json
import sys

import numpy as np

DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64,
          "int32": np.int32, "int16": np.int16, "int8": np.int8,
          "uint8": np.uint8, "bool": np.bool_}


def main(path):
    model = ctypes.CDLL(path)
    model.cuvil_model_metadata.restype = ctypes.c_char_p
    model.cuvil_status_message.restype = ctypes.c_char_p
    model.cuvil_context_error.restype = ctypes.c_char_p
    model.cuvil_context_error.argtypes = [ctypes.c_void_p]
    model.cuvil_context_run.argtypes = [ctypes.c_void_p, ctypes.c_int64,
                                        ctypes.c_void_p, ctypes.c_void_p]
    model.cuvil_context_destroy.argtypes = [ctypes.c_void_p]
    metadata = json.loads(model.cuvil_model_metadata())
    print("model:", metadata["model"], "compiled by", metadata["compiler"])

    batch = 1
    rng = np.random.default_rng(0)
    inputs = []
    for spec in metadata["inputs"]:
        shape = [batch if d == -1 else d for d in spec["shape"]]
        inputs.append(rng.standard_normal(shape).astype(DTYPES[spec["dtype"]]))
    outputs = [np.empty([batch if d == -1 else d for d in spec["shape"]],
                        DTYPES[spec["dtype"]]) for spec in metadata["outputs"]]

    context = ctypes.c_void_p()
    status = model.cuvil_context_create(0, ctypes.byref(context))
    if status != 0:
        sys.exit(model.cuvil_status_message(status).decode())
    try:
        ins = (ctypes.c_void_p * len(inputs))(*[a.ctypes.data for a in inputs])
        outs = (ctypes.c_void_p * len(outputs))(*[a.ctypes.data for a in outputs])
        if model.cuvil_context_run(context, batch, ins, outs) != 0:
            sys.exit(model.cuvil_context_error(context).decode())
    finally:
        model.cuvil_context_destroy(context)
    for spec, value in zip(metadata["outputs"], outputs):
        print(f"{spec['name']}: {np.array2string(value, precision=4)}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
