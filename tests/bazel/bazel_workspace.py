"""Bazel in a workspace of its own, for the tests: a fresh output base per
instance, no convenience symlinks in the source tree, the remote cache
.ci/run started (CUVIL_REMOTE_CACHE) if there is one, and the server shut
down afterwards."""

import os
import pathlib
import re
import subprocess


def cache_flags():
    url = os.environ.get("CUVIL_REMOTE_CACHE")
    return ["--config=remote-cache", f"--remote_cache={url}"] if url else []


class Workspace:
    def __init__(self, root, output_base, flags=()):
        """`flags`: build flags for every command of this workspace (one
        set, so that no command rebuilds what another built)."""
        self.root = pathlib.Path(root)
        self.output_base = pathlib.Path(output_base)
        self.flags = list(flags)

    def run(self, command, *args, check=True, flags=None, cached=True):
        """bazel COMMAND ARGS; `cached`: through the remote cache if there is
        one (else the workspace's disk cache), or through none at all."""
        startup = ["bazel", f"--output_base={self.output_base}", "--max_idle_secs=300"]
        caches = cache_flags() if cached else ["--disk_cache=", "--noremote_accept_cached"]
        extra = ([] if flags is None else flags) if command == "info" else \
            ["--symlink_prefix=/", "--color=no", "--curses=no"] + caches + self.flags + \
            (flags or [])
        result = subprocess.run(startup + [command] + extra + list(args), cwd=self.root,
                                capture_output=True, text=True)
        if check and result.returncode != 0:
            raise AssertionError(f"bazel {command} {' '.join(args)} failed "
                                 f"({result.returncode}):\n{result.stderr[-6000:]}")
        return result

    def bin(self):
        return pathlib.Path(self.run("info", "bazel-bin").stdout.strip())

    def shutdown(self):
        subprocess.run(["bazel", f"--output_base={self.output_base}", "shutdown"],
                       cwd=self.root, capture_output=True)


def process_counts(stderr):
    """Bazel's 'INFO: N processes: H remote cache hit, I internal, ...' line
    as a dict (total, and each kind)."""
    match = re.search(r"INFO: (\d+) processes?: ([^\n]*)\.", stderr)
    if not match:
        return {"total": 0}
    counts = {"total": int(match.group(1))}
    for part in match.group(2).split(", "):
        number, kind = part.split(" ", 1)
        counts[kind] = int(number)
    return counts
