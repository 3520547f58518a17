"""The FPGA target end to end: models to Vitis HLS projects with cuvilc,
C-simulated with g++ (the generated testbench), bit for bit against the
compiler's expected outputs and against an independent exact reference
(hls_reference.py), and within stated tolerances of float PyTorch.

Models: hls4ml's jet tagger (16-64-32-32-5, ReLU, softmax) at
ap_fixed<16,6> and at 8 bits, and an MLP trained on scikit-learn's digits,
whose accuracy after quantization is measured.
"""

import json
import math
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
sys.path.insert(0, str(pathlib.Path(__file__).parent))

import hls_reference  # noqa: E402


def jet_tagger():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 32),
        torch.nn.ReLU(), torch.nn.Linear(32, 32), torch.nn.ReLU(),
        torch.nn.Linear(32, 5), torch.nn.Softmax(dim=1)).eval()


def export(model, n_in, path):
    shape = n_in if isinstance(n_in, tuple) else (1, n_in)
    torch.onnx.export(model, torch.randn(*shape), str(path),
                      input_names=["input"], output_names=["output"],
                      opset_version=13)
    return path


def cuvilc(*args, check=True):
    assert CUVILC.exists(), "build //tools:cuvilc first (scripts/test does)"
    result = subprocess.run([str(CUVILC), "--quiet", *map(str, args)],
                            capture_output=True, text=True)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def build(tmp_path, model, n_in, *flags, name="design"):
    onnx_path = export(model, n_in, tmp_path / f"{name}.onnx")
    project = tmp_path / name
    cuvilc(onnx_path, "--target=fpga", *flags, "-o", project)
    return project


def csim(project, inputs=None):
    """Runs `make csim` in the project (with `inputs` as its vectors and no
    expected outputs, if given); returns the outputs and make's result."""
    if inputs is not None:
        data = project / "tb_data"
        (data / "tb_output_predictions.dat").unlink()
        np.savetxt(data / "tb_input_features.dat", inputs, fmt="%.9g")
    result = subprocess.run(["make", "-s", "csim"], cwd=project,
                            capture_output=True, text=True)
    outputs = (np.loadtxt(project / "tb_data" / "csim_results.log", ndmin=2)
               if result.returncode == 0 else None)
    return outputs, result


def linears(model):
    """The layers with weights, in order (hls_reference.run's `linears`)."""
    return [m for m in model if isinstance(
        m, (torch.nn.Linear, torch.nn.Conv1d, torch.nn.Conv2d))]


def small_cnn():
    """Two conv + ReLU + max-pool stages and a dense layer, on 1x28x28."""
    torch.manual_seed(2)
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Flatten(),
        torch.nn.Linear(8 * 6 * 6, 10)).eval()


def conv1d_model(hidden=(6, 4), kernel=5, length=32, seed=3):
    """Two 1-D conv + ReLU stages (a max pool between) and a dense layer,
    on 2 x `length`."""
    torch.manual_seed(seed)
    steps = (length // 2 - 3) // 2 + 1
    return torch.nn.Sequential(
        torch.nn.Conv1d(2, hidden[0], kernel, padding=kernel // 2),
        torch.nn.ReLU(), torch.nn.MaxPool1d(2),
        torch.nn.Conv1d(hidden[0], hidden[1], 3, stride=2), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(hidden[1] * steps, 5)).eval()


@pytest.mark.parametrize("name,shape", [("cnn", (1, 1, 28, 28)),
                                        ("conv1d", (1, 2, 32))])
# Rounded weights: truncation (TRN, hls4ml's default) would shift every sum
# by half a quantum per product, 0.07 on the CNN's 288-input layer.
@pytest.mark.parametrize("precision,tolerance", [
    ("fixed<16,6,RND,SAT>", 0.01),
    ("fixed<8,3,RND,SAT>", 0.3),
])
def test_convolution_models_are_bit_exact(tmp_path, name, shape, precision,
                                          tolerance):
    model = small_cnn() if name == "cnn" else conv1d_model()
    onnx_path = tmp_path / f"{name}.onnx"
    torch.onnx.export(model, torch.randn(*shape), str(onnx_path),
                      input_names=["input"], output_names=["output"],
                      opset_version=13)
    project = tmp_path / name
    cuvilc(onnx_path, "--target=fpga", "--device=xczu9eg",
           f"--precision={precision}", "--test-vectors=4", "-o", project)
    outputs, result = csim(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 samples, 0 outputs differ" in result.stdout
    report = json.loads((project / "report.json").read_text())
    assert "Conv2D" in [l["class_name"] for l in report["layers"]]
    inputs = np.loadtxt(project / "tb_data" / "tb_input_features.dat", ndmin=2)
    assert outputs.tolist() == [hls_reference.run(report, linears(model), s)
                                for s in inputs]
    with torch.no_grad():
        expected = model(torch.tensor(inputs, dtype=torch.float32)
                         .reshape(-1, *shape[1:])).numpy()
    scale = np.abs(expected).max()
    assert np.abs(outputs - expected).max() <= tolerance * max(scale, 1)


@pytest.mark.parametrize("precision,tolerance", [
    ("fixed<16,6>", 0.02),
    ("fixed<8,3,RND,SAT>", 0.15),
])
def test_jet_tagger_is_bit_exact_in_c_simulation(tmp_path, precision, tolerance):
    model = jet_tagger()
    project = build(tmp_path, model, 16, "--device=xczu9eg",
                    f"--precision={precision}")
    outputs, result = csim(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "16 samples, 0 outputs differ" in result.stdout
    report = json.loads((project / "report.json").read_text())
    inputs = np.loadtxt(project / "tb_data" / "tb_input_features.dat", ndmin=2)
    # The independent reference, bit for bit.
    expected = [hls_reference.run(report, linears(model), sample)
                for sample in inputs]
    assert outputs.tolist() == expected
    # Float PyTorch, within the precision's tolerance.
    with torch.no_grad():
        float_outputs = model(torch.tensor(inputs, dtype=torch.float32)).numpy()
    assert np.abs(outputs - float_outputs).max() <= tolerance


def test_jet_tagger_report_fits_each_device(tmp_path):
    model = jet_tagger()
    onnx_path = export(model, 16, tmp_path / "jet.onnx")
    for device in ("xczu9eg", "xcvm1802"):
        project = tmp_path / device
        cuvilc(onnx_path, "--target=fpga", f"--device={device}", "-o", project)
        report = json.loads((project / "report.json").read_text())
        totals = report["CSynthesisReport"]
        for resource in ("LUT", "FF", "DSP", "BRAM_18K"):
            assert totals[resource] <= 0.8 * totals[f"Available{resource}"], \
                (device, resource)
        assert report["device"]["name"] == device
        assert report["clock"]["Slack"] > 0
        layers = report["layers"]
        assert [l["class_name"] for l in layers] == \
            ["Dense"] * 4 + ["Softmax"]
        assert layers[0]["Precision"]["result"]["quant_type"] == \
            "!quant.uniform<i16:f32, 9.765625E-4>"
    # ZU9EG's 2,520 DSPs cannot hold the 4,256 products in parallel: the
    # compiler raises reuse factors and says so; Versal's 7,680 can.
    zu9eg = json.loads((tmp_path / "xczu9eg" / "report.json").read_text())
    assert any(l.get("ReuseFactor", 1) > 1 for l in zu9eg["layers"])
    assert zu9eg["decisions"]
    versal = json.loads((tmp_path / "xcvm1802" / "report.json").read_text())
    assert all(l.get("ReuseFactor", 1) == 1 for l in versal["layers"])
    assert versal["CSynthesisReport"]["IntervalMax"] == 1


def test_folded_layers_are_bit_exact_too(tmp_path):
    model = jet_tagger()
    project = build(tmp_path, model, 16, "--device=xczu9eg",
                    "--reuse-factor=16", "--strategy=resource")
    report = json.loads((project / "report.json").read_text())
    dense = [l for l in report["layers"] if l["class_name"] == "Dense"]
    assert [l["ReuseFactor"] for l in dense] == [16, 16, 16, 16]
    assert {l["memory"] for l in dense} <= {"lutram", "bram"}
    source = (project / "firmware" / "myproject.cpp").read_text()
    assert "#pragma HLS ARRAY_RESHAPE variable=layer2_w cyclic factor=128" in source
    assert "#pragma HLS DATAFLOW" in source
    outputs, result = csim(project)
    assert result.returncode == 0, result.stdout + result.stderr
    inputs = np.loadtxt(project / "tb_data" / "tb_input_features.dat", ndmin=2)
    assert outputs.tolist() == [hls_reference.run(report, linears(model), s)
                                for s in inputs]


def test_agilex_gets_a_oneapi_project(tmp_path):
    model = small_cnn()
    onnx_path = tmp_path / "cnn.onnx"
    torch.onnx.export(model, torch.randn(1, 1, 28, 28), str(onnx_path),
                      input_names=["input"], output_names=["output"],
                      opset_version=13)
    project = tmp_path / "agilex"
    cuvilc(onnx_path, "--target=fpga", "--device=agf014",
           "--precision=fixed<16,6,RND,SAT>", "--test-vectors=3", "-o", project)
    source = (project / "src" / "myproject.cpp").read_text()
    assert "#pragma HLS" not in source
    assert "[[intel::initiation_interval(5)]]" in source  # 9 taps, 2 ports
    assert "#pragma unroll" in source
    assert "[[intel::fpga_register]] layer1_accum_t acc[4];" in source
    cmake = (project / "CMakeLists.txt").read_text()
    assert "-Xstarget=AGFB014R24A2E2V" in cmake and "-DCUVIL_FIXED_ONEAPI" in cmake
    assert "q.single_task<myproject_kernel>" in (project / "src" / "main.cpp").read_text()
    assert not (project / "build_prj.tcl").exists()
    report = json.loads((project / "report.json").read_text())
    assert report["device"]["flow"] == "oneapi"
    assert "M20K" in report["CSynthesisReport"] and "ALM" in report["CSynthesisReport"]
    # The same design code, under g++: bit for bit.
    outputs, result = csim(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 samples, 0 outputs differ" in result.stdout
    assert "warning" not in result.stderr
    inputs = np.loadtxt(project / "tb_data" / "tb_input_features.dat", ndmin=2)
    assert outputs.tolist() == [hls_reference.run(report, linears(model), s)
                                for s in inputs]


def test_digits_accuracy_after_quantization(tmp_path):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    x_train, x_test, y_train, y_test = train_test_split(
        x, digits.target, test_size=0.3, random_state=0)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32),
        torch.nn.ReLU(), torch.nn.Linear(32, 10), torch.nn.Softmax(dim=1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    features, labels = torch.tensor(x_train), torch.tensor(y_train)
    for _ in range(200):
        optimizer.zero_grad()
        loss = torch.nn.functional.nll_loss(torch.log(model(features) + 1e-9),
                                            labels)
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        float_accuracy = (model(torch.tensor(x_test)).argmax(1).numpy()
                          == y_test).mean()
    assert float_accuracy > 0.9
    # The trained logits reach 38: fixed<16,6> (range +-32) would wrap.
    # auto<W> sizes each tensor's integer bits from the training data.
    calibration = tmp_path / "train.npz"
    np.savez(calibration, input=x_train)
    accuracy = {}
    for precision in ("auto<16>", "auto<8>"):
        project = build(tmp_path, model, 64, "--device=xczu9eg",
                        f"--precision={precision}",
                        f"--calibration={calibration}",
                        name=f"digits{precision[5:-1]}")
        report = json.loads((project / "report.json").read_text())
        logits = report["layers"][2]["Precision"]["result"]
        assert logits["integer"] == 7  # |38| < 2^6
        assert logits["rounding"] == "RND" and logits["overflow"] == "SAT"
        # The testbench's vectors are the calibration's first samples.
        outputs, result = csim(project)
        assert result.returncode == 0, result.stdout + result.stderr
        outputs, result = csim(project, inputs=x_test)
        assert result.returncode == 0, result.stderr
        accuracy[precision] = (outputs.argmax(1) == y_test).mean()
    print(f"digits accuracy: float {float_accuracy:.4f}, "
          f"auto<16> {accuracy['auto<16>']:.4f}, "
          f"auto<8> {accuracy['auto<8>']:.4f}")
    assert accuracy["auto<16>"] >= float_accuracy - 0.005
    assert accuracy["auto<8>"] >= float_accuracy - 0.03


FIXED = re.compile(r'#cuvil\.fixed<!quant\.uniform<([iu])(\d+):f32, ([^>]+)>, '
                   r'"(\w+)", "(\w+)">')


def level1_types(text):
    """(signed, width, integer, rounding, overflow) of each #cuvil.fixed
    in a level1 module, in print order."""
    types = []
    for sign, width, scale, rounding, overflow in FIXED.findall(text):
        fraction = -math.log2(float(scale))
        assert fraction == round(fraction), scale
        types.append((sign == "i", int(width), int(width) - round(fraction),
                      rounding, overflow))
    return types


def report_type(t):
    return (t["signed"], t["width"], t["integer"], t["rounding"], t["overflow"])


def test_level1_carries_the_types_the_design_uses(tmp_path):
    """--emit=mlir-level1 shows each layer's #cuvil.fixed, and the HLS
    project computes in exactly those (auto precision: sized from the
    calibration data at level1)."""
    onnx_path = export(jet_tagger(), 16, tmp_path / "jet.onnx")
    np.savez(tmp_path / "cal.npz",
             input=np.random.RandomState(1).randn(64, 16).astype(np.float32))
    flags = ["--target=fpga", "--device=xczu9eg", "--precision=auto<12>",
             f"--calibration={tmp_path / 'cal.npz'}",
             "--layer-precision=/2/Gemm=ufixed<10,4,RND_CONV,SAT_SYM>"]
    level1 = cuvilc(onnx_path, *flags, "--emit=mlir-level1").stdout
    assert "cuvil.abs_max" not in level1
    types = level1_types(level1)
    cuvilc(onnx_path, *flags, "-o", tmp_path / "design")
    report = json.loads((tmp_path / "design" / "report.json").read_text())
    layers = report["layers"]
    # The input's, then per layer its bias, result and weight (a dense
    # layer's dictionary prints its keys sorted).
    assert types[0] == report_type(layers[0]["Precision"]["input"])
    expected = []
    for layer in layers:
        precision = layer["Precision"]
        keys = ("bias", "result", "weight") if "weight" in precision else (
            "result",)
        expected += [report_type(precision[k]) for k in keys]
    assert types[1:] == expected
    fc2 = next(layer for layer in layers if layer["node"] == "/2/Gemm")
    assert fc2["Precision"]["result"]["type"] == "ufixed<10,4,RND_CONV,SAT_SYM>"
    assert {t[1] for t in expected} == {10, 12}
    assert all(t[3:] == ("RND", "SAT") for t in expected if t[1] == 12)


def test_level2_records_the_plan_the_project_builds(tmp_path):
    """--emit=mlir-level2 shows each layer's fpga.plan; the report's reuse
    factors, strategies, IIs and weight memories are those."""
    onnx_path = export(jet_tagger(), 16, tmp_path / "jet.onnx")
    flags = ["--target=fpga", "--device=xczu9eg", "--reuse-factor=4"]
    level2 = cuvilc(onnx_path, *flags, "--emit=mlir-level2").stdout
    plans = re.findall(r"fpga\.plan = \{([^}]*)\}", level2)
    cuvilc(onnx_path, *flags, "-o", tmp_path / "design")
    report = json.loads((tmp_path / "design" / "report.json").read_text())
    assert len(plans) == len(report["layers"]) == 5
    for plan, layer in zip(plans, report["layers"]):
        assert f"ii = {layer['II']} : i64" in plan
        assert f"latency = {layer['Latency']} : i64" in plan
        if layer["class_name"] != "Dense":
            continue  # the softmax's tables are its own
        assert f"reuse_factor = {layer['ReuseFactor']} : i64" in plan
        assert f'strategy = "{layer["Strategy"].lower()}"' in plan
        memory = re.search(r"space<(\w+)>", plan)
        assert (memory.group(1) if memory else "logic") == layer["memory"]
    assert {layer["ReuseFactor"] for layer in report["layers"][:4]} == {4}


def test_a_design_that_does_not_fit_leaves_no_reproducer(tmp_path):
    """The user's error is explained; a reproducer is for failures nobody
    explained (unless asked for by name)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    onnx_path = export(jet_tagger(), 16, tmp_path / "jet.onnx")
    flags = [onnx_path, "--target=fpga", "--device=xczu9eg",
             "--layer-reuse-factor=/0/Gemm=1", "--max-utilization=0.1",
             "-o", tmp_path / "out"]
    result = subprocess.run([str(CUVILC), "--quiet", *map(str, flags)],
                            capture_output=True, text=True,
                            env={**os.environ, "TMPDIR": str(scratch)})
    assert result.returncode != 0
    assert "does not fit xczu9eg" in result.stderr
    assert "Failures have been detected" not in result.stderr
    assert "reproducer" not in result.stderr
    assert list(scratch.iterdir()) == []
    named = tmp_path / "asked.mlir"
    result = cuvilc(*flags, f"--reproducer={named}", check=False)
    assert f"A reproducer is in {named}" in result.stderr
    assert "cuvil-fpga-plan-design" in named.read_text()


def test_auto_precision_needs_calibration(tmp_path):
    stderr = compile_error(tmp_path, jet_tagger(), 16, "--device=xczu9eg",
                           "--precision=auto")
    assert "give them with --calibration=FILE.npz" in stderr


def compile_error(tmp_path, model, n_in, *flags):
    onnx_path = export(model, n_in, tmp_path / "model.onnx")
    result = cuvilc(onnx_path, "--target=fpga", *flags, "-o", tmp_path / "out",
                    check=False)
    assert result.returncode != 0
    assert not (tmp_path / "out").exists(), "a failed compile left a folder"
    return result.stderr


@pytest.mark.parametrize("flags,message", [
    ((), "needs --device=NAME"),
    (("--device=xc7a35t",), "unknown FPGA device 'xc7a35t'"),
    (("--device=xczu9eg", "--precision=fixed<40,6>"), "W must be 1 to 32"),
    (("--device=xczu9eg", "--precision=fixed<16,6,ROUND>"),
     "unknown rounding mode 'ROUND'"),
    (("--device=xczu9eg", "--strategy=fast"), "latency (fully parallel)"),
    (("--device=xczu9eg", "--layer-precision=/fc9/Gemm=fixed<8,3>"),
     "'/fc9/Gemm', which is no layer of the model"),
    (("--device=xczu9eg", "--layer-reuse-factor=/0/Gemm=1",
      "--max-utilization=0.1"), "does not fit xczu9eg"),
    (("--device=xczu9eg", "--project=my-design"), "the project names the top"),
    (("--device=xczu9eg", "--observer=entropy"),
     "--observer applies with --quantize=int8"),
])
def test_bad_options_are_explained(tmp_path, flags, message):
    assert message in compile_error(tmp_path, jet_tagger(), 16, *flags)


def test_unsupported_windows_are_explained(tmp_path):
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3, dilation=2))
    stderr = compile_error(tmp_path, model, (1, 1, 9, 9), "--device=xczu9eg")
    assert "/0/Conv" in stderr and "dilated" in stderr
    model = torch.nn.Sequential(torch.nn.MaxPool2d(2, padding=1))
    stderr = compile_error(tmp_path, model, (1, 1, 8, 8), "--device=xczu9eg")
    assert "max pooling whose windows lie inside the image" in stderr


def test_unsupported_layers_name_the_op_and_node(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Sigmoid())
    stderr = compile_error(tmp_path, model, 8, "--device=xczu9eg")
    assert "/1/Sigmoid" in stderr
    assert "sigmoid" in stderr and "it builds dense layers" in stderr


class Branch(torch.nn.Module):
    def forward(self, x):
        return x * 2 if bool(x.sum() > 0) else x - 1


def test_control_flow_is_refused_naming_the_if(tmp_path):
    # Scripted, the branch becomes an ONNX If (traced, it would be folded).
    stderr = compile_error(tmp_path, torch.jit.script(Branch()), 4,
                           "--device=xczu9eg")
    assert "'/If'" in stderr
    assert "not control flow (an ONNX If, Loop or Scan" in stderr


def test_fpga_flags_are_refused_by_x86(tmp_path):
    onnx_path = export(jet_tagger(), 16, tmp_path / "jet.onnx")
    result = cuvilc(onnx_path, "--precision=fixed<16,6>", "-o",
                    tmp_path / "jet.so", check=False)
    assert result.returncode != 0
    assert "--precision applies to --target=fpga" in result.stderr


def test_a_folder_of_other_files_is_not_replaced(tmp_path):
    onnx_path = export(jet_tagger(), 16, tmp_path / "jet.onnx")
    project = tmp_path / "mine"
    project.mkdir()
    (project / "notes.txt").write_text("mine")
    result = cuvilc(onnx_path, "--target=fpga", "--device=xczu9eg", "-o",
                    project, check=False)
    assert result.returncode != 0
    assert "holds files Cuvil did not write" in result.stderr
    assert (project / "notes.txt").read_text() == "mine"
    # A folder Cuvil wrote is replaced whole.
    other = tmp_path / "ours"
    cuvilc(onnx_path, "--target=fpga", "--device=xczu9eg", "-o", other)
    (other / "stale.txt").write_text("old")
    cuvilc(onnx_path, "--target=fpga", "--device=xczu9eg", "-o", other,
           "--project=jet")
    assert not (other / "stale.txt").exists()
    assert (other / "firmware" / "jet.cpp").exists()


def test_list_devices():
    result = cuvilc("--list-devices")
    for part in ("xczu9eg-ffvb1156-2-e", "xcvm1802", "AGFB014"):
        assert part in result.stdout
