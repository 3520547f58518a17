"""A fuzz pass over request bodies (REST) and messages (gRPC): every answer
is a 2xx or 4xx (never a 5xx, a dropped connection or a crash), and the
server is live at the end."""

import json
import random

import grpc
import numpy as np
import pytest

import grpc_predict_v2_pb2 as pb
from conftest import Server, make_repository

SEED = 20261130
ROUNDS = 400


@pytest.fixture(scope="module")
def server(models, tmp_path_factory):
    repo = make_repository(tmp_path_factory.mktemp("fuzz") / "repo", models, {
        "mlp": [(1, "mlp")], "typed": [(1, "typed")], "static": [(1, "static")]})
    server = Server(repo, "--http-max-body-bytes=200000")
    yield server
    assert server.stop() == 0


def valid_bodies():
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(2, 16)
    mlp = {"id": "f", "inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 16],
                                  "data": x.ravel().tolist()}],
           "outputs": [{"name": "z", "parameters": {"binary_data": True}}]}
    typed = {"inputs": [{"name": "ids", "datatype": "INT64", "shape": [1, 4],
                         "data": [1, 2, 3, 4]},
                        {"name": "mask", "datatype": "BOOL", "shape": [1, 4],
                         "data": [True, False, True, False]}]}
    header = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 16],
                                     "parameters": {"binary_data_size": 128}}]}).encode()
    return [("mlp", json.dumps(mlp).encode(), None), ("typed", json.dumps(typed).encode(), None),
            ("mlp", header + x.tobytes(), len(header))]


WILD_VALUES = [None, True, -1, 0, 2**63, -2**63 - 1, 1e308, "FP32", "", [], {}, [[[]]],
               [1] * 3, {"binary_data_size": -5}, {"binary_data_size": 2**40},
               [2**40, 16], [-3, 16], [0, 16], "\u0000\ud7ff", 1.5]


def mutate_json(value, rng):
    """Replaces a random node of a JSON value with a wild one."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(list(value))
        if rng.random() < 0.15:
            del value[key]
        else:
            value[key] = mutate_json(value[key], rng)
        return value
    if isinstance(value, list) and value and rng.random() < 0.8:
        index = rng.randrange(len(value))
        value[index] = mutate_json(value[index], rng)
        return value
    return rng.choice(WILD_VALUES)


def mutate_bytes(body, rng):
    body = bytearray(body)
    for _ in range(rng.randint(1, 8)):
        choice = rng.random()
        if choice < 0.4 and body:
            body[rng.randrange(len(body))] = rng.randrange(256)
        elif choice < 0.6:
            body = body[:rng.randrange(len(body) + 1)]
        elif choice < 0.8:
            at = rng.randrange(len(body) + 1)
            body[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        else:
            body += b"[" * rng.randint(1, 5000)
    return bytes(body)


def test_rest_fuzz(server):
    rng = random.Random(SEED)
    seen = {}
    for round_ in range(ROUNDS):
        model, body, header_length = rng.choice(valid_bodies())
        headers = {}
        if header_length is not None:
            json_part = json.loads(body[:header_length])
            if rng.random() < 0.5:
                json_part = mutate_json(json_part, rng)
            head = json.dumps(json_part).encode()
            body = head + body[header_length:]
            headers["Inference-Header-Content-Length"] = str(
                len(head) + rng.choice([0, 0, 0, -1, 1, 1000]))
        elif rng.random() < 0.5:
            body = json.dumps(mutate_json(json.loads(body), rng)).encode()
        else:
            body = mutate_bytes(body, rng)
        path = rng.choice([f"/v2/models/{model}/infer", f"/v2/models/{model}/infer",
                           f"/v2/models/{model}/versions/1/infer",
                           f"/v2/models/{model}/versions/x/infer"])
        status, payload, _ = server.request("POST", path, body, headers)
        seen[status] = seen.get(status, 0) + 1
        assert status == 200 or 400 <= status < 500, (round_, status, body[:200], payload)
        if status != 200:
            assert "error" in json.loads(payload)
    assert server.get("/v2/health/live")[0] == 200
    assert seen.get(400, 0) > ROUNDS // 4, seen  # most mutations are caught as bad input


def test_grpc_fuzz(server):
    rng = random.Random(SEED + 1)
    stub = server.grpc_stub()
    datatypes = ["FP32", "FP64", "INT64", "BOOL", "INT8", "UINT8", "FP16", "BYTES", "?", ""]
    codes = {}
    for _ in range(ROUNDS // 2):
        request = pb.ModelInferRequest(model_name=rng.choice(["mlp", "typed", "static", "x"]),
                                       model_version=rng.choice(["", "", "1", "2", "v"]))
        for index in range(rng.randint(0, 3)):
            tensor = request.inputs.add(name=rng.choice(["x", "ids", "mask", "q"]),
                                        datatype=rng.choice(datatypes),
                                        shape=[rng.choice([-1, 0, 1, 2, 4, 16, 2**40])
                                               for _ in range(rng.randint(0, 3))])
            if rng.random() < 0.5:
                request.raw_input_contents.append(bytes(rng.randrange(256)
                                                        for _ in range(rng.choice([0, 4, 64, 128]))))
            else:
                tensor.contents.fp32_contents[:] = [1.0] * rng.choice([0, 16, 32])
                tensor.contents.int_contents[:] = [300] * rng.choice([0, 4])
        try:
            stub.ModelInfer(request, timeout=30)
            codes["OK"] = codes.get("OK", 0) + 1
        except grpc.RpcError as error:
            assert error.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND), \
                (error.code(), error.details(), request)
            codes[error.code().name] = codes.get(error.code().name, 0) + 1
    assert stub.ServerLive(pb.ServerLiveRequest()).live
    assert codes.get("INVALID_ARGUMENT", 0) > 0 and codes.get("NOT_FOUND", 0) > 0
