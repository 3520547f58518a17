//===- ConvertResize.cpp - ONNX Resize and Upsample -----------------------===//
//
// Interpolation is separable: each resized axis is a sum over a few taps of
// a gather along that axis (constant indices) times a constant weight per
// output position. The taps and weights are computed here, in double, by
// ONNX's formulas (coordinate transformation, the n nearest neighbours of
// the source coordinate with edge padding, the nearest / linear / cubic
// coefficients, exclude_outside, tf_crop_and_resize's extrapolation), and
// the axes are resized innermost first, as ONNX's reference does. Nearest
// is one gather per axis; the products and sums of linear and cubic fuse
// into one map (cuvil-fuse-elementwise).
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

#include <cmath>

namespace cuvil::onnx_import {

namespace {

struct ResizeAttrs {
  std::string mode, transform, nearestMode;
  double cubicA = -0.75, extrapolation = 0;
  bool excludeOutside = false;
};

/// The interpolation of one axis: for each output position, `taps` source
/// indices (clamped into the input) and weights, plus a constant added
/// where the source coordinate falls outside a tf_crop_and_resize region.
struct AxisTaps {
  int64_t taps = 0;
  std::vector<std::vector<int64_t>> index; // [tap][position]
  std::vector<std::vector<double>> weight; // [tap][position]
  std::vector<double> outside;             // [position]
  bool hasOutside = false;
};

/// The source coordinate of output position `x` (ONNX's
/// coordinate_transformation_mode), or nullopt outside a crop region. `out`
/// is the output length as ONNX's reference has it: in * scale unfloored
/// when scales are given.
std::optional<double> sourceCoordinate(const ResizeAttrs &a, double x,
                                       double scale, int64_t in, double out,
                                       double roiStart, double roiEnd) {
  const std::string &t = a.transform;
  if (t == "align_corners")
    return out == 1 ? 0.0 : x * (in - 1) / (out - 1);
  if (t == "asymmetric")
    return x / scale;
  if (t == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  if (t == "pytorch_half_pixel")
    return out == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (t == "tf_crop_and_resize") {
    double s = out == 1 ? (roiEnd - roiStart) * (in - 1) / 2
                        : x * (roiEnd - roiStart) * (in - 1) / (out - 1);
    s += roiStart * (in - 1);
    if (s < 0 || s > in - 1)
      return std::nullopt;
    return s;
  }
  return (x + 0.5) / scale - 0.5; // half_pixel
}

/// The coefficients of the taps at `ratio` (in (0, 1]) past the first
/// neighbour below the coordinate.
std::vector<double> coefficients(const ResizeAttrs &a, double ratio,
                                 bool integral) {
  if (a.mode == "nearest") {
    if (integral)
      return {0, 1};
    if (a.nearestMode == "round_prefer_ceil")
      return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (a.nearestMode == "floor")
      return {1, 0};
    if (a.nearestMode == "ceil")
      return {0, 1};
    return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
  }
  if (a.mode == "linear")
    return {1 - ratio, ratio};
  double A = a.cubicA, r = ratio, s = 1 - ratio;
  return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
          ((A + 2) * r - (A + 3)) * r * r + 1,
          ((A + 2) * s - (A + 3)) * s * s + 1,
          ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A};
}

AxisTaps axisTaps(const ResizeAttrs &a, int64_t in, int64_t out, double scale,
                  double roiStart, double roiEnd) {
  AxisTaps result;
  result.taps = a.mode == "cubic" ? 4 : 2;
  result.index.assign(result.taps, {});
  result.weight.assign(result.taps, {});
  for (int64_t x = 0; x < out; ++x) {
    std::optional<double> s =
        sourceCoordinate(a, x, scale, in, in * scale, roiStart, roiEnd);
    result.outside.push_back(s ? 0 : a.extrapolation);
    result.hasOutside |= !s;
    double source = s.value_or(0);
    bool integral = source == std::floor(source);
    double ratio = integral ? 1 : source - std::floor(source);
    std::vector<double> c = coefficients(a, ratio, integral);
    // The n nearest integers to the coordinate, ties to the lower one: for
    // a ratio in (0, 1], floor - n/2 + 1 ... floor + n/2 (or one lower when
    // the coordinate is an integer).
    int64_t first = static_cast<int64_t>(std::floor(source)) - result.taps / 2 +
                    1 - (integral ? 1 : 0);
    double total = 0;
    for (int64_t t = 0; t < result.taps; ++t) {
      int64_t idx = first + t;
      if (a.excludeOutside && (idx < 0 || idx >= in))
        c[t] = 0;
      total += c[t];
    }
    for (int64_t t = 0; t < result.taps; ++t) {
      double w = s ? c[t] : 0;
      if (a.excludeOutside && total != 0)
        w /= total;
      result.index[t].push_back(std::clamp<int64_t>(first + t, 0, in - 1));
      result.weight[t].push_back(w);
    }
  }
  return result;
}

} // namespace

LogicalResult Importer::convertResize(const onnx::NodeProto &node,
                                      Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  bool upsample = node.op_type() == "Upsample";
  ResizeAttrs a;
  a.mode = attrString(node, "mode", "nearest");
  // Upsample is Resize with source = x / scale and, for nearest, floor.
  a.transform = upsample ? "asymmetric"
                         : attrString(node, "coordinate_transformation_mode",
                                      "half_pixel");
  a.nearestMode = upsample
                      ? "floor"
                      : attrString(node, "nearest_mode", "round_prefer_floor");
  a.cubicA = attrFloat(node, "cubic_coeff_a", -0.75);
  a.excludeOutside = attrInt(node, "exclude_outside", 0) != 0;
  a.extrapolation = attrFloat(node, "extrapolation_value", 0);
  const std::string &op = node.op_type();
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic")
    return emitError(loc) << op << " mode must be nearest, linear or cubic, "
                          << "got '" << a.mode << "'";
  for (const char *name : {"antialias", "axes"})
    if (attr(node, name))
      return emitError(loc)
             << op << " with '" << name << "' (opset 18) is not supported yet";
  if (attrString(node, "keep_aspect_ratio_policy", "stretch") != "stretch")
    return emitError(loc) << op << " keeps the aspect ratio only as "
                          << "'stretch' in Cuvil";
  if (a.mode != "nearest" && !isa<FloatType>(type.getElementType()))
    return emitError(loc) << op << " " << a.mode << " needs a float input, got "
                          << type;

  // Output sizes and scales: `sizes` (input 3) or `scales` (input 2, or 1
  // for Upsample and Resize-10).
  int scalesInput = upsample || opset < 11 ? 1 : 2;
  SmallVector<double> scales;
  SmallVector<int64_t> sizes;
  if (!upsample && opset >= 11 && hasInput(node, 3)) {
    FailureOr<SmallVector<int64_t>> given = requireInts(node, 3, "sizes");
    if (failed(given))
      return failure();
    sizes = *given;
  } else {
    FailureOr<HostTensor> given = requireHost(node, scalesInput, "scales");
    if (failed(given))
      return failure();
    for (int64_t i = 0; i < given->numElements(); ++i)
      scales.push_back(given->at(i));
  }
  size_t count = sizes.empty() ? scales.size() : sizes.size();
  if (static_cast<int64_t>(count) != rank)
    return emitError(loc) << op << " expects one "
                          << (sizes.empty() ? "scale" : "size")
                          << " per dimension of its " << rank
                          << "-D input, got " << count;
  SmallVector<double> roi;
  if (a.transform == "tf_crop_and_resize") {
    FailureOr<HostTensor> given = requireHost(node, 1, "roi");
    if (failed(given))
      return failure();
    if (given->numElements() != 2 * rank)
      return emitError(loc) << op << " expects a roi of 2 x " << rank
                            << " values, got " << given->numElements();
    for (int64_t i = 0; i < given->numElements(); ++i)
      roi.push_back(given->at(i));
  }

  // One axis resized by its taps: sum over taps of gather * weight.
  auto resizeAxis = [&](Value x, int64_t axis,
                        const AxisTaps &taps) -> FailureOr<Value> {
    bool nearest = a.mode == "nearest";
    auto type = cast<RankedTensorType>(x.getType());
    Type element = type.getElementType();
    int64_t out = taps.index.front().size();
    auto indexType = RankedTensorType::get({out}, builder.getI64Type());
    // Weights and the extrapolated constant vary along `axis` only.
    SmallVector<int64_t> along(type.getRank(), 1);
    along[axis] = out;
    auto alongType = RankedTensorType::get(along, element);
    auto constant = [&](ArrayRef<double> values) -> Value {
      return l1::ConstantOp::create(builder, loc,
                                    floatElements(alongType, values));
    };
    auto gather = [&](ArrayRef<int64_t> indices) -> FailureOr<Value> {
      Value idx = l1::ConstantOp::create(
          builder, loc, DenseElementsAttr::get(indexType, indices));
      return create<l1::GatherOp>(loc, x, idx, builder.getI64IntegerAttr(axis));
    };
    if (nearest && !taps.hasOutside) {
      // One weight per position is 1: gather that tap.
      SmallVector<int64_t> chosen;
      for (int64_t p = 0; p < out; ++p)
        chosen.push_back(taps.weight[1][p] != 0 ? taps.index[1][p]
                                                : taps.index[0][p]);
      return gather(chosen);
    }
    FailureOr<Value> sum = failure();
    for (int64_t t = 0; t < taps.taps; ++t) {
      if (llvm::all_of(taps.weight[t], [](double w) { return w == 0; }))
        continue;
      FailureOr<Value> picked = gather(taps.index[t]);
      if (failed(picked))
        return failure();
      FailureOr<Value> term =
          create<l1::MulOp>(loc, *picked, constant(taps.weight[t]));
      if (failed(term))
        return failure();
      sum = succeeded(sum) ? create<l1::AddOp>(loc, *sum, *term) : term;
      if (failed(sum))
        return failure();
    }
    if (failed(sum)) { // every weight is 0: all positions extrapolated
      FailureOr<Value> any = gather(taps.index[0]);
      if (failed(any))
        return failure();
      sum =
          create<l1::MulOp>(loc, *any, constant(SmallVector<double>(out, 0.0)));
    }
    if (succeeded(sum) && taps.hasOutside)
      sum = create<l1::AddOp>(loc, *sum, constant(taps.outside));
    return sum;
  };

  Value result = *x;
  for (int64_t d = rank - 1; d >= 0; --d) {
    int64_t in = type.getDimSize(d);
    if (ShapedType::isDynamic(in)) {
      if (sizes.empty() && scales[d] == 1)
        continue; // a dynamic batch, not resized
      return emitError(loc) << op << " of dimension " << d << ", which is "
                            << "dynamic, is not supported; compile with a "
                            << "static batch (--input-shape)";
    }
    double scale = sizes.empty() ? scales[d] : 0;
    if (!sizes.empty() && in > 0)
      scale = static_cast<double>(sizes[d]) / in;
    if (!(scale > 0))
      return emitError(loc) << op << " expects positive scales and sizes, "
                            << "got " << (sizes.empty() ? scales[d] : sizes[d])
                            << " for dimension " << d;
    int64_t out =
        sizes.empty() ? static_cast<int64_t>(std::floor(in * scale)) : sizes[d];
    bool identity = out == in && scale == 1 && roi.empty() &&
                    a.transform != "tf_half_pixel_for_nn";
    if (identity)
      continue;
    if (out < 1)
      return emitError(loc)
             << op << " would give dimension " << d << " size " << out;
    AxisTaps taps = axisTaps(a, in, out, scale, roi.empty() ? 0 : roi[d],
                             roi.empty() ? 1 : roi[rank + d]);
    if (taps.hasOutside && !isa<FloatType>(type.getElementType()))
      return emitError(loc) << op << " extrapolates (tf_crop_and_resize) "
                            << "only float inputs, got " << type;
    FailureOr<Value> resized = resizeAxis(result, d, taps);
    if (failed(resized))
      return failure();
    result = *resized;
  }
  define(node, 0, result);
  return success();
}

} // namespace cuvil::onnx_import
