"""Workspace hygiene: nothing fetches from the network, nothing generated is
committed, and the package list is the one scripts/bootstrap reads."""

import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[1]

BUILD_FILES = [p for p in ROOT.rglob("*")
               if p.is_file() and not any(part.startswith("bazel-") for part in p.parts)
               and (p.name in ("WORKSPACE", "BUILD", ".bazelrc") or p.suffix in (".bzl", ".BUILD"))]


def test_no_network_repositories():
    assert BUILD_FILES, "no build files found"
    fetching = re.compile(r"\b(http_archive|http_file|git_repository|"
                          r"download_and_extract|ctx\.download)\b|https?://")
    # Comments may show a user how to fetch Cuvil (docs/bazel.md).
    offenders = [f"{p.relative_to(ROOT)}: {line.strip()}"
                 for p in BUILD_FILES
                 for line in p.read_text().splitlines()
                 if fetching.search(line.split("#")[0])]
    assert offenders == []


def test_generated_files_are_not_committed():
    # TableGen writes *.h.inc / *.cpp.inc; hand-written X-macro lists such
    # as ukernels/sgemm4.inc are sources.
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True,
                             stdout=subprocess.PIPE, text=True).stdout.split()
    generated = [f for f in tracked
                 if f.endswith((".h.inc", ".cpp.inc", ".pb.h", ".pb.cc", ".so", ".o"))
                 or f.startswith("bazel-")]
    assert generated == []


def test_bootstrap_packages_are_listed_once():
    lines = [l.split("#")[0].strip()
             for l in (ROOT / "scripts" / "packages.txt").read_text().splitlines()]
    packages = [l for l in lines if l]
    assert len(packages) == len(set(packages))
    for needed in ("bazel-bootstrap", "llvm-22-dev", "libmlir-22-dev",
                   "mlir-22-tools", "python3-torch", "python3-onnx"):
        assert needed in packages
