"""Tests of the test wiring: scripts/test must turn red, with a report that
says what failed, when a lit test or a googletest fails, and when a lit file
silently does not run. The deliberately failing targets live in
tests/wiring/BUILD, tagged manual so that //... leaves them out."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_scripts_test(*targets):
    env = dict(os.environ)
    proc = subprocess.run(
        [str(ROOT / "scripts" / "test"), "--no-bootstrap", *targets],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, timeout=900)
    lines = proc.stdout.strip().splitlines()
    return proc.returncode, lines[-1], proc.stdout


def test_passing_targets_are_green():
    code, last, _ = run_scripts_test("//tests/wiring:passing_gtest",
                                     "//tests/wiring:filecheck_smoke.mlir.test")
    assert last == "2 passed, 0 failed"
    assert code == 0


@pytest.mark.parametrize("target,evidence", [
    ("//tests/wiring:failing_lit.mlir.test",
     "expected output that is not there"),
    ("//tests/wiring:failing_gtest", "deliberate failure from tests/wiring"),
    ("//tests/wiring:unsupported_lit.mlir.test", "lit did not run"),
])
def test_failing_target_turns_run_red(target, evidence):
    code, last, out = run_scripts_test(target)
    assert code != 0
    assert last == "0 passed, 1 failed"
    # The report names the target and shows why it failed.
    assert "== failures\n  " + target + " FAILED" in out
    assert evidence in out


def test_failure_among_passes_is_counted():
    code, last, _ = run_scripts_test("//tests/wiring:passing_gtest",
                                     "//tests/wiring:failing_gtest")
    assert code != 0
    assert last == "1 passed, 1 failed"
