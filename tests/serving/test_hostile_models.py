"""cuvil-serve against hostile or broken model files (issue 18): symlinks out
of the repository, truncated and half-uploaded model.so files (explicit
loads, and poll mode catching an upload in progress), a model compiled for a
batch of 2^31 - 1 or 2^63 - 1 rows, and a recorded SHA-256. The server is
the real binary; /v2/health/live and gRPC ServerLive are asked throughout
every attack."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import serving_models
from conftest import CUVILC, LiveWatch, build_stub, install, make_repository


def x_input(x):
    return [{"name": "x", "datatype": "FP32", "shape": list(x.shape), "data": x.ravel().tolist()}]


def wait_for(predicate, timeout=60, what="condition"):
    deadline = time.time() + timeout
    while not predicate():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def index_of(server):
    status, index = server.post_json("/v2/repository/index", {})
    assert status == 200
    return {entry["name"]: entry for entry in index}


@pytest.fixture(scope="module")
def extra_models(tmp_path_factory):
    """MLPs compiled for huge batches and with external weights."""
    out = tmp_path_factory.mktemp("hostile-models")
    return {
        "huge31": serving_models.build_mlp(CUVILC, out, "huge31", ["--max-batch=2147483647"]),
        "huge63": serving_models.build_mlp(CUVILC, out, "huge63",
                                           ["--max-batch=9223372036854775807"]),
        "external": serving_models.build_mlp(CUVILC, out, "external",
                                             ["--max-batch=8", "--external-weights"]),
    }


def test_links_out_of_the_repository_are_refused(models, extra_models, tmp_path, start_server):
    outside = tmp_path / "outside"
    outside.mkdir()
    marker = tmp_path / "constructor-ran"
    # A library outside whose constructor would leave a marker if it ran.
    runs = build_stub(outside, "runs", '{"abi_version": 1, "inputs": [], "outputs": []}',
                      constructor_marker=marker)
    make_repository(outside, models, {"away": [(1, "mlp")]})
    (outside / "config.json").write_text(json.dumps({"instance_count": 2}))
    ext = extra_models["external"].so
    shutil.copyfile(ext.with_suffix(".weights.bin"), outside / "model.weights.bin")

    repo = make_repository(tmp_path / "repo", models, {
        "plain": [(1, "mlp")], "sofile": [(1, "mlp")], "config": [(1, "mlp")]})
    (repo / "folder").symlink_to(outside / "away")                # the model folder
    (repo / "version").mkdir()
    (repo / "version" / "1").symlink_to(outside / "away" / "1")   # a version folder
    (repo / "sofile" / "1" / "model.so").unlink()
    (repo / "sofile" / "1" / "model.so").symlink_to(runs)          # model.so itself
    (repo / "config" / "config.json").symlink_to(outside / "config.json")
    (repo / "weights" / "1").mkdir(parents=True)
    shutil.copyfile(ext, repo / "weights" / "1" / "model.so")
    (repo / "weights" / "1" / "model.weights.bin").symlink_to(outside / "model.weights.bin")
    # Links that stay inside are fine, and so is a repository that is a link.
    (repo / "alias").symlink_to(repo / "plain")
    (tmp_path / "repo-link").symlink_to(repo)

    server = start_server(tmp_path / "repo-link", wait_ready=False)
    index = index_of(server)
    real_repo = str(repo.resolve())
    for name, path in [("folder", "folder"), ("version", "version/1"),
                       ("sofile", "sofile/1/model.so"), ("config", "config/config.json"),
                       ("weights", "weights/1/model.weights.bin")]:
        assert index[name]["state"] == "UNAVAILABLE", index[name]
        reason = index[name]["reason"]
        assert f"{path} resolves to " in reason, reason
        assert f"outside the repository {real_repo}" in reason, reason
        assert "follows no link out of its repository" in reason, reason
    assert index["plain"]["state"] == "READY" and index["alias"]["state"] == "READY"
    assert server.infer("alias", x_input(np.ones((1, 16), np.float32)))[0] == 200
    status, body = server.get("/v2/health/ready")
    assert status == 400 and "resolves to" in json.loads(body)["error"]
    assert not marker.exists(), "a library outside the repository ran its constructor"

    # An explicit load answers the same reason.
    explicit = start_server(repo, "--model-control-mode=explicit", "--allow-repository-control",
                            "--load-model=plain")
    status, body = explicit.post_json("/v2/repository/models/sofile/load", {})
    assert status == 400 and "sofile/1/model.so resolves to " in body["error"], body
    assert not marker.exists()
    # The same external-weights model with its weights inside loads.
    (repo / "weights" / "1" / "model.weights.bin").unlink()
    shutil.copyfile(ext.with_suffix(".weights.bin"), repo / "weights" / "1" / "model.weights.bin")
    status, body = explicit.post_json("/v2/repository/models/weights/load", {})
    assert status == 200, body
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(2, 16)
    status, body = explicit.infer("weights", x_input(x))
    assert status == 200
    np.testing.assert_allclose(np.array(body["outputs"][0]["data"]).reshape(2, 8),
                               extra_models["external"].reference({"x": x})["y"],
                               rtol=1e-5, atol=1e-5)


def test_truncated_model_files_are_refused_while_the_old_version_serves(models, tmp_path,
                                                                        start_server):
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    server = start_server(repo, "--model-control-mode=explicit", "--allow-repository-control",
                          "--load-model=mlp")
    whole = models["mlp_v2"].so.read_bytes()
    x = np.ones((1, 16), np.float32)
    with LiveWatch(server):
        for length in [0, 1, 4, 63, 64, 200, 4096, len(whole) // 3, len(whole) // 2,
                       len(whole) - 64, len(whole) - 1]:
            (repo / "mlp" / "2").mkdir(exist_ok=True)
            (repo / "mlp" / "2" / "model.so").write_bytes(whole[:length])
            status, body = server.post_json("/v2/repository/models/mlp/load", {})
            assert status == 400, (length, body)
            expected = "is empty" if length == 0 else "is truncated"
            assert f"model 'mlp' version 2: {repo}/mlp/2/model.so {expected}" in body["error"], \
                (length, body["error"])
            if length > 64:
                assert "was the upload complete?" in body["error"]
            status, body = server.infer("mlp", x_input(x))
            assert status == 200 and body["model_version"] == "1"
        (repo / "mlp" / "2" / "model.so").write_bytes(whole)
        status, body = server.post_json("/v2/repository/models/mlp/load", {})
        assert status == 200, body
        assert server.infer("mlp", x_input(x))[1]["model_version"] == "2"


SLOW_WRITER = r"""
import sys, time
source, target, chunks, pause, stall_at, stall = sys.argv[1:7]
data = open(source, "rb").read()
chunks, pause, stall_at, stall = int(chunks), float(pause), int(stall_at), float(stall)
step = -(-len(data) // chunks)
last, gap = time.time(), 0.0
with open(target, "wb") as out:
    for i in range(chunks):
        out.write(data[i * step:(i + 1) * step])
        out.flush()
        now = time.time()
        gap, last = max(gap, now - last), now
        time.sleep(stall if i == stall_at else pause)
print(gap)
"""


def slow_write(source, target, chunks, pause, stall_at=-1, stall=0.0):
    """Writes `source` over `target` in place, chunk by chunk (an upload)."""
    return subprocess.Popen([sys.executable, "-c", SLOW_WRITER, str(source), str(target),
                             str(chunks), str(pause), str(stall_at), str(stall)],
                            stdout=subprocess.PIPE, text=True)


def test_poll_mode_waits_for_an_upload_to_end(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    server = start_server(repo, "--model-control-mode=poll", "--repository-poll-secs=1")
    x = np.ones((2, 16), np.float32)
    served, failures = [], []
    stop = threading.Event()

    def client():
        while not stop.is_set():
            status, body = server.infer("mlp", x_input(x))
            if status != 200:
                failures.append((status, body))
            else:
                served.append((time.time(), body["model_version"]))
            time.sleep(0.02)

    thread = threading.Thread(target=client)
    (repo / "mlp" / "2").mkdir()
    with LiveWatch(server):
        thread.start()
        try:
            # ~6 s of writing, a chunk every 0.15 s: every scan sees it change.
            writer = slow_write(models["mlp_v2"].so, repo / "mlp" / "2" / "model.so", 40, 0.15)
            longest_gap = float(writer.communicate(timeout=120)[0])
            assert writer.returncode == 0
            finished = time.time()
            wait_for(lambda: served and served[-1][1] == "2", what="version 2 to load")
        finally:
            stop.set()
            thread.join()
    assert failures == []
    # While the file kept changing between scans (the writer never paused
    # for a whole poll interval), the server did not even try to load it.
    if longest_gap < 0.9:
        assert "failed to load" not in server.output()
    # Nothing answered from version 2 before its file was whole.
    assert all(when > finished for when, version in served if version == "2")
    assert sum(version == "1" for _, version in served) > 0


def test_poll_mode_refuses_a_stalled_upload_then_loads_it_whole(models, tmp_path,
                                                                start_server):
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    server = start_server(repo, "--model-control-mode=poll", "--repository-poll-secs=1")
    (repo / "mlp" / "2").mkdir()
    with LiveWatch(server):
        # Half the file, then a stall longer than two scans: the server sees a
        # stable, truncated file, refuses it and keeps version 1.
        writer = slow_write(models["mlp_v2"].so, repo / "mlp" / "2" / "model.so", 4, 0.05,
                            stall_at=1, stall=6.0)
        wait_for(lambda: "failed to load (the serving versions stay)" in server.output(),
                 what="the truncated version to be refused")
        assert "is truncated or corrupt" in server.output()
        status, body = server.infer("mlp", x_input(np.ones((1, 16), np.float32)))
        assert status == 200 and body["model_version"] == "1"
        writer.communicate(timeout=120)
        assert writer.returncode == 0
        wait_for(lambda: server.infer("mlp", x_input(np.ones((1, 16), np.float32)))[1]
                 ["model_version"] == "2", what="the whole version 2 to load")


def test_huge_compiled_batches_are_capped_and_allocated_by_the_actual_batch(
        models, extra_models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", extra_models, {
        "huge31": {"versions": [(1, "huge31")],
                   "config": {"dynamic_batching": {"max_queue_delay_microseconds": 200000}}},
        "huge63": {"versions": [(1, "huge63")], "config": {"max_batch_size": 16}}})
    server = start_server(repo, "--max-batch-size=64", "--model-control-mode=explicit",
                          "--allow-repository-control", "--load-model=*")
    reference = extra_models["huge31"].reference
    with LiveWatch(server):
        assert json.loads(server.get("/v2/models/huge31/config")[1])["max_batch_size"] == 64
        assert json.loads(server.get("/v2/models/huge63/config")[1])["max_batch_size"] == 16
        assert "compiled for batches up to 2147483647; it serves up to 64 (--max-batch-size)" in \
            server.output()
        rng = np.random.default_rng(7)
        for rows in (1, 8, 64):
            x = rng.standard_normal((rows, 16)).astype(np.float32)
            status, body = server.infer("huge31", x_input(x))
            assert status == 200, body
            np.testing.assert_allclose(np.array(body["outputs"][0]["data"]).reshape(rows, 8),
                                       reference({"x": x})["y"], rtol=1e-5, atol=1e-5)
        status, body = server.infer("huge31", x_input(np.ones((65, 16), np.float32)))
        assert status == 400 and "batch 65 is outside 1..64" in body["error"]
        status, body = server.infer("huge63", x_input(np.ones((17, 16), np.float32)))
        assert status == 400 and "batch 17 is outside 1..16" in body["error"]
        # Concurrent requests merge into batches of up to 64 rows.
        before = server.metrics()
        inputs = [rng.standard_normal((8, 16)).astype(np.float32) for _ in range(8)]
        results = [None] * len(inputs)

        def send(i):
            results[i] = server.infer("huge31", x_input(inputs[i]))

        threads = [threading.Thread(target=send, args=(i,)) for i in range(len(inputs))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for x, (status, body) in zip(inputs, results):
            assert status == 200, body
            np.testing.assert_allclose(np.array(body["outputs"][0]["data"]).reshape(8, 8),
                                       reference({"x": x})["y"], rtol=1e-5, atol=1e-5)
        key = 'cuvil_inference_exec_count{model="huge31",version="1"}'
        assert server.metrics()[key] - before[key] < len(inputs)
        # A config may lower the cap, never raise it.
        status, body = server.post_json("/v2/repository/models/huge31/load",
                                        {"parameters": {"config": {"max_batch_size": 65}}})
        assert status == 400
        assert "max_batch_size 65 is above the server's maximum of 64 (--max-batch-size)" in \
            body["error"]
    # 128 GiB would have been 2^31 rows of x; the server never came near.
    assert server.peak_rss_kib() < 1 << 20


def test_the_default_cap_serves_a_batch_of_65536_rows(extra_models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", extra_models, {"huge63": [(1, "huge63")]})
    server = start_server(repo)
    assert json.loads(server.get("/v2/models/huge63/config")[1])["max_batch_size"] == 65536
    x = np.random.default_rng(8).standard_normal((65536, 16)).astype(np.float32)
    header = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [65536, 16],
                                     "parameters": {"binary_data_size": x.nbytes}}],
                         "parameters": {"binary_data_output": True}}).encode()
    status, body, headers = server.request(
        "POST", "/v2/models/huge63/infer", header + x.tobytes(),
        {"Inference-Header-Content-Length": str(len(header))})
    assert status == 200, body[:300]
    length = int(headers["Inference-Header-Content-Length"])
    y = np.frombuffer(body[length:length + 65536 * 8 * 4], np.float32).reshape(65536, 8)
    np.testing.assert_allclose(y[::997], extra_models["huge63"].reference({"x": x[::997]})["y"],
                               rtol=1e-5, atol=1e-5)


def test_a_recorded_sha256_must_match(models, tmp_path, start_server):
    digest = hashlib.sha256(models["mlp"].so.read_bytes()).hexdigest()
    wrong = hashlib.sha256(b"something else").hexdigest()
    repo = make_repository(tmp_path / "repo", models, {
        "good": {"versions": [(1, "mlp")], "config": {"sha256": digest.upper()}},
        "each": {"versions": [(1, "mlp"), (2, "mlp_v2")],
                 "config": {"version_policy": {"all": {}}, "sha256": {"1": digest}}},
        "bad": {"versions": [(1, "mlp")], "config": {"sha256": wrong}},
        "badversion": {"versions": [(1, "mlp"), (2, "mlp_v2")],
                       "config": {"version_policy": {"all": {}},
                                  "sha256": {"1": digest, "2": digest}}}})
    server = start_server(repo, wait_ready=False)
    index = index_of(server)
    assert index["good"]["state"] == "READY"
    assert index["each"]["state"] == "READY"  # version 2 records no hash
    assert index["bad"]["state"] == "UNAVAILABLE"
    assert f"has SHA-256 {digest}, not the {wrong} its config records" in \
        index["bad"]["reason"]
    assert "model 'badversion' version 2: " in index["badversion"]["reason"]
    assert "its config records" in index["badversion"]["reason"]
