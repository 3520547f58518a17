"""Edge (issue #25): the aarch64 artifacts' footprint, measured here.

For each benchmark model, cross-compiled for a Cortex-A76 (`cuvilc
--target=aarch64-linux-gnu --cpu=cortex-a76`):

- the .so's size less its weights (code, tables, metadata), and the memory a
  call needs: the workspace plus the weights (the metadata's bytes);
- instructions per inference under qemu-aarch64 (-cpu cortex-a76), counted by
  a TCG plugin (benchmarks/qemu_insn_count.c) on one thread: the count of two
  inferences less that of one, so loading and setup drop out. A
  machine-independent cost figure, for the NEON kernels and, beside them,
  the reference kernels (the same model's --emit=c, built with the same
  flags) and float16 arithmetic (--quantize=fp16, with its cosine against
  PyTorch's float32). Emulation shows no time: speed needs a board
  (docs/edge.md).

PyTorch's runtime beside it: the shared libraries `import torch` maps here
(Debian's x86-64 build; an arm64 wheel is of the same order).

    /usr/bin/python3 benchmarks/edge_bench.py --cuvilc CUVILC
        [--update benchmarks/RESULTS.md] [--smoke] [--models a,b]

scripts/bench runs it too (its section of RESULTS.md, "## Edge").
"""

import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile

import results_md

ROOT = pathlib.Path(__file__).resolve().parents[1]
HEADING = "## Edge: aarch64 (issue #25)"
LLVM = pathlib.Path("/usr/lib/llvm-22/bin")
SYSROOT = "/usr/aarch64-linux-gnu"
CPU = "cortex-a76"
DRIVER = ROOT / "tests" / "aarch64" / "run_model.c"
PLUGIN_SOURCE = ROOT / "benchmarks" / "qemu_insn_count.c"


def build_plugin(work):
    plugin = work / "qemu_insn_count.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-fvisibility=hidden",
                    str(PLUGIN_SOURCE), "-o", str(plugin)], check=True)
    return plugin


def metadata_of(so):
    dump = so.with_suffix(".metadata.json")
    subprocess.run([str(LLVM / "llvm-objcopy"), "--dump-section",
                    f".cuvil.metadata={dump}", str(so), "/dev/null"], check=True)
    return json.loads(dump.read_bytes().rstrip(b"\0").decode())


def build_driver(so, header_dir):
    driver = so.with_name(so.stem + "_run")
    subprocess.run([str(LLVM / "clang"), "--target=aarch64-linux-gnu",
                    "-fuse-ld=lld", "-O2", f"-I{header_dir}", str(DRIVER),
                    str(so), "-Wl,-rpath,$ORIGIN", "-o", str(driver)], check=True)
    return driver


def count(plugin, driver, inputs, outputs, repeat):
    """Guest instructions of the driver running `repeat` inferences."""
    result = subprocess.run(
        ["qemu-aarch64", "-L", SYSROOT, "-cpu", CPU, "-plugin", str(plugin),
         "-d", "plugin", str(driver), "--repeat", str(repeat), "1", "1",
         *inputs, "--", *outputs], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{driver.name} failed: {result.stderr}")
    return int(re.search(r"cuvil-insn-count (\d+)", result.stderr).group(1))


def per_inference(plugin, driver, inputs, outputs):
    return (count(plugin, driver, inputs, outputs, 2)
            - count(plugin, driver, inputs, outputs, 1))


def reference_build(cuvilc, onnx, work):
    """The model's --emit=c (the reference kernels), built as a .so with the
    flags cuvilc builds the NEON one with."""
    source = work / "reference.c"
    subprocess.run([cuvilc, "--quiet", str(onnx), "--target=aarch64-linux-gnu",
                    f"--cpu={CPU}", "--emit=c", "-o", str(source)], check=True)
    so = work / "reference.so"
    subprocess.run([str(LLVM / "clang"), "--target=aarch64-linux-gnu",
                    f"-mcpu={CPU}+nocrypto", "-O3", "-ffp-contract=fast",
                    "-fPIC", "-shared", "-fuse-ld=lld", "-Wno-everything",
                    str(source), "-lm", "-o", str(so)], check=True)
    return so


def torch_runtime_bytes():
    """Bytes of the shared libraries `import torch` maps (this machine's)."""
    code = ("import torch, sys\n"
            "paths = set()\n"
            "for line in open('/proc/self/maps'):\n"
            "    p = line.split()[-1]\n"
            "    if '.so' in p and ('torch' in p or 'c10' in p or 'dnnl' in p or 'gomp' in p\n"
            "                       or 'openblas' in p or 'fbgemm' in p or 'protobuf' in p):\n"
            "        paths.add(p)\n"
            "import os\n"
            "print(sum(os.path.getsize(p) for p in paths))\n")
    result = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True,
                            text=True, check=True)
    return int(result.stdout.strip())


def run(cuvilc, work, models, smoke=False):
    """`models`: {key: (label, factory)}, bench.py's MODELS."""
    import numpy as np
    import torch

    work = pathlib.Path(work) / "edge"
    work.mkdir(parents=True, exist_ok=True)
    plugin = build_plugin(work)
    keys = ["classifier"] if smoke else list(models)
    rows = []
    for key in keys:
        label, factory = models[key]
        torch.manual_seed(0)
        model, example = factory()
        model.eval()
        onnx = work / f"{key}.onnx"
        torch.onnx.export(model, example, str(onnx), input_names=["input"],
                          output_names=["output"], opset_version=14)
        folder = work / key
        folder.mkdir(exist_ok=True)
        so = folder / "model.so"
        subprocess.run([cuvilc, "--quiet", str(onnx), "--target=aarch64-linux-gnu",
                        f"--cpu={CPU}", "-o", str(so)], check=True)
        metadata = metadata_of(so)
        inputs = [str(folder / "in0.bin")]
        example.numpy().astype(np.float32).tofile(inputs[0])
        with torch.no_grad():
            out = model(example).numpy()
        outputs = [f"{folder / 'out0.bin'}:{out.nbytes}"]
        neon = per_inference(plugin, build_driver(so, folder), inputs, outputs)
        reference = per_inference(
            plugin, build_driver(reference_build(cuvilc, onnx, folder), folder),
            inputs, outputs)
        # float16 arithmetic (--quantize=fp16; its header is the same model's).
        half = folder / "half.so"
        subprocess.run([cuvilc, "--quiet", str(onnx), "--target=aarch64-linux-gnu",
                        f"--cpu={CPU}", "--quantize=fp16", "-o", str(half)],
                       check=True)
        fp16 = per_inference(plugin, build_driver(half, folder), inputs, outputs)
        got = np.fromfile(folder / "out0.bin", np.float32).astype(np.float64)
        want = out.ravel().astype(np.float64)
        cosine = float(got @ want / (np.linalg.norm(got) * np.linalg.norm(want)))
        weights = metadata["weights"]["bytes"]
        row = {"key": key, "label": label, "so_bytes": so.stat().st_size,
               "weights_bytes": weights,
               "workspace_bytes": metadata["workspace_bytes"],
               "kernels": {k: v for k, v in metadata["kernels"].items() if v != "none"},
               "instructions": {"neon": neon, "reference": reference, "fp16": fp16},
               "fp16_cosine": cosine}
        print(f"edge {label}: .so {row['so_bytes'] - weights} bytes without weights, "
              f"{neon:,} instructions (reference {reference:,}, fp16 {fp16:,}, "
              f"cosine {cosine:.6f})", flush=True)
        rows.append(row)
    return {"cpu": CPU, "models": rows, "torch_runtime_bytes": torch_runtime_bytes()}


def mib(n):
    return f"{n / (1 << 20):.2f} MiB"


def markdown(results):
    torch_bytes = results["torch_runtime_bytes"]
    lines = [HEADING, "",
             f"`cuvilc --target=aarch64-linux-gnu --cpu={results['cpu']}`, "
             "cross-compiled here. Instructions: guest instructions per "
             f"inference under qemu-aarch64 (-cpu {results['cpu']}, one thread, "
             "batch 1), counted by a TCG plugin (`benchmarks/qemu_insn_count.c`): "
             "two inferences less one. Reference: the same model's `--emit=c` "
             "(reference kernels) built with the same flags; fp16: "
             "`--quantize=fp16` (linear layers and ungrouped convolutions in "
             "float16 arithmetic, `hgemm4 neon_fp16`), its cosine against "
             "PyTorch's float32 output. Memory: the "
             "workspace a call needs plus the weights. Emulation gives no "
             "time; speed needs a board (docs/edge.md).", "",
             "| model | .so - weights (goal <= 1 MiB) | memory (workspace + weights) "
             "| instructions, NEON | instructions, reference | reference / NEON "
             "| instructions, fp16 | fp32 / fp16 | fp16 cosine |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in results["models"]:
        ins = row["instructions"]
        lines.append(
            f"| {row['label']} | {mib(row['so_bytes'] - row['weights_bytes'])} "
            f"| {mib(row['workspace_bytes'] + row['weights_bytes'])} "
            f"| {ins['neon']:,} | {ins['reference']:,} "
            f"| {ins['reference'] / max(ins['neon'], 1):.2f}x "
            f"| {ins['fp16']:,} | {ins['neon'] / max(ins['fp16'], 1):.2f}x "
            f"| {row['fp16_cosine']:.6f} |")
    lines += ["", f"PyTorch's runtime for comparison: the shared libraries "
              f"`import torch` maps on this machine come to {mib(torch_bytes)} "
              "(Debian's x86-64 build), before any model; a Cuvil model needs "
              "its .so and the C library."]
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cuvilc", required=True)
    parser.add_argument("--update", help="RESULTS.md whose section to replace")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--models", help="comma-separated keys of bench.py's MODELS")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench
    models = bench.MODELS
    if args.models:
        models = {k: models[k] for k in args.models.split(",")}
    with tempfile.TemporaryDirectory(prefix="cuvil-edge-") as work:
        results = run(args.cuvilc, work, models, args.smoke)
    lines = markdown(results)
    print("\n".join(lines))
    if args.update:
        results_md.update_section(args.update, HEADING, lines)


if __name__ == "__main__":
    main()
