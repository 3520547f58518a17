"""Names from a model are untrusted (issue #18): tensor, node and graph names
and the source paths in nodes' doc strings reach the generated C, the header
and the JSON metadata. Each hostile name below must compile to an artifact
that runs no code of the model's and reports the name exactly (as UTF-8,
with invalid bytes replaced).

The payload would, if it became code, create a file when the .so is loaded:
the test loads the .so in a fresh process and checks that no file appears.
"""

import ctypes
import json
import pathlib
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parents[2]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
MARKER = "pwned.marker"

# Each would end a C comment or string and add code; or breaks a line
# splice, a trigraph, JSON, UTF-8; or is merely long.
PAYLOAD = (f'*/ extern int creat(const char *, int); __attribute__((constructor)) '
           f'static void pwn(void) {{ creat("{MARKER}", 0644); }} /*')
HOSTILE = [
    ("in0 " + PAYLOAD).encode(),
    b'in1 " "}], "inputs": [{"name": "evil',
    b"in2 // line comment \\",
    b"in3 \n#include </etc/passwd>\n",
    b"in4 ??/ trigraph ??= end",
    b"in5 \x00 nul \x01\x1b[31m",
    b"in6 \xff\xfe not utf-8 \xc3",
    b"in7 \xe2\x82\xac caf\xc3\xa9",
    b"in8 %NAME% %METADATA% %IO_COMMENTS%",
    b"in9 " + b"long" * 3000,
]
OUTPUT_NAME = b"out " + PAYLOAD.encode()
NODE_NAME = b"node " + PAYLOAD.encode()
DOC_PATH = b"/home/user/" + PAYLOAD.encode() + b".py"


def placeholder(index, length):
    """A printable stand-in of exactly `length` bytes, unique by index."""
    text = f"@P{index:03d}@"
    return (text + "@" * length)[:length].encode()


def write_with_names(graph, stand_ins, names, path):
    """Writes the model of `graph` with each stand-in replaced by its
    hostile name, byte for byte."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    data = model.SerializeToString()
    for stand_in, name in zip(stand_ins, names):
        assert data.count(stand_in) >= 1
        data = data.replace(stand_in, name)
    path.write_bytes(data)


def hostile_model(path):
    """Sum of the inputs, then Relu, each name hostile. protobuf's Python API
    takes only valid UTF-8, so the model is built with same-length stand-ins
    which are then replaced byte for byte in the serialized model."""
    names = HOSTILE + [OUTPUT_NAME, NODE_NAME, DOC_PATH]
    stand_ins = [placeholder(i, len(name)) for i, name in enumerate(names)]
    inputs = [s.decode() for s in stand_ins[:len(HOSTILE)]]
    out, node, doc = (s.decode() for s in stand_ins[len(HOSTILE):])
    nodes = [helper.make_node("Sum", inputs, ["s"], name=node),
             helper.make_node("Relu", ["s"], [out], name="relu",
                              doc_string=f"{doc}(12): forward\n")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(
        name, TensorProto.FLOAT, [2, 3]) for name in inputs],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [2, 3])])
    write_with_names(graph, stand_ins, names, path)


def cuvilc(*args, cwd):
    assert CUVILC.exists(), "build //tools:cuvilc first (scripts/test does)"
    return subprocess.run([str(CUVILC), "--quiet", *map(str, args)], cwd=cwd,
                          capture_output=True, check=True)


def as_json_text(name):
    """What the metadata holds for a name: UTF-8, invalid bytes replaced."""
    return name.decode("utf-8", errors="replace")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    hostile_model(tmp / "m.onnx")
    cuvilc("m.onnx", "-o", "m.so", cwd=tmp)
    return tmp


def test_loading_the_artifact_runs_nothing_of_the_model(built):
    # A fresh process loads the .so (constructors run at dlopen) in the
    # folder where the payload would create its file.
    subprocess.run([sys.executable, "-c", "import ctypes; ctypes.CDLL('./m.so')"],
                   cwd=built, check=True)
    assert not (built / MARKER).exists()


def test_metadata_reports_every_name_exactly(built):
    lib = ctypes.CDLL(str(built / "m.so"))
    lib.cuvil_model_metadata.restype = ctypes.c_char_p
    metadata = json.loads(lib.cuvil_model_metadata().decode())
    assert [t["name"] for t in metadata["inputs"]] == [as_json_text(n) for n in HOSTILE]
    assert [t["name"] for t in metadata["outputs"]] == [as_json_text(OUTPUT_NAME)]
    # And the model computes what it should.
    xs = [np.full((2, 3), i - 4.5, np.float32) for i in range(len(HOSTILE))]
    y = np.zeros((2, 3), np.float32)
    lib.cuvil_model_workspace_size.restype = ctypes.c_size_t
    ws = np.zeros(lib.cuvil_model_workspace_size() + 64, np.uint8)
    ins = (ctypes.c_void_p * len(xs))(*[x.ctypes.data for x in xs])
    outs = (ctypes.c_void_p * 1)(y.ctypes.data)
    assert lib.cuvil_model_run(ctypes.c_int64(0), ins, outs, ctypes.c_void_p(ws.ctypes.data),
                               ctypes.c_size_t(ws.size)) == 0
    np.testing.assert_array_equal(y, np.maximum(sum(xs), 0))


def test_header_and_c_source_compile_strictly_and_quote_names_escaped(built):
    cuvilc("m.onnx", "--emit=c", "-o", "m.c", cwd=built)
    # Trigraphs on, every warning an error: a name that ended a comment or
    # a string would be a syntax error or an undeclared identifier here.
    for source in ("m.c",):
        subprocess.run(["gcc", "-std=c99", "-pedantic", "-trigraphs", "-Wall", "-Wextra",
                        "-Werror", "-Wno-overlength-strings", "-c", source, "-o",
                        "/dev/null"], cwd=built, check=True)
    (built / "use_header.c").write_text('#include "m.h"\nint main(void) {\n'
                                        '  return cuvil_model_num_inputs() != 10;\n}\n')
    subprocess.run(["gcc", "-std=c99", "-pedantic", "-trigraphs", "-Wall", "-Wextra",
                    "-Werror", "use_header.c", "-o", "use_header", "-L.", "-l:m.so",
                    "-Wl,-rpath," + str(built)], cwd=built, check=True)
    subprocess.run(["./use_header"], cwd=built, check=True)
    assert not (built / MARKER).exists()
    header = (built / "m.h").read_bytes()
    source = (built / "m.c").read_bytes()
    # The payload is quoted in comments with its "*" escaped, so it cannot
    # end them; raw control and non-ASCII bytes never reach the files.
    assert b"'in0 \\x2a/ extern int creat(" in header
    assert b"'node \\x2a/ extern int creat(" in source
    # (The C source also holds the names in the metadata's string literal,
    # where "*/" is just characters.)
    assert b"*/ extern int creat(" not in header
    for text in (header, source):
        assert b"\x00" not in text and b"\xff" not in text
        assert max(len(line) for line in text.split(b"\n")) < 400


def test_hostile_function_name_from_level1_mlir(tmp_path):
    # A .mlir model names its function; that name reaches the header and
    # the metadata too.
    name = PAYLOAD.replace('"', '\\"')
    (tmp_path / "m.mlir").write_text(
        f'func.func @"{name}"(%x: tensor<2xf32>) -> tensor<2xf32> {{\n'
        "  %y = cuvil.relu %x : tensor<2xf32>\n  return %y : tensor<2xf32>\n}\n")
    cuvilc("m.mlir", "-o", "m.so", cwd=tmp_path)
    subprocess.run([sys.executable, "-c", "import ctypes; ctypes.CDLL('./m.so')"],
                   cwd=tmp_path, check=True)
    assert not (tmp_path / MARKER).exists()
    lib = ctypes.CDLL(str(tmp_path / "m.so"))
    lib.cuvil_model_metadata.restype = ctypes.c_char_p
    assert json.loads(lib.cuvil_model_metadata())["model"] == PAYLOAD


def test_errors_quote_hostile_names_without_control_characters(tmp_path):
    # A node name with a terminal escape and a newline that would forge a
    # second error line: the message escapes both.
    name = "x\x1b[2J\nerror: all good"
    nodes = [helper.make_node("MatMul", ["x", "x"], ["y"], name=name)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [2, 3])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    (tmp_path / "bad.onnx").write_bytes(model.SerializeToString())
    result = subprocess.run([str(CUVILC), "--quiet", "bad.onnx"], cwd=tmp_path,
                            capture_output=True)
    assert result.returncode == 1
    assert b"'x\\x1b[2J\\x0aerror: all good'" in result.stderr
    assert b"\x1b" not in result.stderr
    assert result.stderr.count(b"\n") == 1


def hostile_dense_model(path, node_name=NODE_NAME):
    """A Gemm and a Relu whose input, output and node names and source path
    are hostile (built with stand-ins like hostile_model)."""
    names = [HOSTILE[0], OUTPUT_NAME, node_name, DOC_PATH]
    stand_ins = [placeholder(i, len(name)) for i, name in enumerate(names)]
    x, out, node, doc = (s.decode() for s in stand_ins)
    weight = helper.make_tensor("w", TensorProto.FLOAT, [3, 4],
                                np.linspace(-1, 1, 12).tolist())
    nodes = [helper.make_node("Gemm", [x, "w"], ["h"], name=node, transB=1,
                              doc_string=f"{doc}(7): forward\n"),
             helper.make_node("Relu", ["h"], [out], name="relu")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 3])],
        initializer=[weight])
    write_with_names(graph, stand_ins, names, path)


def test_an_fpga_project_quotes_hostile_names_without_running_them(tmp_path):
    hostile_dense_model(tmp_path / "d.onnx")
    cuvilc("d.onnx", "--target=fpga", "--device=xczu9eg", "-o", "design",
           cwd=tmp_path)
    project = tmp_path / "design"
    # The generated C++ compiles and runs (a constructor would run first).
    result = subprocess.run(["make", "-s", "csim"], cwd=project,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "0 outputs differ" in result.stdout
    assert not (project / MARKER).exists()
    report = json.loads((project / "report.json").read_text())
    assert report["layers"][0]["node"] == as_json_text(NODE_NAME)
    assert as_json_text(DOC_PATH) in report["layers"][0]["location"]
    # In the sources the names are only ever inside // comments, escaped
    # (no newline or line splice can end one early).
    for path in (project / "firmware").iterdir():
        for line in path.read_text().splitlines():
            if "pwn" in line:
                assert line.lstrip().startswith("//"), (path.name, line)


def test_fpga_notes_show_a_hostile_node_name_escaped(tmp_path):
    node = b"node \x1b[31m red\ncuvilc: forged line"
    hostile_dense_model(tmp_path / "d.onnx", node_name=node)
    # Reuse factor 5 is not valid for 4 x 3 products: a note names the layer.
    result = subprocess.run(
        [str(CUVILC), "d.onnx", "--target=fpga", "--device=xczu9eg",
         "--reuse-factor=5", "-o", "design"],
        cwd=tmp_path, capture_output=True, check=True)
    assert b"\x1b" not in result.stderr
    assert b"\ncuvilc: forged line" not in result.stderr
    assert b"node \\x1b[31m red\\x0acuvilc: forged line (layer1)" in result.stderr
    report = json.loads((tmp_path / "design" / "report.json").read_text())
    assert report["layers"][0]["node"] == as_json_text(node)
