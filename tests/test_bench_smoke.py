"""scripts/bench keeps working: its smoke mode, end to end (no timing is
asserted; CI machines are too noisy and the suite only reports)."""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_bench_smoke(tmp_path):
    cuvilc = ROOT / "bazel-bin" / "tools" / "cuvilc"
    assert cuvilc.exists(), "build //tools:cuvilc first (scripts/test does)"
    serve = ROOT / "bazel-bin" / "tools" / "cuvil-serve"
    assert serve.exists(), "build //tools:cuvil-serve first (scripts/test does)"
    results = tmp_path / "RESULTS.md"
    # The wheel scripts/test built: CompiledModule and scikit-learn rows.
    wheel = os.environ.get("CUVIL_WHEEL")
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--smoke",
         "--cuvilc", str(cuvilc), "--serve", str(serve), "--out-dir", str(tmp_path),
         "--results", str(results)] + (["--wheel", wheel] if wheel else []),
        capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["peak_gflops"]["core"] > 0
    model = data["models"]["classifier"]
    cell = model["runs"]["t1_b1"]
    for engine in ("torch_eager", "torchscript", "cuvil"):
        assert cell[engine]["runs"] == 5 and cell[engine]["p50"] > 0
    assert cell["max_abs_error"] < 1e-6
    assert model["cabi"]["p50"] > 0
    for proto in ("rest", "grpc"):
        stat = data["serving"][proto]["1"]
        assert stat["requests"] > 0 and stat["p50"] > 0
    assert data["serving"]["rest"]["1"]["errors"] == 0
    text = results.read_text()
    assert "## Targets (issue #8)" in text
    assert "quick-start: C-ABI call (from C) vs torch eager call" in text
    assert "serving: REST per-request overhead" in text and "## Serving" in text
    assert "## Tree ensembles (issue #27)" in text
    trees = data["trees"]["cells"]
    assert {c["batch"] for c in trees} == {1, 64, 2000}
    assert all(c["cuvil_1"] > 0 and c["xgb_1"] > 0 for c in trees)
    assert "## Zoo: fp32 on architectures outside the suite (issue #28)" in text
    (zoo,) = data["zoo"]["models"]
    zoo_cell = zoo["cells"]["t1_b1"]
    assert zoo_cell["cuvil"] > 0 and zoo_cell["script"] > 0
    assert zoo_cell["relative_error"] <= 1e-4
    if wheel:
        forests = data["trees"]["sklearn"]
        assert {c["model"] for c in forests} == {
            "RandomForestRegressor", "GradientBoostingRegressor",
            "HistGradientBoostingRegressor",
            "HistGradientBoostingRegressor, float32 features"}
        assert all(c["cuvil_1"] > 0 and c["sklearn"] > 0 for c in forests)
        assert "scikit-learn (1.2) `predict`" in text


def test_bench_smoke_for_another_cpu(tmp_path):
    """--cpu builds Cuvil's models for that CPU (the AVX2 kernels on any
    x86-64 machine), counts only its instruction sets in the peak, and says
    what it built for and which ISA oneDNN ran beside it."""
    cuvilc = ROOT / "bazel-bin" / "tools" / "cuvilc"
    assert cuvilc.exists(), "build //tools:cuvilc first (scripts/test does)"
    results = tmp_path / "RESULTS.md"
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--smoke",
         "--cpu=x86-64-v3", "--cuvilc", str(cuvilc), "--out-dir", str(tmp_path),
         "--results", str(results), "--no-trees", "--no-fpga", "--no-zoo",
         "--no-edge", "--no-held-out"],
        env={**os.environ, "ONEDNN_MAX_CPU_ISA": "AVX2"},
        capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads((tmp_path / "results.json").read_text())
    assert "--cpu=x86-64-v3` (without AVX-512)" in data["isa"]
    assert "PyTorch's oneDNN ran Intel AVX2 (ONEDNN_MAX_CPU_ISA=AVX2)" in data["isa"]
    peak = data["peak_gflops"]
    assert peak["core"] == peak["by_isa"]["avx2"]["1"]
    cell = data["models"]["classifier"]["runs"]["t1_b1"]
    assert cell["cuvil"]["p50"] > 0 and cell["max_abs_error"] < 1e-6
    assert data["isa"] in results.read_text()
