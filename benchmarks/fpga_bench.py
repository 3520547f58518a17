"""FPGA Verilog (issue #22): the jet tagger (hls4ml's 16-64-32-32-5, ReLU,
softmax), and part 1's small CNN (1x28x28) and 1-D convolution model
streaming pixels, as Cuvil's RTL, per device and precision: cycles, II, latency in ns
and inferences per second at the device's clock (the schedule's, confirmed
by the testbench under Icarus Verilog on a larger soak of random traffic
than the test suite's), and the estimated resources beside Yosys 0.23's
(`make synth-xilinx`, -abc9). hls4ml's published C-synthesis figures for
the same network stand beside them.

    /usr/bin/python3 benchmarks/fpga_bench.py --cuvilc CUVILC \\
        [--update benchmarks/RESULTS.md] [--smoke]

scripts/bench runs it too (its section of RESULTS.md, "## FPGA Verilog").
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

import results_md

ROOT = pathlib.Path(__file__).resolve().parents[1]
HEADING = "## FPGA Verilog (issue #22)"
sys.path.insert(0, str(ROOT / "tests" / "fpga"))

# hls4ml's tutorial, Vitis HLS 2024.1 C synthesis for xcu250 at 5 ns, the
# same network at ap_fixed<16,6>, latency strategy (docs/fpga.md cites the
# notebooks: hls4ml-tutorial commit c6b63d3, part1 and part2).
HLS4ML = [
    {"reuse": 1, "latency": 14, "ii": 1, "dsp": 1502, "lut": 101839, "ff": 9363, "bram": 8},
    {"reuse": 2, "latency": 13, "ii": 2, "dsp": 1476, "lut": 102510, "ff": 9302, "bram": 8},
]

DESIGNS = [
    # name, model, device, flags (the xcu250 fully parallel design is the
    # hls4ml comparison; ZU9EG's are what its budget allows).
    ("zu9eg-16", "jets", "xczu9eg", ["--precision=fixed<16,6>"]),
    ("zu9eg-8", "jets", "xczu9eg", ["--precision=fixed<8,3,RND,SAT>"]),
    ("zu9eg-16-r16", "jets", "xczu9eg",
     ["--precision=fixed<16,6>", "--reuse-factor=16", "--strategy=resource"]),
    ("u250-16-r1", "jets", "xcu250", ["--precision=fixed<16,6>", "--strategy=latency"]),
    ("u250-16-r2", "jets", "xcu250",
     ["--precision=fixed<16,6>", "--strategy=latency", "--reuse-factor=2"]),
    ("cnn-16", "cnn", "xczu9eg", ["--precision=fixed<16,6,RND,SAT>"]),
    ("cnn-8-folded", "cnn", "xczu9eg", [
        "--precision=fixed<8,3,RND,SAT>",
        "--layer-reuse-factor=/0/Conv=3,/3/Conv=4,/7/Gemm=8"]),
    ("conv1d-16", "conv1d", "xczu9eg", ["--precision=fixed<16,6,RND,SAT>"]),
    ("conv1d-8-folded", "conv1d", "xczu9eg", [
        "--precision=fixed<8,3,RND,SAT>",
        "--layer-reuse-factor=/0/Conv=5,/3/Conv=6,/6/Gemm=7"]),
]

# Vectors for the soak: the CNN's 784 pixels a sample make Icarus Verilog
# slow (about 1.5 s a sample here).
VECTORS = {"jets": 256, "cnn": 32, "conv1d": 256}


def export(model, path):
    import torch
    from test_hls_project import conv1d_model, jet_tagger, small_cnn
    net, shape = {"jets": (jet_tagger, (1, 16)),
                  "cnn": (small_cnn, (1, 1, 28, 28)),
                  "conv1d": (conv1d_model, (1, 2, 32))}[model]
    torch.onnx.export(net(), torch.randn(*shape), str(path),
                      input_names=["input"], output_names=["output"],
                      opset_version=13)


def run(cuvilc, work, smoke=False, max_synth_luts=None):
    """`max_synth_luts`: designs estimated larger are not synthesized (Yosys
    takes about ten minutes per 100k LUTs here)."""
    from yosys_stats import xilinx_resources

    work = pathlib.Path(work)
    designs = DESIGNS[:1] if smoke else DESIGNS
    rows = []
    for name, model, device, flags in designs:
        project = work / name
        onnx = work / f"{model}.onnx"
        if not onnx.exists():
            export(model, onnx)
        vectors = 16 if smoke else VECTORS[model]
        subprocess.run([cuvilc, "--quiet", str(onnx), "--target=fpga",
                        f"--device={device}", "--emit=verilog",
                        f"--test-vectors={vectors}", *flags, "-o", str(project)],
                       check=True)
        report = json.loads((project / "report.json").read_text())
        sim = subprocess.run(["make", "-s", "sim-iverilog", "SEED=2026",
                              "BUBBLE=40", "STALL=40"], cwd=project,
                             capture_output=True, text=True)
        verdict = json.loads([l for l in sim.stdout.splitlines()
                              if l.startswith("{")][-1])
        row = {"name": name, "vectors": vectors,
               "device": report["device"]["name"],
               "clock_ns": report["clock"]["TargetClockPeriod"],
               "reuse": sorted({l["ReuseFactor"] for l in report["layers"]
                                if "ReuseFactor" in l}),
               "precision": report["layers"][0]["Precision"]["input"]["type"],
               "latency": report["rtl"]["latency_cycles"], "ii": report["rtl"]["ii"],
               "fmax_mhz": report["rtl"]["fmax_mhz"],
               "sim": verdict,
               "estimate": {k: report["CSynthesisReport"][k]
                            for k in ("LUT", "FF", "DSP", "BRAM_18K")}}
        small = max_synth_luts is None or row["estimate"]["LUT"] <= max_synth_luts
        if small and not smoke:
            start = time.time()
            result = subprocess.run(["make", "-s", "synth-xilinx"], cwd=project,
                                    capture_output=True, text=True)
            if result.returncode == 0:
                measured = xilinx_resources(project / "build" / "yosys_xilinx_stat.json")
                row["yosys"] = {k: measured[k] for k in ("LUT", "FF", "DSP", "BRAM_18K")}
                row["yosys_seconds"] = time.time() - start
        print(f"fpga {name}: latency {row['latency']} cycles, II {row['ii']}, "
              f"sim {'PASS' if verdict['pass'] else 'FAIL'}, "
              f"estimate {row['estimate']}, yosys {row.get('yosys')}", flush=True)
        rows.append(row)
    return {"designs": rows}


def markdown(results):
    lines = [HEADING, "",
             "hls4ml's jet tagger (`zu9eg-*`, `u250-*`), and part 1's small "
             "CNN (1x28x28, pixels streamed) and 1-D convolution model, as "
             "Cuvil's Verilog (`--emit=verilog`). Latency (a sample's first "
             "input to its last output) and II are the timing model's; the "
             "testbench confirmed every sample's under Icarus Verilog, then "
             "checked random bubbles and back-pressure (40%) on 256 vectors "
             "(the CNN: 32), every output bit for bit (`sim`). Resources: "
             "Cuvil's estimate / Yosys 0.23 `synth_xilinx -family xcup -abc9` "
             "out of context (UltraScale+ as the proxy for the part; Yosys "
             "keeps the DSP48E2's pipeline registers in the fabric, Vivado "
             "would not; its ABC9 flow times `xcup` as `xc7`). Est. Fmax: the "
             "clock the schedules leave slack under (Cuvil's timing model, "
             "not a timing report). Throughput = "
             "one inference per II at the clock; `-` = not synthesized in "
             "this run.", "",
             "| design | part | precision | reuse | latency (cycles / ns) | II "
             "| inferences/s | est. Fmax (MHz) | sim | LUT est / Yosys "
             "| FF est / Yosys | DSP est / Yosys | BRAM_18K est / Yosys |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
             "| --- | --- | --- |"]
    for row in results["designs"]:
        est, got = row["estimate"], row.get("yosys", {})

        def pair(key):
            if key not in got:
                return f"{est[key]:,} / -"
            if est[key] == got[key] == 0:
                return "0 / 0"
            return f"{est[key]:,} / {got[key]:,} ({got[key] / max(est[key], 1):.2f})"
        ns = row["latency"] * row["clock_ns"]
        rate = 1e9 / (row["ii"] * row["clock_ns"])
        lines.append(
            f"| {row['name']} | {row['device']} | {row['precision']} "
            f"| {','.join(map(str, row['reuse']))} | {row['latency']} / {ns:g} "
            f"| {row['ii']} | {rate:,.0f} | {row['fmax_mhz']:.0f} "
            f"| {'PASS' if row['sim']['pass'] else 'FAIL'} | {pair('LUT')} "
            f"| {pair('FF')} | {pair('DSP')} | {pair('BRAM_18K')} |")
    lines += ["", "hls4ml (Vitis HLS 2024.1 C synthesis, xcu250, 5 ns, "
              "ap_fixed<16,6>, latency strategy; docs/fpga.md cites it):", "",
              "| reuse | latency (cycles) | II | LUT | FF | DSP | BRAM_18K |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in HLS4ML:
        lines.append(f"| {row['reuse']} | {row['latency']} | {row['ii']} "
                     f"| {row['lut']:,} | {row['ff']:,} | {row['dsp']:,} "
                     f"| {row['bram']} |")
    return lines + [""]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cuvilc", required=True)
    parser.add_argument("--update", help="RESULTS.md whose section to replace")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--max-synth-luts", type=int,
                        help="synthesize only designs estimated at most this large")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cuvil-fpga-") as work:
        results = run(args.cuvilc, work, args.smoke, args.max_synth_luts)
    lines = markdown(results)
    print("\n".join(lines))
    if args.update:
        results_md.update_section(args.update, HEADING, lines)


if __name__ == "__main__":
    main()
