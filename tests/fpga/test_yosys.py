"""Yosys 0.23 synthesizes the generated Verilog out of context (the
project's own `make synth-xilinx` / `make synth-intel`), and its counts are
held to the report's estimates: DSP blocks and block RAMs equal, flip-flops
within 20%, LUTs within 30% (docs/fpga.md, "RTL estimates"). Small designs
here; scripts/bench synthesizes the jet tagger."""

import json
import pathlib
import subprocess
import sys

import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from test_hls_project import conv1d_model  # noqa: E402
from test_verilog import build, small_mlp  # noqa: E402
from yosys_stats import intel_resources, xilinx_resources  # noqa: E402


def softmax_mlp():
    torch.manual_seed(6)
    return torch.nn.Sequential(torch.nn.Linear(8, 6), torch.nn.ReLU(),
                               torch.nn.Linear(6, 5), torch.nn.Softmax(dim=1)).eval()


def tiny_cnn():
    torch.manual_seed(7)
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 2, 3, padding=1), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Flatten(),
        torch.nn.Linear(2 * 3 * 3, 3)).eval()


def tiny_conv1d():
    return conv1d_model(hidden=(3, 2), kernel=3, length=16, seed=8)


DESIGNS = {
    "cnn": (tiny_cnn, (1, 1, 6, 6), ["--precision=fixed<16,6,RND,SAT>"]),
    "conv1d_folded": (tiny_conv1d, (1, 2, 16), [
        "--precision=fixed<8,3,RND,SAT>",
        "--layer-reuse-factor=/0/Conv=3,/3/Conv=3,/6/Gemm=2"]),
    "dsp": (small_mlp, 12, ["--precision=fixed<16,6>"]),
    "lut": (small_mlp, 12, ["--precision=fixed<8,3,RND,SAT>"]),
    "folded": (small_mlp, 12, ["--layer-reuse-factor=/0/Gemm=4,/2/Gemm=5"]),
    "softmax": (softmax_mlp, 8, ["--precision=fixed<16,6,RND,SAT>"]),
}


def synthesize(project, family):
    result = subprocess.run(["make", "-s", f"synth-{family}"], cwd=project,
                            capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    return project / "build" / f"yosys_{family}_stat.json"


def within(measured, estimate, tolerance):
    return abs(measured - estimate) <= tolerance * max(estimate, 1)


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_yosys_xilinx_counts_match_the_estimates(tmp_path, name):
    make_model, n_in, flags = DESIGNS[name]
    project = build(tmp_path, make_model(), n_in, "--device=xczu9eg",
                    "--test-vectors=2", *flags, name=name)
    estimate = json.loads((project / "report.json").read_text())["CSynthesisReport"]
    measured = xilinx_resources(synthesize(project, "xilinx"))
    summary = {k: (measured[k], estimate[k]) for k in ("DSP", "BRAM_18K", "FF", "LUT")}
    assert measured["DSP"] == estimate["DSP"], summary
    assert measured["BRAM_18K"] == estimate["BRAM_18K"], summary
    assert within(measured["FF"], estimate["FF"], 0.2), summary
    assert within(measured["LUT"], estimate["LUT"], 0.3), summary
    if name == "softmax":
        assert estimate["BRAM_18K"] == 4  # three exp copies and the reciprocal
    if name == "folded":
        assert estimate["DSP"] == 30 + 12 + 18


def test_yosys_intel_proxy_synthesizes_near_the_estimates(tmp_path):
    project = build(tmp_path, small_mlp(), 12, "--device=agf014",
                    "--test-vectors=2")
    estimate = json.loads((project / "report.json").read_text())["CSynthesisReport"]
    measured = intel_resources(synthesize(project, "intel"))
    summary = {k: (measured[k], estimate[k]) for k in ("DSP", "FF", "LUT")}
    # Cyclone V (Yosys's model) is a proxy for Agilex: its 18 x 18
    # multipliers and its mapping of narrow constant products differ.
    assert 0.9 * estimate["DSP"] <= measured["DSP"] <= estimate["DSP"], summary
    assert within(measured["FF"], estimate["FF"], 0.2), summary
    assert within(measured["LUT"], estimate["LUT"], 0.3), summary
