"""What cuvil.compile(..., target="mlu") returns: a Cambricon MLU project
in memory (MluProject).

    project = cuvil.compile(model, input_signature=[("x", torch.float32, (1, 3, 64, 64))],
                            target="mlu", device="mlu270")
    project.report["total"]["estimated_seconds"]   # report.json, as a dict
    y = project.emulate(x)       # the generated BANG C and CNRT code, run on
                                 # this host against Cuvil's emulator
    project.save("resnet_mlu")   # the folder a Cambricon user builds with cncc
"""

import os
import shutil
import subprocess
import tempfile

import numpy as np

from cuvil._fpga import GeneratedFolder


def _host_compiler():
    """A C++17 compiler for the emulated build: clang++ (LLVM 22's, which
    Cuvil itself uses, first), else the system's c++."""
    for candidate in ("/usr/lib/llvm-22/bin/clang++", "clang++-22", "clang++",
                      "c++", "g++"):
        path = shutil.which(candidate)
        if path:
            return path
    raise RuntimeError("emulate() needs a C++17 compiler (clang++ or g++)")


class MluProject(GeneratedFolder):
    """An MLU project: `files`, `report`, `report_text`, emulate() and
    save()."""

    def __init__(self, files):
        super().__init__(files)
        self.device = self.report["device"]["name"]

    def __repr__(self):
        total = self.report["total"]
        return (f"<MluProject {self.report['model']} for {self.device} "
                f"({self.report['precision']}): "
                f"{len(self.report['layers'])} layers, estimated "
                f"{total['estimated_seconds'] * 1e6:.1f} us per run>")

    def emulate(self, *inputs):
        """Runs the project's own sources (kernels.mlu, host.cpp) on this
        host against Cuvil's BANG C emulator (built once with the folder's
        Makefile): every task a thread, on-chip arenas of the device's
        sizes, and the emulator's checks of what the hardware would
        punish. Takes the model's inputs in order (arrays of their shapes);
        returns its output as a float32 numpy array, or a list of them."""
        specs = self.report["inputs"]
        if len(inputs) != len(specs):
            raise ValueError(f"the model takes {len(specs)} inputs, got "
                             f"{len(inputs)}")
        arrays = []
        for spec, value in zip(specs, inputs):
            array = np.ascontiguousarray(np.asarray(value, dtype=np.float32))
            if list(array.shape) != spec["shape"]:
                raise ValueError(f"input '{spec['name']}' has shape "
                                 f"{spec['shape']}, got {list(array.shape)}")
            arrays.append(array)
        directory = self._scratch()
        binary = os.path.join(directory, "run_model_emu")
        if not os.path.exists(binary):
            build = subprocess.run(
                ["make", "-s", "emulate", f"CXX={_host_compiler()}"],
                cwd=directory, capture_output=True, text=True)
            if build.returncode != 0:
                raise RuntimeError("the generated sources did not compile "
                                   "against the emulator:\n" + build.stderr)
        run_dir = tempfile.mkdtemp(prefix="run-", dir=directory)
        try:
            paths_in = [os.path.join(run_dir, f"input{i}.bin")
                        for i in range(len(arrays))]
            paths_out = [os.path.join(run_dir, f"output{i}.bin")
                         for i in range(len(self.report["outputs"]))]
            for path, array in zip(paths_in, arrays):
                array.tofile(path)
            result = subprocess.run(
                [binary, os.path.join(directory, "weights.bin")] + paths_in
                + paths_out, capture_output=True, text=True)
            if result.returncode != 0:
                raise RuntimeError("the emulated run failed:\n"
                                   + result.stderr)
            outputs = [np.fromfile(path, dtype=np.float32).reshape(spec["shape"])
                       for path, spec in zip(paths_out, self.report["outputs"])]
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
        return outputs[0] if len(outputs) == 1 else outputs
