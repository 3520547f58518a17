"""CI on a real remote cache: a second build of Cuvil, from a fresh copy of
the repository and a fresh output base, is served from the HTTP cache that
.ci/run started (scripts/remote-cache) and this run's tests filled.

It needs that cache: run under .ci/run, or `scripts/remote-cache start`
and CUVIL_REMOTE_CACHE=<its URL> scripts/test.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bazel_workspace import Workspace, process_counts  # noqa: E402

ROOT = HERE.parents[1]
# Every action of what Cuvil ships and tests.
TARGETS = ["//..."]
GOAL = 0.95


def fresh_copy(destination):
    """The repository's files (tracked and new, not ignored), as a clone of
    the working tree would have them."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


@pytest.mark.skipif(not os.environ.get("CUVIL_REMOTE_CACHE"),
                    reason="needs the remote cache .ci/run starts (CUVIL_REMOTE_CACHE)")
def test_fresh_clone_is_served_from_the_remote_cache(tmp_path, record_property):
    clone = tmp_path / "cuvil"
    fresh_copy(clone)
    workspace = Workspace(clone, tmp_path / "output_base")
    try:
        # Outputs stay in the cache (build without the bytes): the count of
        # hits is what is measured.
        log = tmp_path / "execution_log.json"
        result = workspace.run("build", *TARGETS, flags=[
            "--remote_download_minimal", f"--execution_log_json_file={log}"])
    finally:
        workspace.shutdown()
    counts = process_counts(result.stderr)
    hits = counts.get("remote cache hit", 0)
    # Internal actions (symlinks, file writes) are never cached.
    cacheable = counts["total"] - counts.get("internal", 0)
    share = hits / cacheable if cacheable else 0.0
    report = (f"remote cache: a fresh clone's build of {' '.join(TARGETS)} took "
              f"{hits} of its {cacheable} cacheable actions from the cache "
              f"({100 * share:.1f}%; {counts})")
    record_property("report", report)
    assert share >= GOAL, report + "\n" + missed(log, result.stderr)


def missed(log, stderr):
    """What ran instead of coming from the cache (the execution log's spawns
    that were not hits), and Bazel's warnings about the cache: why a build
    missed, for the failure message."""
    decoder, text, lines = json.JSONDecoder(), log.read_text(), []
    position = 0
    while position < len(text.rstrip()):
        spawn, position = decoder.raw_decode(text, position)
        while position < len(text) and text[position].isspace():
            position += 1
        if spawn.get("remoteCacheHit") or spawn.get("runner") in (None, "", "internal"):
            continue
        outputs = spawn.get("listedOutputs", [])
        lines.append(f"  {spawn.get('mnemonic', '?')} ({spawn.get('runner')}) "
                     f"-> {', '.join(outputs[:2])}")
    warnings = [line for line in stderr.splitlines() if "WARNING" in line and
                ("cache" in line.lower() or "remote" in line.lower())]
    hint = []
    if lines and all(" CppCompile " in f" {line.strip()}" for line in lines):
        hint = ["only C++ compiles missed: an incremental build filled the cache "
                "(it skips compiles whose unincluded headers changed; build from "
                "an empty output base, docs/bazel.md)"]
    return "\n".join(hint + ["ran locally:"] + lines[:80] + warnings[:20])
