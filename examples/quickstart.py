"""The README quick-start, run end to end (scripts/quickstart runs this).

Compiles a TorchScript function with cuvil.compile, saves the .so, checks
the result against torch, times one call of torch eager, TorchScript and
Cuvil side by side, and shows a compile-time shape error.
"""

import ctypes
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import torch

import cuvil

os.chdir(tempfile.mkdtemp(prefix="cuvil-quickstart-"))

# --- the README snippet ---------------------------------------------------
@torch.jit.script
def simple_classifier(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x @ torch.eye(10) * 0.1, dim=1)

compiled = cuvil.compile(
    simple_classifier,
    input_signature=[("x", torch.float32, (1, 10))],
    target="x86_64-linux-gnu",
)
compiled.save("classifier.so")
# ----------------------------------------------------------------------------

print(f"compiled: {compiled}")
print(f"saved:    {os.path.abspath('classifier.so')} "
      f"({os.path.getsize('classifier.so')} bytes) and classifier.h")

torch.manual_seed(0)
x = torch.randn(1, 10)
result = compiled(x)
expected = simple_classifier(x)
print(f"output:   {np.array2string(result.numpy()[0], precision=4)}")
print(f"max |cuvil - torch| = {float((result - expected).abs().max()):.2e}")


def eager(x):
    return torch.softmax(x @ torch.eye(10) * 0.1, dim=1)


# The C ABI called directly: one cuvil_model_run, no Python-side checks.
library = ctypes.CDLL(os.path.abspath("classifier.so"))
library.cuvil_model_workspace_size.restype = ctypes.c_size_t
run = library.cuvil_model_run
run.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                ctypes.c_void_p, ctypes.c_size_t]
workspace = np.zeros(library.cuvil_model_workspace_size() + 64, np.uint8)
x_np, y_np = x.numpy(), np.empty((1, 10), np.float32)
ins = (ctypes.c_void_p * 1)(x_np.ctypes.data)
outs = (ctypes.c_void_p * 1)(y_np.ctypes.data)
ws, ws_size = workspace.ctypes.data, workspace.size


def per_call_us(function, calls=2000, repeats=7):
    for _ in range(200):
        function()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            function()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


torch.set_num_threads(1)
with torch.inference_mode():
    timings = {
        "torch eager": per_call_us(lambda: eager(x)),
        "TorchScript": per_call_us(lambda: simple_classifier(x)),
        "Cuvil (CompiledModule)": per_call_us(lambda: compiled(x)),
        "Cuvil (C ABI via ctypes)": per_call_us(
            lambda: run(1, ins, outs, ws, ws_size)),
    }
print("per-call latency (1 thread, median of 7 x 2000 calls):")
base = timings["torch eager"]
for name, us in timings.items():
    print(f"  {name:26s} {us:8.2f} us   {base / us:5.1f}x vs eager")

print("\nA signature that does not fit is a compile-time error:")
try:
    cuvil.compile(simple_classifier, [("x", torch.float32, (1, 12))])
except cuvil.CompileError as error:
    print(f"  cuvil.CompileError: {error}")
else:
    sys.exit("unexpected: (1, 12) compiled")
