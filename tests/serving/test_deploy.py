"""deploy/: the KServe manifests say what KServe needs, and the container
installs a Debian package for every shared library cuvil-serve needs."""

import pathlib
import re
import subprocess

import yaml

from conftest import ROOT, SERVE

DEPLOY = ROOT / "deploy"
# Packages every Debian image has.
BASE = {"libc6", "libstdc++6", "libgcc-s1", "zlib1g"}


def test_container_installs_every_needed_library():
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    installed = set(re.findall(r"\b(lib[\w.+-]+)", dockerfile.split("apt-get install")[1]
                               .split("&&")[0]))
    assert "bazel-bin/tools/cuvil-serve" in dockerfile
    # All libraries loaded at run time, resolved to the packages owning them.
    ldd = subprocess.run(["ldd", SERVE], capture_output=True, text=True, check=True).stdout
    paths = [line.split("=>")[1].split("(")[0].strip()
             for line in ldd.splitlines() if "=>" in line]
    owners = set()
    for path in paths:
        real = str(pathlib.Path(path).resolve())
        found = subprocess.run(["dpkg", "-S", real], capture_output=True, text=True)
        if found.returncode != 0:
            found = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        assert found.returncode == 0, f"no package owns {path}"
        owners.add(found.stdout.split(":")[0])
    # Each library's package, or one the Dockerfile installs that pulls it in
    # (libgrpc++1.51 depends on libgrpc29, ...): checked through apt-cache.
    direct = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends",
                             "--no-suggests", "--no-conflicts", "--no-breaks", "--no-replaces",
                             "--no-enhances", *installed], capture_output=True, text=True,
                            check=True).stdout
    reachable = set(installed) | {line.strip().split(":")[0].lstrip("|")
                                  for line in direct.splitlines()
                                  if line and not line.startswith(" ")}
    missing = {owner for owner in owners if owner.split(":")[0] not in reachable | BASE}
    assert not missing, f"the container lacks {missing}"


def test_kserve_manifests():
    runtime = yaml.safe_load((DEPLOY / "kserve" / "cluster-serving-runtime.yaml").read_text())
    assert runtime["kind"] == "ClusterServingRuntime"
    spec = runtime["spec"]
    assert set(spec["protocolVersions"]) == {"v2", "grpc-v2"}
    container = spec["containers"][0]
    assert "--model-repository=/mnt/models" in container["args"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    # Every flag the runtime passes is one cuvil-serve knows.
    help_text = subprocess.run([SERVE, "--help"], capture_output=True, text=True).stdout
    for arg in container["args"]:
        assert arg.split("=")[0] in help_text, arg
    # cuvil-serve listens on loopback by default; the pod must listen on
    # every interface, and leaves the repository API off.
    assert "--http-address=0.0.0.0" in container["args"]
    assert "--grpc-address=0.0.0.0" in container["args"]
    assert not any(arg.startswith("--allow-repository-control") for arg in container["args"])
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert '"--http-address=0.0.0.0"' in dockerfile and '"--grpc-address=0.0.0.0"' in dockerfile
    services = list(yaml.safe_load_all(
        (DEPLOY / "kserve" / "inference-service.yaml").read_text()))
    assert {s["spec"]["predictor"]["model"]["protocolVersion"] for s in services} == \
        {"v2", "grpc-v2"}
    for service in services:
        model = service["spec"]["predictor"]["model"]
        assert model["runtime"] == runtime["metadata"]["name"]
        assert model["modelFormat"]["name"] == spec["supportedModelFormats"][0]["name"]
