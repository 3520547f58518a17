"""cuvil.load on hostile and damaged files (issue #18): every malformed
file raises cuvil.LoadError before any of its code runs, truncation cannot
crash Python, a bare file name means the file, and the loaded model runs
from the bytes that were checked."""

import os
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import cuvil

MARKER = "constructor-ran"


@pytest.fixture(scope="module")
def model_so(tmp_path_factory):
    @torch.jit.script
    def simple_classifier(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x @ torch.eye(10) * 0.1, dim=1)

    folder = tmp_path_factory.mktemp("load")
    compiled = cuvil.compile(simple_classifier, [("x", torch.float32, (1, 10))])
    return pathlib.Path(compiled.save(folder / "classifier.so"))


def test_missing_folder_and_junk_are_load_errors(tmp_path):
    with pytest.raises(cuvil.LoadError, match="no compiled model at"):
        cuvil.load(tmp_path / "nothing.so")
    with pytest.raises(cuvil.LoadError, match="is a folder"):
        cuvil.load(tmp_path)
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"not an ELF file")
    with pytest.raises(cuvil.LoadError, match="junk.so") as error:
        cuvil.load(junk)
    assert error.value.path == os.fspath(junk)
    assert isinstance(error.value, ValueError)  # what load raised before
    with pytest.raises(cuvil.LoadError, match="cuvil_context_run|Cuvil ABI note"):
        cuvil.load("/lib/x86_64-linux-gnu/libm.so.6")


def test_truncated_files_never_crash_python(model_so, tmp_path, package_dir):
    # A truncated .so mapped by dlopen faults (SIGBUS) when a page past its
    # end is touched; in a subprocess, so that a crash fails the test only.
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {package_dir!r})
        import cuvil
        data = open({os.fspath(model_so)!r}, "rb").read()
        cuts = sorted(set([0, 1, 4, 16, 63, 64, 65, 200] +
                          [len(data) * k // 23 for k in range(1, 23)] + [len(data) - 1]))
        for n in cuts:
            path = {os.fspath(tmp_path)!r} + f"/cut{{n}}.so"
            open(path, "wb").write(data[:n])
            try:
                cuvil.load(path)
            except cuvil.LoadError:
                continue
            raise SystemExit(f"a file cut to {{n}} of {{len(data)}} bytes loaded")
        print("refused", len(cuts))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "refused" in result.stdout


def test_a_foreign_library_never_runs(tmp_path):
    # The ABI's ten functions and a constructor, but no Cuvil ABI note: it is
    # refused from its bytes, and the constructor never runs.
    functions = ["cuvil_status_message", "cuvil_model_metadata", "cuvil_model_num_inputs",
                 "cuvil_model_num_outputs", "cuvil_model_workspace_size", "cuvil_model_run",
                 "cuvil_context_create", "cuvil_context_run", "cuvil_context_error",
                 "cuvil_context_destroy"]
    source = "#include <fcntl.h>\n" + "".join(f"int {f}(void) {{ return 0; }}\n"
                                               for f in functions)
    source += (f'__attribute__((constructor)) static void ran(void) '
               f'{{ creat("{MARKER}", 0644); }}\n')
    (tmp_path / "foreign.c").write_text(source)
    subprocess.run(["gcc", "-shared", "-fPIC", "foreign.c", "-o", "foreign.so"],
                   cwd=tmp_path, check=True)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with pytest.raises(cuvil.LoadError, match="note"):
            cuvil.load("foreign.so")
    finally:
        os.chdir(cwd)
    assert not (tmp_path / MARKER).exists()


def metadata_span(data):
    """Where the metadata JSON sits in a model's bytes."""
    start = data.index(b'{"abi_version":')
    return start, data.index(b"\0", start)


@pytest.mark.parametrize("replacement, message", [
    (lambda j: j.replace(b'{"abi_version"', b'["abi_version"', 1), "not JSON"),
    (lambda j: b"[" + b" " * (len(j) - 2) + b"]", "not a JSON object"),
    (lambda j: j.replace(b'"inputs":', b'"inputz":', 1), "no 'inputs' list"),
    (lambda j: j.replace(b'"dtype":', b'"dtypo":', 1), "lacks a name, dtype or shape"),
    (lambda j: j.replace(b'"shape":[1,10]', b'"shape":[1,-7]', 1), "bad shape"),
    # Integer I/O's scale must be positive (room made in the feature list).
    (lambda j: re.sub(rb'"features":\[[^]]*\]', b'"features":[]', j).replace(
        b'"shape":[1,10]', b'"quantization":{"scale":-1,"zero_point":0},'
        b'"shape":[1,10]', 1), "bad quantization"),
])
def test_malformed_metadata_is_a_load_error(model_so, tmp_path, replacement, message):
    data = model_so.read_bytes()
    start, end = metadata_span(data)
    json_text = replacement(data[start:end])
    if len(json_text) < end - start:
        json_text += b" " * (end - start - len(json_text))
    assert len(json_text) == end - start
    bad = tmp_path / "bad.so"
    bad.write_bytes(data[:start] + json_text + data[end:])
    with pytest.raises(cuvil.LoadError, match=message):
        cuvil.load(bad)


def test_a_bare_name_is_the_file_in_the_current_folder(model_so, tmp_path):
    # The README's own example: cuvil.load("classifier.so") once meant a
    # library search, and failed.
    (tmp_path / "classifier.so").write_bytes(model_so.read_bytes())
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        model = cuvil.load("classifier.so")
    finally:
        os.chdir(cwd)
    assert model(np.zeros((1, 10), np.float32)).shape == (1, 10)


def test_the_loaded_model_is_the_checked_bytes(model_so, tmp_path):
    path = tmp_path / "m.so"
    path.write_bytes(model_so.read_bytes())
    model = cuvil.load(path)
    x = np.arange(10, dtype=np.float32).reshape(1, 10)
    expected = model(x)
    # Truncating or replacing the file afterwards changes nothing loaded.
    path.write_bytes(b"\0" * 10)
    np.testing.assert_array_equal(model(x), expected)
    model.save(tmp_path / "again.so")
    np.testing.assert_array_equal(cuvil.load(tmp_path / "again.so")(x), expected)
