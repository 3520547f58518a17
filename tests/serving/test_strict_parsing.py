"""Lax parsing tightened (issue 18): JSON with a UTF-8 byte order mark, data
nested other than as its shape, model versions that are not canonical
decimals (" 1", "+1", "01"), garbage protobufs, and failure metrics that
count malformed requests and unknown models. The real server answers;
liveness is asked throughout."""

import json

import grpc
import numpy as np
import pytest

import grpc_predict_v2_pb2 as pb
from conftest import LiveWatch, Server, make_repository

BOM = b"\xef\xbb\xbf"


@pytest.fixture(scope="module")
def server(models, tmp_path_factory):
    repo = make_repository(tmp_path_factory.mktemp("strict") / "repo", models, {
        "mlp": [(1, "mlp")], "static": [(1, "static")]})
    server = Server(repo, "--model-control-mode=explicit", "--allow-repository-control",
                    "--load-model=*")
    yield server
    assert server.stop() == 0


def x_body(x, **extra):
    return {"inputs": [{"name": "x", "datatype": "FP32", "shape": list(x.shape),
                        "data": x.tolist()}], **extra}


def post(server, path, body, headers=None):
    status, payload, _ = server.request("POST", path, body, headers or {})
    return status, json.loads(payload) if payload else None


def test_a_byte_order_mark_is_refused(server):
    good = json.dumps(x_body(np.ones((1, 16), np.float32))).encode()
    with LiveWatch(server):
        assert post(server, "/v2/models/mlp/infer", good)[0] == 200
        for path, body in [("/v2/models/mlp/infer", BOM + good),
                           ("/v2/repository/index", BOM + b"{}"),
                           ("/v2/repository/models/mlp/load", BOM + b"{}")]:
            status, answer = post(server, path, body)
            assert status == 400, (path, answer)
            assert "starts with a UTF-8 byte order mark (EF BB BF); send the JSON without one" \
                in answer["error"]
        # Binary requests: the JSON header is checked too.
        x = np.ones((1, 16), np.float32)
        header = BOM + json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16],
                                               "parameters": {"binary_data_size": 64}}]}).encode()
        status, answer = post(server, "/v2/models/mlp/infer", header + x.tobytes(),
                              {"Inference-Header-Content-Length": str(len(header))})
        assert status == 400 and "byte order mark" in answer["error"]


@pytest.mark.parametrize("data,fragment", [
    ([[0.0] * 32], "nested 'data' has 1 entries at level 0 where shape [2, 16] has 2"),
    ([[0.0] * 15 + [0.0, 0.0], [0.0] * 15], "nested 'data' has 17 entries at level 1"),
    ([[[0.0]] * 16] * 2, "'data' is nested deeper than shape [2, 16]"),
    ([[0.0] * 16, 0.0], "it has a value at level 1"),
    ([0.0] * 16 + [[0.0] * 16], "nested 'data' has 17 entries at level 0"),
    (1.0, "'data' must be an array"),
])
def test_data_nested_other_than_its_shape_is_refused(server, data, fragment):
    body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 16], "data": data}]}
    status, answer = post(server, "/v2/models/mlp/infer", json.dumps(body).encode())
    assert status == 400, answer
    assert fragment in answer["error"]
    # Flat and exactly nested both serve.
    x = np.arange(32, dtype=np.float32).reshape(2, 16) / 32
    flat = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 16],
                        "data": x.ravel().tolist()}]}
    nested = post(server, "/v2/models/mlp/infer", json.dumps(x_body(x)).encode())
    assert nested[0] == 200
    assert post(server, "/v2/models/mlp/infer", json.dumps(flat).encode())[1]["outputs"] == \
        nested[1]["outputs"]


@pytest.mark.parametrize("version", [" 1", "+1", "01", "1 ", "1.0", "0x1", "-1", "1\n"])
def test_versions_are_canonical_decimals(server, version):
    stub = server.grpc_stub()
    request = pb.ModelInferRequest(model_name="mlp", model_version=version)
    request.inputs.add(name="x", datatype="FP32", shape=[1, 16])
    request.raw_input_contents.append(np.ones((1, 16), np.float32).tobytes())
    with pytest.raises(grpc.RpcError) as error:
        stub.ModelInfer(request)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "is not a version number (versions are written 1, 2, ...: digits only, no sign, " \
        "space or leading zero)" in error.value.details()
    assert not stub.ModelReady(pb.ModelReadyRequest(name="mlp", version=version)).ready
    with pytest.raises(grpc.RpcError) as error:
        stub.ModelMetadata(pb.ModelMetadataRequest(name="mlp", version=version))
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    request.model_version = "1"
    assert stub.ModelInfer(request).model_version == "1"


def test_rest_versions_are_canonical_decimals(server):
    body = json.dumps(x_body(np.ones((1, 16), np.float32))).encode()
    for version in ["01", "+1", "%201", "1%20"]:
        status, answer = post(server, f"/v2/models/mlp/versions/{version}/infer", body)
        assert status == 400 and "is not a version number" in answer["error"], (version, answer)
        assert server.get(f"/v2/models/mlp/versions/{version}/ready")[0] == 400
    assert post(server, "/v2/models/mlp/versions/1/infer", body)[0] == 200


def test_failures_are_counted_including_malformed_requests_and_unknown_models(server):
    key = '{model="mlp",version="1"}'
    before = server.metrics()

    def delta(metrics, name):
        return metrics.get(name, 0) - before.get(name, 0)

    bad = [b"{not json", BOM + b"{}", b"[1, 2]",
           json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16],
                                   "data": [[0.0] * 16, [0.0]]}]}).encode()]
    for body in bad:
        assert post(server, "/v2/models/mlp/infer", body)[0] == 400
    assert post(server, "/v2/models/mlp/infer", b"\0" * 10,
                {"Inference-Header-Content-Length": "ten"})[0] == 400
    valid = json.dumps(x_body(np.ones((1, 16), np.float32))).encode()
    for name in ["nope", "ghost"]:
        assert post(server, f"/v2/models/{name}/infer", valid)[0] == 404
    assert post(server, "/v2/models/mlp/versions/7/infer", valid)[0] == 404
    stub = server.grpc_stub()
    with pytest.raises(grpc.RpcError):
        stub.ModelInfer(pb.ModelInferRequest(model_name="nope"))
    after = server.metrics()
    # The five malformed requests named mlp: they count as its failures.
    assert delta(after, "cuvil_inference_request_failure" + key) == 5
    assert delta(after, 'cuvil_server_inference_failure{code="INVALID_ARGUMENT"}') == 5
    assert delta(after, 'cuvil_server_inference_failure{code="NOT_FOUND"}') == 4
    # No series for the unknown names.
    assert not any('model="nope"' in name or 'model="ghost"' in name for name in after)


GARBAGE = [b"\xff", b"\x0a\xff\xff\xff\xff\xff", b"\x0a\x05ab", b"\x08" + b"\xff" * 11,
           bytes(range(256)) * 4]
# Field 2 as a string that is not UTF-8 (field 2 is a string in every
# request but ServerLive's, which has no fields: there it is an unknown one).
NOT_UTF8 = b"\x12\x03\xff\xfe\xfd"


@pytest.mark.parametrize("method", ["ModelInfer", "ModelMetadata", "ModelReady",
                                    "RepositoryModelLoad", "ServerLive"])
def test_garbage_protobufs_are_invalid_arguments_with_a_reason(server, method):
    raw = server.grpc_channel().unary_unary(f"/inference.GRPCInferenceService/{method}")
    with LiveWatch(server, rest=True):
        for garbage in GARBAGE + ([NOT_UTF8] if method != "ServerLive" else []):
            with pytest.raises(grpc.RpcError) as error:
                raw(garbage, timeout=30)
            assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (garbage, error.value)
            assert f"the request is not a valid inference.{method}Request: its protobuf " \
                "encoding does not parse" in error.value.details()
        # A well-formed message through the same raw channel is answered.
        answer = raw(pb.ModelReadyRequest(name="mlp").SerializeToString(), timeout=30) \
            if method == "ModelReady" else None
        if answer is not None:
            assert pb.ModelReadyResponse.FromString(answer).ready
