"""End-to-end checks of compiled models against PyTorch eager.

A model is exported to ONNX (random weights, fixed seed), compiled by
cuvilc into a .so, loaded with plain ctypes through the documented C ABI,
and run on the same input as PyTorch. The tolerance is the one the
importers issue sets: max |cuvil - torch| <= 1e-4 * max |torch| (fp32).

    /usr/bin/python3 tests/e2e/cuvil_e2e.py CUVILC MODEL [--batch N] [--max-batch M]
        [--sample-parallel]

With --sample-parallel the model is compiled with --sample-parallel=on: a
context of T threads runs the batch as T chunks of samples, each on its own
workspace. Then 2 and 3 threads must give the bits of 1, and each sample the
bits it gets alone (batch 1).
"""

import argparse
import ctypes
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "models"))
import export_models  # noqa: E402

RELATIVE_TOLERANCE = 1e-4


class CompiledModel:
    """A model .so driven through its C ABI with ctypes only."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(str(path))
        self.lib.cuvil_model_metadata.restype = ctypes.c_char_p
        self.lib.cuvil_status_message.restype = ctypes.c_char_p
        self.lib.cuvil_model_workspace_size.restype = ctypes.c_size_t
        self.lib.cuvil_model_run.argtypes = [
            ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
            ctypes.c_size_t]
        self.lib.cuvil_context_create.argtypes = [ctypes.c_int, ctypes.c_void_p]
        self.lib.cuvil_context_run.argtypes = [ctypes.c_void_p, ctypes.c_int64,
                                               ctypes.c_void_p, ctypes.c_void_p]
        self.lib.cuvil_context_destroy.argtypes = [ctypes.c_void_p]
        self.metadata = json.loads(self.lib.cuvil_model_metadata())
        self.workspace = np.zeros(self.lib.cuvil_model_workspace_size() + 64, np.uint8)

    def __call__(self, *inputs, batch=0, threads=None):
        """Runs through cuvil_model_run, or a context with `threads`."""
        outputs = []
        for spec in self.metadata["outputs"]:
            shape = [batch if d == -1 else d for d in spec["shape"]]
            outputs.append(np.zeros(shape, dtype=np.dtype(spec["dtype"])))
        inputs = [np.ascontiguousarray(x) for x in inputs]
        ins = (ctypes.c_void_p * len(inputs))(*[x.ctypes.data for x in inputs])
        outs = (ctypes.c_void_p * len(outputs))(*[y.ctypes.data for y in outputs])
        if threads is None:
            status = self.lib.cuvil_model_run(batch, ins, outs,
                                              self.workspace.ctypes.data,
                                              self.workspace.size)
        else:
            context = ctypes.c_void_p()
            status = self.lib.cuvil_context_create(threads, ctypes.byref(context))
            if status == 0:
                status = self.lib.cuvil_context_run(context, batch, ins, outs)
                self.lib.cuvil_context_destroy(context)
        if status != 0:
            raise RuntimeError(self.lib.cuvil_status_message(status).decode())
        return outputs


def compile_model(cuvilc, onnx_path, so_path, *flags):
    subprocess.run([cuvilc, "--quiet", str(onnx_path), "-o", str(so_path), *flags],
                   check=True)
    return CompiledModel(so_path)


def check(cuvilc, name, batch=1, max_batch=None, workdir=None, cpu=None,
          sample_parallel=False):
    workdir = pathlib.Path(workdir or tempfile.mkdtemp())
    onnx_path = workdir / f"{name}.onnx"
    model, example = export_models.export(name, str(onnx_path), opset=14,
                                          dynamic_batch=max_batch is not None)
    flags = [f"--max-batch={max_batch}"] if max_batch else []
    if cpu:
        flags.append(f"--cpu={cpu}")
    if sample_parallel:
        flags.append("--sample-parallel=on")
    compiled = compile_model(cuvilc, onnx_path, workdir / f"{name}.so", *flags)
    if sample_parallel and not compiled.metadata["sample_parallel"]:
        print(f"{name}: the metadata says it is not sample-parallel")
        return False
    torch.manual_seed(1)
    x = torch.randn(batch, *example.shape[1:])
    with torch.no_grad():
        reference = model(x).numpy()
    (result,) = compiled(x.numpy(), batch=batch if max_batch else 0)
    error = float(np.abs(result - reference).max())
    scale = float(np.abs(reference).max())
    ok = error <= RELATIVE_TOLERANCE * scale
    # Results do not depend on the thread count: bit for bit.
    (threaded,) = compiled(x.numpy(), batch=batch if max_batch else 0, threads=2)
    if not np.array_equal(threaded, result):
        print(f"{name}: 2 threads differ from 1 (max |diff| "
              f"{float(np.abs(threaded - result).max()):.3g})")
        ok = False
    if sample_parallel:
        ok &= same_bits_in_chunks(name, compiled, x.numpy(), result)
    print(f"{name} batch={batch} cpu={cpu or 'native'}: max|err| = {error:.3g}, max|ref| = {scale:.3g}, "
          f"ratio = {error / scale:.3g} ({'ok' if ok else 'FAIL'})")
    return ok


def same_bits_in_chunks(name, compiled, x, result):
    """3 threads (chunks of one sample, the rest with the pool) and each
    sample alone give the whole batch's bits."""
    ok = True
    (three,) = compiled(x, batch=len(x), threads=3)
    if not np.array_equal(three, result):
        print(f"{name}: 3 threads differ from 1")
        ok = False
    for i in range(len(x)):
        (alone,) = compiled(x[i:i + 1], batch=1, threads=2)
        if not np.array_equal(alone[0], result[i]):
            print(f"{name}: sample {i} alone differs from its row of the batch")
            ok = False
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("cuvilc")
    parser.add_argument("model", choices=sorted(export_models.MODELS))
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--max-batch", type=int)
    parser.add_argument("--cpu", help="cuvilc --cpu (default: native)")
    parser.add_argument("--sample-parallel", action="store_true",
                        help="cuvilc --sample-parallel=on, and its checks")
    args = parser.parse_args()
    torch.set_num_threads(1)
    workdir = os.environ.get("TEST_TMPDIR")
    ok = check(args.cuvilc, args.model, args.batch, args.max_batch, workdir,
               args.cpu, args.sample_parallel)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
