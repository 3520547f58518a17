"""Cuvil vs PyTorch eager, side by side in one run (a first subset of the
suite issue #8 asks for: batch 1, 1 thread, latency only).

    /usr/bin/python3 benchmarks/bench.py CUVILC [--out RESULTS.md] [--seconds S]

Each model is exported to ONNX (random weights, fixed seed) and compiled by
cuvilc for this machine's CPU; the .so is called through its C ABI with
plain ctypes (a context with 1 thread), PyTorch eager under
torch.inference_mode with torch.set_num_threads(1). 20 warm-up calls, then
up to 200 timed calls (fewer if a model would exceed --seconds per engine;
the table says how many). Ratios are PyTorch p50 / Cuvil p50 (> 1: Cuvil
faster). No timed assertion anywhere: this only reports.
"""

import argparse
import ctypes
import datetime
import json
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "models"))
import export_models  # noqa: E402


def classifier():
    @torch.jit.script
    def simple_classifier(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x @ torch.eye(10) * 0.1, dim=1)
    return simple_classifier, torch.randn(1, 10)


def mlp():
    return torch.nn.Sequential(
        torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
        torch.nn.ReLU(), torch.nn.Linear(512, 512)).eval(), torch.randn(1, 512)


MODELS = {
    "quick-start classifier": classifier,
    "MLP 3x512": mlp,
    "ResNet-18": lambda: export_models.MODELS["resnet18"](),
    "MobileNetV2": lambda: export_models.MODELS["mobilenet_v2"](),
    "TransformerEncoderLayer (512, 8 heads, seq 128)":
        lambda: export_models.MODELS["transformer_encoder_layer"](),
}


def timed(fn, seconds):
    for _ in range(20):
        fn()
    samples = []
    deadline = time.perf_counter() + seconds
    while len(samples) < 200 and (len(samples) < 10 or time.perf_counter() < deadline):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    s = np.array(samples) * 1e3
    return {"p50": float(np.percentile(s, 50)), "p99": float(np.percentile(s, 99)),
            "min": float(s.min()), "runs": len(samples)}


def cuvil_runner(so, example):
    lib = ctypes.CDLL(str(so))
    lib.cuvil_model_metadata.restype = ctypes.c_char_p
    lib.cuvil_context_create.argtypes = [ctypes.c_int, ctypes.c_void_p]
    lib.cuvil_context_run.argtypes = [ctypes.c_void_p, ctypes.c_int64,
                                      ctypes.c_void_p, ctypes.c_void_p]
    meta = json.loads(lib.cuvil_model_metadata())
    context = ctypes.c_void_p()
    assert lib.cuvil_context_create(1, ctypes.byref(context)) == 0
    x = np.ascontiguousarray(example.numpy())
    outputs = [np.zeros([1 if d == -1 else d for d in o["shape"]], np.float32)
               for o in meta["outputs"]]
    ins = (ctypes.c_void_p * 1)(x.ctypes.data)
    outs = (ctypes.c_void_p * len(outputs))(*[o.ctypes.data for o in outputs])

    def run():
        status = lib.cuvil_context_run(context, 1, ins, outs)
        assert status == 0, status
    return run, meta, outputs


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("cuvilc")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "RESULTS.md"))
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    work = pathlib.Path(tempfile.mkdtemp(prefix="cuvil-bench-"))
    rows, raw = [], {}
    for index, (name, make) in enumerate(MODELS.items()):
        model, example = make()
        # A distinct path per model: dlopen of a path already loaded returns
        # the first library.
        so = work / f"model{index}.so"
        if hasattr(model, "eval"):
            model.eval()
        onnx_path = work / "model.onnx"
        # Exported with grad enabled: torch.nn's attention fast path (which
        # ONNX cannot express) only runs without it.
        torch.onnx.export(model, example, str(onnx_path), opset_version=14,
                          input_names=["input"], output_names=["output"])
        start = time.perf_counter()
        subprocess.run([args.cuvilc, "--quiet", str(onnx_path), "-o", str(so)],
                       check=True)
        compile_seconds = time.perf_counter() - start
        run, meta, outputs = cuvil_runner(so, example)
        with torch.inference_mode():
            reference = model(example).numpy()
            eager = timed(lambda: model(example), args.seconds)
        run()
        error = float(np.abs(outputs[0] - reference).max())
        cuvil = timed(run, args.seconds)
        ratio = eager["p50"] / cuvil["p50"]
        raw[name] = {"torch_eager": eager, "cuvil": cuvil, "ratio": ratio,
                     "compile_seconds": compile_seconds, "max_abs_error": error,
                     "kernels": meta.get("kernels")}
        rows.append(f"| {name} | {eager['p50']:.3f} / {eager['p99']:.3f} / "
                    f"{eager['min']:.3f} ({eager['runs']}) | {cuvil['p50']:.3f} / "
                    f"{cuvil['p99']:.3f} / {cuvil['min']:.3f} ({cuvil['runs']}) | "
                    f"{ratio:.2f}x | {compile_seconds:.1f} s | {error:.1e} |")
        print(rows[-1], flush=True)
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo"],
                         stdout=subprocess.PIPE, text=True).stdout.split(":")[-1].strip()
    text = "\n".join([
        "# Benchmark results", "",
        f"Produced by `scripts/bench` on {datetime.date.today()} ({cpu}, "
        f"{platform.machine()}, PyTorch {torch.__version__}). Batch 1, 1 thread; "
        "latency in ms as p50 / p99 / min (timed runs). Ratio = PyTorch eager p50 "
        "/ Cuvil p50 (> 1: Cuvil is faster). Compile = cuvilc wall time.", "",
        "| model | PyTorch eager | Cuvil .so (C ABI) | ratio | compile | max abs err |",
        "| --- | --- | --- | --- | --- | --- |", *rows, "",
        "## Not measured yet (issue #8)", "",
        "TorchScript-frozen/oneDNN, batch 8 and 2 threads, ResNet-50, the "
        "machine's FMA peak and fraction of it, the SGEMM and convolution "
        "micro-benchmarks in this table (`bazel run "
        "//cuvil/targets/x86:sgemm4_benchmark` exists), .so size, peak RSS, "
        "and the chart. Targets from issue #8 are not met yet: CNN "
        "convolutions run as im2col + an AVX-512 GEMM micro-kernel without "
        "fusion, prepacking or Winograd.", "",
        "```json", json.dumps(raw, indent=1), "```", ""])
    pathlib.Path(args.out).write_text(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
