"""scripts/remote-cache, the HTTP cache .ci/run starts: it stores and
returns entries the way Bazel's protocol uses them, reuses a running cache,
moves past a taken port, and says why when it cannot start."""

import os
import pathlib
import socket
import subprocess
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "remote-cache"


def free_port_run(count):
    """The first of `count` consecutive free loopback ports."""
    for first in range(29100, 30000, count):
        sockets = []
        try:
            for port in range(first, first + count):
                s = socket.socket()
                s.bind(("127.0.0.1", port))
                sockets.append(s)
            return first
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    pytest.skip("no free loopback ports")


@pytest.fixture
def cache(tmp_path):
    env = dict(os.environ, CUVIL_REMOTE_CACHE_DIR=str(tmp_path / "cache"),
               CUVIL_REMOTE_CACHE_PORT=str(free_port_run(21)))

    def run(*args):
        return subprocess.run([str(SCRIPT), *args], env=env, capture_output=True,
                              text=True, timeout=60)
    yield run, env
    run("stop")


def test_stores_and_returns_entries(cache):
    run, env = cache
    started = run("start")
    assert started.returncode == 0, started.stderr
    url = started.stdout.strip()
    assert url == f"http://127.0.0.1:{env['CUVIL_REMOTE_CACHE_PORT']}"
    body = b"an action result"
    urllib.request.urlopen(urllib.request.Request(url + "/ac/" + "ab" * 32, data=body,
                                                  method="PUT"), timeout=5)
    assert urllib.request.urlopen(url + "/ac/" + "ab" * 32, timeout=5).read() == body
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(url + "/cas/" + "cd" * 32, timeout=5)
    assert missing.value.code == 404  # a miss, as Bazel expects
    # A second start reuses the running cache; the entry is on disk.
    assert run("start").stdout.strip() == url
    assert run("url").stdout.strip() == url
    assert (pathlib.Path(env["CUVIL_REMOTE_CACHE_DIR"]) / "data" / "ac" / ("ab" * 32)).exists()
    run("stop")
    assert run("url").returncode != 0


def test_moves_past_a_taken_port(cache):
    run, env = cache
    taken = socket.socket()
    taken.bind(("127.0.0.1", int(env["CUVIL_REMOTE_CACHE_PORT"])))
    taken.listen()
    try:
        started = run("start")
    finally:
        taken.close()
    assert started.returncode == 0, started.stderr
    assert started.stdout.strip() == f"http://127.0.0.1:{int(env['CUVIL_REMOTE_CACHE_PORT']) + 1}"


def test_says_why_when_no_port_is_free(cache):
    run, env = cache
    first = int(env["CUVIL_REMOTE_CACHE_PORT"])
    taken = []
    try:
        for port in range(first, first + 21):
            s = socket.socket()
            s.bind(("127.0.0.1", port))
            s.listen()
            taken.append(s)
        started = run("start")
    finally:
        for s in taken:
            s.close()
    assert started.returncode != 0 and started.stdout == ""
    assert f"no free port for nginx on 127.0.0.1 ports {first}..{first + 20}" in started.stderr
    assert "set CUVIL_REMOTE_CACHE_PORT" in started.stderr


def test_usage(cache):
    run, _ = cache
    result = run("restart")
    assert result.returncode == 2
    assert "scripts/remote-cache start" in result.stdout
