"""cuvil.compile(..., target="fpga"): an FpgaDesign with its report, C
simulation of the generated HLS C++ (bit for bit against the independent
reference of tests/fpga) and save()."""

import pathlib
import sys

import numpy as np
import pytest
import torch

import cuvil

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "fpga"))
import hls_reference  # noqa: E402

SIGNATURE = [("input", torch.float32, (1, 16))]


def jet_tagger():
    torch.manual_seed(1)
    return torch.nn.Sequential(
        torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 32),
        torch.nn.ReLU(), torch.nn.Linear(32, 32), torch.nn.ReLU(),
        torch.nn.Linear(32, 5), torch.nn.Softmax(dim=1)).eval()


def test_csim_is_bit_exact_and_close_to_torch(tmp_path):
    model = jet_tagger()
    design = cuvil.compile(model, SIGNATURE, target="fpga", device="xczu9eg",
                           precision="fixed<16,6,RND,SAT>")
    assert isinstance(design, cuvil.FpgaDesign)
    assert design.report["device"]["name"] == "xczu9eg"
    assert "xczu9eg" in repr(design) and "DSP" in design.report_text
    x = np.random.default_rng(0).uniform(-3, 3, (8, 16)).astype(np.float32)
    y = design.csim(x)
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    assert y.tolist() == [hls_reference.run(design.report, linears, s) for s in x]
    with torch.no_grad():
        assert np.abs(y - model(torch.tensor(x)).numpy()).max() < 0.02
    # A second call reuses the compiled simulation.
    assert design.csim(x[:1]).tolist() == y[:1].tolist()


def test_per_layer_settings_and_save(tmp_path):
    design = cuvil.compile(
        jet_tagger(), SIGNATURE, target="fpga", device="xcvm1802",
        precision={"default": "fixed<16,6>", "/0/Gemm": "fixed<12,4>"},
        reuse_factor={"/2/Gemm": 4}, project="jet")
    layers = design.report["layers"]
    assert layers[0]["Precision"]["result"]["width"] == 12
    assert layers[1]["ReuseFactor"] == 4
    assert layers[2]["ReuseFactor"] == 1
    design.save(tmp_path / "jet")
    assert (tmp_path / "jet" / "firmware" / "jet.cpp").exists()
    design.save(tmp_path / "jet")  # its own folder is replaced
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="did not write"):
        design.save(mine)


def test_auto_precision_from_calibration():
    model = jet_tagger()
    samples = np.random.default_rng(0).uniform(-40, 40, (64, 16))
    design = cuvil.compile(model, SIGNATURE, target="fpga", device="xczu9eg",
                           precision="auto<12>", calibration=samples)
    first = design.report["layers"][0]["Precision"]
    assert first["input"]["integer"] == 7  # |40| < 2^6
    assert first["input"]["width"] == 12
    assert first["input"]["overflow"] == "SAT"


def test_bad_fpga_arguments():
    with pytest.raises(ValueError, match="needs device=NAME"):
        cuvil.compile(jet_tagger(), SIGNATURE, target="fpga")
    with pytest.raises(ValueError, match="precision apply to target='fpga'"):
        cuvil.compile(jet_tagger(), SIGNATURE, precision="fixed<8,3>")
    with pytest.raises(cuvil.CompileError, match="unknown rounding mode"):
        cuvil.compile(jet_tagger(), SIGNATURE, target="fpga",
                      device="xczu9eg", precision="fixed<8,3,ROUND>")
    design = cuvil.compile(jet_tagger(), SIGNATURE, target="fpga",
                           device="xczu9eg")
    with pytest.raises(ValueError, match="samples of 16 values"):
        design.csim(np.zeros(10))


def small_mlp():
    torch.manual_seed(5)
    return torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(),
                               torch.nn.Linear(8, 4), torch.nn.Softmax(dim=1)).eval()


def test_verilog_design_simulates_and_saves(tmp_path):
    rtl = cuvil.compile(small_mlp(), SIGNATURE, target="fpga", device="xczu9eg",
                        precision="fixed<12,4,RND,SAT>", emit="verilog",
                        reuse_factor={"/2/Gemm": 2}, test_vectors=4)
    assert isinstance(rtl, cuvil.VerilogDesign)
    assert "rtl/myproject.v" in rtl.files and "rtl/layer2_weights.hex" in rtl.files
    verdict = rtl.simulate("iverilog", seed=3, bubble=60, stall=60)
    assert verdict["pass"] and verdict["mismatches"] == 0 and verdict["seed"] == 3
    assert verdict["latency_cycles"] == rtl.report["rtl"]["latency_cycles"]
    assert verdict["ii"] == rtl.report["rtl"]["ii"] == 2
    rtl.save(tmp_path / "rtl")
    assert (tmp_path / "rtl" / "tb" / "myproject_tb.v").exists()
    with pytest.raises(ValueError, match="'iverilog' or 'verilator'"):
        rtl.simulate("modelsim")
    with pytest.raises(ValueError, match="'xilinx' or 'intel'"):
        rtl.synthesize("lattice")
    with pytest.raises(ValueError, match="emit= is 'hls' or 'verilog'"):
        cuvil.compile(small_mlp(), SIGNATURE, emit="verilog")


def test_a_convolution_streams_pixels_from_python(tmp_path):
    torch.manual_seed(11)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 2, 3, padding=1), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Flatten(),
        torch.nn.Linear(2 * 3 * 3, 3)).eval()
    rtl = cuvil.compile(model, [("image", torch.float32, (1, 1, 6, 6))],
                        target="fpga", device="xczu9eg",
                        precision="fixed<16,6,RND,SAT>", emit="verilog",
                        test_vectors=3)
    assert "rtl/layer1_core.v" in rtl.files and "rtl/cuvil_add.v" in rtl.files
    assert rtl.report["rtl"]["input_stream"] == {"pixels": True,
                                                 "transfers": 36, "values": 1}
    verdict = rtl.simulate("iverilog", seed=5, bubble=50, stall=50)
    assert verdict["pass"] and verdict["timing_mismatches"] == 0
    assert verdict["latency_cycles"] == rtl.report["rtl"]["latency_cycles"]
