"""Fusion on real models (issue #6): what the level1 and level2 pipelines
leave of torchvision ResNet-18, EfficientNet-B0 and ViT-B/16 (elementwise
maps, epilogues, raised activations and layer norms). Their numerics
after fusion are checked against PyTorch by //tests/e2e (e2e_*_test)."""

import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"


def compile_model(tmp_path, model, emit, *flags):
    assert CUVILC.exists(), "build //tools:cuvilc first (scripts/test does)"
    onnx = tmp_path / f"{model}.onnx"
    subprocess.run([sys.executable, str(ROOT / "tests/models/export_models.py"), model,
                    str(onnx)], check=True, capture_output=True)
    result = subprocess.run([str(CUVILC), str(onnx), "--quiet", f"--emit={emit}", *flags],
                            check=True, capture_output=True, text=True)
    return result.stdout, result.stderr


def kernels(level2):
    """Kernel name -> count in a level2 listing (calls and generated maps)."""
    counts = {}
    for name in re.findall(r'cuvil_l2\.(?:ukernel_call|kernel) "(\w+)"', level2):
        counts[name] = counts.get(name, 0) + 1
    return counts


def test_resnet18_has_no_standalone_epilogue_kernels(tmp_path):
    # AVX-512 (x86-64-v4): blocks of 16 channels, whatever CPU runs the test.
    level2, stats = compile_model(tmp_path, "resnet18", "mlir-level2", "--cpu=x86-64-v4",
                                  "--pass-statistics")
    counts = kernels(level2)
    # Batch norm folded into the convolutions; bias, residual add and ReLU
    # applied by the convolution's epilogue.
    for op in ("batch_norm", "relu", "add", "clip"):
        assert op not in counts, counts
    assert counts["conv2d"] == 20, counts
    # cuvil-cpu-assign-layouts: every convolution writes NCHW16c (the stem reads
    # the plain input, the pooling keeps blocks, global pooling writes the
    # plain [N, C]), with not one reorder.
    blocked = '#cuvil_l2.layout<"NCHW" to "NCHW16c">'
    convs = re.findall(r'cuvil_l2\.ukernel_call "conv2d" ins\(([^)]*)\) outs\(([^)]*)\)', level2)
    assert len(convs) == 20
    for _, outs in convs:
        assert re.fullmatch(r"%\w+(, %\w+)? : memref<1x\d+x\d+x\d+xf32, " + re.escape(blocked) +
                            r">(, memref<\d+xf32>)?", outs), outs
    stem = convs[0][0]
    assert re.search(r": memref<1x3x224x224xf32>, memref<4x3x7x7x1x16xf32>", stem), stem
    assert "cuvil_l2.copy" not in level2
    assert re.search(r'"max_pool2d" ins\(%\w+ : memref<1x64x112x112xf32, ' + re.escape(blocked), level2)
    assert re.search(r'"global_avg_pool" ins\(%\w+ : memref<1x512x7x7xf32, ' + re.escape(blocked) +
                     r'>\) outs\(%\w+ : memref<1x512x1x1xf32>\)', level2)
    # 13 direct convolutions get packed weights (the other 7 are Winograd's).
    assert "cuvil-cpu-assign-layouts: 13 packed" in stats, stats
    assert "reorders" not in stats, stats


def test_efficientnet_silu_is_a_convolution_epilogue(tmp_path):
    level1, stats = compile_model(tmp_path, "efficientnet_b0", "mlir-level1",
                                  "--pass-statistics")
    # torch exports SiLU as Sigmoid then Mul; cuvil-raise-activations makes
    # each pair one cuvil.silu, which the convolution before it then applies
    # in its epilogue: no map reads the convolution's output again. The
    # squeeze-excitation gates (a sigmoid of a [1, C, 1, 1] tensor times the
    # feature map) stay apart: fusing would recompute the sigmoid for every
    # pixel.
    assert "cuvil-raise-activations: 49 raised" in stats, stats
    assert "cuvil.map_reduce" not in level1
    silus = re.findall(r"cuvil\.conv2d[^\n]*\n\s*%\w+ = cuvil\.silu ", level1)
    assert len(silus) == len(re.findall(r"= cuvil\.silu ", level1)) == 49
    sigmoids = re.findall(r"cuvil\.sigmoid %\w+ : (tensor<[^>]+>)", level1)
    assert sigmoids and all(re.fullmatch(r"tensor<1x\d+x1x1xf32>", t) for t in sigmoids)


def test_vit_gelu_is_one_map_and_layer_norms_one_kernel(tmp_path):
    # ViT-B/16's blocks, three of them (tests/models' vit_small).
    level1, _ = compile_model(tmp_path, "vit_small", "mlir-level1")
    # ONNX's decomposed GELU (Div, Erf, Add, Mul, Mul) in each of the 3
    # MLP blocks becomes one map; no erf is left outside a map.
    assert not re.search(r"= cuvil\.erf ", level1)
    gelu = re.findall(r"math\.erf", level1)
    assert len(gelu) == 3
    # Opset 13 has no LayerNormalization: each of the 7 layer norms (two
    # per block and the final one) is nine ops, raised to one layer_norm.
    assert len(re.findall(r"= cuvil\.layer_norm ", level1)) == 7
    assert "cuvil.reduce_mean" not in level1


def test_densenet_batch_norms_are_maps_over_the_threads(tmp_path):
    code, report = compile_model(tmp_path, "densenet121", "c", "--cpu=x86-64-v4",
                                 "--explain-kernels", "--pass-statistics")
    # Each dense layer's first batch norm follows a concatenation, so no
    # convolution absorbs it: cuvil-batch-norm-to-affine makes it x * s + t,
    # one map with the ReLU after it (58 layers, 3 transitions and the final
    # norm5). No batch norm kernel is called.
    assert "cuvil-batch-norm-to-affine: 62 rewritten" in report, report
    assert not re.search(r"cuvil_batch_norm_f32\(batch", code)
    norms = [line for line in report.splitlines()
             if "/norm1/BatchNormalization'" in line]
    assert len(norms) == 58 and all("Relu'" in line and ": map -> " in line
                                    for line in norms), norms[:2]
    # Maps of 32K elements or more run over the context's threads, each its
    # own function of a range of channel blocks; smaller ones (7 x 7 planes
    # of fewer than 669 channels) stay inline in the run function.
    calls = re.findall(r"cuvil_parallel_for\(pool, ([^,]+), (cuvil_map\d+),", code)
    assert calls and len({name for _, name in calls}) == len(calls), calls
    maps = [line for line in report.splitlines() if ": map -> " in line]
    assert len(calls) < len(maps), (len(calls), len(maps))
    assert all(f"static void {name}(void *p_, int64_t begin_, int64_t end_)" in code
               for _, name in calls)


def test_eight_channel_groups_run_two_per_register(tmp_path):
    # RegNetY's groups of 8 channels on AVX-512: NCHW8c, as the report says,
    # and two blocks per 16-lane register.
    _, report = compile_model(tmp_path, "regnet_y_400mf", "mlir-level2", "--cpu=x86-64-v4",
                              "--explain-kernels")
    grouped = [line for line in report.splitlines()
               if "groups) + [relu]" in line and "NCHW8c" in line]
    assert grouped and all("8-channel blocks on a 16-lane target (two per register)" in line
                           for line in grouped), grouped[:2]
