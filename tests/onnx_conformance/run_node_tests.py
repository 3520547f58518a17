"""Runs the ONNX backend node tests through cuvilc and the compiled .so.

    run_node_tests.py CUVILC NODE_DIR [--jobs N] [--report FILE]
                      [--min-pass-rate R] [--per-op N]

Each case's model.onnx is compiled to a .so, run on test_data_set_*/input_*.pb
through the C ABI (plain ctypes), and compared with output_*.pb using ONNX's
own tolerance (rtol 1e-3, atol 1e-7). Inputs that hold an op's parameters
(a Reshape's shape, Slice's starts, ...) are frozen into the model from the
first data set, as a static compiler needs them. A case is "unsupported" when one of
its ops is not in `cuvilc --list-onnx-ops`; every other case must pass, and
is a failure otherwise. A compiler or model crash (a signal) is always a
failure and fails the run. The report lists pass / fail / unsupported per
op; the run fails if the pass rate over supported cases is below
--min-pass-rate. --per-op N runs at most N cases of each op (spread over
its sorted cases), which CI uses; the report then covers that sample.
"""

import argparse
import collections
import concurrent.futures
import ctypes
import glob
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

RTOL, ATOL = 1e-3, 1e-7


def storage_dtype(name):
    """numpy dtype holding a metadata dtype (bfloat16 travels as its bits)."""
    return np.uint16 if name == "bfloat16" else np.dtype(name)


def to_bfloat16_bits(array):
    bits = np.ascontiguousarray(array, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def from_bfloat16_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def run_case(case_dir, so_path, fed):
    """Runs one compiled case in this (child) process and returns its
    verdict. `fed` lists the graph-input positions the model still takes."""
    lib = ctypes.CDLL(so_path)
    lib.cuvil_model_metadata.restype = ctypes.c_char_p
    lib.cuvil_status_message.restype = ctypes.c_char_p
    lib.cuvil_model_workspace_size.restype = ctypes.c_size_t
    lib.cuvil_model_run.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_void_p, ctypes.c_size_t]
    meta = json.loads(lib.cuvil_model_metadata())
    workspace = np.zeros(lib.cuvil_model_workspace_size() + 64, np.uint8)
    for data_set in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*"))):
        inputs = []
        for spec, i in zip(meta["inputs"], fed):
            tensor = onnx.TensorProto()
            with open(os.path.join(data_set, f"input_{i}.pb"), "rb") as f:
                tensor.ParseFromString(f.read())
            array = numpy_helper.to_array(tensor)
            if spec["dtype"] == "bfloat16" and array.dtype != np.uint16:
                array = to_bfloat16_bits(array)
            inputs.append(np.ascontiguousarray(array))
        expected = []
        for i in range(len(meta["outputs"])):
            tensor = onnx.TensorProto()
            with open(os.path.join(data_set, f"output_{i}.pb"), "rb") as f:
                tensor.ParseFromString(f.read())
            expected.append(numpy_helper.to_array(tensor))
        outputs = [np.zeros([1 if d == -1 else d for d in spec["shape"]],
                            dtype=storage_dtype(spec["dtype"]))
                   for spec in meta["outputs"]]
        batch = 1
        if meta["max_batch"] and inputs and inputs[0].ndim:
            batch = inputs[0].shape[0]
            outputs = [np.zeros([batch if d == -1 else d for d in spec["shape"]],
                                dtype=storage_dtype(spec["dtype"]))
                       for spec in meta["outputs"]]
        ins = (ctypes.c_void_p * max(len(inputs), 1))(*[x.ctypes.data for x in inputs])
        outs = (ctypes.c_void_p * len(outputs))(*[y.ctypes.data for y in outputs])
        status = lib.cuvil_model_run(batch, ins, outs, workspace.ctypes.data,
                                     workspace.size)
        if status:
            return "fail: run returned " + lib.cuvil_status_message(status).decode()
        for spec, got, want in zip(meta["outputs"], outputs, expected):
            if spec["dtype"] == "bfloat16":
                got = from_bfloat16_bits(got)
                if want.dtype == np.uint16:  # onnx 1.12 returns the bits
                    want = from_bfloat16_bits(want)
            if got.shape != want.shape:
                return f"fail: output shape {got.shape} != {want.shape}"
            try:
                np.testing.assert_allclose(got, want.astype(got.dtype), rtol=RTOL,
                                           atol=ATOL)
            except AssertionError as e:
                return "fail: " + str(e).strip().replace("\n", " ")[:300]
    return "pass"


def run_child(case_dir, so_path, fed, sender):
    """run_case in a forked child, its verdict sent back through a pipe."""
    try:
        verdict = run_case(case_dir, so_path, fed)
    except Exception as e:  # a bad case fails alone
        verdict = f"fail: {type(e).__name__}: {e}"
    sender.send(verdict)


# Children fork from a server that has numpy and onnx loaded (not from this
# threaded process), so a case costs a fork rather than a Python start, and
# a case that crashes takes down only its own child.
FORKS = multiprocessing.get_context("forkserver")
FORKS.set_forkserver_preload(["numpy", "onnx", "onnx.numpy_helper"])


def run_isolated(case_dir, so_path, fed, timeout=300):
    """(verdict, signal number or 0) of running one compiled case."""
    receiver, sender = FORKS.Pipe(duplex=False)
    child = FORKS.Process(target=run_child, args=(case_dir, so_path, fed, sender))
    child.start()
    sender.close()
    verdict = "fail: timed out after %d s" % timeout
    try:
        if receiver.poll(timeout):
            verdict = receiver.recv()
    except EOFError:  # the child died before answering
        verdict = "fail: no output"
    receiver.close()
    child.join(5)
    if child.exitcode is None:
        child.kill()
        child.join()
    if verdict == "fail: no output" and child.exitcode and child.exitcode < 0:
        return verdict, -child.exitcode
    return verdict, 0


# Inputs that carry an op's parameters (shapes, axes, bounds). The node tests
# feed them as graph inputs with test data; real models hold them as
# constants, and Cuvil needs them at compile time, so the runner freezes
# them into initializers from test_data_set_0 before compiling.
PARAMETER_INPUTS = {
    "Reshape": [1], "Expand": [1], "Slice": [1, 2, 3, 4], "Squeeze": [1],
    "Unsqueeze": [1], "Split": [1], "Pad": [1, 2, 3], "ReduceSum": [1],
    "ReduceMean": [1], "ReduceMax": [1], "ReduceMin": [1], "Clip": [1, 2],
    "ConstantOfShape": [0], "Dropout": [1, 2], "Tile": [1], "Trilu": [1],
    "Range": [0, 1, 2], "Resize": [1, 2, 3], "Upsample": [1], "CumSum": [1],
    "OneHot": [1, 2], "HannWindow": [0], "HammingWindow": [0],
    "BlackmanWindow": [0], "ReduceProd": [1], "ReduceL1": [1], "ReduceL2": [1],
    "ReduceLogSum": [1], "ReduceLogSumExp": [1], "ReduceSumSquare": [1],
    "TopK": [1], "MaxUnpool": [2], "DFT": [1], "STFT": [1, 3], "Compress": [1],
    "MelWeightMatrix": [0, 1, 2, 3, 4],
    # A Loop's trip count and first condition: with scan outputs, their
    # length (a scripted `for i in range(n)` exports n and true as
    # constants).
    "Loop": [0, 1],
    # Scales and zero points: a quantized model's constants.
    "QuantizeLinear": [1, 2], "DequantizeLinear": [1, 2],
    "QLinearMatMul": [1, 2, 4, 5, 6, 7], "QLinearConv": [1, 2, 4, 5, 6, 7],
    "ConvInteger": [2, 3], "MatMulInteger": [2, 3],
}


def frozen_positions(model):
    """Positions among the fed graph inputs of the op parameters to freeze."""
    initializers = {t.name for t in model.graph.initializer}
    graph_inputs = [i.name for i in model.graph.input if i.name not in initializers]
    frozen = set()
    for node in model.graph.node:
        for index in PARAMETER_INPUTS.get(node.op_type, []):
            if index < len(node.input) and node.input[index] in graph_inputs:
                frozen.add(graph_inputs.index(node.input[index]))
    return graph_inputs, frozen


def freeze_parameters(case_dir, workdir):
    """Returns (model path, indices of graph inputs still fed at run time).
    A function's `_expanded` case freezes the inputs its op's case does: the
    same graph inputs, now read by the function's body."""
    model = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    graph_inputs, positions = frozen_positions(model)
    base = case_dir.removesuffix("_expanded")
    if base != case_dir and os.path.isdir(base):
        positions |= frozen_positions(
            onnx.load(os.path.join(base, "model.onnx"), load_external_data=False))[1]
    frozen = {graph_inputs[i] for i in positions if i < len(graph_inputs)}
    if not frozen:
        return os.path.join(case_dir, "model.onnx"), list(range(len(graph_inputs)))
    data_set = sorted(glob.glob(os.path.join(case_dir, "test_data_set_*")))[0]
    keep = []
    for position, name in enumerate(graph_inputs):
        if name not in frozen:
            keep.append(position)
            continue
        tensor = onnx.TensorProto()
        with open(os.path.join(data_set, f"input_{position}.pb"), "rb") as f:
            tensor.ParseFromString(f.read())
        tensor.name = name
        model.graph.initializer.append(tensor)
    remaining = [i for i in model.graph.input if i.name not in frozen]
    del model.graph.input[:]
    model.graph.input.extend(remaining)
    path = os.path.join(workdir, os.path.basename(case_dir) + ".onnx")
    onnx.save(model, path)
    return path, keep


# Why an op is left out on purpose; any other unsupported op is not built
# yet (docs/onnx_conformance.md lists each case under the ops it lacks).
LEFT_OUT = {
    **dict.fromkeys(["Adagrad", "Adam", "Momentum", "Gradient"],
                    "training only (optimizer or gradient step)"),
    **dict.fromkeys(["Bernoulli", "RandomUniformLike", "RandomNormalLike",
                     "RandomUniform", "RandomNormal", "Multinomial"],
                    "random sampling: no reproducible reference output"),
    **dict.fromkeys(["SequenceInsert", "SequenceLength", "SequenceMap",
                     "SequenceAt", "SequenceConstruct", "SequenceEmpty",
                     "SequenceErase", "SplitToSequence", "ConcatFromSequence",
                     "OptionalGetElement", "OptionalHasElement", "Optional"],
                    "sequence and optional types (Cuvil's ABI passes tensors)"),
    **dict.fromkeys(["StringNormalizer", "TfIdfVectorizer", "RegexFullMatch"],
                    "string tensors (Cuvil's ABI passes numbers)"),
    **dict.fromkeys(["NonZero", "Unique", "NonMaxSuppression"],
                    "output shapes that depend on the input's values (Cuvil's "
                    "outputs have static shapes, a dynamic batch aside; the "
                    "compile error says so)"),
}

# Why a case fails where Cuvil's behaviour is the intended one, printed
# beside its failure.
WHY_IT_FAILS = {
    **dict.fromkeys(
        ["test_cast_FLOAT_to_BFLOAT16", "test_castlike_FLOAT_to_BFLOAT16",
         "test_castlike_FLOAT_to_BFLOAT16_expanded"],
        "onnx 1.12's expected values truncate float32 to bfloat16; Cuvil "
        "rounds to nearest even, as PyTorch's .to(torch.bfloat16) and "
        "later ONNX releases do"),
    **dict.fromkeys(
        ["test_training_dropout", "test_training_dropout_default",
         "test_training_dropout_mask", "test_training_dropout_default_mask"],
        "training-mode Dropout draws random masks: refused, as the random "
        "sampling ops are left out"),
    **dict.fromkeys(
        ["test_cast_FLOAT_to_STRING", "test_cast_STRING_to_FLOAT",
         "test_castlike_FLOAT_to_STRING", "test_castlike_STRING_to_FLOAT",
         "test_castlike_FLOAT_to_STRING_expanded",
         "test_castlike_STRING_to_FLOAT_expanded"],
        "string tensors, left out as the string ops are"),
    **dict.fromkeys(
        ["test_identity_opt", "test_identity_sequence"],
        "optional and sequence values, left out as their ops are"),
    **dict.fromkeys(
        ["test_reshape_allowzero_reordered", "test_split_zero_size_splits"],
        "tensors with a dimension of size 0: Cuvil's have at least one "
        "element along each dimension (the verifier's error)"),
}


def all_nodes(graph):
    """The nodes of `graph` and of every subgraph they hold (If's branches,
    Loop's and Scan's bodies)."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.HasField("g"):
                yield from all_nodes(attr.g)
            for g in attr.graphs:
                yield from all_nodes(g)


def case_ops(case_dir):
    model = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    return sorted({n.op_type for n in all_nodes(model.graph)}), model


def evaluate(cuvilc, case_dir, supported, workdir):
    name = os.path.basename(case_dir)
    ops, model = case_ops(case_dir)
    op = model.graph.node[0].op_type if model.graph.node else "?"
    missing = [o for o in ops if o not in supported]
    if missing or any(n.domain not in ("", "ai.onnx")
                      for n in all_nodes(model.graph)):
        return name, op, "unsupported", "ops: " + ", ".join(missing)
    so = os.path.join(workdir, name + ".so")
    model_path, fed = freeze_parameters(case_dir, workdir)
    compile_run = subprocess.run(
        [cuvilc, "--quiet", model_path, "-o", so],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    if compile_run.returncode < 0:
        return name, op, "crash", f"cuvilc killed by signal {-compile_run.returncode}"
    if compile_run.returncode != 0:
        return name, op, "fail", compile_run.stdout.strip().splitlines()[0][:300]
    verdict, signal = run_isolated(case_dir, so, fed)
    if signal:
        return name, op, "crash", f"the model killed by signal {signal}"
    if verdict == "pass":
        return name, op, "pass", ""
    return name, op, "fail", verdict


def sample_per_op(cases, count):
    """At most `count` cases of each op, spread evenly over its sorted cases
    (an op's variants sort by feature: axes, dtypes, modes)."""
    by_op = collections.defaultdict(list)
    for case in cases:
        _, model = case_ops(case)
        by_op[model.graph.node[0].op_type if model.graph.node else "?"].append(case)
    chosen = []
    for group in by_op.values():
        if len(group) <= count:
            chosen += group
        else:
            step = (len(group) - 1) / max(count - 1, 1)
            chosen += [group[round(i * step)] for i in range(count)]
    return sorted(set(chosen))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("cuvilc", nargs="?")
    parser.add_argument("node_dir", nargs="?")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--report")
    parser.add_argument("--min-pass-rate", type=float, default=0.0)
    parser.add_argument("--per-op", type=int, default=0)
    parser.add_argument("--title", default="ONNX backend node tests")
    parser.add_argument("--run-case", nargs=3, metavar=("CASE", "SO", "FED"))
    args = parser.parse_args()
    if args.run_case:
        case, so, fed = args.run_case
        verdict = run_case(case, so, [int(i) for i in fed.split(",") if i])
        print(verdict)
        return 0 if verdict == "pass" else 1

    supported = set(subprocess.run([args.cuvilc, "--list-onnx-ops"], check=True,
                                   stdout=subprocess.PIPE, text=True).stdout.split())
    cases = sorted(glob.glob(os.path.join(args.node_dir, "test_*")))
    if args.per_op:
        cases = sample_per_op(cases, args.per_op)
    workdir = tempfile.mkdtemp(prefix="cuvil-node-")
    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(
                lambda c: evaluate(args.cuvilc, c, supported, workdir), cases))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    per_op = collections.defaultdict(collections.Counter)
    for _, op, verdict, _ in results:
        per_op[op][verdict] += 1
    totals = collections.Counter(v for _, _, v, _ in results)
    considered = totals["pass"] + totals["fail"] + totals["crash"]
    rate = totals["pass"] / considered if considered else 0.0
    lines = [f"# {args.title}", "",
             f"{len(results)} cases: {totals['pass']} pass, {totals['fail']} fail, "
             f"{totals['crash']} crash, {totals['unsupported']} unsupported. "
             f"Pass rate over cases whose ops Cuvil supports: {100 * rate:.1f}%.", "",
             "| op | pass | fail | unsupported |", "| --- | --- | --- | --- |"]
    for op in sorted(per_op):
        c = per_op[op]
        lines.append(f"| {op} | {c['pass']} | {c['fail'] + c['crash']} | {c['unsupported']} |")
    lines += ["", "## Failures", ""]
    lines += [f"- `{name}` ({verdict}): {detail}" +
              (f" ({WHY_IT_FAILS[name]})" if name in WHY_IT_FAILS else "")
              for name, _, verdict, detail in results
              if verdict in ("fail", "crash")]
    # Every unsupported case under the ops it lacks, with why they are out.
    lacking = collections.defaultdict(list)
    for name, _, verdict, detail in results:
        if verdict == "unsupported":
            lacking[detail.removeprefix("ops: ") or "(another domain)"].append(name)
    lines += ["", "## Unsupported", "",
              "Cases that use an op Cuvil does not compile, by the ops they lack. "
              "Left out on purpose: " + "; ".join(
                  f"{reason} ({', '.join(sorted(o for o in LEFT_OUT if LEFT_OUT[o] == reason))})"
                  for reason in dict.fromkeys(LEFT_OUT.values())) +
              ". Every other op here is not built yet.", ""]
    for ops in sorted(lacking):
        cases = lacking[ops]
        lines.append(f"- {ops} ({len(cases)}): " + ", ".join(f"`{c}`" for c in cases))
    report = "\n".join(lines) + "\n"
    if args.report:
        with open(args.report, "w") as f:
            f.write(report)
    print(report)
    print(f"pass rate {100 * rate:.1f}% (minimum {100 * args.min_pass_rate:.1f}%), "
          f"{totals['crash']} crashes")
    return 0 if totals["crash"] == 0 and rate >= args.min_pass_rate else 1


if __name__ == "__main__":
    sys.exit(main())
