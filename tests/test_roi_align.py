"""ONNX RoiAlign compiled by cuvilc (cuvil.roi_align) and checked against
torchvision.ops.roi_align (avg mode, aligned or not, fixed and adaptive
sampling, boxes partly or wholly outside the image, boxes under a pixel),
and max mode against ONNX's definition written out in numpy; a dynamic
number of regions; bad batch indices and coordinates at call time; and
the compile-time errors."""

import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper
from torchvision.ops import roi_align

ROOT = pathlib.Path(__file__).resolve().parents[1]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from cuvil_e2e import compile_model  # noqa: E402
from qdq_reference import save  # noqa: E402

FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64
IMAGES = [2, 3, 12, 14]
BOXES = np.array([[1.0, 2.0, 9.5, 7.0], [-3.0, -2.0, 4.0, 5.0], [10.0, 8.0, 30.0, 25.0],
                  [40.0, 40.0, 50.0, 60.0], [5.2, 6.1, 5.6, 6.3], [0.0, 0.0, 13.9, 11.9]],
                 np.float32)
BATCH = np.array([0, 1, 1, 0, 1, 0], np.int64)

# (attributes, output size); avg cases are torchvision's, max is ONNX's.
CASES = [
    (dict(output_height=3, output_width=4, sampling_ratio=2, spatial_scale=0.5,
          coordinate_transformation_mode="half_pixel"), (3, 4)),
    (dict(output_height=2, output_width=2, sampling_ratio=0, spatial_scale=1.0,
          coordinate_transformation_mode="output_half_pixel"), (2, 2)),
    (dict(output_height=2, output_width=3, sampling_ratio=2, spatial_scale=1.0,
          mode="max", coordinate_transformation_mode="half_pixel"), (2, 3)),
]


def bilinear_taps(image_h, image_w, y, x):
    """ONNX's four (weight, row, column) taps at (y, x); none outside."""
    if y < -1.0 or y > image_h or x < -1.0 or x > image_w:
        return [(0.0, 0, 0)] * 4
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    y1, x1 = y0 + 1, x0 + 1
    if y0 >= image_h - 1:
        y0 = y1 = image_h - 1
        y = float(y0)
    if x0 >= image_w - 1:
        x0 = x1 = image_w - 1
        x = float(x0)
    ly, lx = y - y0, x - x0
    hy, hx = 1 - ly, 1 - lx
    return [(hy * hx, y0, x0), (hy * lx, y0, x1), (ly * hx, y1, x0), (ly * lx, y1, x1)]


def onnx_max_reference(images, boxes, batch, out_h, out_w, ratio, scale, half_pixel):
    """RoiAlign's max mode as ONNX defines it: per bin, the largest weighted
    corner value over its grid points."""
    _, channels, height, width = images.shape
    out = np.zeros((len(boxes), channels, out_h, out_w))
    offset = 0.5 if half_pixel else 0.0
    for r, (box, b) in enumerate(zip(boxes.astype(np.float64), batch)):
        x1, y1, x2, y2 = box * scale - offset
        roi_h, roi_w = y2 - y1, x2 - x1
        if not half_pixel:
            roi_h, roi_w = max(roi_h, 1.0), max(roi_w, 1.0)
        bin_h, bin_w = roi_h / out_h, roi_w / out_w
        grid_h = ratio or math.ceil(bin_h)
        grid_w = ratio or math.ceil(bin_w)
        for ph in range(out_h):
            for pw in range(out_w):
                best = np.full(channels, -np.inf)
                for iy in range(grid_h):
                    for ix in range(grid_w):
                        y = y1 + ph * bin_h + (iy + 0.5) * bin_h / grid_h
                        x = x1 + pw * bin_w + (ix + 0.5) * bin_w / grid_w
                        for weight, row, col in bilinear_taps(height, width, y, x):
                            best = np.maximum(best, weight * images[b, :, row, col])
                out[r, :, ph, pw] = best
    return out


def reference(attrs, images, boxes, batch):
    size = (attrs["output_height"], attrs["output_width"])
    half_pixel = attrs["coordinate_transformation_mode"] == "half_pixel"
    if attrs.get("mode") == "max":
        return onnx_max_reference(images.astype(np.float64), boxes, batch, *size,
                                  attrs["sampling_ratio"], attrs["spatial_scale"],
                                  half_pixel)
    indexed = torch.cat([torch.from_numpy(batch).double()[:, None],
                         torch.from_numpy(boxes).double()], 1)
    return roi_align(torch.from_numpy(images).double(), indexed, size,
                     attrs["spatial_scale"], attrs["sampling_ratio"],
                     aligned=half_pixel).numpy()


def roi_model(path, images_shape, regions, cases, opset=16):
    nodes, outputs = [], []
    for i, (attrs, (out_h, out_w)) in enumerate(cases):
        nodes.append(helper.make_node("RoiAlign", ["x", "rois", "batch"], [f"y{i}"],
                                      name=f"roi{i}", **attrs))
        outputs.append(helper.make_tensor_value_info(
            f"y{i}", FLOAT, [regions, images_shape[1], out_h, out_w]))
    save(path, nodes, [helper.make_tensor_value_info("x", FLOAT, images_shape),
                       helper.make_tensor_value_info("rois", FLOAT, [regions, 4]),
                       helper.make_tensor_value_info("batch", INT64, [regions])],
         outputs, [], opset=opset)


def test_roi_align_matches_torchvision_and_onnx(tmp_path):
    path = tmp_path / "roi.onnx"
    roi_model(path, IMAGES, len(BOXES), CASES)
    compiled = compile_model(CUVILC, path, tmp_path / "roi.so")
    images = np.random.default_rng(5).standard_normal(IMAGES).astype(np.float32)
    results = compiled(images, BOXES, BATCH)
    for (attrs, _), y in zip(CASES, results):
        want = reference(attrs, images, BOXES, BATCH)
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5, err_msg=str(attrs))
    # Box 3 lies wholly outside the image: every grid point reads 0.
    assert not results[0][3].any()
    # A bad batch index, or a coordinate that is not finite, is refused.
    with pytest.raises(RuntimeError, match="invalid argument"):
        compiled(images, BOXES, np.array([0, 1, 2, 0, 1, 0], np.int64))
    nan_boxes = BOXES.copy()
    nan_boxes[4, 2] = np.nan
    with pytest.raises(RuntimeError, match="invalid argument"):
        compiled(images, nan_boxes, BATCH)


def test_huge_and_one_pixel_inputs(tmp_path):
    """A box of finite corners whose extent overflows is refused at call
    time; a box far larger than the image costs only its part over the
    image (adaptive grids of ~1e7 points a side, visited only near the
    image), and matches torchvision; one-pixel images read their pixel."""
    attrs = dict(output_height=2, output_width=2, sampling_ratio=0, spatial_scale=1.0,
                 coordinate_transformation_mode="output_half_pixel")
    path = tmp_path / "roi.onnx"
    roi_model(path, [1, 2, 1, 1], 2, [(attrs, (2, 2))])
    compiled = compile_model(CUVILC, path, tmp_path / "roi.so")
    images = np.array([[[[2.0]], [[-3.0]]]], np.float32)
    # 300 grid points a side per bin, a few of them over the pixel.
    boxes = np.array([[-300, -300, 300, 300], [-0.5, -0.5, 0.8, 0.6]], np.float32)
    batch = np.zeros(2, np.int64)
    (y,) = compiled(images, boxes, batch)
    np.testing.assert_allclose(y, reference(attrs, images, boxes, batch),
                               rtol=1e-5, atol=1e-12)
    assert np.abs(y[0]).min() > 0
    # 10^7 points a side per bin (10^14 per bin): the points near the pixel
    # over the grid's count, about 2e-14; no reference visits them all.
    huge = np.array([[-1e7, -1e7, 1e7, 1e7]] * 2, np.float32)
    (y,) = compiled(images, huge, batch)
    assert np.abs(y).max() < 1e-12
    overflow = np.array([[0, -3e38, 1, 3e38], [0, 0, 1, 1]], np.float32)
    with pytest.raises(RuntimeError, match="invalid argument"):
        compiled(images, overflow, batch)


def test_a_dynamic_number_of_regions(tmp_path):
    """With --max-batch every input's first dim is the batch: the images and
    the regions (and so the output) vary together."""
    path = tmp_path / "roi.onnx"
    roi_model(path, ["N", 3, 12, 14], "N", CASES[:1])
    compiled = compile_model(CUVILC, path, tmp_path / "roi.so", "--max-batch=8")
    images = np.random.default_rng(6).standard_normal([3, 3, 12, 14]).astype(np.float32)
    boxes, batch = BOXES[:3], np.array([2, 0, 1], np.int64)
    (y,) = compiled(images, boxes, batch, batch=3)
    np.testing.assert_allclose(y, reference(CASES[0][0], images, boxes, batch),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("attrs,rois_shape,message", [
    (dict(mode="min"), [4, 4], "RoiAlign mode must be 'avg' or 'max', got 'min'"),
    (dict(coordinate_transformation_mode="corners"), [4, 4],
     "coordinate_transformation_mode must be 'half_pixel' or 'output_half_pixel'"),
    (dict(), [4, 5], "expects rois [R, 4] of the input's element type"),
    (dict(output_height=0), [4, 4], "expects an output of at least 1 x 1"),
    (dict(sampling_ratio=1025), [4, 4], "sampling_ratio in [0, 1024], got 1 x 1 and 1025"),
    (dict(spatial_scale=-1.0), [4, 4], "positive, finite spatial_scale"),
    (dict(), [4, 4, 1], "expects rois [R, 4]"),
])
def test_roi_align_errors_name_the_node(tmp_path, attrs, rois_shape, message):
    path = tmp_path / "bad.onnx"
    save(path, [helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"],
                                 name="roi_node", **attrs)],
         [helper.make_tensor_value_info("x", FLOAT, IMAGES),
          helper.make_tensor_value_info("rois", FLOAT, rois_shape),
          helper.make_tensor_value_info("batch", INT64, [4])],
         [helper.make_tensor_value_info("y", FLOAT, [None] * 4)], [], opset=16)
    result = subprocess.run([CUVILC, str(path), "-o", str(tmp_path / "bad.so")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "roi_node" in result.stderr and message in result.stderr, result.stderr
    assert not (tmp_path / "bad.so").exists()
