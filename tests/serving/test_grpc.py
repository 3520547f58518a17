"""cuvil-serve over gRPC (inference.GRPCInferenceService) with Debian's
grpcio and stubs generated from the server's proto: the same answers as
REST, bit for bit, and the gRPC status codes Triton uses."""

import json

import grpc
import numpy as np
import pytest

import grpc_predict_v2_pb2 as pb
from conftest import Server, make_repository


@pytest.fixture(scope="module")
def server(models, tmp_path_factory):
    repo = make_repository(tmp_path_factory.mktemp("grpc") / "repo", models, {
        "mlp": [(1, "mlp")], "typed": [(1, "typed")], "static": [(1, "static")]})
    server = Server(repo, "--model-control-mode=explicit", "--allow-repository-control",
                    "--load-model=*")
    yield server
    assert server.stop() == 0


@pytest.fixture(scope="module")
def stub(server):
    return server.grpc_stub()


def infer_request(model, x, **kwargs):
    request = pb.ModelInferRequest(model_name=model, **kwargs)
    tensor = request.inputs.add(name="x", datatype="FP32", shape=list(x.shape))
    request.raw_input_contents.append(x.tobytes())
    return request


def test_health_and_metadata(stub):
    assert stub.ServerLive(pb.ServerLiveRequest()).live
    assert stub.ServerReady(pb.ServerReadyRequest()).ready
    assert stub.ModelReady(pb.ModelReadyRequest(name="mlp")).ready
    assert not stub.ModelReady(pb.ModelReadyRequest(name="mlp", version="9")).ready
    meta = stub.ServerMetadata(pb.ServerMetadataRequest())
    assert meta.name == "cuvil-serve" and "model_repository" in meta.extensions
    model = stub.ModelMetadata(pb.ModelMetadataRequest(name="typed"))
    assert model.platform == "cuvil_x86_64" and list(model.versions) == ["1"]
    assert [(t.name, t.datatype, list(t.shape)) for t in model.inputs] == [
        ("ids", "INT64", [-1, 4]), ("mask", "BOOL", [-1, 4])]


def test_infer_raw_matches_rest_bit_for_bit(server, stub, models):
    x = np.random.default_rng(3).standard_normal((5, 16)).astype(np.float32)
    response = stub.ModelInfer(infer_request("mlp", x, id="g-1"))
    assert response.id == "g-1" and response.model_version == "1"
    assert [o.name for o in response.outputs] == ["y", "z"]
    assert list(response.outputs[0].shape) == [5, 8]
    y = np.frombuffer(response.raw_output_contents[0], np.float32).reshape(5, 8)
    np.testing.assert_allclose(y, models["mlp"].reference({"x": x})["y"], rtol=1e-5, atol=1e-5)
    status, rest = server.infer("mlp", [{"name": "x", "datatype": "FP32", "shape": [5, 16],
                                         "data": x.ravel().tolist()}])
    assert status == 200
    for index, output in enumerate(rest["outputs"]):
        assert np.array(output["data"], np.float32).tobytes() == \
            response.raw_output_contents[index]


def test_typed_contents(stub, models):
    ids = np.array([[3, 1, 4, 1]], np.int64)
    mask = np.array([[True, True, False, True]])
    request = pb.ModelInferRequest(model_name="typed")
    request.inputs.add(name="ids", datatype="INT64", shape=[1, 4]).contents.int64_contents[:] = \
        ids.ravel().tolist()
    request.inputs.add(name="mask", datatype="BOOL", shape=[1, 4]).contents.bool_contents[:] = \
        mask.ravel().tolist()
    request.outputs.add(name="doubled")
    response = stub.ModelInfer(request)
    assert [o.name for o in response.outputs] == ["doubled"]
    assert np.frombuffer(response.raw_output_contents[0], np.int64).tolist() == [6, 2, 8, 2]
    static = pb.ModelInferRequest(model_name="static")
    static.inputs.add(name="x", datatype="FP64", shape=[2, 3]).contents.fp64_contents[:] = \
        [0.5] * 6
    out = stub.ModelInfer(static)
    assert np.frombuffer(out.raw_output_contents[0], np.float64).tolist() == [2.0] * 6


@pytest.mark.parametrize("mutate,code,fragment", [
    (lambda r: setattr(r, "model_name", "nope"), grpc.StatusCode.NOT_FOUND, "unknown model"),
    (lambda r: setattr(r, "model_version", "4"), grpc.StatusCode.NOT_FOUND, "no version 4"),
    (lambda r: r.inputs[0].shape.__setitem__(0, 4), grpc.StatusCode.INVALID_ARGUMENT,
     "holds 320 bytes, but shape [4, 16] of FP32 needs 256"),
    (lambda r: setattr(r.inputs[0], "datatype", "BYTES"), grpc.StatusCode.INVALID_ARGUMENT,
     "BYTES is not supported"),
    (lambda r: r.raw_input_contents.append(b"x"), grpc.StatusCode.INVALID_ARGUMENT,
     "raw_input_contents has 2 entries for 1 inputs"),
    (lambda r: r.outputs.add(name="nothing"), grpc.StatusCode.INVALID_ARGUMENT,
     "has no output 'nothing'"),
])
def test_errors(stub, mutate, code, fragment):
    request = infer_request("mlp", np.zeros((5, 16), np.float32))
    mutate(request)
    with pytest.raises(grpc.RpcError) as error:
        stub.ModelInfer(request)
    assert error.value.code() == code
    assert fragment in error.value.details()
    assert stub.ServerLive(pb.ServerLiveRequest()).live


def test_batch_above_maximum(stub):
    with pytest.raises(grpc.RpcError) as error:
        stub.ModelInfer(infer_request("mlp", np.zeros((9, 16), np.float32)))
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "batch 9 is outside 1..8" in error.value.details()


def test_repository_extension(server, stub):
    index = stub.RepositoryIndex(pb.RepositoryIndexRequest())
    assert {(m.name, m.version, m.state) for m in index.models} == {
        ("mlp", "1", "READY"), ("typed", "1", "READY"), ("static", "1", "READY")}
    stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="static"))
    assert not stub.ModelReady(pb.ModelReadyRequest(name="static")).ready
    index = stub.RepositoryIndex(pb.RepositoryIndexRequest(ready=True))
    assert "static" not in {m.name for m in index.models}
    with pytest.raises(grpc.RpcError) as error:
        stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="absent"))
    assert error.value.code() == grpc.StatusCode.NOT_FOUND
    config = pb.ModelRepositoryParameter(string_param=json.dumps({"instance_count": 2}))
    stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="static",
                                                           parameters={"config": config}))
    assert stub.ModelReady(pb.ModelReadyRequest(name="static")).ready
    assert json.loads(server.get("/v2/models/static/config")[1])["instance_count"] == 2
