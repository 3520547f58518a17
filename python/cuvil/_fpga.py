"""What cuvil.compile(..., target="fpga") returns: an HLS project in memory
(FpgaDesign), or with emit="verilog" the Verilog RTL (VerilogDesign).

    design = cuvil.compile(model, input_signature=[("x", torch.float32, (1, 16))],
                           target="fpga", device="xczu9eg",
                           precision="fixed<16,6>", reuse_factor=1)
    design.report["CSynthesisReport"]["DSP"]   # report.json, as a dict
    y = design.csim(x)                          # the generated C++, run by g++
    design.save("jet_tagger")                   # the project folder

    rtl = cuvil.compile(..., target="fpga", device="xczu9eg", emit="verilog")
    rtl.simulate("verilator")   # the testbench's verdict: {"pass": True, ...}
    rtl.synthesize("xilinx")    # Yosys's resources beside the estimates
"""

import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

_MARKER = ".cuvil-output"  # cuvil/support/FileUtil.h's kOutputFolderMarker


def settings_for(device, precision, reuse_factor, strategy, clock_period,
                 max_utilization, project, test_vectors):
    """The FPGA target's settings (cuvil/targets/fpga/FpgaSettings.h)."""
    settings = {}

    def per_layer(name, value, convert):
        if isinstance(value, dict):
            for node, item in value.items():
                key = name if node in ("default", None) else f"{name}:{node}"
                settings[key] = convert(item)
        elif value is not None:
            settings[name] = convert(value)

    per_layer("precision", precision, str)
    per_layer("reuse_factor", reuse_factor, lambda v: str(int(v)))
    per_layer("strategy", strategy, str)
    for name, value in (("clock_period", clock_period),
                        ("max_utilization", max_utilization),
                        ("project", project), ("test_vectors", test_vectors)):
        if value is not None:
            settings[name] = str(value)
    return settings


class GeneratedFolder:
    """A generated folder in memory: `files` ({relative path: bytes}),
    `report` (report.json as a dict), `report_text`, save()."""

    def __init__(self, files):
        self.files = dict(files)
        self.report = json.loads(self.files["report.json"])
        self.report_text = self.files["report.txt"].decode()
        self._build_dir = None

    def _write(self, directory):
        for path, data in self.files.items():
            target = os.path.join(directory, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(data)
        with open(os.path.join(directory, _MARKER), "w") as f:
            f.write("written by Cuvil; the next compile into this folder "
                    "replaces it\n")

    def save(self, directory):
        """Writes the project folder whole (a new folder, or one Cuvil wrote
        before, which is replaced); a folder of other files is refused."""
        directory = os.path.abspath(directory)
        if os.path.exists(directory):
            if not os.path.isdir(directory):
                raise FileExistsError(f"{directory} is a file")
            if os.listdir(directory) and not os.path.exists(
                    os.path.join(directory, _MARKER)):
                raise FileExistsError(
                    f"{directory} holds files Cuvil did not write; give a "
                    "new or empty folder")
        parent = os.path.dirname(directory)
        fresh = tempfile.mkdtemp(prefix=".cuvil-", dir=parent)
        try:
            self._write(fresh)
            os.chmod(fresh, 0o755)
            if os.path.exists(directory):
                old = tempfile.mkdtemp(prefix=".cuvil-old-", dir=parent)
                os.rmdir(old)
                os.rename(directory, old)
                os.rename(fresh, directory)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.rename(fresh, directory)
        except BaseException:
            shutil.rmtree(fresh, ignore_errors=True)
            raise

    def _scratch(self):
        """The folder written once to a temporary directory (for its tools)."""
        if self._build_dir is None:
            self._build_dir = tempfile.mkdtemp(prefix="cuvil-build-")
            self._write(self._build_dir)
        return self._build_dir

    def __del__(self):
        if getattr(self, "_build_dir", None):
            shutil.rmtree(self._build_dir, ignore_errors=True)


class _Folder(GeneratedFolder):
    """An FPGA design's folder: its `project` (the top function) too."""

    def __init__(self, files):
        super().__init__(files)
        self.project = self.report["project"]

    def __repr__(self):
        total = self.report["CSynthesisReport"]
        return (f"<{type(self).__name__} {self.project} for {self.report['device']['name']}: "
                f"latency {total['BestLatency']} cycles, II "
                f"{total['IntervalMax']}, DSP {total['DSP']}, LUT {total['LUT']}>")


class FpgaDesign(_Folder):
    """An HLS project: `files`, `report`, `report_text`, csim() and save()."""

    def csim(self, inputs):
        """Runs the generated HLS C++ (compiled once with the host's g++,
        through the project's Makefile) on `inputs` (samples along the first
        dimension, each the model's input); returns its outputs as a float64
        numpy array, one row per sample: the fixed-point values exactly."""
        x = np.asarray(inputs, dtype=np.float32)
        n_in = self.report["layers"][0]["n_in"]
        if x.size == 0 or x.size % n_in:
            raise ValueError(f"csim takes samples of {n_in} values; got an "
                             f"array of shape {x.shape}")
        x = x.reshape(-1, n_in)
        if not os.path.exists(os.path.join(self._scratch(), "csim_bin")):
            build = subprocess.run(["make", "-s", "csim_bin"],
                                   cwd=self._build_dir, capture_output=True,
                                   text=True)
            if build.returncode != 0:
                raise RuntimeError("the generated C++ did not compile:\n"
                                   + build.stderr)
        run_dir = tempfile.mkdtemp(prefix="run-", dir=self._build_dir)
        try:
            np.savetxt(os.path.join(run_dir, "tb_input_features.dat"), x,
                       fmt="%.9g")
            result = subprocess.run(
                [os.path.join(self._build_dir, "csim_bin"), run_dir],
                capture_output=True, text=True)
            if result.returncode != 0:
                raise RuntimeError("C simulation failed:\n" + result.stderr)
            return np.loadtxt(os.path.join(run_dir, "csim_results.log"),
                              ndmin=2)
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)


class VerilogDesign(_Folder):
    """Verilog RTL: `files`, `report`, `report_text`, save(), simulate()
    (the self-checking testbench) and synthesize() (Yosys)."""

    def simulate(self, simulator="iverilog", seed=1, bubble=30, stall=30):
        """Runs the testbench under "iverilog" or "verilator" with the
        given random bubbles and back-pressure (percent); returns its
        verdict, a dict: pass, latency_cycles, ii, mismatches,
        timing_mismatches (samples done at another cycle than the timing
        model's), ..."""
        if simulator not in ("iverilog", "verilator"):
            raise ValueError("simulator is 'iverilog' or 'verilator'")
        result = subprocess.run(
            ["make", "-s", f"sim-{simulator}", f"SEED={int(seed)}",
             f"BUBBLE={int(bubble)}", f"STALL={int(stall)}"],
            cwd=self._scratch(), capture_output=True, text=True)
        lines = [l for l in result.stdout.splitlines() if l.startswith("{")]
        if result.returncode != 0 or not lines:
            raise RuntimeError(f"{simulator} did not run the testbench:\n"
                               + result.stdout + result.stderr)
        return json.loads(lines[-1])

    def synthesize(self, family="xilinx"):
        """Yosys out of context ("xilinx": synth_xilinx -family xcup;
        "intel": synth_intel_alm); returns Yosys's cell counts by type
        (stat -json's num_cells_by_type)."""
        if family not in ("xilinx", "intel"):
            raise ValueError("family is 'xilinx' or 'intel'")
        result = subprocess.run(["make", "-s", f"synth-{family}"],
                                cwd=self._scratch(), capture_output=True,
                                text=True)
        if result.returncode != 0:
            raise RuntimeError("Yosys failed:\n" + result.stdout + result.stderr)
        stat = os.path.join(self._build_dir, "build", f"yosys_{family}_stat.json")
        with open(stat) as f:
            return json.load(f)["design"]["num_cells_by_type"]
