"""The FPGA target's Verilog (issue #22): models to RTL with cuvilc
--emit=verilog, simulated by the generated self-checking testbench under
Icarus Verilog and Verilator (random bubbles and back-pressure; latency and
II held to the schedule's), the outputs bit for bit against the independent
exact reference (hls_reference.py), Verilator's lint clean, and Yosys's
resource counts against the report's estimates.

Models: hls4ml's jet tagger (16-64-32-32-5, ReLU, softmax) at
ap_fixed<16,6> and at 8 bits, at the reuse factors the plan chose and
folded 16 times, a small MLP, and part 1's small CNN (1x28x28) and 1-D
convolution model, streaming pixels, at 16 bits and at 8 bits folded.
"""

import json
import pathlib
import subprocess
import sys

import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))

import hls_reference  # noqa: E402
from test_hls_project import (conv1d_model, cuvilc, export,  # noqa: E402
                               jet_tagger, linears, small_cnn)


def small_mlp():
    torch.manual_seed(4)
    return torch.nn.Sequential(
        torch.nn.Linear(12, 10), torch.nn.ReLU(), torch.nn.Linear(10, 6),
        torch.nn.ReLU(), torch.nn.Linear(6, 3)).eval()


def build(tmp_path, model, n_in, *flags, name="rtl"):
    onnx_path = export(model, n_in, tmp_path / f"{name}.onnx")
    project = tmp_path / name
    cuvilc(onnx_path, "--target=fpga", "--emit=verilog", *flags, "-o", project)
    return project


def simulate(project, simulator, *args):
    """Runs `make sim-<simulator>`; returns the testbench's JSON line and
    make's result."""
    result = subprocess.run(["make", "-s", f"sim-{simulator}", *args],
                            cwd=project, capture_output=True, text=True,
                            timeout=900)
    lines = [l for l in result.stdout.splitlines() if l.startswith("{")]
    verdict = json.loads(lines[-1]) if lines else None
    return verdict, result


def unpack_hex(path, precision, stream):
    """Samples of a stream's words (one hex word a line, element i in bits
    [i*W +: W]) as floats of `precision` (a report's Precision entry);
    `stream` is the report's rtl input_stream / output_stream: a sample's
    transfers, and a pixel stream's transfer p holds value c * transfers + p."""
    width, frac = precision["width"], precision["width"] - precision["integer"]
    per, n = stream["transfers"], stream["values"]
    transfers = []
    for line in path.read_text().split():
        word = int(line, 16)
        values = []
        for i in range(n):
            raw = (word >> (i * width)) & ((1 << width) - 1)
            if precision["signed"] and raw >> (width - 1):
                raw -= 1 << width
            values.append(raw * 2.0 ** -frac)
        transfers.append(values)
    samples = []
    for k in range(0, len(transfers), per):
        pixels = transfers[k:k + per]
        samples.append([pixels[p][c] for c in range(n) for p in range(per)])
    return samples


def rtl_outputs(project, report):
    """Phase 0's outputs (build/outputs.hex)."""
    last = report["layers"][-1]
    return unpack_hex(project / "build" / "outputs.hex",
                      last["Precision"]["result"], report["rtl"]["output_stream"])


def input_samples(project, report):
    first = report["layers"][0]
    return unpack_hex(project / "tb_data" / "input.hex",
                      first["Precision"]["input"], report["rtl"]["input_stream"])


def check_design(project, model, simulators=("iverilog", "verilator")):
    report = json.loads((project / "report.json").read_text())
    lint = subprocess.run(["make", "-s", "lint"], cwd=project,
                          capture_output=True, text=True)
    assert lint.returncode == 0 and "%Warning" not in lint.stderr, lint.stderr
    for simulator in simulators:
        verdict, result = simulate(project, simulator)
        assert result.returncode == 0, result.stdout + result.stderr
        assert verdict and verdict["pass"], result.stdout
        assert "PASS" in result.stdout.split()
        assert verdict["mismatches"] == 0
        assert verdict["latency_cycles"] == report["CSynthesisReport"]["BestLatency"]
        assert verdict["ii"] == verdict["ii_min"] == \
            report["CSynthesisReport"]["IntervalMax"]
        # Bit for bit against the reference that shares no code with the
        # compiler (the testbench's expected vectors are the compiler's).
        expected = [hls_reference.run(report, linears(model), s)
                    for s in input_samples(project, report)]
        assert rtl_outputs(project, report) == expected
    return report


# The rounding/saturating and folded variants are the small MLP's in CI
# (test_yosys, test_random_traffic_with_other_seeds); at the jet tagger's
# size they run with the slow tests.
@pytest.mark.parametrize("precision,reuse", [
    ("fixed<16,6>", None),
    pytest.param("fixed<8,3,RND,SAT>", None, marks=pytest.mark.slow),
    pytest.param("fixed<16,6>", "16", marks=pytest.mark.slow),
])
def test_jet_tagger_in_both_simulators(tmp_path, precision, reuse):
    model = jet_tagger()
    flags = ["--device=xczu9eg", f"--precision={precision}", "--test-vectors=8"]
    if reuse:
        flags += [f"--reuse-factor={reuse}", "--strategy=resource"]
    project = build(tmp_path, model, 16, *flags)
    report = check_design(project, model)
    assert [l["class_name"] for l in report["layers"]] == ["Dense"] * 4 + ["Softmax"]
    assert (project / "rtl" / "layer5_exp.hex").read_text().count("\n") == 1024
    dense = [l for l in report["layers"] if l["class_name"] == "Dense"]
    if reuse:
        assert {l["ReuseFactor"] for l in dense} == {16}
        assert report["CSynthesisReport"]["IntervalMax"] == 16
        assert (project / "rtl" / "layer1_weights.hex").exists()


# Reuse factors dividing each convolution's patch and the dense layer's
# inputs: every layer folded.
FOLDED = {"cnn": "/0/Conv=3,/3/Conv=4,/7/Gemm=8",
          "conv1d": "/0/Conv=5,/3/Conv=6,/6/Gemm=7"}


@pytest.mark.parametrize("name", ["cnn", "conv1d"])
@pytest.mark.parametrize("precision,folded", [
    ("fixed<16,6,RND,SAT>", False),
    ("fixed<8,3,RND,SAT>", True),
])
def test_convolution_models_stream_pixels_in_both_simulators(
        tmp_path, name, precision, folded):
    model, shape = ((small_cnn(), (1, 1, 28, 28)) if name == "cnn"
                    else (conv1d_model(), (1, 2, 32)))
    flags = ["--device=xczu9eg", f"--precision={precision}",
             "--test-vectors=2" if name == "cnn" else "--test-vectors=6"]
    if folded:
        flags.append(f"--layer-reuse-factor={FOLDED[name]}")
    project = build(tmp_path, model, shape, *flags, name=name)
    report = check_design(project, model)
    # One pixel (its channels) a transfer in, the dense layer's vector out.
    assert report["rtl"]["input_stream"] == {
        "pixels": True, "transfers": shape[-1] * (shape[2] if name == "cnn" else 1),
        "values": shape[1]}
    assert report["rtl"]["output_stream"]["transfers"] == 1
    classes = [l["class_name"] for l in report["layers"]]
    assert "Conv2D" in classes and "MaxPooling2D" in classes
    reuse = {l["ReuseFactor"] for l in report["layers"]
             if l["class_name"] == "Conv2D"}
    assert min(reuse) > 1 if folded else reuse == {1}
    assert (project / "rtl" / "layer1_weights.hex").exists() == folded
    # A convolution's window generator feeds its dense datapath.
    conv = (project / "rtl" / "layer1.v").read_text()
    assert "layer1_core u_core" in conv and "sr <=" in conv


def test_a_relu_before_the_first_convolution_streams_pixels_too(tmp_path):
    torch.manual_seed(9)
    model = torch.nn.Sequential(
        torch.nn.ReLU(), torch.nn.Conv2d(2, 3, 3, stride=2, padding=1),
        torch.nn.Flatten(), torch.nn.Linear(3 * 3 * 3, 4)).eval()
    project = build(tmp_path, model, (1, 2, 5, 5), "--device=xczu9eg",
                    "--precision=fixed<16,6,RND,SAT>", "--test-vectors=5")
    report = check_design(project, model, simulators=("iverilog",))
    assert report["rtl"]["input_stream"] == {"pixels": True, "transfers": 25,
                                             "values": 2}


def test_random_traffic_with_other_seeds(tmp_path):
    model = small_mlp()
    project = build(tmp_path, model, 12, "--device=xczu9eg",
                    "--layer-reuse-factor=/2/Gemm=5", "--test-vectors=6")
    check_design(project, model, simulators=("iverilog",))
    for seed, pct in ((7, 80), (11, 50), (12345, 5)):
        verdict, result = simulate(project, "iverilog", f"SEED={seed}",
                                   f"BUBBLE={pct}", f"STALL={pct}")
        assert verdict and verdict["pass"] and verdict["seed"] == seed, \
            result.stdout


def test_a_wrong_expected_value_fails_the_testbench(tmp_path):
    model = small_mlp()
    project = build(tmp_path, model, 12, "--device=xczu9eg", "--test-vectors=3")
    expected = project / "tb_data" / "expected.hex"
    lines = expected.read_text().split()
    lines[1] = format(int(lines[1], 16) ^ 1, "x").zfill(len(lines[1]))
    expected.write_text("\n".join(lines) + "\n")
    for simulator in ("iverilog", "verilator"):
        verdict, result = simulate(project, simulator)
        assert verdict and not verdict["pass"], result.stdout
        assert verdict["mismatches"] == 2  # sample 1, in each phase
        assert "FAIL" in result.stdout.split()
        assert "mismatch: phase 0 transfer 1" in result.stdout


def test_a_sample_done_off_the_timing_model_fails_the_testbench(tmp_path):
    model = small_mlp()
    project = build(tmp_path, model, 12, "--device=xczu9eg", "--test-vectors=3")
    timing = project / "tb_data" / "timing.hex"
    lines = timing.read_text().split()
    lines[1] = format(int(lines[1], 16) + 1, "x")
    timing.write_text("\n".join(lines) + "\n")
    verdict, result = simulate(project, "iverilog")
    assert verdict and not verdict["pass"], result.stdout
    assert verdict["timing_mismatches"] == 1 and verdict["mismatches"] == 0
    assert "timing: sample 1 done" in result.stdout


def test_the_report_and_sources_say_what_was_built(tmp_path):
    model = small_mlp()
    project = build(tmp_path, model, 12, "--device=xczu9eg",
                    "--layer-reuse-factor=/2/Gemm=2", "--project=jets")
    report = json.loads((project / "report.json").read_text())
    assert report["top"] == "jets"
    assert [l["ReuseFactor"] for l in report["layers"]] == [1, 2, 1]
    assert report["rtl"]["latency_cycles"] == \
        sum(l["Latency"] for l in report["layers"])
    # The schedules leave slack under the device's 5 ns clock.
    assert 0 < report["clock"]["Slack"] < report["clock"]["TargetClockPeriod"]
    assert report["rtl"]["fmax_mhz"] > 1000 / report["clock"]["TargetClockPeriod"]
    top = (project / "rtl" / "jets.v").read_text()
    for port in ("s_axis_tdata", "s_axis_tvalid", "s_axis_tready",
                 "s_axis_tlast", "m_axis_tdata", "m_axis_tvalid",
                 "m_axis_tready", "m_axis_tlast"):
        assert port in top
    layer2 = (project / "rtl" / "layer2.v").read_text()
    assert "localparam REUSE_FACTOR = 2;" in layer2
    assert "$readmemh(\"rtl/layer2_weights.hex\", rom)" in layer2
    assert len((project / "rtl" / "layer2_weights.hex").read_text().split()) == 2
    assert "Latency" in (project / "report.txt").read_text()


def compile_error(tmp_path, model, n_in, *flags):
    onnx_path = export(model, n_in, tmp_path / "bad.onnx")
    out = tmp_path / "out"
    result = cuvilc(onnx_path, "--target=fpga", "--emit=verilog", *flags,
                    "-o", out, check=False)
    assert result.returncode != 0
    assert not out.exists()  # nothing half-written
    return result.stderr


class DenseThenConv(torch.nn.Module):
    """A dense layer's vector reshaped into an image for a convolution."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.fc = torch.nn.Linear(8, 32)
        self.conv = torch.nn.Conv2d(2, 2, 3)
        self.out = torch.nn.Linear(8, 3)

    def forward(self, x):
        return self.out(self.conv(self.fc(x).reshape(-1, 2, 4, 4)).flatten(1))


def test_a_convolution_after_a_dense_layer_is_refused(tmp_path):
    message = compile_error(tmp_path, DenseThenConv().eval(), 8,
                            "--device=xczu9eg")
    assert "/conv/Conv (layer2) is a Conv2D after a layer that outputs a " \
        "vector" in message
    assert "--emit=hls" in message


def test_a_max_tree_slower_than_the_clock_is_refused(tmp_path):
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 2, 3), torch.nn.MaxPool2d(4), torch.nn.Flatten(),
        torch.nn.Linear(8, 3)).eval()
    message = compile_error(tmp_path, model, (1, 1, 10, 10), "--device=xczu9eg",
                            "--clock-period=1")
    assert "/1/MaxPool (layer2): its 16-value max tree takes about" in message
    assert "--clock-period" in message


def test_a_reuse_factor_beyond_the_inputs_is_explained(tmp_path):
    message = compile_error(tmp_path, small_mlp(), 12, "--device=xczu9eg",
                            "--layer-reuse-factor=/2/Gemm=20")
    assert "/2/Gemm (layer2): reuse factor 20 exceeds its 10 inputs" in message


@pytest.mark.parametrize("name,why", [
    ("module", "a Verilog keyword"),
    ("layer3", "layerN, layerN_core and cuvil_add name the design's modules"),
    ("layer2_core", "layerN, layerN_core and cuvil_add name"),
    ("cuvil_add", "layerN, layerN_core and cuvil_add name"),
])
def test_a_top_name_verilog_cannot_take_is_refused(tmp_path, name, why):
    message = compile_error(tmp_path, small_mlp(), 12, "--device=xczu9eg",
                            f"--project={name}")
    assert why in message


def test_a_design_over_the_caps_is_refused_naming_the_layers(tmp_path):
    # At 8 bits the HLS plan builds products from LUTs and folds layers to
    # fit 1% of the part; the RTL multiplies folded layers in DSP blocks,
    # more than 1% of ZU9EG's 2,520.
    message = compile_error(tmp_path, small_mlp(), 12, "--device=xczu9eg",
                            "--precision=fixed<8,3,RND,SAT>",
                            "--max-utilization=0.01")
    assert "Verilog: the design needs" in message
    assert "DSP (/0/Gemm (layer1)" in message
    assert "over the 25 (1% of xczu9eg) allowed" in message
