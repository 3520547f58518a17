"""Fixtures for the cuvil-serve tests: real models compiled by cuvilc, a
model repository, the real server binary on loopback ports, and clients
(HTTP through http.client / urllib, gRPC through Debian's grpcio with stubs
generated from cuvil/serving/grpc_predict_v2.proto).

scripts/test builds everything before pytest; run alone, this builds what it
needs with Bazel.
"""

import http.client
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = ROOT / "bazel-bin"
_NEEDED = {
    "//tools:cuvil-serve": BIN / "tools" / "cuvil-serve",
    "//tools:cuvilc": BIN / "tools" / "cuvilc",
    "//cuvil/serving:grpc_predict_v2_py": BIN / "cuvil" / "serving" / "grpc_predict_v2_pb2_grpc.py",
}
if not all(path.exists() for path in _NEEDED.values()):
    subprocess.run(["bazel", "build", *_NEEDED], cwd=ROOT, check=True)
SERVE = str(_NEEDED["//tools:cuvil-serve"])
CUVILC = str(_NEEDED["//tools:cuvilc"])
sys.path.insert(0, str(BIN / "cuvil" / "serving"))
sys.path.insert(0, str(pathlib.Path(__file__).parent))

import serving_models  # noqa: E402


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    """The compiled test models: {name: serving_models.Model}."""
    out = tmp_path_factory.mktemp("models")
    return serving_models.build_all(CUVILC, out)


_handed_out = set()


def _ephemeral_range():
    try:
        low, high = pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port():
    """A free loopback port below the kernel's ephemeral range: a port the
    kernel handed out for bind(0) can be handed out again as the local port
    of any outgoing connection before the server binds it (CI saw exactly
    that), while ports below the range are only ever taken by explicit binds."""
    import random
    low, _ = _ephemeral_range()
    for _ in range(200):
        port = random.randrange(max(1024, low - 12000), low)
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError("no free loopback port below the ephemeral range")


class Server:
    """A running cuvil-serve with a REST and a gRPC endpoint."""

    def __init__(self, repository, *flags, wait_ready=True, ssl_context=None,
                 grpc_credentials=None, host="127.0.0.1"):
        self.repository = pathlib.Path(repository)
        self.host = host
        self.ssl_context = ssl_context
        self.grpc_credentials = grpc_credentials
        for attempt in range(3):
            self._launch(repository, flags)
            try:
                self._wait_up(wait_ready)
                return
            except AssertionError:
                # A port taken between free_port() and the server's bind is
                # the test's race, not the server's fault: take new ports.
                if attempt == 2 or "in use?" not in self.output():
                    raise
                self.stop()

    def _launch(self, repository, flags):
        self.http_port, self.grpc_port = free_port(), free_port()
        self.log = open(self.repository.parent / f"serve-{self.http_port}.log", "w+")
        self.proc = subprocess.Popen(
            [SERVE, f"--model-repository={repository}",
             f"--http-port={self.http_port}", f"--grpc-port={self.grpc_port}", *flags],
            stdout=self.log, stderr=subprocess.STDOUT)

    def _wait_up(self, wait_ready):
        deadline = time.time() + 60
        while True:
            assert self.proc.poll() is None, "cuvil-serve exited:\n" + self.output()
            try:
                status, _ = self.get("/v2/health/ready" if wait_ready else "/v2/health/live")
                if status == 200:
                    break
            except OSError:
                pass
            assert time.time() < deadline, "cuvil-serve did not come up:\n" + self.output()
            time.sleep(0.05)
        # REST starts first; the gRPC endpoint starts after it, so a test
        # that talks gRPC right away waits for its port too.
        while True:
            assert self.proc.poll() is None, "cuvil-serve exited:\n" + self.output()
            try:
                socket.create_connection((self.host, self.grpc_port), timeout=1).close()
                break
            except OSError:
                pass
            assert time.time() < deadline, "gRPC did not come up:\n" + self.output()
            time.sleep(0.05)

    def output(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def request(self, method, path, body=None, headers=None, timeout=60):
        if self.ssl_context:
            conn = http.client.HTTPSConnection(self.host, self.http_port, timeout=timeout,
                                               context=self.ssl_context)
        else:
            conn = http.client.HTTPConnection(self.host, self.http_port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.read(), dict(response.getheaders())
        finally:
            conn.close()

    def get(self, path):
        status, body, _ = self.request("GET", path)
        return status, body

    def post_json(self, path, payload):
        status, body, _ = self.request("POST", path, json.dumps(payload).encode(),
                                       {"Content-Type": "application/json"})
        return status, (json.loads(body) if body else None)

    def infer(self, model, inputs, version=None, **extra):
        path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + "/infer"
        return self.post_json(path, {"inputs": inputs, **extra})

    def grpc_channel(self):
        import grpc
        target = f"[{self.host}]:{self.grpc_port}" if ":" in self.host else \
            f"{self.host}:{self.grpc_port}"
        if self.grpc_credentials:
            # The tests' certificate names localhost and 127.0.0.1.
            return grpc.secure_channel(target, self.grpc_credentials,
                                       options=[("grpc.ssl_target_name_override", "localhost")])
        return grpc.insecure_channel(target)

    def grpc_stub(self):
        import grpc_predict_v2_pb2_grpc as pb_grpc
        return pb_grpc.GRPCInferenceServiceStub(self.grpc_channel())

    def threads(self):
        """The server process's thread count."""
        status = pathlib.Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(status.split("Threads:")[1].split()[0])

    def peak_rss_kib(self):
        status = pathlib.Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(status.split("VmHWM:")[1].split()[0])

    def metrics(self):
        status, body = self.get("/metrics")
        assert status == 200
        values = {}
        for line in body.decode().splitlines():
            if line and not line.startswith("#"):
                key, value = line.rsplit(" ", 1)
                values[key] = float(value)
        return values

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


class LiveWatch:
    """Asks /v2/health/live (REST) and ServerLive (gRPC) every 50 ms from a
    thread until the block ends; failures lists every answer that was not
    live (an attack must never take the server down)."""

    def __init__(self, server, rest=True, grpc_live=True, interval=0.05):
        import threading
        self.server, self.rest, self.grpc_live, self.interval = server, rest, grpc_live, interval
        self.failures, self.checks = [], 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self):
        import grpc_predict_v2_pb2 as pb
        stub = self.server.grpc_stub()
        while True:  # at least once, however short the block
            if self.server.proc.poll() is not None:
                self.failures.append(f"the server exited with {self.server.proc.returncode}")
                return
            if self.rest:
                try:
                    status, _, _ = self.server.request("GET", "/v2/health/live", timeout=20)
                    if status != 200:
                        self.failures.append(f"REST live answered {status}")
                except OSError as error:
                    self.failures.append(f"REST live: {error!r}")
            if self.grpc_live:
                try:
                    if not stub.ServerLive(pb.ServerLiveRequest(), timeout=20).live:
                        self.failures.append("gRPC ServerLive said not live")
                except Exception as error:  # grpc.RpcError
                    self.failures.append(f"gRPC ServerLive: {error!r}")
            self.checks += 1
            if self._stop.wait(self.interval):
                return

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        if exc[0] is None:
            assert self.failures == [], self.failures[:5]
            assert self.checks > 0


@pytest.fixture
def start_server():
    """start_server(repository, *flags) -> Server, stopped after the test."""
    servers = []

    def start(repository, *flags, **kwargs):
        server = Server(repository, *flags, **kwargs)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


ABI_FUNCTIONS = ["cuvil_status_message", "cuvil_model_metadata", "cuvil_model_num_inputs",
                 "cuvil_model_num_outputs", "cuvil_model_workspace_size", "cuvil_model_run",
                 "cuvil_context_create", "cuvil_context_run", "cuvil_context_error",
                 "cuvil_context_destroy"]

_STUB_BODIES = {
    "cuvil_model_metadata": "const char *cuvil_model_metadata(void) { return metadata; }",
    "cuvil_status_message": "const char *cuvil_status_message(int s) { return \"stub\"; }",
    "cuvil_context_create": "int cuvil_context_create(int n, void **c) { *c = (void *)1; "
                            "return 0; }",
    "cuvil_context_run": "int cuvil_context_run(void *c, int64_t b, const void *const *i, "
                         "void *const *o) { return 1; }",
    "cuvil_context_error": "const char *cuvil_context_error(const void *c) { return \"stub\"; }",
    "cuvil_context_destroy": "void cuvil_context_destroy(void *c) {}",
}


def build_stub(directory, name, metadata, note_version=1, note=True, functions=ABI_FUNCTIONS,
               metadata_section=True, constructor_marker=None):
    """A stand-in model .so built with gcc: the ABI functions asked for
    (context_run fails), `metadata` (a JSON text) as cuvil_model_metadata()
    and in .cuvil.metadata, and the Cuvil ABI note of `note_version`. With
    `constructor_marker`, loading it creates that file (proof it ran)."""
    literal = json.dumps(metadata)
    section = '__attribute__((section(".cuvil.metadata"), used)) ' if metadata_section else ""
    source = ["#include <stdint.h>", "#include <stdio.h>",
              f"{section}static const char metadata[] = {literal};"]
    if constructor_marker:
        source.append("__attribute__((constructor)) static void ran(void) { "
                      f"FILE *f = fopen({json.dumps(str(constructor_marker))}, \"w\"); "
                      "if (f) fclose(f); }")
    for function in functions:
        source.append(_STUB_BODIES.get(function, f"int {function}(void) {{ return 0; }}"))
    if note:
        source.append('__asm__(".pushsection .note.cuvil,\\"a\\",%note\\n.balign 4\\n'
                      '.long 6\\n.long 4\\n.long 1\\n.asciz \\"Cuvil\\"\\n.balign 4\\n'
                      f'.long {note_version}\\n.popsection\\n");')
    c_file = pathlib.Path(directory) / f"{name}.c"
    c_file.write_text("\n".join(source) + "\n")
    so = c_file.with_suffix(".so")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(so), str(c_file)], check=True)
    return so


def make_repository(root, models, entries):
    """entries: {repo_name: [(version, model_name), ...] or with a config}.
    A value may be a dict {"versions": [...], "config": {...}}."""
    root = pathlib.Path(root)
    root.mkdir(parents=True, exist_ok=True)
    for name, spec in entries.items():
        if isinstance(spec, list):
            spec = {"versions": spec}
        for version, model in spec["versions"]:
            install(root, name, version, models[model].so)
        if "config" in spec:
            (root / name / "config.json").write_text(json.dumps(spec["config"]))
    return root


def install(root, name, version, so):
    """Copies a .so into the repository atomically (as a deploy would)."""
    folder = pathlib.Path(root) / name / str(version)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / ".model.so.tmp"
    shutil.copyfile(so, tmp)
    os.replace(tmp, folder / "model.so")
