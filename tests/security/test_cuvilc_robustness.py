"""cuvilc under hostile or unlucky conditions (issue #18): outputs checked
before the compile, a toolchain failure explained, a signal during the
build leaving nothing behind, and a 20,000-node graph compiling in pieces."""

import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
CLASSIFIER = ROOT / "examples" / "classifier.mlir"


def cuvilc(*args, cwd, env=None, check=False):
    assert CUVILC.exists(), "build //tools:cuvilc first (scripts/test does)"
    return subprocess.run([str(CUVILC), *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, check=check)


def fake_clang(tmp_path, body):
    """A stand-in for clang (CUVIL_CLANG) running the shell `body`."""
    script = tmp_path / "fake-clang"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    env = dict(os.environ, CUVIL_CLANG=str(script), TMPDIR=str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return env


def test_an_output_folder_is_refused_before_anything_is_written(tmp_path):
    (tmp_path / "out").mkdir()
    result = cuvilc(CLASSIFIER, "-o", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert "cannot write 'out': it is a folder; give a file name inside it" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no out.h


def test_a_missing_output_folder_is_found_before_the_compile(tmp_path):
    result = cuvilc(CLASSIFIER, "-o", "no/such/m.so", cwd=tmp_path)
    assert result.returncode == 1
    assert "the folder 'no/such' does not exist; create it first" in result.stderr
    assert "[1/" not in result.stderr  # not one stage ran
    result = cuvilc(CLASSIFIER, "--emit=c", "-o", "no/m.c", cwd=tmp_path)
    assert "the folder 'no' does not exist" in result.stderr


def test_a_crashing_compiler_is_reported_with_its_command(tmp_path):
    env = fake_clang(tmp_path, "kill -SEGV $$\n")
    result = cuvilc(CLASSIFIER, "-o", "m.so", cwd=tmp_path, env=env)
    assert result.returncode == 1
    assert "compiling the model failed: " in result.stderr
    assert "was killed by signal 11 (Segmentation fault)" in result.stderr
    assert re.search(r"Command \(in .*\): .*fake-clang .* model\.c -o model\.o", result.stderr)
    assert "(it printed nothing)" in result.stderr
    assert not (tmp_path / "m.so").exists() and not (tmp_path / "m.h").exists()
    assert list((tmp_path / "tmp").iterdir()) == []  # the build folder is gone


def test_a_failing_compiler_shows_what_it_printed(tmp_path):
    env = fake_clang(tmp_path, 'echo "model.c:1:1: error: out of cheese" >&2\nexit 3\n')
    result = cuvilc(CLASSIFIER, "-o", "m.so", cwd=tmp_path, env=env)
    assert "fake-clang exited with status 3" in result.stderr
    assert "model.c:1:1: error: out of cheese" in result.stderr
    # CUVIL_KEEP_BUILD_DIR keeps the sources for a rerun by hand.
    env["CUVIL_KEEP_BUILD_DIR"] = "1"
    cuvilc(CLASSIFIER, "-o", "m.so", cwd=tmp_path, env=env)
    kept = list((tmp_path / "tmp").iterdir())
    assert len(kept) == 1 and (kept[0] / "model.c").exists()


def process_gone(pid):
    """Whether `pid` has exited (a zombie waiting for its reaper counts)."""
    try:
        status = pathlib.Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_the_build_leaves_nothing_behind(tmp_path, sig):
    # The fake compiler starts a grandchild and waits: an orphan if cuvilc
    # only died.
    pid_file = tmp_path / "grandchild.pid"
    env = fake_clang(tmp_path, f"sleep 600 &\necho $! > {pid_file}\nwait\n")
    process = subprocess.Popen([str(CUVILC), "--quiet", str(CLASSIFIER), "-o", "m.so"],
                               cwd=tmp_path, env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    grandchild = int(pid_file.read_text())
    assert len(list((tmp_path / "tmp").iterdir())) == 1  # the build folder
    process.send_signal(sig)
    assert process.wait(timeout=60) == -sig  # ended by the same signal
    while not process_gone(grandchild):
        assert time.monotonic() < deadline, "the compiler's child survived"
        time.sleep(0.05)
    assert list((tmp_path / "tmp").iterdir()) == []
    assert not (tmp_path / "m.so").exists()


def chain_model(path, length):
    """Softmax and Relu alternating, `length` nodes: nothing to fuse away."""
    from onnx import TensorProto, helper
    nodes, previous = [], "x"
    for i in range(length):
        op = "Softmax" if i % 2 == 0 else "Relu"
        attrs = {"axis": 1} if op == "Softmax" else {}
        nodes.append(helper.make_node(op, [previous], [f"v{i}"], name=f"n{i}", **attrs))
        previous = f"v{i}"
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [4, 4])], [helper.make_tensor_value_info(
            previous, TensorProto.FLOAT, [4, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    path.write_bytes(model.SerializeToString())


def test_a_20000_node_chain_compiles_in_bounded_functions(tmp_path):
    # It took 83 s and then crashed clang in one 20,000-op function; the
    # run function is now parts of at most 64 ops (about 25 s here).
    chain_model(tmp_path / "chain.onnx", 20000)
    cuvilc("--quiet", "chain.onnx", "--emit=c", "-o", "chain.c", cwd=tmp_path, check=True)
    source = (tmp_path / "chain.c").read_text()
    parts = re.findall(r"static CUVIL_NOINLINE int cuvil_run_part\d+\(.*?\n}\n", source,
                       re.S)
    assert len(parts) == 20000 // 64 + 1
    assert max(part.count("/* ") for part in parts) <= 64
    cuvilc("--quiet", "chain.onnx", "-o", "chain.so", cwd=tmp_path, check=True)
    import ctypes
    import numpy as np
    lib = ctypes.CDLL(str(tmp_path / "chain.so"))
    lib.cuvil_model_workspace_size.restype = ctypes.c_size_t
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    y = np.zeros((4, 4), np.float32)
    ws = np.zeros(lib.cuvil_model_workspace_size() + 64, np.uint8)
    assert lib.cuvil_model_run(ctypes.c_int64(0), (ctypes.c_void_p * 1)(x.ctypes.data),
                               (ctypes.c_void_p * 1)(y.ctypes.data),
                               ctypes.c_void_p(ws.ctypes.data), ctypes.c_size_t(ws.size)) == 0
    reference = x.astype(np.float64)
    for i in range(20000):
        if i % 2 == 0:
            e = np.exp(reference - reference.max(axis=1, keepdims=True))
            reference = e / e.sum(axis=1, keepdims=True)
        else:
            reference = np.maximum(reference, 0)
    np.testing.assert_allclose(y, reference, rtol=1e-5, atol=1e-6)
