"""The model zoo (issue #28): fp32 speed on torchvision architectures outside
the benchmark suite's five, against PyTorch eager and TorchScript-frozen.

For each model (random weights, fixed seed; exported to ONNX and compiled
with `cuvilc --max-batch=8`) and each cell (threads x batch), the three
engines take turns in one process (bench.timed_together), each cell's
calls budgeted by time so that the largest models stay minutes, not
hours. Reported: p50 times, TorchScript / Cuvil (above 1: Cuvil faster),
the geometric mean of that ratio, the largest difference from PyTorch's
output relative to the output's scale, and the register-tile kernels the
artifact calls with the variant each runs (its metadata).

    /usr/bin/python3 benchmarks/zoo_bench.py --cuvilc CUVILC
        [--models a,b] [--threads 1,2] [--batches 1,8]
        [--update benchmarks/RESULTS.md] [--merge PREVIOUS_ZOO_JSON] [--smoke]

scripts/bench runs it too (its section of RESULTS.md, "## Zoo"); run alone,
it also writes benchmarks/out/zoo.json.
"""

import argparse
import json
import math
import pathlib
import sys
import tempfile
import time

import bench
import results_md

HEADING = "## Zoo: fp32 on architectures outside the suite (issue #28)"

# (torchvision name, image size). Heads and auxiliary classifiers as
# torchvision builds them for inference.
ZOO = [
    ("resnext101_32x8d", 224),
    ("regnet_y_400mf", 224),
    ("regnet_x_800mf", 224),
    ("mobilenet_v3_large", 224),
    ("mnasnet1_0", 224),
    ("efficientnet_b1", 224),
    ("convnext_small", 224),
    ("squeezenet1_0", 224),
    ("densenet169", 224),
    ("shufflenet_v2_x0_5", 224),
    ("googlenet", 224),
    ("inception_v3", 299),
    ("wide_resnet50_2", 224),
    ("vgg11", 224),
    ("alexnet", 224),
]
SMOKE = ["shufflenet_v2_x0_5"]
# Seconds each engine spends on one cell (its calls, beyond warmup).
BUDGET_SECONDS = 4.0
MIN_RUNS, MAX_RUNS = 5, 200


def build(name, size):
    """The model (eval mode, tests/models' fan-in scaled weights) and an
    example input."""
    kwargs = {}
    if name in ("googlenet", "inception_v3"):
        kwargs = {"aux_logits": False, "init_weights": True}
    model, example = bench.export_models.torchvision_model(name, size, **kwargs)
    return model.eval(), example


def runs_for(fns):
    """Calls per engine so that the slowest spends about BUDGET_SECONDS."""
    slowest = 0.0
    for fn in fns.values():
        fn()  # warm
        start = time.perf_counter()
        fn()
        slowest = max(slowest, time.perf_counter() - start)
    return max(MIN_RUNS, min(MAX_RUNS, int(BUDGET_SECONDS / max(slowest, 1e-6))))


def run(cuvilc, work, smoke=False, models=None, threads_list=(1, 2),
        batches=(1, 8)):
    import numpy as np
    import torch

    work = pathlib.Path(work) / "zoo"
    work.mkdir(parents=True, exist_ok=True)
    if max(batches) > bench.MAX_BATCH:
        raise ValueError(f"batches above {bench.MAX_BATCH} (cuvilc --max-batch)")
    names = models or (SMOKE if smoke else [n for n, _ in ZOO])
    sizes = dict(ZOO)
    if smoke:
        threads_list, batches = (1,), (1,)
    rows = []
    for name in names:
        torch.manual_seed(0)
        model, example = build(name, sizes[name])
        # Named after the model: dlopen caches by path.
        so, seconds = bench.export_and_compile(cuvilc, model, example, work,
                                               f"_zoo_{name}")
        compiled = bench.CuvilModel(so)
        script = bench.torchscript(model, example)
        row = {"name": name, "size": sizes[name], "compile_seconds": seconds,
               "gflop": bench.count_flops(model, example) / 1e9,
               "kernels": compiled.metadata.get("kernels"), "cells": {}}
        for batch in batches:
            x = torch.randn(batch, *example.shape[1:])
            with torch.inference_mode():
                reference = model(x).numpy()
            scale = float(np.abs(reference).max())
            for threads in threads_list:
                torch.set_num_threads(threads)
                cuvil = compiled.runner(x.numpy(), threads)
                cuvil()
                error = float(np.abs(cuvil.outputs[0] - reference).max())
                engines = {"eager": lambda: model(x),
                           "script": lambda: script(x), "cuvil": cuvil}
                with torch.inference_mode():
                    runs = MIN_RUNS if smoke else runs_for(engines)
                    timings = bench.timed_together(engines, 0, runs)
                cuvil.close()
                cell = {k: timings[k]["p50"] for k in engines}
                cell.update({"runs": runs, "relative_error": error / max(scale, 1e-30)})
                row["cells"][f"t{threads}_b{batch}"] = cell
                print(f"zoo {name} threads={threads} batch={batch}: eager "
                      f"{cell['eager']:.2f} ms, TorchScript {cell['script']:.2f} ms, "
                      f"Cuvil {cell['cuvil']:.2f} ms "
                      f"({cell['script'] / cell['cuvil']:.2f}x; error "
                      f"{cell['relative_error']:.1e} of scale)", flush=True)
        rows.append(row)
    return {"models": rows, "threads": list(threads_list),
            "batches": list(batches), "isa": bench.isa_line()}


def kernel_variants(kernels):
    """The register-tile families the artifact calls and the variant each
    runs (its metadata; "none": not called)."""
    return ", ".join(f"{k} {v}" for k, v in sorted((kernels or {}).items())
                     if v != "none")


def markdown(results):
    cells = [f"t{t}_b{b}" for b in results["batches"] for t in results["threads"]]
    header = " | ".join(f"{c.replace('_', ' ')} TorchScript / Cuvil" for c in cells)
    lines = [HEADING, "",
             results["isa"], "",
             "torchvision models with random (fan-in scaled) weights, exported "
             "to ONNX (opset 14) and compiled with `cuvilc --max-batch=8`. "
             "Each cell: p50 of eager, TorchScript-frozen "
             "(`optimize_for_inference`) and Cuvil (C ABI through ctypes) "
             "taking turns in one process; the ratio is TorchScript / Cuvil "
             "(above 1: Cuvil faster). Error: the largest |Cuvil - PyTorch| "
             "over the output's largest magnitude, in any cell.", "",
             f"| model | GFLOP | compile s | {header} | error | kernels |",
             "| --- | --- | --- | " + " | ".join("---" for _ in cells) +
             " | --- | --- |"]
    ratios = []
    for row in results["models"]:
        parts = []
        for c in cells:
            cell = row["cells"].get(c)
            if not cell:
                parts.append("-")
                continue
            ratio = cell["script"] / cell["cuvil"]
            ratios.append(ratio)
            parts.append(f"{cell['script']:.1f} / {cell['cuvil']:.1f} ms = "
                         f"**{ratio:.2f}x**")
        error = max(c["relative_error"] for c in row["cells"].values())
        lines.append(f"| {row['name']} ({row['size']}) | {row['gflop']:.2f} "
                     f"| {row['compile_seconds']:.0f} | " + " | ".join(parts) +
                     f" | {error:.1e} | {kernel_variants(row['kernels'])} |")
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        below = sum(r < 1.0 for r in ratios)
        lines += ["", f"Geometric mean of TorchScript / Cuvil over {len(ratios)} "
                  f"cells: **{geo:.2f}x**; {below} cells below 1.0x."]
    return lines


def merge(previous, results):
    """`results` with `previous`'s rows of the models it did not run, in
    the zoo's order (the same cells: threads and batches must agree)."""
    if (previous["threads"], previous["batches"]) != (results["threads"],
                                                    results["batches"]):
        raise ValueError("--merge: the previous run timed other threads or "
                         "batches")
    rows = {row["name"]: row for row in previous["models"]}
    rows.update({row["name"]: row for row in results["models"]})
    merged = dict(results)
    merged["models"] = [rows[name] for name, _ in ZOO if name in rows]
    return merged


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cuvilc", required=True)
    parser.add_argument("--models", help="comma-separated subset of the zoo")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--update", metavar="RESULTS_MD",
                        help="replace the zoo section of this file")
    parser.add_argument("--merge", metavar="ZOO_JSON",
                        help="a previous run's zoo.json: its rows of the "
                        "models not run now are kept (the zoo rerun in parts)")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    known = dict(ZOO)
    models = args.models.split(",") if args.models else None
    if models and set(models) - set(known):
        parser.error(f"unknown models {sorted(set(models) - set(known))}; "
                     f"choose from {sorted(known)}")
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    with tempfile.TemporaryDirectory(prefix="cuvil-zoo-") as work:
        results = run(args.cuvilc, work, args.smoke, models,
                      [int(t) for t in args.threads.split(",")],
                      [int(b) for b in args.batches.split(",")])
    if args.merge:
        results = merge(json.loads(pathlib.Path(args.merge).read_text()), results)
    out = pathlib.Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    (out / "zoo.json").write_text(json.dumps(results, indent=1))
    lines = markdown(results)
    print("\n".join(lines))
    if args.update:
        results_md.update_section(args.update, HEADING, lines)


if __name__ == "__main__":
    main()
