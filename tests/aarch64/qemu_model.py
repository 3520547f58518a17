"""aarch64 models built here and run under qemu-aarch64.

cuvilc cross-compiles the model (--target=aarch64-linux-gnu); clang and lld
build run_model.c, a driver that uses the generated header alone, against
it; qemu-aarch64 runs the driver on an emulated CPU (`-cpu`: cortex-a72,
cortex-a76, neoverse-n1, max, ...). The model's metadata is read from its
.cuvil.metadata section, without running it.
"""

import json
import pathlib
import subprocess

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
LLVM = pathlib.Path("/usr/lib/llvm-22/bin")
SYSROOT = "/usr/aarch64-linux-gnu"
DRIVER = pathlib.Path(__file__).with_name("run_model.c")


def cross_compile(model, directory, *flags, cpu="generic"):
    """cuvilc MODEL for aarch64 into DIRECTORY/model.so (+ model.h), and the
    driver beside it; returns an Aarch64Model."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    so = directory / "model.so"
    result = subprocess.run(
        [str(CUVILC), "--quiet", str(model), "--target=aarch64-linux-gnu",
         f"--cpu={cpu}", "-o", str(so), *map(str, flags)],
        capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return Aarch64Model(so)


def build_driver(so):
    """run_model beside `so` (whose model.h is beside it too)."""
    so = pathlib.Path(so)
    driver = so.with_name("run_model")
    subprocess.run([str(LLVM / "clang"), "--target=aarch64-linux-gnu",
                    "-fuse-ld=lld", "-O2", "-std=c99", "-Wall", "-Werror",
                    f"-I{so.parent}", str(DRIVER), str(so),
                    "-Wl,-rpath,$ORIGIN", "-o", str(driver)], check=True)
    return driver


def read_metadata(so):
    """The .cuvil.metadata section's JSON (what cuvil_model_metadata()
    returns), read from the file."""
    so = pathlib.Path(so)
    dump = so.with_suffix(".metadata.json")
    subprocess.run([str(LLVM / "llvm-objcopy"), "--dump-section",
                    f".cuvil.metadata={dump}", str(so), "/dev/null"], check=True)
    return json.loads(dump.read_bytes().rstrip(b"\0").decode())


class QemuError(RuntimeError):
    def __init__(self, status, message):
        super().__init__(f"status {status}: {message}")
        self.status, self.message = status, message


class Aarch64Model:
    """A cross-compiled model.so: run(inputs) under qemu-aarch64."""

    def __init__(self, so):
        self.so = pathlib.Path(so)
        self.metadata = read_metadata(self.so)
        self.driver = build_driver(self.so)

    def run(self, *inputs, batch=1, threads=1, cpu="max"):
        """The outputs (numpy arrays) of `inputs` on an emulated `cpu`;
        QemuError with the model's status and message if it refuses."""
        work = self.so.parent
        args = [str(threads), str(batch)]
        for i, x in enumerate(inputs):
            path = work / f"in{i}.bin"
            np.ascontiguousarray(x).tofile(path)
            args.append(str(path))
        args.append("--")
        shapes = []
        for i, spec in enumerate(self.metadata["outputs"]):
            shape = [batch if d == -1 else d for d in spec["shape"]]
            dtype = np.dtype(spec["dtype"])
            shapes.append((work / f"out{i}.bin", shape, dtype))
            args.append(f"{work / f'out{i}.bin'}:{int(np.prod(shape)) * dtype.itemsize}")
        result = subprocess.run(["qemu-aarch64", "-L", SYSROOT, "-cpu", cpu,
                                 str(self.driver), *args],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise QemuError(result.returncode, result.stderr.strip())
        return [np.fromfile(path, dtype).reshape(shape)
                for path, shape, dtype in shapes]
