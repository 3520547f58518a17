"""Bandwidth-aware batching on a model built to need it: GoogLeNet's
Inception blocks. The cost model (cuvil/passes/BatchingCostModel.h, with the
compiling machine's description) merges the parallel 1x1 branches of the
14x14 blocks; numerics of the merged model are checked against PyTorch by
//tests/e2e:e2e_googlenet_test."""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_googlenet_inception_branches_merge(tmp_path):
    cuvilc = ROOT / "bazel-bin" / "tools" / "cuvilc"
    assert cuvilc.exists(), "build //tools:cuvilc first (scripts/test does)"
    onnx = tmp_path / "googlenet.onnx"
    subprocess.run([sys.executable, str(ROOT / "tests/models/export_models.py"), "googlenet",
                    str(onnx)], check=True, capture_output=True)
    # A fixed target (x86-64-v4: AVX-512, default caches and bandwidths), so
    # the decision does not depend on the machine running the test.
    level1 = subprocess.run([str(cuvilc), str(onnx), "--cpu=x86-64-v4", "--quiet",
                             "--emit=mlir-level1"], check=True, capture_output=True,
                            text=True).stdout
    splits = re.findall(r"cuvil.split .* sizes = \[([0-9, ]+)\]", level1)
    # Inception 4a-4e's branches 1, 2 and 3 (1x1 convolutions of one input):
    # 192+96+16, 160+112+24, 128+128+24, 112+144+32, 256+160+32 in torchvision.
    assert len(splits) >= 4, splits
    assert "192, 96, 16" in splits
    merged = re.findall(r"tensor<(\d+)x(\d+)x1x1xf32>, tensor<\d+xf32>\) -> tensor<1x\1x14x14",
                        level1)
    assert ("304", "480") in merged
