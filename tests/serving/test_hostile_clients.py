"""cuvil-serve against hostile clients (issue 18): where it listens and over
what (loopback by default, TLS for HTTP and gRPC with a certificate the test
makes with openssl), who may load and unload models and how much a config
may ask for, unknown model names that must not grow the server, slow clients
holding every connection (slowloris), and many large bodies at once. The
server is the real binary; liveness is asked throughout each attack."""

import http.client
import json
import os
import random
import select
import socket
import ssl
import subprocess
import threading
import time
import warnings

import grpc
import numpy as np
import pytest

import grpc_predict_v2_pb2 as pb
from conftest import SERVE, LiveWatch, Server, make_repository


def x_input(x):
    return [{"name": "x", "datatype": "FP32", "shape": list(x.shape), "data": x.ravel().tolist()}]


def wait_for(predicate, timeout=60, what="condition"):
    deadline = time.time() + timeout
    while not predicate():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def listening_addresses(port):
    """Local addresses of the sockets listening on TCP `port`."""
    found = set()
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        try:
            lines = open(f"/proc/net/{table}").read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if int(hex_port, 16) != port or fields[3] != "0A":  # 0A: LISTEN
                continue
            raw = bytes.fromhex(address)
            # /proc prints each 32-bit word in host (little-endian) order.
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            address = socket.inet_ntop(family, raw)
            # An IPv6 socket bound to a mapped IPv4 address takes IPv4 only.
            found.add(address[len("::ffff:"):] if address.startswith("::ffff:") else address)
    return found


def test_listens_on_loopback_unless_told_otherwise(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    server = start_server(repo)
    assert listening_addresses(server.http_port) == {"127.0.0.1"}
    assert listening_addresses(server.grpc_port) == {"127.0.0.1"}
    everywhere = start_server(repo, "--http-address=0.0.0.0", "--grpc-address=0.0.0.0")
    assert listening_addresses(everywhere.http_port) == {"0.0.0.0"}
    # gRPC takes 0.0.0.0 as every interface, IPv6 too (a dual-stack socket).
    assert listening_addresses(everywhere.grpc_port) in ({"0.0.0.0"}, {"::"})
    assert everywhere.get("/v2/health/live")[0] == 200
    run = subprocess.run([SERVE, f"--model-repository={repo}", "--http-address=example.org",
                          "--grpc-port=-1"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert "HTTP address 'example.org' is not an IP address" in run.stderr
    run = subprocess.run([SERVE, f"--model-repository={repo}", "--http-port=-1",
                          "--grpc-address=300.1.2.3"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "gRPC address '300.1.2.3' is not an IP address" in run.stderr


def test_listens_on_ipv6_loopback(models, tmp_path, start_server):
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("this machine has no IPv6 loopback")
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    server = start_server(repo, "--http-address=::1", "--grpc-address=::1", host="::1")
    assert listening_addresses(server.http_port) == {"::1"}
    assert listening_addresses(server.grpc_port) == {"::1"}
    assert server.grpc_stub().ServerReady(pb.ServerReadyRequest(), timeout=30).ready


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for localhost and 127.0.0.1, and its key."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


def test_tls_for_http_and_grpc(models, certificate, tmp_path, start_server):
    cert, key = certificate
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    context = ssl.create_default_context(cafile=str(cert))
    server = start_server(repo, f"--http-tls-cert={cert}", f"--http-tls-key={key}",
                          f"--grpc-tls-cert={cert}", f"--grpc-tls-key={key}",
                          ssl_context=context,
                          grpc_credentials=grpc.ssl_channel_credentials(cert.read_bytes()))
    wait_for(lambda: "HTTPS on 127.0.0.1" in server.output(), what="the serving log line")
    assert "gRPC (TLS) on 127.0.0.1" in server.output()
    x = np.ones((2, 16), np.float32)
    status, body = server.infer("mlp", x_input(x))
    assert status == 200 and body["outputs"][0]["shape"] == [2, 8]
    stub = server.grpc_stub()
    assert stub.ServerLive(pb.ServerLiveRequest(), timeout=30).live
    request = pb.ModelInferRequest(model_name="mlp")
    request.inputs.add(name="x", datatype="FP32", shape=[2, 16])
    request.raw_input_contents.append(x.tobytes())
    response = stub.ModelInfer(request, timeout=30)
    assert np.frombuffer(response.raw_output_contents[0], np.float32).tobytes() == \
        np.array(body["outputs"][0]["data"], np.float32).tobytes()
    # TLS 1.0 and 1.1 are refused on both (GnuTLS's defaults took them).
    for port in (server.http_port, server.grpc_port):
        old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        old.check_hostname, old.verify_mode = False, ssl.CERT_NONE
        old.set_ciphers("DEFAULT:@SECLEVEL=0")
        with warnings.catch_warnings():  # Python deprecates asking for them
            warnings.simplefilter("ignore", DeprecationWarning)
            old.minimum_version = ssl.TLSVersion.TLSv1
            old.maximum_version = ssl.TLSVersion.TLSv1_1
        with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
            with pytest.raises((ssl.SSLError, OSError)):
                old.wrap_socket(raw).do_handshake()
    # Plain HTTP and an insecure channel get nothing.
    plain = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
    with pytest.raises((http.client.HTTPException, OSError)):
        plain.request("GET", "/v2/health/live")
        plain.getresponse()
    plain.close()
    insecure = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
    import grpc_predict_v2_pb2_grpc as pb_grpc
    with pytest.raises(grpc.RpcError) as error:
        pb_grpc.GRPCInferenceServiceStub(insecure).ServerLive(pb.ServerLiveRequest(), timeout=10)
    assert error.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def test_tls_flags_are_checked(models, certificate, tmp_path):
    cert, key = certificate
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    for args, code, message in [
            ([f"--http-tls-cert={cert}"], 2, "HTTPS needs both --http-tls-cert and --http-tls-key"),
            ([f"--grpc-tls-key={key}"], 2, "gRPC TLS needs both --grpc-tls-cert and --grpc-tls-key"),
            ([f"--http-tls-cert={tmp_path / 'absent.pem'}", f"--http-tls-key={key}"], 2,
             "cannot read --http-tls-cert"),
            ([f"--http-tls-cert={garbage}", f"--http-tls-key={key}", "--grpc-port=-1"], 1,
             "cannot listen for HTTPS on 127.0.0.1 port 0 (in use? or is the certificate or key "
             "not PEM, or not a pair?)")]:
        run = subprocess.run([SERVE, f"--model-repository={repo}", "--http-port=0", *args],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == code and message in run.stderr, (args, run.stderr)


def test_the_repository_api_is_off_unless_allowed(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")],
                                                       "typed": [(1, "typed")]})
    server = start_server(repo, "--model-control-mode=explicit", "--load-model=mlp")
    for action in ("load", "unload"):
        status, body = server.post_json(f"/v2/repository/models/typed/{action}",
                                        {"parameters": {"config": {"instance_count": 64}}})
        assert status == 403, body
        assert "through the API is not enabled on this server: its operator can start it " \
            "with --allow-repository-control" in body["error"]
    stub = server.grpc_stub()
    with pytest.raises(grpc.RpcError) as error:
        stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="typed"))
    assert error.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as error:
        stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="mlp"))
    assert error.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # What the operator loaded serves; the index stays readable.
    assert server.get("/v2/models/mlp/ready")[0] == 200
    assert server.get("/v2/models/typed/ready")[0] == 400
    assert server.post_json("/v2/repository/index", {})[0] == 200
    run = subprocess.run([SERVE, f"--model-repository={repo}", "--allow-repository-control"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "--allow-repository-control needs --model-control-mode=explicit" in run.stderr


def test_configs_are_capped_by_the_server(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {
        "mlp": [(1, "mlp")], "typed": [(1, "typed")],
        "greedy": {"versions": [(1, "mlp")], "config": {"instance_count": 9}}})
    server = start_server(repo, "--model-control-mode=explicit", "--allow-repository-control",
                          "--load-model=mlp", "--max-instances-per-model=4",
                          "--max-threads-per-instance=2", "--max-total-threads=8")

    def load(name, config):
        return server.post_json(f"/v2/repository/models/{name}/load",
                                {"parameters": {"config": config}})

    with LiveWatch(server):
        threads_before = server.threads()
        # The attack that took the server from 16 to 16,399 threads.
        for _ in range(20):
            status, body = load("mlp", {"instance_count": 64, "threads": 256})
            assert status == 400, body
            assert "instance_count 64 is above the server's maximum of 4 " \
                "(--max-instances-per-model)" in body["error"]
        status, body = load("mlp", {"threads": 3})
        assert status == 400
        assert "threads 3 is above the server's maximum of 2 (--max-threads-per-instance)" in \
            body["error"]
        assert server.threads() <= threads_before + 8
        status, body = load("mlp", {"instance_count": 4, "threads": 2})
        assert status == 200, body
        status, body = load("typed", {})
        assert status == 400
        assert "would bring the server to 9 model threads, above its maximum of 8 " \
            "(--max-total-threads)" in body["error"]
        # Reloading a model counts its new threads, not its old ones too.
        status, body = load("mlp", {"instance_count": 2, "threads": 2})
        assert status == 200, body
        status, body = load("typed", {"instance_count": 4})
        assert status == 200, body
        # config.json is capped alike.
        status, body = server.post_json("/v2/repository/models/greedy/load", {})
        assert status == 400 and "(--max-instances-per-model)" in body["error"]
        assert server.infer("mlp", x_input(np.ones((1, 16), np.float32)))[0] == 200


def test_unknown_model_names_add_no_state(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    server = start_server(repo, "--model-control-mode=explicit", "--allow-repository-control",
                          "--load-model=mlp")
    stub = server.grpc_stub()
    index_before = server.post_json("/v2/repository/index", {})[1]
    series_before = len(server.metrics())
    x = np.ones((1, 16), np.float32)
    with LiveWatch(server):
        for i in range(150):
            name = f"ghost-{i}-{random.randrange(10**9)}"
            status, body = server.post_json(f"/v2/repository/models/{name}/load", {})
            assert status == 404 and f"no model '{name}' in the repository" in body["error"]
            assert server.post_json(f"/v2/repository/models/{name}/unload", {})[0] == 404
            assert server.infer(name, x_input(x))[0] == 404
            with pytest.raises(grpc.RpcError) as error:
                stub.ModelMetadata(pb.ModelMetadataRequest(name=name))
            assert error.value.code() == grpc.StatusCode.NOT_FOUND
            assert not stub.ModelReady(pb.ModelReadyRequest(name=name)).ready
        for name in ["bad\x00name", "line\nbreak", ".hidden", "x" * 300, "a/b"]:
            with pytest.raises(grpc.RpcError) as error:
                stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name))
            assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT, name
            assert "is not a model name" in error.value.details()
    assert server.post_json("/v2/repository/index", {})[1] == index_before
    after = server.metrics()
    # Failures count once per status, server-wide, not per unknown name.
    assert len(after) <= series_before + 2
    assert after['cuvil_server_inference_failure{code="NOT_FOUND"}'] >= 150


def trickle(port, stop, prefix, request, pause, log):
    """An attacker's connection loop: connect, send `prefix`, then `request`
    one byte every `pause` seconds, reconnect when the server closes it.
    Logs (opened, closed) times of every connection."""
    while not stop.is_set():
        opened = time.time()
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        except OSError:
            time.sleep(0.2)
            continue
        closed = None
        try:
            sock.sendall(prefix)
            for byte in request:
                sock.sendall(bytes([byte]))
                readable, _, _ = select.select([sock], [], [], pause)
                if readable and not sock.recv(4096):
                    closed = time.time()
                    break
                if stop.is_set():
                    break
        except OSError:
            closed = time.time()
        finally:
            sock.close()
        log.append((opened, closed))
        if closed is not None:
            time.sleep(0.2)


def test_slow_clients_are_cut_at_the_request_deadline(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    server = start_server(repo, "--http-max-connections=8", "--http-request-timeout-secs=3",
                          "--http-timeout-secs=120")
    headers = b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json" \
              b"\r\nX-Padding: " + b"a" * 200 + b"\r\n\r\n"
    body_headers = b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n"
    stop, logs, threads = threading.Event(), [], []
    # More tricklers than connections: 10 trickle their headers, 2 their body,
    # a byte a second (far inside the 120 s idle timeout).
    for index in range(12):
        log = []
        logs.append(log)
        prefix, request = (body_headers, b"{" * 500) if index < 2 else (b"", headers)
        threads.append(threading.Thread(target=trickle, args=(server.http_port, stop, prefix,
                                                              request, 1.0, log)))
    with LiveWatch(server, rest=False):
        start = time.time()
        for thread in threads:
            thread.start()
        time.sleep(1.5)  # the tricklers hold every connection now
        served = None
        while served is None and time.time() - start < 40:
            try:
                status, _, _ = server.request("GET", "/v2/health/live", timeout=10)
                if status == 200:
                    served = time.time() - start
            except OSError:
                time.sleep(0.1)
        assert served is not None, "no normal client was served during the attack"
        x = np.ones((1, 16), np.float32)
        infer_status = None
        while infer_status is None and time.time() - start < 60:
            try:
                infer_status = server.infer("mlp", x_input(x))[0]
            except OSError:
                time.sleep(0.1)
        time.sleep(1)
        stop.set()
        for thread in threads:
            thread.join()
    assert infer_status == 200
    # Served within a deadline or two (the first slots free at 3 s).
    assert served < 20, served
    held = [closed - opened for log in logs for opened, closed in log if closed is not None]
    assert len(held) >= 8, logs
    # Every connection the server closed, it closed by the deadline (3 s),
    # with slack for a loaded machine, never at the 120 s idle timeout.
    assert max(held) < 10, sorted(held)[-5:]
    assert server.metrics()["cuvil_http_request_timeouts"] >= 8
    assert server.get("/v2/health/live")[0] == 200


def inflight(server):
    return server.metrics()["cuvil_inflight_bytes"]


def test_bytes_in_flight_are_capped_server_wide(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    server = start_server(repo, "--http-max-body-bytes=3000000", "--max-inflight-bytes=4000000")
    with LiveWatch(server):
        # A holds 2.5 MB while its body arrives; B's 2 MB do not fit: 503 at
        # once (B waits for "100 Continue" before sending its body).
        a = socket.create_connection(("127.0.0.1", server.http_port), timeout=30)
        a.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 2500000"
                  b"\r\n\r\n" + b" " * 1000)
        wait_for(lambda: inflight(server) >= 2_500_000, what="A's body to be held")
        b = socket.create_connection(("127.0.0.1", server.http_port), timeout=30)
        b.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000"
                  b"\r\nExpect: 100-continue\r\n\r\n")
        reply = b""
        while b"}" not in reply:
            chunk = b.recv(4096)
            assert chunk, reply
            reply += chunk
        b.close()
        assert reply.startswith(b"HTTP/1.1 503"), reply[:200]
        assert b"(--max-inflight-bytes); retry later" in reply
        # A finishes: decoded and answered (its body is no model's input).
        a.sendall(b"[" + b" " * (2_500_000 - 1002) + b"]")
        reply = a.recv(65536)
        a.close()
        assert reply.startswith(b"HTTP/1.1 400"), reply[:200]
        wait_for(lambda: inflight(server) == 0, what="A's bytes to be given back")
        # Alone above the limit: 400, no retry helps.
        digits = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [31250, 16],
                                         "data": [0] * 500_000}]}).encode()
        status, body, _ = server.request("POST", "/v2/models/mlp/infer", digits)
        assert status == 400
        assert "decoding the request needs" in json.loads(body)["error"]
        assert "(--max-inflight-bytes)" in json.loads(body)["error"]
        assert server.infer("mlp", x_input(np.ones((8, 16), np.float32)))[0] == 200
        assert server.metrics()["cuvil_inflight_refused"] >= 1


def test_many_large_bodies_at_once_keep_memory_bounded(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    server = start_server(repo, "--http-max-body-bytes=6000000", "--max-inflight-bytes=48000000")
    rows = 30_000
    values = np.random.default_rng(1).standard_normal(rows * 16).astype(np.float32)
    body = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [rows, 16],
                                   "data": [round(float(v), 5) for v in values]}]}).encode()
    assert 3_500_000 < len(body) < 6_000_000
    assert server.infer("mlp", x_input(np.ones((1, 16), np.float32)))[0] == 200
    baseline = server.peak_rss_kib()
    statuses, lock = [], threading.Lock()

    def send():
        status, payload, _ = server.request("POST", "/v2/models/mlp/infer", body, timeout=120)
        with lock:
            statuses.append((status, json.loads(payload)["error"]))

    with LiveWatch(server):
        threads = [threading.Thread(target=send) for _ in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    codes = [status for status, _ in statuses]
    # Admitted requests are decoded and answered (400: 40000 rows is above
    # the model's batch); the others are told to retry.
    assert set(codes) <= {400, 503}, statuses
    assert 400 in codes and 503 in codes, codes
    assert all("outside 1..8" in error for status, error in statuses if status == 400)
    # All 16 decoded at once took ~330 MiB (measured with a 2 GB budget);
    # the 48 MB budget keeps it near 45 MiB.
    growth_mib = (server.peak_rss_kib() - baseline) / 1024
    assert growth_mib < 160, growth_mib
    # Given back once each answer is sent (which a client may see first).
    wait_for(lambda: inflight(server) == 0, what="every reservation to be given back")


def test_grpc_messages_are_held_against_the_budget(models, tmp_path, start_server):
    repo = make_repository(tmp_path / "repo", models, {"mlp": [(1, "mlp")]})
    server = start_server(repo, "--http-max-body-bytes=3000000", "--max-inflight-bytes=4000000")
    request = pb.ModelInferRequest(model_name="mlp")
    request.inputs.add(name="x", datatype="FP32", shape=[1, 16])
    request.raw_input_contents.append(b"\0" * 2_500_000)
    stub = server.grpc_stub()
    with pytest.raises(grpc.RpcError) as error:
        stub.ModelInfer(request, timeout=60)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "above the server's limit of 4000000 bytes in flight (--max-inflight-bytes)" in \
        error.value.details()
    assert stub.ServerLive(pb.ServerLiveRequest()).live
    wait_for(lambda: inflight(server) == 0, what="the message's bytes to be given back")
