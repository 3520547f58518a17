"""cuvil-serve over REST: the Open Inference Protocol endpoints, JSON and
binary tensors, every datatype the models take, and each bad request."""

import http.client
import json
import pathlib
import socket
import struct
import sys
import time

import numpy as np
import pytest

from conftest import make_repository

# Compiled fp32 vs float64 NumPy on 16-term dot products.
RTOL, ATOL = 1e-5, 1e-5


@pytest.fixture(scope="module")
def repository(models, tmp_path_factory):
    return make_repository(tmp_path_factory.mktemp("rest") / "repo", models, {
        "mlp": [(1, "mlp")],
        "typed": [(1, "typed")],
        "static": [(1, "static")],
        "mlp_q": [(1, "mlp_q")],
    })


@pytest.fixture(scope="module")
def server(repository):
    from conftest import Server
    server = Server(repository, "--http-max-body-bytes=1000000", "--http-timeout-secs=1")
    yield server
    assert server.stop() == 0


def x_input(x):
    return {"name": "x", "datatype": "FP32", "shape": list(x.shape), "data": x.ravel().tolist()}


def test_health_and_metadata(server):
    assert server.get("/v2/health/live")[0] == 200
    assert server.get("/v2/health/ready")[0] == 200
    status, body = server.get("/v2")
    meta = json.loads(body)
    assert status == 200 and meta["name"] == "cuvil-serve"
    assert "binary_tensor_data" in meta["extensions"]
    status, body = server.get("/v2/models/mlp")
    assert status == 200
    assert json.loads(body) == {
        "name": "mlp", "versions": ["1"], "platform": "cuvil_x86_64",
        "inputs": [{"name": "x", "datatype": "FP32", "shape": [-1, 16]}],
        "outputs": [{"name": "y", "datatype": "FP32", "shape": [-1, 8]},
                    {"name": "z", "datatype": "FP32", "shape": [-1, 8]}]}
    assert server.get("/v2/models/mlp/versions/1")[0] == 200
    assert server.get("/v2/models/mlp/ready")[0] == 200
    assert server.get("/v2/models/mlp/versions/1/ready")[0] == 200
    assert server.get("/v2/models/mlp/versions/2/ready")[0] == 400
    assert server.get("/v2/models/nope/ready")[0] == 400
    status, body = server.get("/v2/models/mlp/config")
    assert status == 200 and json.loads(body)["max_batch_size"] == 8


def test_infer_json_matches_reference(server, models):
    x = np.random.default_rng(0).standard_normal((3, 16)).astype(np.float32)
    status, body = server.infer("mlp", [x_input(x)], id="request-7")
    assert status == 200, body
    assert body["id"] == "request-7" and body["model_name"] == "mlp"
    assert body["model_version"] == "1"
    ref = models["mlp"].reference({"x": x})
    outputs = {o["name"]: o for o in body["outputs"]}
    assert [o["name"] for o in body["outputs"]] == ["y", "z"]
    for name in ("y", "z"):
        assert outputs[name]["shape"] == [3, 8] and outputs[name]["datatype"] == "FP32"
        np.testing.assert_allclose(np.array(outputs[name]["data"]).reshape(3, 8), ref[name],
                                   rtol=RTOL, atol=ATOL)


def test_integer_io_model(server, models):
    """An integer-I/O model's tensors are UINT8, each with the scale and
    zero point of its values in `parameters`; the server passes its bytes."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "e2e"))
    from cuvil_e2e import CompiledModel
    library = CompiledModel(models["mlp_q"].so)
    status, body = server.get("/v2/models/mlp_q")
    assert status == 200
    meta = json.loads(body)
    tensors = meta["inputs"] + meta["outputs"]
    specs = library.metadata["inputs"] + library.metadata["outputs"]
    assert [t["name"] for t in tensors] == ["x", "y", "z"]
    for tensor, spec in zip(tensors, specs):
        assert tensor["datatype"] == "UINT8"
        assert tensor["parameters"] == {
            "quantization_scale": spec["quantization"]["scale"],
            "quantization_zero_point": spec["quantization"]["zero_point"]}
    qx = np.random.default_rng(3).integers(0, 256, (3, 16), dtype=np.uint8)
    status, body = server.infer("mlp_q", [{"name": "x", "datatype": "UINT8", "shape": [3, 16],
                                           "data": qx.ravel().tolist()}])
    assert status == 200, body
    expected = library(qx, batch=3)
    for output, want in zip(body["outputs"], expected):
        assert output["datatype"] == "UINT8"
        assert np.array_equal(np.array(output["data"], np.uint8).reshape(want.shape), want)
    status, body = server.infer("mlp_q", [x_input(qx.astype(np.float32))])
    assert status == 400 and "has datatype FP32, the model takes UINT8" in body["error"]


def test_nested_data_and_versioned_path(server):
    x = np.random.default_rng(1).standard_normal((2, 16)).astype(np.float32)
    flat = server.infer("mlp", [x_input(x)])[1]
    nested = {"name": "x", "datatype": "FP32", "shape": [2, 16], "data": x.tolist()}
    status, body = server.infer("mlp", [nested], version="1")
    assert status == 200
    assert body["outputs"] == flat["outputs"]


def test_outputs_filter(server):
    x = np.ones((1, 16), np.float32)
    status, body = server.infer("mlp", [x_input(x)], outputs=[{"name": "z"}])
    assert status == 200 and [o["name"] for o in body["outputs"]] == ["z"]


def test_every_datatype(server, models):
    ids = np.array([[1, -2, 3, 4], [5, 6, -7, 8]], np.int64)
    mask = np.array([[True, False, True, True], [False, False, True, True]])
    status, body = server.infer("typed", [
        {"name": "ids", "datatype": "INT64", "shape": [2, 4], "data": ids.tolist()},
        {"name": "mask", "datatype": "BOOL", "shape": [2, 4], "data": mask.tolist()}])
    assert status == 200, body
    ref = models["typed"].reference({"ids": ids, "mask": mask})
    outputs = {o["name"]: o for o in body["outputs"]}
    assert outputs["doubled"]["datatype"] == "INT64"
    assert outputs["doubled"]["data"] == ref["doubled"].ravel().tolist()
    assert outputs["total"]["data"] == ref["total"].ravel().tolist()
    x = np.arange(6, dtype=np.float64).reshape(2, 3) / 7
    status, body = server.infer("static", [
        {"name": "x", "datatype": "FP64", "shape": [2, 3], "data": x.ravel().tolist()}])
    assert status == 200
    assert body["outputs"][0]["data"] == (x * 2 + 1).ravel().tolist()  # exact in FP64


def binary_request(inputs, outputs=None, parameters=None):
    """Builds a binary-extension body: inputs are (name, datatype, array)."""
    header = {"inputs": [], **({"outputs": outputs} if outputs else {}),
              **({"parameters": parameters} if parameters else {})}
    blobs = b""
    for name, datatype, array in inputs:
        raw = array.tobytes()
        header["inputs"].append({"name": name, "datatype": datatype, "shape": list(array.shape),
                                 "parameters": {"binary_data_size": len(raw)}})
        blobs += raw
    head = json.dumps(header).encode()
    return head + blobs, {"Inference-Header-Content-Length": str(len(head)),
                          "Content-Type": "application/octet-stream"}


def split_binary(body, headers):
    length = int(headers["Inference-Header-Content-Length"])
    header = json.loads(body[:length])
    offset, tensors = length, {}
    for output in header["outputs"]:
        if "data" in output:
            continue
        size = output["parameters"]["binary_data_size"]
        tensors[output["name"]] = body[offset:offset + size]
        offset += size
    assert offset == len(body)
    return header, tensors


def test_binary_tensors_in_and_out(server, models):
    x = np.random.default_rng(2).standard_normal((4, 16)).astype(np.float32)
    body, headers = binary_request([("x", "FP32", x)], parameters={"binary_data_output": True})
    status, payload, response_headers = server.request("POST", "/v2/models/mlp/infer", body,
                                                       headers)
    assert status == 200, payload
    header, tensors = split_binary(payload, response_headers)
    assert [o["shape"] for o in header["outputs"]] == [[4, 8], [4, 8]]
    y = np.frombuffer(tensors["y"], np.float32).reshape(4, 8)
    np.testing.assert_allclose(y, models["mlp"].reference({"x": x})["y"], rtol=RTOL, atol=ATOL)
    # The JSON answer to the same input holds the same floats, bit for bit.
    status, as_json = server.infer("mlp", [x_input(x)])
    assert np.array_equal(np.array(as_json["outputs"][0]["data"], np.float32),
                          y.ravel())
    # Per-output binary_data: only z is binary.
    body, headers = binary_request([("x", "FP32", x)],
                                   outputs=[{"name": "y"},
                                            {"name": "z", "parameters": {"binary_data": True}}])
    status, payload, response_headers = server.request("POST", "/v2/models/mlp/infer", body,
                                                       headers)
    header, tensors = split_binary(payload, response_headers)
    assert "data" in header["outputs"][0] and list(tensors) == ["z"]


def test_keep_alive(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=10)
    conn.connect()
    sock = conn.sock
    for _ in range(5):
        conn.request("GET", "/v2/health/live")
        response = conn.getresponse()
        response.read()
        assert response.status == 200
        assert conn.sock is sock  # the same connection served every request
    conn.close()


BAD_REQUESTS = [
    # (path, body or object, headers, status, message fragment)
    ("/v2/models/mlp/infer", b"{not json", {}, 400, "not valid JSON"),
    ("/v2/models/mlp/infer", b"[1, 2]", {}, 400, "must be a JSON object"),
    ("/v2/models/mlp/infer", {}, {}, 400, "non-empty 'inputs'"),
    ("/v2/models/mlp/infer", {"inputs": [{"name": "x", "shape": [1, 16], "data": [0] * 16}]},
     {}, 400, "needs a string 'datatype'"),
    ("/v2/models/mlp/infer",
     {"inputs": [{"name": "x", "datatype": "FP33", "shape": [1, 16], "data": [0] * 16}]},
     {}, 400, "unknown datatype 'FP33'"),
    ("/v2/models/mlp/infer",
     {"inputs": [{"name": "x", "datatype": "FP16", "shape": [1, 16], "data": [0] * 16}]},
     {}, 400, "FP16 is not supported"),
    ("/v2/models/mlp/infer",
     {"inputs": [{"name": "x", "datatype": "INT32", "shape": [1, 16], "data": [0] * 16}]},
     {}, 400, "has datatype INT32, the model takes FP32"),
    ("/v2/models/mlp/infer",
     {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16], "data": [0] * 15}]},
     {}, 400, "'data' has 15 elements but shape [1, 16] needs 16"),
    ("/v2/models/mlp/infer",
     {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 15], "data": [0] * 15}]},
     {}, 400, "has shape [1, 15], the model takes [-1, 16]"),
    ("/v2/models/mlp/infer",
     {"inputs": [{"name": "x", "datatype": "FP32", "shape": [9, 16], "data": [0] * 144}]},
     {}, 400, "batch 9 is outside 1..8"),
    ("/v2/models/mlp/infer",
     {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16], "data": ["a"] * 16}]},
     {}, 400, "holds numbers"),
    ("/v2/models/mlp/infer",
     {"inputs": [{"name": "q", "datatype": "FP32", "shape": [1, 16], "data": [0] * 16}]},
     {}, 400, "has no input 'q'"),
    ("/v2/models/mlp/infer",
     {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16], "data": [0] * 16}],
      "outputs": [{"name": "w"}]}, {}, 400, "has no output 'w'"),
    ("/v2/models/typed/infer",
     {"inputs": [{"name": "ids", "datatype": "INT64", "shape": [1, 4], "data": [1, 2, 3, 4]}]},
     {}, 400, "input 'mask' (BOOL [-1, 4]) of model 'typed' is missing"),
    ("/v2/models/typed/infer",
     {"inputs": [{"name": "ids", "datatype": "INT64", "shape": [1, 4], "data": [1, 2, 3, 4]},
                 {"name": "mask", "datatype": "BOOL", "shape": [1, 4], "data": [1, 0, 1, 1]}]},
     {}, 400, "BOOL data holds true or false"),
    ("/v2/models/typed/infer",
     {"inputs": [{"name": "ids", "datatype": "INT64", "shape": [2, 4], "data": [1] * 8},
                 {"name": "mask", "datatype": "BOOL", "shape": [1, 4], "data": [True] * 4}]},
     {}, 400, "inputs disagree on the batch"),
    ("/v2/models/nope/infer",
     {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16], "data": [0] * 16}]},
     {}, 404, "unknown model 'nope'"),
    ("/v2/models/mlp/versions/3/infer",
     {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16], "data": [0] * 16}]},
     {}, 404, "has no version 3 loaded"),
    ("/v2/models/mlp/infer",
     {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16],
                  "parameters": {"binary_data_size": 64}}]},
     {}, 400, "needs the Inference-Header-Content-Length header"),
    ("/v2/nothing", b"", {}, 404, "no endpoint /v2/nothing"),
    ("/v2/repository/models/mlp/load", b"", {}, 400, "needs --model-control-mode=explicit"),
]


@pytest.mark.parametrize("path,body,headers,status,message", BAD_REQUESTS,
                         ids=[f"{b[3]}-{b[4][:30]}" for b in BAD_REQUESTS])
def test_bad_request(server, path, body, headers, status, message):
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
    got, payload, _ = server.request("POST", path, body, headers)
    assert got == status, payload
    assert message in json.loads(payload)["error"]
    assert server.get("/v2/health/live")[0] == 200


def test_bad_binary_sizes(server):
    x = np.zeros((1, 16), np.float32)
    body, headers = binary_request([("x", "FP32", x)])
    # One byte short, one byte extra, header length past the end.
    for mutated, fragment in [(body[:-1], "only 63 bytes of binary data remain"),
                              (body + b"\0", "1 bytes of binary data follow"),
                              (body[:10], "exceeds")]:
        status, payload, _ = server.request("POST", "/v2/models/mlp/infer", mutated, headers)
        assert status == 400, payload
        error = json.loads(payload)["error"]
        assert fragment in error or "has only" in error, error
    headers = dict(headers, **{"Inference-Header-Content-Length": "ten"})
    status, payload, _ = server.request("POST", "/v2/models/mlp/infer", body, headers)
    assert status == 400 and "is not a byte count" in json.loads(payload)["error"]


def test_wrong_method(server):
    status, payload, _ = server.request("GET", "/v2/models/mlp/infer")
    assert status == 405 and "use POST" in json.loads(payload)["error"]


def test_oversized_body(server):
    # Declared too large: answered 413 before the body is sent.
    sock = socket.create_connection(("127.0.0.1", server.http_port))
    sock.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\n"
                 b"Content-Length: 2000000\r\n\r\n")
    sock.settimeout(10)
    reply = b""
    while b"}" not in reply:
        chunk = sock.recv(4096)
        assert chunk, reply
        reply += chunk
    sock.close()
    assert reply.startswith(b"HTTP/1.1 413") and b"above the server's limit of 1000000" in reply
    # Chunked, with no length up front: discarded as it arrives, then 413.
    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
    conn.request("POST", "/v2/models/mlp/infer", body=(b" " * 100_000 for _ in range(20)),
                 encode_chunked=True)
    response = conn.getresponse()
    assert response.status == 413 and b"1000000" in response.read()
    conn.close()
    assert server.get("/v2/health/live")[0] == 200


def test_slow_client_times_out(server):
    # --http-timeout-secs=1: a client that stops mid-request is disconnected.
    sock = socket.create_connection(("127.0.0.1", server.http_port))
    sock.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    sock.settimeout(10)
    start = time.time()
    assert sock.recv(1024) == b""  # closed by the server
    assert time.time() - start < 8
    sock.close()
    assert server.get("/v2/health/live")[0] == 200


def test_metrics_agree_with_client(server):
    before = server.metrics()
    x = np.ones((2, 16), np.float32)
    for _ in range(5):
        assert server.infer("mlp", [x_input(x)])[0] == 200
    for _ in range(3):
        assert server.infer("mlp", [x_input(np.ones((1, 15), np.float32))])[0] == 400
    after = server.metrics()
    key = '{model="mlp",version="1"}'

    def delta(name):
        return after[name + key] - before.get(name + key, 0)

    assert delta("cuvil_inference_request_success") == 5
    assert delta("cuvil_inference_request_failure") == 3
    assert delta("cuvil_inference_count") == 10
    assert delta("cuvil_inference_exec_count") == 5
    assert delta("cuvil_inference_request_duration_seconds_count") == 8
    assert after['cuvil_inference_request_duration_seconds_bucket'
                 '{model="mlp",version="1",le="+Inf"}'] == \
        after["cuvil_inference_request_duration_seconds_count" + key]
