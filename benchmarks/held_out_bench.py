"""Issue #26's held-out models against TorchScript: the scripted ones with
data-dependent control flow (a beam search whose while loop stops early, a
loop with an if inside), a text model (embedding, two-layer LSTM, linear
head), a UNet with transposed convolutions and torchvision's segmentation
models, all from tests/models/held_out_models.py (random weights, fixed
seed). Cuvil is `cuvil.compile` of the module (the scripted module for the
scripted ones) called from Python; TorchScript is the scripted module
itself, or for the others the traced, frozen and inference-optimized one
(as in the suite). The two take turns in one process
(bench.timed_together), after Cuvil's outputs are compared with PyTorch's
(the module run eagerly, or the scripted module).

    /usr/bin/python3 benchmarks/held_out_bench.py --wheel WHEEL
        [--update benchmarks/RESULTS.md] [--smoke]

scripts/bench runs it too (its section of RESULTS.md).
"""

import argparse
import pathlib
import sys
import tempfile
import time

import bench
import results_md

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"
                       / "models"))
import held_out_models  # noqa: E402

HEADING = "## Held-out models against TorchScript (issue #26)"
BUDGET_SECONDS, MIN_RUNS, MAX_RUNS = 3.0, 5, 300


def cases(smoke):
    """(name, module, scripted?, input signature, inputs) per model."""
    import torch

    vocab, hidden, beams, steps = (11, 16, 3, 6) if smoke else (1000, 256, 4, 20)
    torch.manual_seed(0)
    rows = [
        (f"beam search (vocab {vocab}, hidden {hidden}, {beams} beams, "
         f"{steps} steps, batch 2)",
         held_out_models.BeamSearch(vocab, hidden, beams, steps), True,
         [("h0", torch.float32, (2, hidden))], (torch.randn(2, hidden),)),
        ("loop with an if inside (5 steps, batch 64)",
         held_out_models.Recurrence(), True,
         [("h", torch.float32, (64, 8)), ("shift", torch.float32, (64, 1))],
         (torch.randn(64, 8), torch.zeros(64, 1))),
        ("text model (embedding, 2-layer LSTM, head; 8 x 12 tokens)",
         held_out_models.TextClassifier(), False,
         [("tokens", torch.int64, (8, 12))], (torch.randint(0, 50, (8, 12)),)),
        ("UNet with transposed convolutions (1 x 3 x 128 x 128)",
         held_out_models.TinyUNet(), False,
         [("x", torch.float32, (1, 3, 128, 128))], (torch.randn(1, 3, 128, 128),)),
    ]
    if not smoke:
        for name in ("deeplabv3_mobilenet_v3_large", "fcn_resnet50"):
            rows.append((f"{name} (1 x 3 x 224 x 224, 5 classes)",
                         held_out_models.Segmentation(name), False,
                         [("x", torch.float32, (1, 3, 224, 224))],
                         (torch.randn(1, 3, 224, 224),)))
    return rows


def largest_difference(got, expected):
    """max |cuvil - PyTorch| over the outputs, relative to their scale."""
    import numpy as np

    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    worst = 0.0
    for g, e in zip(got, expected):
        e = e.numpy().astype(np.float64)
        scale = max(float(np.abs(e).max()), 1e-30)
        worst = max(worst, float(np.abs(np.asarray(g) - e).max()) / scale)
    return worst


def runs_for(fns):
    """Calls per engine so that the slower spends about BUDGET_SECONDS."""
    slowest = 0.0
    for fn in fns.values():
        start = time.perf_counter()
        fn()
        slowest = max(slowest, time.perf_counter() - start)
    return max(MIN_RUNS, min(MAX_RUNS, int(BUDGET_SECONDS / max(slowest, 1e-6))))


def run(wheel, work, smoke=False):
    import torch

    cuvil = bench.import_wheel(wheel, pathlib.Path(work) / "held_out")
    rows = []
    for name, module, scripted, signature, inputs in cases(smoke):
        module.eval()
        if scripted:
            script = torch.jit.script(module)
            compiled = cuvil.compile(script, signature)
        else:
            script = bench.torchscript(module, inputs)
            compiled = cuvil.compile(module, signature)
        engines = {"script": lambda: script(*inputs),
                   "cuvil": lambda: compiled(*inputs)}
        with torch.inference_mode():
            # Against the module itself: optimize_for_inference may round
            # differently (deeplabv3's output moves by 0.8 of its scale).
            difference = largest_difference(compiled(*inputs),
                                            (script if scripted else module)(*inputs))
            runs = MIN_RUNS if smoke else runs_for(engines)
            timings = bench.timed_together(engines, 2, runs)
        row = {"name": name, "difference": difference, "runs": runs,
               "script": timings["script"]["p50"],
               "cuvil": timings["cuvil"]["p50"]}
        rows.append(row)
        print(f"held-out {name}: TorchScript {row['script']:.3f} ms, Cuvil "
              f"{row['cuvil']:.3f} ms ({row['script'] / row['cuvil']:.2f}x; "
              f"difference {difference:.1e} of scale)", flush=True)
    return {"models": rows, "isa": bench.isa_line(),
            "threads": torch.get_num_threads()}


def markdown(results):
    lines = [HEADING, "",
             "tests/models/held_out_models.py's models (random weights), "
             "compiled by `cuvil.compile` and called from Python, against "
             "TorchScript: the scripted module for the scripted ones (their "
             "`if` / `for` / `while` compiled as ONNX If and Loop), else "
             "traced, frozen and `optimize_for_inference`d. p50 of the two "
             f"taking turns, PyTorch's default {results['threads']} thread(s), "
             "Cuvil's default; TorchScript / Cuvil above 1: Cuvil is faster. "
             "Difference: max |Cuvil - PyTorch| over the outputs (the module "
             "run eagerly, or the scripted module), relative to their largest "
             f"magnitude. {results['isa']}", "",
             "| model | TorchScript ms | Cuvil ms | TorchScript / Cuvil | "
             "difference |", "| --- | --- | --- | --- | --- |"]
    for row in results["models"]:
        lines.append(f"| {row['name']} | {row['script']:.3f} | "
                     f"{row['cuvil']:.3f} | {row['script'] / row['cuvil']:.2f} | "
                     f"{row['difference']:.1e} |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wheel", required=True,
                        help="the wheel (or its unpacked folder)")
    parser.add_argument("--update", help="RESULTS.md whose section to replace")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cuvil-held-out-") as work:
        results = run(args.wheel, work, args.smoke)
    lines = markdown(results)
    print("\n".join(lines))
    if args.update:
        results_md.update_section(args.update, HEADING, lines)


if __name__ == "__main__":
    main()
