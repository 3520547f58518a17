"""Tree ensembles (issue #27): Cuvil against xgboost's own CPU predictor, in
one run, on the HIGGS shape (28 float32 features, standard normal).

Forests are random XGBoost models (random features, thresholds and leaf
values in XGBoost's JSON schema, every tree as deep as asked): xgboost
loads them like trained ones, and random paths are the realistic case for
a predictor (no branch is predictable). Each cell checks that Cuvil's
margins equal xgboost's bit for bit before it is timed.

    /usr/bin/python3 benchmarks/trees_bench.py --cuvilc CUVILC \\
        [--wheel WHEEL] [--update benchmarks/RESULTS.md] [--smoke]

scripts/bench runs it too (its section of RESULTS.md, "## Tree ensembles").
"""

import argparse
import ctypes
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import results_md

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLANG = "/usr/lib/llvm-22/bin/clang"
FEATURES = 28
HEADING = "## Tree ensembles (issue #27)"


def random_tree(rng, depth, index):
    """One XGBoost JSON tree, complete to `depth` (nodes breadth first)."""
    inner = 2 ** depth - 1
    count = 2 * inner + 1
    left = [2 * i + 1 if i < inner else -1 for i in range(count)]
    right = [2 * i + 2 if i < inner else -1 for i in range(count)]
    conditions = [float(np.float32(v)) for v in rng.standard_normal(count)]
    for i in range(inner, count):
        conditions[i] = float(np.float32(rng.standard_normal() * 0.05))
    features = [int(f) for f in rng.integers(0, FEATURES, count)]
    return {
        "base_weights": [0.0] * count, "categories": [],
        "categories_nodes": [], "categories_segments": [],
        "categories_sizes": [],
        "default_left": [int(v) for v in rng.integers(0, 2, count)],
        "id": index, "left_children": left,
        "loss_changes": [0.0] * count,
        "parents": [2147483647] + [(i - 1) // 2 for i in range(1, count)],
        "right_children": right, "split_conditions": conditions,
        "split_indices": [f if i < inner else 0 for i, f in enumerate(features)],
        "split_type": [0] * count, "sum_hessian": [1.0] * count,
        "tree_param": {"num_deleted": "0", "num_feature": str(FEATURES),
                       "num_nodes": str(count), "size_leaf_vector": "0"},
    }


def write_random_model(path, trees, depth, seed=0):
    """Writes the model tree by tree (20,000 trees are ~0.6 GB of JSON)."""
    rng = np.random.default_rng(seed)
    text = json.dumps(random_model_skeleton(trees))
    head, tail = text.split('"TREES"')
    with open(path, "w") as f:
        f.write(head + "[")
        for i in range(trees):
            f.write(("," if i else "") + json.dumps(random_tree(rng, depth, i)))
        f.write("]" + tail)


def random_model_skeleton(trees):
    return {
        "learner": {
            "attributes": {}, "feature_names": [], "feature_types": [],
            "gradient_booster": {"model": {
                "gbtree_model_param": {"num_parallel_tree": "1",
                                       "num_trees": str(trees),
                                       "size_leaf_vector": "0"},
                "tree_info": [0] * trees,
                "trees": "TREES"},
                "name": "gbtree"},
            "learner_model_param": {"base_score": "5E-1",
                                    "boost_from_average": "1",
                                    "num_class": "0",
                                    "num_feature": str(FEATURES),
                                    "num_target": "1"},
            "objective": {"name": "binary:logistic",
                          "reg_loss_param": {"scale_pos_weight": "1"}}},
        "version": [1, 7, 4]}


def timed(fn, runs, min_seconds=0.05):
    """The median time of `fn` (seconds), after one warm-up call."""
    fn()
    samples = []
    start = time.perf_counter()
    while len(samples) < runs or time.perf_counter() - start < min_seconds:
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
        if len(samples) >= 10 * runs:
            break
    return statistics.median(samples)


class Artifact:
    """A compiled forest through its C ABI (ctypes), one context."""

    def __init__(self, path, threads):
        self.lib = ctypes.CDLL(str(path))
        self.lib.cuvil_context_create.argtypes = [ctypes.c_int, ctypes.c_void_p]
        self.lib.cuvil_context_run.argtypes = [
            ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
        self.context = ctypes.c_void_p()
        assert self.lib.cuvil_context_create(threads, ctypes.byref(self.context)) == 0

    def __call__(self, x, out):
        ins = (ctypes.c_void_p * 1)(x.ctypes.data)
        outs = (ctypes.c_void_p * 1)(out.ctypes.data)
        assert self.lib.cuvil_context_run(self.context, len(x), ins, outs) == 0


# Runs a command; prints the largest peak RSS (KiB) among its processes.
_RSS_PROBE = ("import resource, subprocess, sys; "
              "subprocess.run(sys.argv[1:], check=True); "
              "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def compile_forest(cuvilc, model_path, so_path, max_batch):
    """Compiles; returns (seconds, peak RSS of cuvilc or clang in MiB)."""
    start = time.perf_counter()
    probe = subprocess.run(
        [sys.executable, "-c", _RSS_PROBE, cuvilc, "--quiet", str(model_path),
         "--tree-output=margin", f"--max-batch={max_batch}", "-o", str(so_path)],
        check=True, capture_output=True, text=True)
    return time.perf_counter() - start, int(probe.stdout.split()[-1]) / 1024


def cabi_one_row(work, so, runs):
    """One row through the C ABI from C (benchmarks/cabi_latency.c), ms."""
    binary = work / "cabi_latency"
    if not binary.exists():
        subprocess.run([CLANG, "-O2", "-o", str(binary),
                        str(ROOT / "benchmarks" / "cabi_latency.c"), "-ldl"],
                       check=True)
    return json.loads(subprocess.run(
        [str(binary), str(so), "1", "20", str(runs)], check=True,
        capture_output=True, text=True).stdout)["p50"]


def run(cuvilc, work, smoke=False, wheel=None):
    import xgboost as xgb

    work = pathlib.Path(work)
    rows_big = 2000 if smoke else 100_000
    shapes = [(100, 6)] if smoke else [(100, 6), (100, 8), (500, 6), (500, 8),
                                       (2000, 6), (2000, 8)]
    batches = [1, 64, rows_big]
    x_all = np.random.default_rng(1).standard_normal(
        (rows_big, FEATURES)).astype(np.float32)
    results = {"cells": [], "compile": []}
    module = None
    if wheel:
        import bench
        module = bench.import_wheel(wheel, work)
    for trees, depth in shapes:
        name = f"forest_{trees}x{depth}"
        model_path = work / f"{name}.json"
        write_random_model(model_path, trees, depth)
        so = work / f"{name}.so"
        seconds, rss = compile_forest(cuvilc, model_path, so, rows_big)
        results["compile"].append({"trees": trees, "depth": depth,
                                   "seconds": seconds, "rss_mb": rss})
        booster = xgb.Booster(model_file=str(model_path))
        one = Artifact(so, 1)
        two = Artifact(so, 2)
        compiled_module = module.load(str(so)) if module else None
        for batch in batches:
            x = np.ascontiguousarray(x_all[:batch])
            out = np.zeros((batch, 1), np.float32)
            booster.set_param({"nthread": 1})
            want = booster.inplace_predict(x, predict_type="margin")
            one(x, out)
            assert np.array_equal(out[:, 0], want), f"{name}: margins differ"
            runs = 3 if batch == rows_big else 200
            cell = {"trees": trees, "depth": depth, "batch": batch}
            cell["xgb_1"] = timed(lambda: booster.inplace_predict(
                x, predict_type="margin"), runs)
            booster.set_param({"nthread": 2})
            cell["xgb_2"] = timed(lambda: booster.inplace_predict(
                x, predict_type="margin"), runs)
            cell["cuvil_1"] = timed(lambda: one(x, out), runs)
            cell["cuvil_2"] = timed(lambda: two(x, out), runs)
            if batch == 1:
                cell["cabi_c"] = cabi_one_row(work, so, 2000) / 1e3
                if compiled_module is not None:
                    cell["compiled_module"] = timed(
                        lambda: compiled_module(x), 2000)
            results["cells"].append(cell)
            print(f"{name} batch {batch}: xgboost {cell['xgb_1'] * 1e6:.1f} us, "
                  f"cuvil {cell['cuvil_1'] * 1e6:.1f} us "
                  f"({cell['xgb_1'] / cell['cuvil_1']:.1f}x)", flush=True)
    if module is not None:
        results["sklearn"] = run_sklearn(cuvilc, work, module, smoke, x_all)
    if not smoke:
        path = work / "forest_20000x8.json"
        write_random_model(path, 20_000, 8)
        seconds, rss = compile_forest(cuvilc, path, work / "forest_20000x8.so",
                                      rows_big)
        results["compile"].append({"trees": 20_000, "depth": 8,
                                   "seconds": seconds, "rss_mb": rss})
    return results


def run_sklearn(cuvilc, work, cuvil, smoke, x_all):
    """scikit-learn's predict against its model compiled through
    cuvil.onnx_ml (exact: checked before timing), one thread each (the
    forest's n_jobs=1; HistGradientBoosting's own OpenMP threads)."""
    import onnx
    from sklearn import ensemble

    rng = np.random.default_rng(2)
    train = x_all[:2000 if smoke else 20_000]
    y = train[:, 0] * 2 + np.sin(train[:, 1]) + rng.normal(size=len(train))
    trees = 10 if smoke else 100
    models = [
        ("RandomForestRegressor", ensemble.RandomForestRegressor(
            trees, max_depth=8, n_jobs=2, random_state=0)),
        ("GradientBoostingRegressor", ensemble.GradientBoostingRegressor(
            n_estimators=trees, max_depth=8, random_state=0)),
        ("HistGradientBoostingRegressor",
         ensemble.HistGradientBoostingRegressor(
             max_iter=trees, max_depth=8, early_stopping=False,
             random_state=0))]
    # HistGradientBoosting predicts on float64 rows; compiled with
    # float32_features it takes float32 ones (exact for float32 data).
    models.append(("HistGradientBoostingRegressor, float32 features",
                   models[-1][1]))
    cells = []
    for name, model in models:
        float32_features = name.endswith("float32 features")
        if not float32_features:
            model.fit(train, y)
        if hasattr(model, "n_jobs"):
            model.set_params(n_jobs=1)
        # Named after the model: dlopen hands back a library already loaded
        # from the same path (bench.py's other parts share `work`).
        stem = name.replace(", ", "_").replace(" ", "_")
        path = work / f"{stem}.onnx"
        onnx.save(cuvil.onnx_ml.from_sklearn(
            model, float32_features=float32_features), str(path))
        so = work / f"{stem}.so"
        compile_forest(cuvilc, path, so, len(x_all))
        compiled = Artifact(so, 1)
        hist = name.startswith("Hist") and not float32_features
        for batch in [1, 64, len(x_all)]:
            x = np.ascontiguousarray(x_all[:batch],
                                     dtype=np.float64 if hist else np.float32)
            out = np.zeros((batch, 1), np.float64)
            compiled(x, out)
            assert np.array_equal(out[:, 0], model.predict(x)), name
            runs = 3 if batch == len(x_all) else 100
            cell = {"model": name, "trees": trees, "batch": batch,
                    "sklearn": timed(lambda: model.predict(x), runs),
                    "cuvil_1": timed(lambda: compiled(x, out), runs)}
            cells.append(cell)
            print(f"{name} batch {batch}: scikit-learn "
                  f"{cell['sklearn'] * 1e6:.1f} us, cuvil "
                  f"{cell['cuvil_1'] * 1e6:.1f} us "
                  f"({cell['sklearn'] / cell['cuvil_1']:.1f}x)", flush=True)
    return cells


def markdown(results, isa):
    def ns(cell, key):
        return 1e9 * cell[key] / cell["batch"] / cell["trees"]

    lines = [HEADING, "",
             "Random XGBoost forests on 28 float32 features (margins checked "
             "bit for bit against xgboost before timing); xgboost 1.7 "
             "`inplace_predict` against the Cuvil .so through its C ABI "
             "(ctypes, one context), medians. ns = per row per tree. "
             f"{isa}", "",
             "| trees x depth | batch | xgboost 1 thread | Cuvil 1 thread "
             "| speed-up | xgboost 2 threads | Cuvil 2 threads | speed-up |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for c in results["cells"]:
        lines.append(
            f"| {c['trees']} x {c['depth']} | {c['batch']} | "
            f"{c['xgb_1'] * 1e6:.1f} us ({ns(c, 'xgb_1'):.2f} ns) | "
            f"{c['cuvil_1'] * 1e6:.1f} us ({ns(c, 'cuvil_1'):.2f} ns) | "
            f"{c['xgb_1'] / c['cuvil_1']:.1f}x | "
            f"{c['xgb_2'] * 1e6:.1f} us ({ns(c, 'xgb_2'):.2f} ns) | "
            f"{c['cuvil_2'] * 1e6:.1f} us ({ns(c, 'cuvil_2'):.2f} ns) | "
            f"{c['xgb_2'] / c['cuvil_2']:.1f}x |")
    lines += ["", "One row: from C (`benchmarks/cabi_latency.c`, zeros) and "
              "through `cuvil.CompiledModule` (numpy), against xgboost's "
              "`inplace_predict` (one thread):", "",
              "| trees x depth | xgboost | Cuvil from C | speed-up | "
              "CompiledModule | speed-up |", "| --- | --- | --- | --- | --- | --- |"]
    for c in results["cells"]:
        if c["batch"] != 1:
            continue
        module = c.get("compiled_module")
        lines.append(
            f"| {c['trees']} x {c['depth']} | {c['xgb_1'] * 1e6:.1f} us | "
            f"{c['cabi_c'] * 1e6:.2f} us | {c['xgb_1'] / c['cabi_c']:.0f}x | "
            + (f"{module * 1e6:.1f} us | {c['xgb_1'] / module:.0f}x |"
               if module else "- | - |"))
    if results.get("sklearn"):
        lines += ["", "scikit-learn (1.2) `predict` against its model "
                  "compiled through `cuvil.onnx_ml` (float64 sums, exact), "
                  "depth 8 on the same rows; Cuvil one thread (float32 "
                  "rows: the perfect walk, thresholds narrowed exactly to "
                  "float32, leaves summed in float64, on AVX-512; "
                  "HistGradientBoosting's float64 rows: the scalar table "
                  "walk, or its float32 rows with `float32_features=True`), "
                  "the forest's `n_jobs=1`, HistGradientBoosting with its "
                  "own OpenMP threads:", "",
                  "| model | trees | batch | scikit-learn | Cuvil 1 thread "
                  "| speed-up |", "| --- | --- | --- | --- | --- | --- |"]
        for c in results["sklearn"]:
            lines.append(
                f"| {c['model']} | {c['trees']} | {c['batch']} | "
                f"{c['sklearn'] * 1e6:.1f} us ({ns(c, 'sklearn'):.2f} ns) | "
                f"{c['cuvil_1'] * 1e6:.1f} us ({ns(c, 'cuvil_1'):.2f} ns) | "
                f"{c['sklearn'] / c['cuvil_1']:.1f}x |")
    lines += ["", "Compile time (cuvilc, the .so included) and the largest "
              "peak RSS among the compile's processes:", "",
              "| trees x depth | seconds | peak RSS |", "| --- | --- | --- |"]
    for c in results["compile"]:
        lines.append(f"| {c['trees']} x {c['depth']} | {c['seconds']:.1f} | "
                     f"{c['rss_mb']:.0f} MiB |")
    lines.append("")
    return lines


def isa_note():
    """The machine and walk, so that a section rerun alone (--update) says
    where its numbers come from."""
    info = open("/proc/cpuinfo").read()
    isa = "avx512" if " avx512f " in info else "avx2"
    model = next((line.split(":", 1)[1].strip() for line in info.splitlines()
                  if line.startswith("model name")), "unknown CPU")
    return (f"Run of {time.strftime('%Y-%m-%d')} on {model} "
            f"({os.cpu_count()} cores); walk: `{isa}` (this machine's widest).")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cuvilc", required=True)
    parser.add_argument("--wheel", help="the wheel (or its unpacked folder), "
                        "for the CompiledModule column and scikit-learn")
    parser.add_argument("--update", help="RESULTS.md whose section to replace")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cuvil-trees-") as work:
        results = run(args.cuvilc, work, args.smoke, args.wheel)
    lines = markdown(results, isa_note())
    print("\n".join(lines))
    if args.update:
        results_md.update_section(args.update, HEADING, lines)


if __name__ == "__main__":
    main()
