"""Cuvil against PyTorch, side by side in one run, and against the machine.

    /usr/bin/python3 benchmarks/bench.py --cuvilc CUVILC --wheel WHEEL
        --kernel-benchmark BIN [--runs 200] [--warmup 20] [--models a,b]
        [--out-dir benchmarks/out] [--results benchmarks/RESULTS.md] [--smoke]

For every model, thread count (1, 2) and batch (1, 8), in one process:
PyTorch eager (torch.inference_mode), TorchScript (traced, frozen,
torch.jit.optimize_for_inference: oneDNN) and the Cuvil .so through its C
ABI (a context with that many threads), each with `--warmup` untimed and
`--runs` timed calls (the three take turns in ROUNDS rounds, so that a slow
spell of a shared machine falls on all of them): p50, p99, min. The
quick-start classifier is also timed through cuvil.CompiledModule (the
Python package, from the wheel).

Also measured: the machine's fp32 FMA peak (benchmarks/fma_peak.c, AVX-512
and AVX2, one core and all cores), each model's GFLOP/s and fraction of that
peak, the kernels' micro-benchmarks (kernel_benchmark: SGEMM sweep,
convolution layers, int8 GEMM per variant against the int8 multiply-add
peak of benchmarks/int8_peak.c), compile time, .so size against weight
bytes, and the
peak RSS of a process serving calls. Writes results.json and results.png to
--out-dir and the Markdown summary (with every issue #8 target, met or not)
to --results. Nothing here asserts a time: it reports.

--smoke: the classifier only, batch 1, 1 thread, a few runs, no chart and
no micro-benchmarks (what CI runs, to keep the script working).
"""

import argparse
import atexit
import copy
import ctypes
import datetime
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np
import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "models"))
import export_models  # noqa: E402

CLANG = "/usr/lib/llvm-22/bin/clang"
MAX_BATCH = 8


@torch.jit.script
def simple_classifier(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x @ torch.eye(10) * 0.1, dim=1)


class Classifier(torch.nn.Module):
    """The README quick-start as a module (TorchScript freezes modules)."""

    def forward(self, x):
        return simple_classifier(x)


def mlp():
    return torch.nn.Sequential(
        torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
        torch.nn.ReLU(), torch.nn.Linear(512, 512)), torch.randn(1, 512)


MODELS = {
    "classifier": ("quick-start classifier", lambda: (Classifier(), torch.randn(1, 10))),
    "mlp": ("MLP 3x512", mlp),
    "resnet18": ("ResNet-18", export_models.MODELS["resnet18"]),
    "resnet50": ("ResNet-50", export_models.MODELS["resnet50"]),
    "mobilenet_v2": ("MobileNetV2", export_models.MODELS["mobilenet_v2"]),
    "transformer": ("TransformerEncoderLayer (512, 8 heads, seq 128)",
                    export_models.MODELS["transformer_encoder_layer"]),
}


def count_flops(model, example):
    """Multiply-adds x 2 of convolutions, linear layers and attention."""
    total = [0]

    def conv(module, inputs, output):
        kh, kw = module.kernel_size
        total[0] += 2 * output.numel() * (module.in_channels // module.groups) * kh * kw

    def linear(module, inputs, output):
        total[0] += 2 * output.numel() * module.in_features

    def attention(module, inputs, output):
        query = inputs[0]
        batch_first = getattr(module, "batch_first", False)
        batch, seq = (query.shape[0], query.shape[1]) if batch_first else \
            (query.shape[1], query.shape[0])
        d = module.embed_dim
        # q/k/v and output projections, scores and their weighted sum.
        total[0] += batch * (2 * seq * d * 3 * d + 2 * seq * d * d + 4 * seq * seq * d)

    hooks = []
    for module in model.modules():
        if isinstance(module, torch.nn.Conv2d):
            hooks.append(module.register_forward_hook(conv))
        elif isinstance(module, torch.nn.Linear) and not isinstance(
                module, torch.nn.modules.linear.NonDynamicallyQuantizableLinear):
            hooks.append(module.register_forward_hook(linear))
        elif isinstance(module, torch.nn.MultiheadAttention):
            hooks.append(module.register_forward_hook(attention))
    # Grad enabled: torch.nn's fused attention fast path bypasses the
    # submodules (and their hooks) under no_grad.
    model(example)
    for hook in hooks:
        hook.remove()
    if isinstance(model, Classifier):
        total[0] = 2 * 10 * 10 * example.shape[0]
    return total[0]


def stats(samples):
    samples = np.asarray(samples) * 1e3
    return {"p50": float(np.percentile(samples, 50)),
            "p99": float(np.percentile(samples, 99)),
            "min": float(samples.min()), "runs": len(samples)}


# Each cell's eager, TorchScript and Cuvil calls take turns in this many
# rounds (timed_together).
ROUNDS = 5


def timed_together(fns, warmup, runs, rounds=ROUNDS):
    """Times each of `fns` (name -> callable) `runs` times, in `rounds`
    turns of runs / rounds calls each, so that a slow spell of this shared
    machine falls on all of them rather than on whichever ran then."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    samples = {name: [] for name in fns}
    for turn in range(rounds):
        for name, fn in fns.items():
            for _ in range(runs * (turn + 1) // rounds - runs * turn // rounds):
                start = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - start)
    return {name: stats(values) for name, values in samples.items()}


def import_wheel(wheel, work):
    """The cuvil package of `wheel` (a .whl, unpacked into `work`, or its
    unpacked folder)."""
    if str(wheel).endswith(".whl"):
        import zipfile
        unpacked = pathlib.Path(work) / "wheel"
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(unpacked)
        wheel = unpacked
    sys.path.insert(0, str(wheel))
    import cuvil
    return cuvil


class CuvilModel:
    """A compiled .so called through its C ABI with ctypes only."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(str(path))
        self.lib.cuvil_model_metadata.restype = ctypes.c_char_p
        self.lib.cuvil_context_create.argtypes = [ctypes.c_int, ctypes.c_void_p]
        self.lib.cuvil_context_run.argtypes = [ctypes.c_void_p, ctypes.c_int64,
                                               ctypes.c_void_p, ctypes.c_void_p]
        self.lib.cuvil_context_destroy.argtypes = [ctypes.c_void_p]
        self.metadata = json.loads(self.lib.cuvil_model_metadata())

    def runner(self, x, threads):
        context = ctypes.c_void_p()
        assert self.lib.cuvil_context_create(threads, ctypes.byref(context)) == 0
        batch = x.shape[0]
        x = np.ascontiguousarray(x)
        outputs = [np.zeros([batch if d == -1 else d for d in o["shape"]], np.float32)
                   for o in self.metadata["outputs"]]
        ins = (ctypes.c_void_p * 1)(x.ctypes.data)
        outs = (ctypes.c_void_p * len(outputs))(*[o.ctypes.data for o in outputs])
        run_c = self.lib.cuvil_context_run

        def run():
            status = run_c(context, batch, ins, outs)
            assert status == 0, status
        run.outputs = outputs
        run.keep = (x, ins, outs)
        run.close = lambda: self.lib.cuvil_context_destroy(context)
        return run


# cuvilc's flags for the CPU the kernels are built for (--cpu; empty:
# --cpu=native, its default), and whether that CPU has AVX-512 (the peaks
# count only what the kernels may use).
CPU_FLAGS = []
AVX512 = True


def cpu_has_avx512(cpu):
    """Whether clang's -march=`cpu` enables AVX-512."""
    macros = subprocess.run([CLANG, f"-march={cpu}", "-dM", "-E", "-x", "c",
                             "/dev/null"], check=True, capture_output=True,
                            text=True).stdout
    return "__AVX512F__" in macros


def onednn_isa():
    """The instruction set PyTorch's oneDNN runs here, as it reports it
    (ONEDNN_MAX_CPU_ISA lowers it), or None."""
    out = subprocess.run(
        [sys.executable, "-c", "import torch; torch.jit.optimize_for_inference("
         "torch.jit.freeze(torch.jit.script(torch.nn.Conv2d(8, 8, 3).eval())))"
         "(torch.randn(1, 8, 16, 16))"],
        env={**os.environ, "ONEDNN_VERBOSE": "1", "DNNL_VERBOSE": "1"},
        capture_output=True, text=True).stdout
    for line in out.splitlines():
        if ",isa:" in line:
            return line.split(",isa:", 1)[1].strip()
    return None


def export_and_compile(cuvilc, model, example, work, index):
    onnx_path = work / f"model{index}.onnx"
    so = work / f"model{index}.so"  # distinct: dlopen caches by path
    # Grad stays enabled: torch.nn's attention fast path (which ONNX cannot
    # express) only runs without it.
    torch.onnx.export(model, example, str(onnx_path), opset_version=14,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    start = time.perf_counter()
    subprocess.run([cuvilc, "--quiet", str(onnx_path), f"--max-batch={MAX_BATCH}",
                    *CPU_FLAGS, "-o", str(so)], check=True)
    return so, time.perf_counter() - start


# Models timed at int8 and at bf16.
INT8_MODELS = ("mlp", "transformer", "resnet18", "resnet50", "mobilenet_v2")
BF16_MODELS = INT8_MODELS
CALIBRATION_SAMPLES = 64


def compile_int8(cuvilc, example, work, index):
    """The exported model of export_and_compile, post-training quantized
    (cuvilc --quantize=int8) on random inputs of the example's shape."""
    calibration = work / f"model{index}.calibration.npz"
    np.savez(calibration, input=torch.randn(
        CALIBRATION_SAMPLES, *example.shape[1:]).numpy())
    so = work / f"model{index}.int8.so"
    subprocess.run([cuvilc, "--quiet", str(work / f"model{index}.onnx"),
                    f"--max-batch={MAX_BATCH}", "--quantize=int8", *CPU_FLAGS,
                    f"--calibration={calibration}", "-o", str(so)], check=True)
    return so


def compile_avx2(cuvilc, work, index):
    """The exported model of export_and_compile in float32 and int8 for an
    AVX2 CPU (--cpu=x86-64-v3: no AVX-512, no VNNI), calibrated as
    compile_int8 did: the AVX2 kernels, measured on any x86-64 machine."""
    onnx_path = work / f"model{index}.onnx"
    common = [cuvilc, "--quiet", str(onnx_path), f"--max-batch={MAX_BATCH}",
              "--cpu=x86-64-v3"]
    fp32, int8 = work / f"model{index}.avx2.so", work / f"model{index}.avx2.int8.so"
    subprocess.run([*common, "-o", str(fp32)], check=True)
    subprocess.run([*common, "--quantize=int8",
                    f"--calibration={work / f'model{index}.calibration.npz'}",
                    "-o", str(int8)], check=True)
    return fp32, int8


# The model timed again on the AVX2 kernels (issue #20's AVX2 goal).
AVX2_MODEL = "resnet50"


def compile_bf16(cuvilc, work, index):
    """The exported model of export_and_compile with bfloat16 linear layers
    and ungrouped convolutions (cuvilc --quantize=bf16)."""
    so = work / f"model{index}.bf16.so"
    subprocess.run([cuvilc, "--quiet", str(work / f"model{index}.onnx"),
                    f"--max-batch={MAX_BATCH}", "--quantize=bf16", *CPU_FLAGS,
                    "-o", str(so)], check=True)
    return so


def torch_bf16(model):
    """PyTorch's bfloat16: the model converted (weights and activations),
    eager, oneDNN's bf16 kernels."""
    return copy.deepcopy(model).to(torch.bfloat16)


def cosine(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(a @ b / np.sqrt((a @ a) * (b @ b)))


def torch_static_int8(key, model, example, engine):
    """A torchvision CNN quantized the torch.ao.quantization way: its
    quantizable twin (torchvision.models.quantization) with the same
    weights, conv + bn + relu fused, observed on CALIBRATION_SAMPLES random
    inputs and converted for `engine`."""
    from torchvision.models import quantization
    torch.backends.quantized.engine = engine
    twin = getattr(quantization, key)(weights=None, quantize=False).eval()
    twin.load_state_dict(model.state_dict())
    twin.fuse_model()
    twin.qconfig = torch.ao.quantization.get_default_qconfig(engine)
    torch.ao.quantization.prepare(twin, inplace=True)
    with torch.inference_mode():
        for _ in range(CALIBRATION_SAMPLES // 16):
            twin(torch.randn(16, *example.shape[1:]))
    return torch.ao.quantization.convert(twin, inplace=True)


def torch_int8(key, model, example, batches, threads_list, notes):
    """PyTorch's own int8, on whichever quantized engine of this build runs
    the example fastest: static quantization for the CNNs
    (torch_static_int8), dynamic quantization of the linear layers otherwise
    (torch.ao.quantization.quantize_dynamic: int8 weights, activations
    quantized per call). An engine that fails at one of `batches` and
    `threads_list` (Debian's oneDNN cannot run some quantized MobileNetV2
    convolutions at batch 8, and fails every call after) is left out, with
    a line in `notes`."""
    best = None
    for engine in torch.backends.quantized.supported_engines:
        if engine == "none":
            continue
        torch.backends.quantized.engine = engine
        if key in ("resnet18", "resnet50", "mobilenet_v2"):
            quantized = torch_static_int8(key, model, example, engine)
        else:
            quantized = torch.ao.quantization.quantize_dynamic(
                model, {torch.nn.Linear}, dtype=torch.qint8)
        for module in quantized.modules():
            # The encoder layer's fused fast path cannot take quantized
            # weights; flagging the layer itself (not its dropouts, which
            # stay in eval) as training takes the op-by-op path, the same
            # math.
            if isinstance(module, torch.nn.TransformerEncoderLayer):
                module.training = True
        try:
            with torch.inference_mode():
                for threads in threads_list:
                    torch.set_num_threads(threads)
                    for batch in batches:
                        quantized(torch.randn(batch, *example.shape[1:]))
        except RuntimeError as error:
            notes.append(f"PyTorch's `{engine}` int8 engine fails on {key} "
                         f"({str(error).splitlines()[0]}); its int8 column "
                         "uses another engine.")
            continue
        with torch.inference_mode():
            seconds = min(timed_together({"q": lambda: quantized(example)}, 3,
                                         10)["q"]["min"] for _ in range(2))
        if best is None or seconds < best[0]:
            best = (seconds, engine, quantized)
    if best is None:
        raise RuntimeError(f"no PyTorch int8 engine of this build runs {key}")
    torch.backends.quantized.engine = best[1]
    return best[2], best[1]


def torchscript(model, example):
    with torch.no_grad():
        traced = torch.jit.trace(model, example)
    return torch.jit.optimize_for_inference(torch.jit.freeze(traced.eval()))


def peak_rss_mb(so, example_shape, calls=20):
    """Peak RSS (VmHWM) of a fresh process serving `calls` calls, and the
    part of it the model added (VmHWM at the end minus VmRSS before loading
    the .so: the interpreter and numpy excluded), in MiB. ru_maxrss would
    count the parent's size: it survives fork and exec."""
    script = f"""
import ctypes, json
import numpy as np
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
before = status("VmRSS")
lib = ctypes.CDLL({str(so)!r})
lib.cuvil_model_metadata.restype = ctypes.c_char_p
lib.cuvil_context_create.argtypes = [ctypes.c_int, ctypes.c_void_p]
lib.cuvil_context_run.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
meta = json.loads(lib.cuvil_model_metadata())
x = np.ones({tuple(example_shape)!r}, np.float32)
outs = [np.zeros([1 if d == -1 else d for d in o["shape"]], np.float32) for o in meta["outputs"]]
ctx = ctypes.c_void_p()
assert lib.cuvil_context_create(1, ctypes.byref(ctx)) == 0
ins = (ctypes.c_void_p * 1)(x.ctypes.data)
op = (ctypes.c_void_p * len(outs))(*[o.ctypes.data for o in outs])
for _ in range({calls}):
    assert lib.cuvil_context_run(ctx, 1, ins, op) == 0
print(json.dumps([status("VmHWM"), status("VmHWM") - before]))
"""
    out = subprocess.run([sys.executable, "-c", script], check=True,
                         capture_output=True, text=True).stdout
    peak, model = json.loads(out)
    return peak / 1024, model / 1024


def probe_peak(work, threads, name):
    """Runs benchmarks/<name>.c (a peak probe, JSON by ISA): the best ISA's
    rate on one core and on `threads`, or None if no ISA ran."""
    binary = work / name
    subprocess.run([CLANG, "-O2", "-o", str(binary),
                    str(ROOT / "benchmarks" / f"{name}.c"), "-lpthread"],
                   check=True)
    result = json.loads(subprocess.run([str(binary), str(threads)], check=True,
                                       capture_output=True, text=True).stdout)
    if not result:
        return None
    # The peak of the instruction sets the kernels may use (--cpu).
    usable = {k: v for k, v in result.items() if AVX512 or "512" not in k} or result
    best = {n: max(isa[n] for isa in usable.values()) for n in ("1", str(threads))}
    return {"by_isa": result, "core": best["1"], "machine": best[str(threads)]}


def fma_peak(work, threads):
    """The fp32 FMA peak in GFLOP/s (benchmarks/fma_peak.c)."""
    return probe_peak(work, threads, "fma_peak")


def int8_peak(work, threads):
    """The int8 multiply-add peak (benchmarks/int8_peak.c), in GOP/s, of
    the instructions the int8 kernels use (VNNI, or AVX2's vpmaddwd)."""
    return probe_peak(work, threads, "int8_peak")


def cabi_latency(work, so, warmup, runs):
    """Per-call latency from C (benchmarks/cabi_latency.c), batch 1."""
    binary = work / "cabi_latency"
    if not binary.exists():
        subprocess.run([CLANG, "-O2", "-o", str(binary),
                        str(ROOT / "benchmarks" / "cabi_latency.c"), "-ldl"],
                       check=True)
    return json.loads(subprocess.run(
        [str(binary), str(so), "1", str(warmup), str(runs)], check=True,
        capture_output=True, text=True).stdout)


def serving_load(work, serve, so, example_shape, concurrencies, seconds):
    """cuvil-serve over loopback with the model at `so`: REST through
    benchmarks/http_load.c (a C client, closed loop, keep-alive) and gRPC
    through grpcio (a Python client, so its numbers include the
    interpreter), swept over concurrency."""
    import socket
    client = work / "http_load"
    if not client.exists():
        subprocess.run([CLANG, "-O2", "-o", str(client),
                        str(ROOT / "benchmarks" / "http_load.c"), "-lpthread"], check=True)
    repo = work / "serving-repository"
    (repo / "model" / "1").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(so, repo / "model" / "1" / "model.so")
    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    proc = subprocess.Popen([serve, f"--model-repository={repo}", f"--http-port={ports[0]}",
                             f"--grpc-port={ports[1]}"], stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", ports[0]), timeout=1):
                    break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError("cuvil-serve did not start")
                time.sleep(0.05)
        import urllib.request
        with urllib.request.urlopen(f"http://127.0.0.1:{ports[0]}/v2/models/model") as reply:
            name = json.loads(reply.read())["inputs"][0]["name"]
        x = np.zeros(example_shape, np.float32)
        body = work / "request.json"
        body.write_text(json.dumps({"inputs": [{"name": name, "datatype": "FP32",
                                                "shape": list(x.shape),
                                                "data": x.ravel().tolist()}]}))
        rest = {}
        for concurrency in concurrencies:
            rest[concurrency] = json.loads(subprocess.run(
                [str(client), str(ports[0]), "/v2/models/model/infer", str(body),
                 str(concurrency), str(seconds)], check=True, capture_output=True,
                text=True).stdout)
            if rest[concurrency]["errors"]:
                raise RuntimeError(f"REST load test: {rest[concurrency]['errors']} errors")
        grpc_stats = grpc_load(ports[1], name, x, concurrencies, seconds)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return {"rest": rest, "grpc": grpc_stats}


def grpc_load(port, name, x, concurrencies, seconds):
    import threading
    import grpc
    bin_dir = ROOT / "bazel-bin" / "cuvil" / "serving"
    sys.path.insert(0, str(bin_dir))
    import grpc_predict_v2_pb2 as pb
    import grpc_predict_v2_pb2_grpc as pb_grpc
    request = pb.ModelInferRequest(model_name="model")
    request.inputs.add(name=name, datatype="FP32", shape=list(x.shape))
    request.raw_input_contents.append(x.tobytes())
    results = {}
    for concurrency in concurrencies:
        latencies, stop = [], time.time() + seconds

        def client():
            stub = pb_grpc.GRPCInferenceServiceStub(
                grpc.insecure_channel(f"127.0.0.1:{port}"))
            stub.ModelInfer(request)
            own = []
            while time.time() < stop:
                start = time.perf_counter()
                stub.ModelInfer(request)
                own.append((time.perf_counter() - start) * 1e3)
            latencies.extend(own)

        threads = [threading.Thread(target=client) for _ in range(concurrency)]
        began = time.time()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        latencies.sort()
        results[concurrency] = {"requests": len(latencies),
                                "throughput": len(latencies) / (time.time() - began),
                                "p50": latencies[len(latencies) // 2],
                                "p99": latencies[int(len(latencies) * 0.99)],
                                "min": latencies[0]}
    return results


def kernel_benchmarks(binary):
    """(fp32 GFLOP/s, int8 GOP/s) by benchmark name."""
    out = subprocess.run([binary, "--benchmark_format=json",
                          "--benchmark_min_time=0.2"], check=True,
                         capture_output=True, text=True).stdout
    runs = json.loads(out)["benchmarks"]
    return ({b["name"]: b["GFLOP/s"] / 1e9 for b in runs if "GFLOP/s" in b},
            {b["name"]: b["GOP/s"] / 1e9 for b in runs if "GOP/s" in b})


def compiled_module_latency(wheel, warmup, runs):
    """The classifier through cuvil.compile / CompiledModule (the wheel)."""
    unpacked = tempfile.mkdtemp(prefix="cuvil-wheel-")
    # Imported from until the process ends.
    atexit.register(shutil.rmtree, unpacked, True)
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(unpacked)
    sys.path.insert(0, unpacked)
    import cuvil
    compiled = cuvil.compile(simple_classifier, [("x", torch.float32, (1, 10))])
    x = torch.randn(1, 10)
    return timed_together({"call": lambda: compiled(x)}, warmup, runs)["call"]


def fmt(stats):
    return f"{stats['p50']:.3f} / {stats['p99']:.3f} / {stats['min']:.3f}"


# What limits a 2-thread row when it falls short (seen in some runs, not
# others, with the same code).
TWO_THREADS = (
    "the 2 vCPUs of a shared VM: a 2-thread call waits at every layer for "
    "the slower of its cores, so the 2-thread rows vary most from run to "
    "run (ResNet-50 at 2 threads takes 37-38 ms when the host is quiet)")


def targets_table(results, peak):
    """Issue #8's targets: measured, met or not, and what limits them."""
    m = results["models"]

    def lat(model, engine, threads=1, batch=1):
        return m[model]["runs"][f"t{threads}_b{batch}"][engine]["p50"]

    rows = []
    # The targets compare 1-thread batch-1 runs (--threads/--batches may
    # leave them out).
    single = {key for key, model in m.items() if "t1_b1" in model["runs"]}

    def add(name, measured, target, met, limit):
        rows.append((name, measured, target, "yes" if met else "**no**",
                     "" if met else limit))

    if "classifier" in single:
        r = lat("classifier", "torch_eager") / m["classifier"]["cabi"]["p50"]
        add("quick-start: C-ABI call (from C) vs torch eager call", f"{r:.1f}x",
            ">= 20x", r >= 20, "")
        if results.get("compiled_module"):
            r = lat("classifier", "torch_eager") / results["compiled_module"]["p50"]
            add("quick-start: CompiledModule call vs torch eager", f"{r:.1f}x",
                ">= 2x", r >= 2, "the call's fixed costs: torch.empty_like for "
                "the output (~0.8 us, most of cuvil._lean's time), the "
                "checks' attribute reads on the input tensor, and "
                "CompiledModule's Python frame")
    if results.get("serving") and "classifier" in single:
        rest = results["serving"]["rest"]
        one = rest.get("1", rest.get(1))
        overhead = 1e3 * (one["p50"] - m["classifier"]["cabi"]["p50"])  # us
        add("serving: REST per-request overhead, quick-start model, p50 "
            "(C client, concurrency 1, minus the C-ABI call)", f"{overhead:.0f} us",
            "< 100 us", overhead < 100, "thread wake-ups between the client and "
            "the connection's thread dominate at concurrency 1")
    for model, label in (("resnet18", "ResNet-18"), ("resnet50", "ResNet-50")):
        if model not in m:
            continue
        if model == "resnet18" and model in single:
            r = lat(model, "torch_eager") / lat(model, "cuvil")
            add("ResNet-18, 1 thread, vs eager", f"{r:.2f}x", ">= 1.67x", r >= 1.67,
                "(unmet under AVX2) the direct convolutions run at 80-90% of "
                "the FMA peak and take ~70% of the time, the 14x14 and 7x7 "
                "layers ~55%; Winograd F(4x4, 3x3) runs the 56x56 and 28x28 "
                "ones, its weights transformed on every call (at 14x14 that "
                "takes 2 of its 3.7 ms, so those stay direct). Keeping them "
                "transformed across calls was measured: +0.3% on the 56x56 "
                "and 28x28 layers, +4% with the 14x14 ones on Winograd too "
                "(their transformed weights, 28 MB, stream from memory on "
                "every call)")
        for threads in (1, 2):
            if f"t{threads}_b1" not in m[model]["runs"]:
                continue
            r = lat(model, "torchscript", threads) / lat(model, "cuvil", threads)
            add(f"{label}, {threads} thread(s), vs TorchScript-frozen",
                f"{r:.2f}x", "> 1x", r > 1, "see the row above" if threads == 1
                else TWO_THREADS)
    if "mobilenet_v2" in single:
        r = lat("mobilenet_v2", "torch_eager") / lat("mobilenet_v2", "cuvil")
        add("MobileNetV2, 1 thread, vs eager", f"{r:.2f}x", ">= 2x", r >= 2, "")
        r = lat("mobilenet_v2", "torchscript") / lat("mobilenet_v2", "cuvil")
        add("MobileNetV2, 1 thread, vs TorchScript-frozen", f"{r:.2f}x", "> 1x",
            r > 1, "the 1x1 convolutions with 16-24 input channels: a "
            "register tile's loop over C is that short, so loading and "
            "storing its 28 accumulators costs about as much as its FMAs")
    if "transformer" in single:
        r = lat("transformer", "torchscript") / lat("transformer", "cuvil")
        add("TransformerEncoderLayer vs TorchScript-frozen", f"{r:.2f}x", "> 1x",
            r > 1, "attention not fused")
    for key, model in m.items():
        # Issue #20: faster than PyTorch's int8 on every model; the row is
        # the model's slowest cell of the int8 table.
        cells = [(run["torch_int8"]["p50"] / run["cuvil_int8"]["p50"], cell)
                 for cell, run in model["runs"].items() if "cuvil_int8" in run]
        if cells:
            r, cell = min(cells)
            threads, batch = cell[1:].split("_b")
            add(f"{model['name']}: Cuvil int8 vs PyTorch int8, slowest of "
                f"{len(cells)} cells ({threads} thread(s), batch {batch})",
                f"{r:.2f}x", "> 1x", r > 1,
                "per image Cuvil slows as the batch grows (each layer streams "
                "every image's activations through L3 before the next layer "
                "starts) while PyTorch speeds up" if batch != "1" else
                "the 2 vCPUs of a shared VM vary most at 2 threads"
                if threads == "2" else "")
    run = m.get("resnet50", {}).get("runs", {}).get("t1_b1", {})
    if "cuvil_int8" in run:
        # Issue #20: 3x on AVX-512 VNNI, 1.8x on AVX2.
        kernels = m["resnet50"].get("int8_kernels", {})
        vnni = kernels.get("qconvb") in ("avx512vnni", "avxvnni")
        goal = 3.0 if vnni else 1.8
        r = run["cuvil"]["p50"] / run["cuvil_int8"]["p50"]
        add(f"ResNet-50: Cuvil int8 vs Cuvil fp32, 1 thread, batch 1 "
            f"({kernels.get('qconvb')} tiles)", f"{r:.2f}x", f">= {goal}x",
            r >= goal, "")
    avx2 = m.get(AVX2_MODEL, {}).get("avx2")
    if avx2:
        r = avx2["cuvil"]["p50"] / avx2["cuvil_int8"]["p50"]
        tiles = avx2["kernels"].get("qconvb_narrow", "none")
        tiles = tiles if tiles != "none" else avx2["kernels"].get("qconvb")
        add(f"{m[AVX2_MODEL]['name']}: Cuvil int8 vs Cuvil fp32 on AVX2 "
            f"(--cpu=x86-64-v3: {tiles} tiles), 1 thread, "
            f"batch 1 ({avx2['cuvil']['p50']:.1f} vs {avx2['cuvil_int8']['p50']:.1f} ms)",
            f"{r:.2f}x", ">= 1.8x", r >= 1.8,
            "both near their peaks on this core: the float32 model at about 90% "
            "of the AVX2 FMA peak, the int8 one at about 80% of vpmaddubsw's, "
            "which is only twice the FMA rate")
    sgemm = results.get("kernels", {})
    large = [v for k, v in sgemm.items() if k.startswith("sgemm/") and
             int(k.split("/")[1]) >= 512]
    if large:
        f = min(large) / peak["core"]
        add("SGEMM (>= 512), fraction of 1-core peak", f"{100 * f:.0f}%",
            ">= 85%", f >= 0.85, "the 4x32 micro-kernel reaches 94% with its "
            "operands in L1 (sgemm/64) but streams each B strip from L2 once "
            "per 4 rows of A; a 12-row tile and BLIS's loop order (B strip in "
            "L1, A panels packed) measured no better here, and runs differ "
            "by +-5% on these shared cores")
    if "resnet50" in single and "t2_b1" in m["resnet50"]["runs"]:
        run = m["resnet50"]["runs"]["t2_b1"]["cuvil"]
        f = m["resnet50"]["gflop"] / (run["p50"] / 1e3) / peak["machine"]
        add("ResNet-50, 2 threads, fraction of machine peak", f"{100 * f:.0f}%",
            ">= 55%", f >= 0.55, "the 1x1 layers' short loops over C")
        s = lat("resnet50", "cuvil", 1) / lat("resnet50", "cuvil", 2)
        add("ResNet-50, 2-thread speed-up", f"{s:.2f}x", ">= 1.8x", s >= 1.8,
            TWO_THREADS)
    if "resnet18" in single:
        run = m["resnet18"]["runs"]["t1_b1"]["cuvil"]
        r = run["p99"] / run["p50"]
        add("ResNet-18, 1 thread, p99 / p50", f"{r:.3f}", "<= 1.15", r <= 1.15,
            "a shared 2-core VM: other processes' noise")
    if "resnet50" in m:
        c = m["resnet50"]["compile_seconds"]
        add("ResNet-50 compile time", f"{c:.1f} s", "< 60 s", c < 60, "")
    for model in m.values():
        extra = model["so_bytes"] - model["weight_bytes"]
        add(f"{model['name']}: .so size - weights", f"{extra / 2**20:.2f} MiB",
            "<= 2 MiB", extra <= 2 * 2**20, "")
        over = model["rss_model_mb"] - model["weight_bytes"] / 2**20
        add(f"{model['name']}: RSS the served model adds - weights",
            f"{over:.1f} MiB", "<= 64 MiB", over <= 64, "")
    return rows


def write_chart(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names, eager, script, cuvil = [], [], [], []
    for model in results["models"].values():
        run = model["runs"].get("t1_b1")
        if not run:
            continue
        names.append(model["name"].split(" (")[0])
        eager.append(1.0)
        script.append(run["torch_eager"]["p50"] / run["torchscript"]["p50"])
        cuvil.append(run["torch_eager"]["p50"] / run["cuvil"]["p50"])
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(10, 4.5))
    ax.bar(x - 0.27, eager, 0.27, label="PyTorch eager")
    ax.bar(x, script, 0.27, label="TorchScript frozen")
    ax.bar(x + 0.27, cuvil, 0.27, label="Cuvil .so")
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=15)
    ax.set_ylabel("speed vs eager (batch 1, 1 thread; higher is faster)")
    ax.axhline(1.0, color="gray", linewidth=0.5)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cuvilc", required=True)
    parser.add_argument("--wheel")
    parser.add_argument("--kernel-benchmark")
    parser.add_argument("--cpu", help="build Cuvil's models for this CPU "
                        "(cuvilc --cpu; default: this machine's), e.g. "
                        "x86-64-v3 to measure the AVX2 kernels on an AVX-512 "
                        "machine, with ONEDNN_MAX_CPU_ISA=AVX2 for PyTorch's")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--out-dir", default=str(ROOT / "benchmarks" / "out"))
    parser.add_argument("--results", default=str(ROOT / "benchmarks" / "RESULTS.md"))
    parser.add_argument("--serve", help="cuvil-serve binary: adds the serving load test")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--no-trees", action="store_true",
                        help="skip the tree ensembles (benchmarks/trees_bench.py)")
    parser.add_argument("--no-fpga", action="store_true",
                        help="skip the FPGA Verilog (benchmarks/fpga_bench.py)")
    parser.add_argument("--no-zoo", action="store_true",
                        help="skip the model zoo (benchmarks/zoo_bench.py)")
    parser.add_argument("--no-edge", action="store_true",
                        help="skip the aarch64 footprint (benchmarks/edge_bench.py)")
    parser.add_argument("--no-held-out", action="store_true",
                        help="skip issue #26's held-out models "
                        "(benchmarks/held_out_bench.py; needs --wheel)")
    parser.add_argument("--render", metavar="RESULTS_JSON",
                        help="only write --results from a results.json")
    args = parser.parse_args()
    if args.render:
        results = json.loads(pathlib.Path(args.render).read_text())
        args.runs, args.warmup = results["runs"], results["warmup"]
        write_markdown(results, args, pathlib.Path(args.results), os.cpu_count())
        return
    if args.smoke:
        args.models, args.threads, args.batches = "classifier", "1", "1"
        args.runs, args.warmup = 5, 2
    unknown = set(args.models.split(",")) - set(MODELS)
    if unknown:
        parser.error(f"unknown models {sorted(unknown)}; choose from {sorted(MODELS)}")
    threads_list = [int(t) for t in args.threads.split(",")]
    batches = [int(b) for b in args.batches.split(",")]
    out_dir = pathlib.Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    # Exported models, .so files and helper binaries (hundreds of MiB): the
    # .so files stay loaded until the process ends.
    work = pathlib.Path(tempfile.mkdtemp(prefix="cuvil-bench-"))
    atexit.register(shutil.rmtree, work, True)
    cores = os.cpu_count()

    global AVX512
    if args.cpu:
        CPU_FLAGS.append(f"--cpu={args.cpu}")
        AVX512 = cpu_has_avx512(args.cpu)
    results = {"date": str(datetime.date.today()), "runs": args.runs,
               "warmup": args.warmup, "models": {}, "isa": isa_line(args.cpu)}
    results["peak_gflops"] = peak = fma_peak(work, cores)
    print(f"FMA peak: {peak['core']:.0f} GFLOP/s per core, "
          f"{peak['machine']:.0f} on {cores} cores", flush=True)
    if args.kernel_benchmark and not args.smoke:
        results["kernels"], results["int8_kernels"] = kernel_benchmarks(
            args.kernel_benchmark)
    # The int8 table's "% of peak" needs the probe whenever int8 rows run.
    if set(args.models.split(",")) & set(INT8_MODELS):
        results["peak_int8_gops"] = int8_peak(work, cores)
    if args.wheel and "classifier" in args.models.split(","):
        torch.set_num_threads(1)
        results["compiled_module"] = compiled_module_latency(
            args.wheel, args.warmup, max(args.runs, 200))

    for index, key in enumerate(args.models.split(",")):
        name, make = MODELS[key]
        torch.manual_seed(0)
        model, example = make()
        model.eval()
        so, compile_seconds = export_and_compile(args.cuvilc, model, example,
                                                 work, index)
        compiled = CuvilModel(so)
        weight_bytes = sum(t.numel() * t.element_size() for t in
                           list(model.parameters()) + list(model.buffers()))
        rss, rss_model = peak_rss_mb(so, example.shape)
        entry = {"name": name, "compile_seconds": compile_seconds,
                 "so_bytes": so.stat().st_size, "weight_bytes": weight_bytes,
                 "rss_mb": rss, "rss_model_mb": rss_model,
                 "gflop": count_flops(model, example) / 1e9, "runs": {},
                 "kernels": compiled.metadata.get("kernels")}
        if key == "classifier":
            entry["cabi"] = cabi_latency(work, so, args.warmup, max(args.runs, 1000))
            if args.serve:
                results["serving"] = serving_load(
                    work, args.serve, so, tuple(example.shape),
                    [1] if args.smoke else [1, 2, 4, 8], 0.5 if args.smoke else 3)
                for proto in ("rest", "grpc"):
                    for c, stat in results["serving"][proto].items():
                        print(f"serving {proto} concurrency {c}: {stat['throughput']:.0f} "
                              f"req/s, p50 {1e3 * stat['p50']:.0f} us", flush=True)
        script_model = torchscript(model, example)
        int8 = bf16 = None
        if key in INT8_MODELS:
            int8 = CuvilModel(compile_int8(args.cuvilc, example, work, index))
            torch_q, engine = torch_int8(key, model, example, batches,
                                         threads_list,
                                         results.setdefault("notes", []))
            entry["int8_kernels"] = int8.metadata.get("kernels")
            entry["torch_int8_engine"] = engine
        if key in BF16_MODELS:
            bf16 = CuvilModel(compile_bf16(args.cuvilc, work, index))
            torch_b = torch_bf16(model)
            try:
                with torch.inference_mode():
                    torch_b(example.to(torch.bfloat16))
            except RuntimeError as error:  # oneDNN without bf16 (AVX2)
                torch_b = None
                results.setdefault("notes", []).append(
                    f"PyTorch's bf16 fails on {name} here ({error}); its bf16 "
                    "columns are left out.")
            entry["bf16_kernels"] = bf16.metadata.get("kernels")
        for batch in batches:
            x = torch.randn(batch, *example.shape[1:])
            with torch.inference_mode():
                reference = model(x).numpy()
            for threads in threads_list:
                torch.set_num_threads(threads)
                run = compiled.runner(x.numpy(), threads)
                run()
                error = float(np.abs(run.outputs[0] - reference).max())
                engines = {"eager": lambda: model(x),
                           "script": lambda: script_model(x), "cuvil": run}
                if int8:
                    run8 = int8.runner(x.numpy(), threads)
                    run8()
                    engines["cuvil_int8"] = run8
                    engines["torch_int8"] = lambda: torch_q(x)
                if bf16:
                    run16 = bf16.runner(x.numpy(), threads)
                    run16()
                    engines["cuvil_bf16"] = run16
                    x16 = x.to(torch.bfloat16)
                    if torch_b is not None:
                        engines["torch_bf16"] = lambda: torch_b(x16)
                with torch.inference_mode():
                    timings = timed_together(engines, args.warmup, args.runs)
                eager, script, cuvil = (timings[k] for k in ("eager", "script", "cuvil"))
                run.close()
                gflop = entry["gflop"] * batch
                cell = entry["runs"][f"t{threads}_b{batch}"] = {
                    "torch_eager": eager, "torchscript": script, "cuvil": cuvil,
                    "max_abs_error": error,
                    "cuvil_gflops": gflop / (cuvil["p50"] / 1e3),
                    "cuvil_peak_fraction": gflop / (cuvil["p50"] / 1e3) /
                    (peak["core"] if threads == 1 else peak["machine"])}
                if int8:
                    with torch.inference_mode():
                        theirs = torch_q(x).numpy()
                    cell.update({
                        "cuvil_int8": timings["cuvil_int8"],
                        "torch_int8": timings["torch_int8"],
                        "int8_cosine": cosine(run8.outputs[0], reference),
                        "torch_int8_cosine": cosine(theirs, reference),
                        "cuvil_int8_gops": gflop / (timings["cuvil_int8"]["p50"] / 1e3)})
                    run8.close()
                if bf16:
                    cell.update({"cuvil_bf16": timings["cuvil_bf16"],
                                 "bf16_cosine": cosine(run16.outputs[0], reference)})
                    if torch_b is not None:
                        with torch.inference_mode():
                            theirs = torch_b(x16).float().numpy()
                        cell.update({"torch_bf16": timings["torch_bf16"],
                                     "torch_bf16_cosine": cosine(theirs, reference)})
                    run16.close()
                print(f"{name} threads={threads} batch={batch}: eager "
                      f"{eager['p50']:.3f} ms, TorchScript {script['p50']:.3f} "
                      f"ms, Cuvil {cuvil['p50']:.3f} ms", flush=True)
        if key == AVX2_MODEL and int8 and 1 in threads_list and 1 in batches:
            fp32_path, int8_path = compile_avx2(args.cuvilc, work, index)
            avx2, avx2_int8 = CuvilModel(fp32_path), CuvilModel(int8_path)
            x = torch.randn(1, *example.shape[1:]).numpy()
            runs = {"cuvil": avx2.runner(x, 1), "cuvil_int8": avx2_int8.runner(x, 1)}
            timings = timed_together(runs, args.warmup, args.runs)
            entry["avx2"] = {**timings, "kernels": avx2_int8.metadata.get("kernels"),
                             "fp32_kernels": avx2.metadata.get("kernels")}
            for run in runs.values():
                run.close()
            print(f"{name} on AVX2 (--cpu=x86-64-v3): fp32 {timings['cuvil']['p50']:.3f} "
                  f"ms, int8 {timings['cuvil_int8']['p50']:.3f} ms", flush=True)
        results["models"][key] = entry

    if not args.no_trees:
        import trees_bench
        results["trees"] = trees_bench.run(args.cuvilc, work, args.smoke,
                                           args.wheel)
    if not args.no_fpga:
        import fpga_bench
        results["fpga"] = fpga_bench.run(args.cuvilc, work, args.smoke)
    if not args.no_zoo:
        import zoo_bench
        results["zoo"] = zoo_bench.run(args.cuvilc, work, args.smoke,
                                       threads_list=threads_list,
                                       batches=batches)
    if not args.no_edge:
        import edge_bench
        results["edge"] = edge_bench.run(args.cuvilc, work, MODELS, args.smoke)
    if not args.no_held_out and args.wheel:
        import held_out_bench
        results["held_out"] = held_out_bench.run(args.wheel, work,
                                                         args.smoke)
    (out_dir / "results.json").write_text(json.dumps(results, indent=1))
    if not args.smoke:
        write_chart(results, out_dir / "results.png")
    write_markdown(results, args, pathlib.Path(args.results), cores)
    print(f"wrote {out_dir / 'results.json'} and {args.results}")


def notes(results):
    """Caveats the numbers themselves show, as Markdown lines."""
    lines = [f"- {note}" for note in results.get("notes", [])]
    if results["runs"] < 200:
        lines.append(f"- This run used {results['runs']} timed calls per cell "
                     "(`--runs`; the default is 200), so p99 is close to the "
                     "maximum of few samples.")
    for model in results["models"].values():
        for batch in ("1", "8"):
            one = model["runs"].get(f"t1_b{batch}")
            two = model["runs"].get(f"t2_b{batch}")
            if one and two and one["torch_eager"]["p50"] > 3 * two["torch_eager"]["p50"]:
                lines.append(
                    f"- PyTorch eager is anomalously slow on one thread for "
                    f"{model['name']} at batch {batch} "
                    f"({one['torch_eager']['p50']:.0f} ms vs "
                    f"{two['torch_eager']['p50']:.0f} ms on two): Debian's "
                    "PyTorch build; compare with TorchScript there.")
        run = model["runs"].get("t1_b1")
        if run and model["gflop"] > 0.1:
            torch_gflops = model["gflop"] / (run["torchscript"]["p50"] / 1e3)
            if torch_gflops < 10:
                lines.append(
                    f"- PyTorch reaches only {torch_gflops:.1f} GFLOP/s on "
                    f"{model['name']} (eager and TorchScript alike) in this "
                    "build; the ratios against it flatter Cuvil.")
    return lines + [""] if lines else []


def int8_tables(results, cores):
    """The int8 rows: Cuvil int8 beside Cuvil fp32 and PyTorch's int8."""
    models = [m for m in results["models"].values() if m.get("int8_kernels")]
    if not models:
        return []
    peak = results.get("peak_int8_gops") or {}
    lines = ["", "## int8 (post-training static quantization)", "",
             f"Cuvil int8 = `cuvilc --quantize=int8`, calibrated on "
             f"{CALIBRATION_SAMPLES} random samples (min-max): activations uint8 "
             "per tensor, weights int8 per output channel (in [-64, 64] where "
             "the target has no VNNI), every linear layer and convolution, "
             "bias, residual, activation and the next "
             "layer's quantize in the kernel's epilogue; attention products and "
             "everything else stay float32. PyTorch int8: for the CNNs, static "
             "quantization of their `torchvision.models.quantization` twins "
             "(same weights, fused, calibrated the same way); otherwise "
             "`torch.ao.quantization.quantize_dynamic` of the `nn.Linear`s; on "
             "the fastest quantized engine of this build (oneDNN without VNNI "
             "sums uint8 x int8 pairs in saturating int16, so its outputs are "
             "not exact there: see its cosine). GOP/s counts the model's float "
             "ops at Cuvil int8's p50, against the 1-core int8 peak (2 cores "
             "for 2 threads)." + (
                 f" Measured int8 peak (benchmarks/int8_peak.c, a multiply-add "
                 f"is 2 ops): {peak['core']:.0f} GOP/s on one core, "
                 f"{peak['machine']:.0f} on {cores}." if peak else ""), "",
             "| model | threads | batch | Cuvil fp32 | Cuvil int8 | PyTorch int8 "
             "| int8 vs Cuvil fp32 | int8 vs PyTorch int8 | cosine vs fp32 "
             "(Cuvil / PyTorch) | Cuvil int8 GOP/s (% of peak) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for model in models:
        for key, run in model["runs"].items():
            if "cuvil_int8" not in run:
                continue
            threads, batch = key[1:].split("_b")
            top = peak.get("core" if threads == "1" else "machine")
            share = f" ({100 * run['cuvil_int8_gops'] / top:.0f}%)" if top else ""
            lines.append(
                f"| {model['name']} | {threads} | {batch} | {fmt(run['cuvil'])} | "
                f"{fmt(run['cuvil_int8'])} | {fmt(run['torch_int8'])} | "
                f"{run['cuvil']['p50'] / run['cuvil_int8']['p50']:.2f}x | "
                f"{run['torch_int8']['p50'] / run['cuvil_int8']['p50']:.2f}x | "
                f"{run['int8_cosine']:.5f} / {run['torch_int8_cosine']:.5f} | "
                f"{run['cuvil_int8_gops']:.1f}{share} |")
    lines += ["", "Kernels: " + "; ".join(
        f"{m['name']}: qgemm4 {m['int8_kernels'].get('qgemm4')}, qconvb "
        f"{m['int8_kernels'].get('qconvb')} / narrow "
        f"{m['int8_kernels'].get('qconvb_narrow')}, PyTorch engine "
        f"{m['torch_int8_engine']}" for m in models) + "."]
    return lines


def bf16_tables(results):
    models = [m for m in results["models"].values() if m.get("bf16_kernels")]
    if not models:
        return []
    lines = ["", "## bf16 (bfloat16 linear layers and convolutions, summed in "
             "float32)", "",
             "Cuvil bf16 = `cuvilc --quantize=bf16`: each linear layer's and "
             "ungrouped convolution's input rounded to bfloat16 and its weights "
             "stored in bfloat16 (rounded to nearest even), products summed in "
             "float32, bias, residual and activation in the kernel's epilogue; "
             "depthwise convolutions and everything else float32. Linear "
             "layers run the `bgemm8` variant named below (`avx512bf16`: "
             "`vdpbf16ps`, on AMD's Zen cores, which run it at twice their "
             "FMA rate; `avx512`: FMA on widened values, on Intel's AVX-512 "
             "BF16 cores, which run `vdpbf16ps` at half of it), "
             "convolutions the `bconvb` tiles (`avx512bf16`: "
             "`vdpbf16ps`; `avx512` / `avx2` widen to float32 and are slower "
             "than float32 convolutions). PyTorch bf16 = the model converted with "
             "`.to(torch.bfloat16)`, eager (oneDNN, which uses AMX tiles "
             "where the CPU has them).", "",
             "| model | threads | batch | Cuvil fp32 | Cuvil bf16 | PyTorch bf16 "
             "| bf16 vs Cuvil fp32 | bf16 vs PyTorch bf16 | cosine vs fp32 "
             "(Cuvil / PyTorch) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for model in models:
        for key, run in model["runs"].items():
            if "cuvil_bf16" not in run:
                continue
            threads, batch = key[1:].split("_b")
            theirs = run.get("torch_bf16")  # absent where PyTorch's fails
            vs_theirs = (f"{theirs['p50'] / run['cuvil_bf16']['p50']:.2f}x"
                         if theirs else "-")
            their_cosine = (f"{run['torch_bf16_cosine']:.6f}" if theirs else "-")
            lines.append(
                f"| {model['name']} | {threads} | {batch} | {fmt(run['cuvil'])} | "
                f"{fmt(run['cuvil_bf16'])} | {fmt(theirs) if theirs else '(fails)'} | "
                f"{run['cuvil']['p50'] / run['cuvil_bf16']['p50']:.2f}x | "
                f"{vs_theirs} | {run['bf16_cosine']:.6f} / {their_cosine} |")
    lines += ["", "Kernels: " + "; ".join(
        f"{m['name']}: bgemm8 {m['bf16_kernels'].get('bgemm8')}, "
        f"bconvb {m['bf16_kernels'].get('bconvb')}"
        for m in models) + "."]
    return lines


def machine_isas():
    """The instruction sets this machine has that the kernels choose by."""
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    wanted = ["avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni",
              "avx512_bf16", "amx_int8"]
    return ", ".join(f for f in wanted if f in flags)


def isa_line(cpu=None):
    """The instruction sets the kernels were chosen from, or with `cpu`
    (--cpu) what they were built for (AVX512 set from it) and what oneDNN
    ran."""
    if not cpu:
        return (f"Instruction sets: {machine_isas()} (the kernels are chosen "
                "from these; `--cpu=native`).")
    return (f"Cuvil built with `--cpu={cpu}` "
            f"({'with' if AVX512 else 'without'} AVX-512) on a machine whose "
            f"instruction sets are: {machine_isas()}; PyTorch's oneDNN ran "
            f"{onednn_isa() or 'an unreported ISA'} "
            f"(ONEDNN_MAX_CPU_ISA={os.environ.get('ONEDNN_MAX_CPU_ISA', 'unset')}).")


def write_markdown(results, args, path, cores):
    peak = results["peak_gflops"]
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo"],
                         stdout=subprocess.PIPE, text=True).stdout.split(":")[-1].strip()
    lines = [
        "# Benchmark results", "",
        f"Produced by `scripts/bench` on {results['date']} ({cpu}, {cores} cores, "
        f"{platform.machine()}, PyTorch {torch.__version__}): {args.warmup} "
        f"warm-up and {args.runs} timed calls per cell, the three of a cell "
        f"taking turns in {ROUNDS} rounds. Latency in ms as p50 / "
        "p99 / min. Eager = `torch.inference_mode`; TorchScript = traced, "
        "frozen, `torch.jit.optimize_for_inference` (oneDNN); Cuvil = the "
        ".so through its C ABI (ctypes), a context with that many threads. "
        "Ratios compare p50s (> 1: Cuvil is faster). Chart and raw numbers: "
        "`benchmarks/out/results.{png,json}` (not committed).", "",
        f"Measured FMA peak (fp32): {peak['core']:.0f} GFLOP/s on one core, "
        f"{peak['machine']:.0f} GFLOP/s on {cores} cores "
        f"({', '.join(f'{isa}: {v}' for isa, v in peak['by_isa'].items())}).", "",
        results.get("isa", ""), "",
        *notes(results), "## Targets (issue #8)", "",
        "| target | measured | goal | met | what limits it |",
        "| --- | --- | --- | --- | --- |"]
    for row in targets_table(results, peak):
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "## Models", "",
              "| model | threads | batch | eager | TorchScript | Cuvil | vs eager "
              "| vs TorchScript | Cuvil GFLOP/s (% of peak) | max abs err |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for model in results["models"].values():
        for key, run in model["runs"].items():
            threads, batch = key[1:].split("_b")
            lines.append(
                f"| {model['name']} | {threads} | {batch} | {fmt(run['torch_eager'])} | "
                f"{fmt(run['torchscript'])} | {fmt(run['cuvil'])} | "
                f"{run['torch_eager']['p50'] / run['cuvil']['p50']:.2f}x | "
                f"{run['torchscript']['p50'] / run['cuvil']['p50']:.2f}x | "
                f"{run['cuvil_gflops']:.1f} ({100 * run['cuvil_peak_fraction']:.0f}%) | "
                f"{run['max_abs_error']:.1e} |")
    lines += int8_tables(results, cores)
    lines += bf16_tables(results)
    lines += ["", "| model | GFLOP (batch 1) | compile | .so | weights | peak RSS "
              "serving (of it: model) |", "| --- | --- | --- | --- | --- | --- |"]
    for model in results["models"].values():
        lines.append(
            f"| {model['name']} | {model['gflop']:.3f} | {model['compile_seconds']:.1f} s "
            f"| {model['so_bytes'] / 2**20:.2f} MiB | {model['weight_bytes'] / 2**20:.2f} MiB "
            f"| {model['rss_mb']:.0f} MiB ({model['rss_model_mb']:.0f} MiB) |")
    if "classifier" in results["models"]:
        c = results["models"]["classifier"]["cabi"]
        lines += ["", f"Quick-start classifier called from C "
                  f"(`benchmarks/cabi_latency.c`, {c['runs']} calls), p50 / p99 "
                  f"/ min: {1e3 * c['p50']:.3f} / {1e3 * c['p99']:.3f} / "
                  f"{1e3 * c['min']:.3f} us; through ctypes it is the Cuvil "
                  "column above."]
    if results.get("compiled_module"):
        cm = results["compiled_module"]
        lines += ["", f"Quick-start classifier through `cuvil.CompiledModule` "
                  f"(Python, torch tensors): {fmt(cm)} ms."]
    if results.get("serving"):
        lines += ["", "## Serving (cuvil-serve over loopback, quick-start classifier)", "",
                  "REST from `benchmarks/http_load.c` (C, closed loop, keep-alive); gRPC "
                  "from grpcio in Python threads (its latency includes the interpreter "
                  "and the GIL). Direct C-ABI call for comparison: "
                  f"{1e3 * results['models']['classifier']['cabi']['p50']:.1f} us p50.", "",
                  "| protocol | concurrency | requests/s | p50 (us) | p99 (us) |",
                  "| --- | --- | --- | --- | --- |"]
        for proto in ("rest", "grpc"):
            for c, stat in results["serving"][proto].items():
                lines.append(f"| {proto.upper() if proto == 'rest' else 'gRPC'} | {c} | "
                             f"{stat['throughput']:.0f} | {1e3 * stat['p50']:.0f} | "
                             f"{1e3 * stat['p99']:.0f} |")
    if results.get("kernels"):
        lines += ["", "## Kernels (one thread, `//cuvil/targets/cpu:kernel_benchmark`)",
                  "", "| benchmark | GFLOP/s | % of 1-core peak |", "| --- | --- | --- |"]
        for name, gflops in results["kernels"].items():
            lines.append(f"| {name} | {gflops:.1f} | {100 * gflops / peak['core']:.0f}% |")
    int8 = results.get("peak_int8_gops")
    if results.get("int8_kernels") and int8:
        lines += ["", "## int8 kernels (one thread, `qgemm/<variant>/<n>`: n x n x n)", "",
                  f"Measured int8 peak: {int8['core']:.0f} GOP/s on one core, "
                  f"{int8['machine']:.0f} on {cores} cores ("
                  f"{', '.join(f'{isa}: {v}' for isa, v in int8['by_isa'].items())}; "
                  "a multiply-add is 2 ops).", "",
                  "| benchmark | GOP/s | % of its ISA's 1-core int8 peak |",
                  "| --- | --- | --- |"]
        for name, gops in results["int8_kernels"].items():
            # qgemm/<variant>/<n>: a variant against its own instructions' peak.
            isa = name.split("/")[1] if name.count("/") == 2 else ""
            peak1 = int8["by_isa"].get(isa, {}).get("1", int8["core"])
            lines.append(f"| {name} | {gops:.1f} | {100 * gops / peak1:.0f}% |")
    if results.get("trees"):
        import trees_bench
        lines += [""] + trees_bench.markdown(results["trees"],
                                             trees_bench.isa_note())
    if results.get("fpga"):
        import fpga_bench
        lines += [""] + fpga_bench.markdown(results["fpga"])
    if results.get("zoo"):
        import zoo_bench
        lines += [""] + zoo_bench.markdown(results["zoo"])
    if results.get("edge"):
        import edge_bench
        lines += [""] + edge_bench.markdown(results["edge"])
    if results.get("held_out"):
        import held_out_bench
        lines += [""] + held_out_bench.markdown(results["held_out"])
    lines.append("")
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
