"""cuvil-serve's model lifecycle: control modes, version policies, hot reload
under load (zero failed requests), failed loads that leave the old version
serving, run-time config changes, dynamic batching, SIGTERM draining, and
the command line."""

import json
import shutil
import subprocess
import threading
import time

import grpc
import numpy as np
import pytest

import grpc_predict_v2_pb2 as pb
from conftest import SERVE, build_stub, install, make_repository

def x_input(x):
    return [{"name": "x", "datatype": "FP32", "shape": list(x.shape), "data": x.ravel().tolist()}]


def wait_for(predicate, timeout=20, what="condition"):
    deadline = time.time() + timeout
    while not predicate():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_no_models_is_live_but_not_ready(tmp_path, start_server):
    (tmp_path / "repo").mkdir()
    server = start_server(tmp_path / "repo", wait_ready=False)
    status, body = server.get("/v2/health/ready")
    assert status == 400 and "no model is loaded" in json.loads(body)["error"]
    assert server.get("/v2/health/live")[0] == 200
    assert not server.grpc_stub().ServerReady(pb.ServerReadyRequest()).ready


def test_explicit_mode_load_unload_index(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")],
                                                       "typed": [(1, "typed")]})
    server = start_server(repo, "--model-control-mode=explicit", "--allow-repository-control",
                          "--load-model=mlp")
    status, index = server.post_json("/v2/repository/index", {})
    assert status == 200
    assert index == [{"name": "mlp", "version": "1", "state": "READY"},
                     {"name": "typed", "state": "UNAVAILABLE", "reason": "not loaded"}]
    assert server.post_json("/v2/repository/index", {"ready": True})[1] == [index[0]]
    assert server.get("/v2/models/typed/ready")[0] == 400
    assert server.post_json("/v2/repository/models/typed/load", {})[0] == 200
    assert server.get("/v2/models/typed/ready")[0] == 200
    assert server.post_json("/v2/repository/models/mlp/unload", {})[0] == 200
    status, body = server.infer("mlp", x_input(np.zeros((1, 16), np.float32)))
    assert status == 404 and "not loaded" in body["error"]
    # Readiness follows what is configured: typed only, loaded.
    assert server.get("/v2/health/ready")[0] == 200
    status, body = server.post_json("/v2/repository/models/mlp/unload", {})
    assert status == 404 and "is not loaded" in body["error"]
    status, body = server.post_json("/v2/repository/models/../load", {})
    assert status in (400, 404)
    status, body = server.post_json("/v2/repository/models/ghost/load", {})
    assert status == 404 and "no model 'ghost' in the repository" in body["error"]


def test_reload_under_load_loses_nothing(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    server = start_server(repo, "--model-control-mode=explicit", "--allow-repository-control",
                          "--load-model=*")
    stop = threading.Event()
    failures, counts, lock = [], {"1": 0, "2": 0}, threading.Lock()
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 16)).astype(np.float32)
    expected = {"1": models["mlp"].reference({"x": x})["y"],
                "2": models["mlp_v2"].reference({"x": x})["y"]}

    def check(version, y):
        if not np.allclose(y, expected[version], rtol=1e-5, atol=1e-5):
            failures.append(f"version {version} answered wrong values")
        with lock:
            counts[version] += 1

    def rest_client():
        while not stop.is_set():
            status, body = server.infer("mlp", x_input(x), outputs=[{"name": "y"}])
            if status != 200:
                failures.append(f"REST {status}: {body}")
                continue
            check(body["model_version"], np.array(body["outputs"][0]["data"]).reshape(2, 8))

    def grpc_client():
        stub = server.grpc_stub()
        while not stop.is_set():
            request = pb.ModelInferRequest(model_name="mlp")
            request.inputs.add(name="x", datatype="FP32", shape=[2, 16])
            request.raw_input_contents.append(x.tobytes())
            try:
                response = stub.ModelInfer(request)
            except grpc.RpcError as error:
                failures.append(f"gRPC {error.code()}: {error.details()}")
                continue
            check(response.model_version,
                  np.frombuffer(response.raw_output_contents[0], np.float32).reshape(2, 8))

    threads = [threading.Thread(target=rest_client) for _ in range(3)]
    threads += [threading.Thread(target=grpc_client) for _ in range(2)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(0.5)
        install(repo, "mlp", 2, models["mlp_v2"].so)
        status, body = server.post_json("/v2/repository/models/mlp/load", {})
        assert status == 200, body
        time.sleep(0.3)
        # Batching and threads changed at run time, twice, under the same load.
        for config in ({"max_batch_size": 4, "instance_count": 2, "threads": 1,
                        "dynamic_batching": {"max_queue_delay_microseconds": 300}},
                       {"max_batch_size": 8, "instance_count": 1, "threads": 2}):
            status, body = server.post_json("/v2/repository/models/mlp/load",
                                            {"parameters": {"config": json.dumps(config)}})
            assert status == 200, body
            assert json.loads(server.get("/v2/models/mlp/config")[1])["max_batch_size"] == \
                config["max_batch_size"]
            time.sleep(0.3)
        # A corrupt version 3: the load fails and explains, version 2 serves on.
        (repo / "mlp" / "3").mkdir()
        (repo / "mlp" / "3" / "model.so").write_bytes(b"\x7fELF not really")
        status, body = server.post_json("/v2/repository/models/mlp/load", {})
        assert status == 400, body
        assert "model 'mlp' version 3: " in body["error"]
        assert "model.so is truncated: its 15 bytes are shorter than an ELF header" in \
            body["error"]
        time.sleep(0.3)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert failures == []
    assert counts["1"] > 0 and counts["2"] > 0, counts
    status, body = server.infer("mlp", x_input(x))
    assert status == 200 and body["model_version"] == "2"
    status, index = server.post_json("/v2/repository/index", {})
    assert index == [{"name": "mlp", "version": "2", "state": "READY"}]


def test_abi_mismatch_and_foreign_so(models, tmp_path, start_server):
    stubs = {
        # The note says version 2: refused before loading.
        "abi2": build_stub(tmp_path, "abi2", '{"abi_version": 2, "inputs": [], "outputs": []}',
                           note_version=2),
        # The note says 1, the metadata 2: the two must agree.
        "meta2": build_stub(tmp_path, "meta2", '{"abi_version": 2, "inputs": [], "outputs": []}'),
        "nometa": build_stub(tmp_path, "nometa", "not json"),
        "nonote": build_stub(tmp_path, "nonote", '{"abi_version": 1}', note=False),
        # Integer I/O's scale must be positive.
        "badquant": build_stub(tmp_path, "badquant", json.dumps({
            "abi_version": 1, "outputs": [], "inputs": [{
                "name": "x", "dtype": "uint8", "shape": [-1, 4],
                "quantization": {"scale": -1, "zero_point": 0}}]})),
    }
    foreign = tmp_path / "foreign.c"
    foreign.write_text("int answer(void) { return 42; }\n")
    stubs["foreign"] = tmp_path / "foreign.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(stubs["foreign"]), str(foreign)],
                   check=True)
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    server = start_server(repo, "--model-control-mode=explicit", "--allow-repository-control",
                          "--load-model=mlp")
    for stub, message in [("abi2", "was built for C ABI version 2, this program speaks version 1"),
                          ("meta2", "built for C ABI version 2, this server speaks version 1"),
                          ("nometa", "its metadata is not JSON"),
                          ("badquant", "tensor 'x' has a bad quantization (a positive "
                                       "scale and an integer zero point)"),
                          ("nonote", "has no Cuvil ABI note (section .note.cuvil): built by an "
                                     "older cuvilc? Rebuild it"),
                          ("foreign", "is not a Cuvil model: it exports none of the C ABI "
                                      "functions")]:
        install(repo, "mlp", 2, stubs[stub])
        status, body = server.post_json("/v2/repository/models/mlp/load", {})
        assert status == 400 and message in body["error"], (stub, body)
        status, body = server.infer("mlp", x_input(np.ones((1, 16), np.float32)))
        assert status == 200 and body["model_version"] == "1"


def test_version_policy_and_bad_config(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {
        "mlp": {"versions": [(1, "mlp"), (2, "mlp_v2")],
                "config": {"version_policy": {"all": {}}}},
        "typed": {"versions": [(1, "typed")], "config": {"max_batch_sise": 4}}})
    server = start_server(repo, wait_ready=False)
    x = np.ones((1, 16), np.float32)
    assert server.infer("mlp", x_input(x))[1]["model_version"] == "2"
    assert server.infer("mlp", x_input(x), version="1")[1]["model_version"] == "1"
    assert json.loads(server.get("/v2/models/mlp")[1])["versions"] == ["1", "2"]
    # The typo in typed's config keeps it out, and says why.
    status, body = server.get("/v2/health/ready")
    assert status == 400
    error = json.loads(body)["error"]
    assert "model 'typed' is not loaded" in error
    assert "config.json: unknown field 'max_batch_sise'" in error
    index = server.post_json("/v2/repository/index", {})[1]
    assert index[-1]["state"] == "UNAVAILABLE" and "max_batch_sise" in index[-1]["reason"]


def test_config_above_compiled_batch(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    server = start_server(repo, "--model-control-mode=explicit", "--allow-repository-control",
                          "--load-model=mlp")
    status, body = server.post_json("/v2/repository/models/mlp/load",
                                    {"parameters": {"config": {"max_batch_size": 16}}})
    assert status == 400
    assert "max_batch_size 16 is above the maximum batch 8" in body["error"]
    status, body = server.post_json("/v2/repository/models/mlp/load",
                                    {"parameters": {"config": {"max_batch_size": 2}}})
    assert status == 200
    status, body = server.infer("mlp", x_input(np.ones((3, 16), np.float32)))
    assert status == 400 and "batch 3 is outside 1..2" in body["error"]


def test_poll_mode_follows_the_repository(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    server = start_server(repo, "--model-control-mode=poll", "--repository-poll-secs=1")
    status, body = server.post_json("/v2/repository/models/mlp/load", {})
    assert status == 400 and "needs --model-control-mode=explicit and " \
        "--allow-repository-control" in body["error"]
    make_repository(repo, models, {"typed": [(1, "typed")]})
    wait_for(lambda: server.get("/v2/models/typed/ready")[0] == 200, what="typed to load")
    install(repo, "mlp", 2, models["mlp_v2"].so)
    x = np.ones((1, 16), np.float32)
    wait_for(lambda: server.infer("mlp", x_input(x))[1]["model_version"] == "2",
             what="mlp version 2")
    shutil.move(str(repo / "typed"), str(tmp_path / "typed-away"))
    wait_for(lambda: server.get("/v2/models/typed/ready")[0] == 400, what="typed to unload")
    assert server.get("/v2/health/ready")[0] == 200
    # The same folder back, files untouched: loaded again.
    shutil.move(str(tmp_path / "typed-away"), str(repo / "typed"))
    wait_for(lambda: server.get("/v2/models/typed/ready")[0] == 200, what="typed to reload")


def test_dynamic_batching_merges_concurrent_requests(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {
        "mlp": {"versions": [(1, "mlp")],
                "config": {"dynamic_batching": {"max_queue_delay_microseconds": 300000}}}})
    server = start_server(repo)
    before = server.metrics()
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal((1 + i % 2, 16)).astype(np.float32) for i in range(6)]
    results = [None] * len(inputs)

    def send(i):
        results[i] = server.infer("mlp", x_input(inputs[i]))

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(inputs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for x, (status, body) in zip(inputs, results):
        assert status == 200
        np.testing.assert_allclose(np.array(body["outputs"][0]["data"]).reshape(len(x), 8),
                                   models["mlp"].reference({"x": x})["y"], rtol=1e-5, atol=1e-5)
    after = server.metrics()
    key = '{model="mlp",version="1"}'
    rows = sum(len(x) for x in inputs)
    executions = after["cuvil_inference_exec_count" + key] - before.get(
        "cuvil_inference_exec_count" + key, 0)
    assert after["cuvil_inference_count" + key] - before.get("cuvil_inference_count" + key, 0) \
        == rows
    # 9 rows in at most 8-row batches, all sent within the 300 ms window.
    assert 2 <= executions <= 3, executions
    assert after["cuvil_inference_queue_duration_us" + key] > 0


def test_sigterm_drains_in_flight_requests(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {
        "mlp": {"versions": [(1, "mlp")],
                "config": {"dynamic_batching": {"max_queue_delay_microseconds": 1500000}}}})
    server = start_server(repo)
    result = {}
    thread = threading.Thread(
        target=lambda: result.update(answer=server.infer("mlp", x_input(np.ones((1, 16),
                                                                                 np.float32)))))
    thread.start()
    time.sleep(0.4)  # the request now waits in the batch queue
    server.proc.terminate()
    wait_for(lambda: server.get("/v2/health/ready")[0] == 400, timeout=5, what="not ready")
    status, body = server.infer("mlp", x_input(np.ones((1, 16), np.float32)))
    assert status == 503 and "shutting down" in body["error"]
    thread.join()
    assert result["answer"][0] == 200
    assert server.proc.wait(timeout=20) == 0
    assert "SIGTERM: not ready; finishing in-flight requests" in server.output()


def test_command_line(tmp_path):
    run = subprocess.run([SERVE, "--help"], capture_output=True, text=True)
    assert run.returncode == 0
    assert "--model-control-mode" in run.stdout and "--load-model" in run.stdout
    for flag in ("--http-address", "--grpc-address", "--allow-repository-control",
                 "--http-request-timeout-secs", "--max-inflight-bytes", "--http-tls-cert",
                 "--grpc-tls-cert", "--max-total-threads"):
        assert flag in run.stdout, flag
    for args, code, message in [
            ([], 2, "--model-repository is required"),
            ([f"--model-repository={tmp_path}", "--model-control-mode=sometimes"], 2,
             "none, explicit or poll"),
            ([f"--model-repository={tmp_path}", "--load-model=a"], 2,
             "--load-model needs --model-control-mode=explicit"),
            ([f"--model-repository={tmp_path}", "--max-inflight-bytes=1000",
              "--http-max-body-bytes=2000"], 2,
             "--max-inflight-bytes (1000) must be at least --http-max-body-bytes (2000)"),
            ([f"--model-repository={tmp_path}", "--http-request-timeout-secs=0"], 2,
             "--http-request-timeout-secs must be positive"),
            ([f"--model-repository={tmp_path}", "--max-total-threads=0"], 2,
             "--max-total-threads must be positive"),
            ([f"--model-repository={tmp_path / 'absent'}"], 1, "is not a directory")]:
        run = subprocess.run([SERVE, *args], capture_output=True, text=True, timeout=30)
        assert run.returncode == code and message in run.stderr, (args, run.stderr)
