//===- ConvertVolumetric.cpp - 3-D convolution and pooling as 2-D ops -----===//
//
// NCDHW Conv, MaxPool and AveragePool on the 2-D ops (and so on their fast
// kernels), with the depth handled around them:
//  - A pool is two 2-D pools: over (H, W) with the depth folded into the
//    channels, then over D with H x W as one row. A window's maximum, and an
//    average's divisor (the product of each dim's count of positions,
//    clipped by padding and ceil_mode dim by dim), both factor over the
//    dims, so the result is the 3-D pool's up to the order of the average's
//    sums.
//  - A convolution is one 2-D convolution per depth tap kd, summed: the
//    depth-padded input as [N, D, C, H, W], its depths kd * dilation +
//    d * stride for every output depth d as a batch of N x D_out images,
//    convolved with the weight's slice kd.
//  - A transposed convolution is one 2-D transposed convolution per depth
//    tap kd over the N x D input depths as a batch; each tap's D results
//    land at depths i * stride + kd * dilation of the full output (spread
//    by zero padding, shifted by padding), the taps are summed, and the
//    full depth is cropped by the pads.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

namespace cuvil::onnx_import {

/// Window attributes are below this (sizes computed from them stay far
/// from overflow).
constexpr int64_t kMaxWindow = int64_t(1) << 30;
/// A convolution's depth taps are unrolled: one 2-D op (and its glue) each.
constexpr int64_t kMaxDepthTaps = 256;

FailureOr<Window3d> Importer::window3d(const onnx::NodeProto &node,
                                       Location loc, RankedTensorType input,
                                       ArrayRef<int64_t> kernel) {
  const std::string &op = node.op_type();
  Window3d w;
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides = attrInts(node, "strides").value_or(SmallVector<int64_t>{1, 1, 1});
  w.dilations =
      attrInts(node, "dilations").value_or(SmallVector<int64_t>{1, 1, 1});
  w.pads = attrInts(node, "pads").value_or(SmallVector<int64_t>(6, 0));
  if (w.kernel.size() != 3 || w.strides.size() != 3 ||
      w.dilations.size() != 3 || w.pads.size() != 6)
    return emitError(loc) << op << " of an NCDHW input expects 3 kernel sizes, "
                          << "strides and dilations and 6 pads";
  // Bounded so that no size computed from them overflows.
  auto in = [](int64_t v, int64_t lo) { return v >= lo && v < kMaxWindow; };
  for (int i = 0; i < 3; ++i)
    if (!in(w.kernel[i], 1) || !in(w.strides[i], 1) || !in(w.dilations[i], 1))
      return emitError(loc) << op << " needs kernel sizes, strides and "
                            << "dilations in [1, 2^30)";
  if (!llvm::all_of(w.pads, [&](int64_t p) { return in(p, 0); }))
    return emitError(loc) << op << " needs pads in [0, 2^30)";
  ArrayRef<int64_t> shape = input.getShape();
  if (llvm::any_of(shape.drop_front(), ShapedType::isDynamic))
    return emitError(loc) << op << " of an NCDHW input needs static C, D, H "
                          << "and W, got " << input;
  std::string mode = attrString(node, "auto_pad", "NOTSET");
  if (mode == "NOTSET")
    return w;
  if (mode != "VALID" && mode != "SAME_UPPER" && mode != "SAME_LOWER")
    return emitError(loc) << op << " has unknown auto_pad '" << mode << "'";
  for (int i = 0; i < 3; ++i)
    std::tie(w.pads[i], w.pads[3 + i]) = autoPad(
        mode, shape[2 + i], w.kernel[i], w.strides[i], w.dilations[i]);
  return w;
}

FailureOr<Value> Importer::pool3d(const onnx::NodeProto &node, Location loc,
                                  Value x, ArrayRef<int64_t> kernel) {
  auto type = cast<RankedTensorType>(x.getType());
  FailureOr<Window3d> win = window3d(node, loc, type, kernel);
  if (failed(win))
    return failure();
  ArrayRef<int64_t> shape = type.getShape(), p = win->pads;
  int64_t n = type.isDynamicDim(0) ? -1 : shape[0], c = shape[1], d = shape[2];
  auto reshape = [&](FailureOr<Value> v, ArrayRef<int64_t> to) {
    return failed(v) ? v
                     : create<l1::ReshapeOp>(loc, *v,
                                             builder.getDenseI64ArrayAttr(to));
  };
  FailureOr<Value> planes = reshape(x, {n, c * d, shape[3], shape[4]});
  FailureOr<Value> hw =
      failed(planes) ? planes
                     : pool2d(node, loc, *planes, ArrayRef(win->kernel).drop_front(),
                              ArrayRef(win->strides).drop_front(),
                              {p[1], p[2], p[4], p[5]},
                              ArrayRef(win->dilations).drop_front());
  if (failed(hw))
    return failure();
  ArrayRef<int64_t> pooled = cast<RankedTensorType>(hw->getType()).getShape();
  int64_t h = pooled[2], w = pooled[3];
  FailureOr<Value> columns = reshape(hw, {n, c, d, h * w});
  FailureOr<Value> depth =
      failed(columns)
          ? columns
          : pool2d(node, loc, *columns, {win->kernel[0], 1}, {win->strides[0], 1},
                   {p[0], 0, p[3], 0}, {win->dilations[0], 1});
  if (failed(depth))
    return failure();
  int64_t outD = cast<RankedTensorType>(depth->getType()).getDimSize(2);
  return reshape(depth, {n, c, outD, h, w});
}

FailureOr<Window3d> Importer::convWindow3d(const onnx::NodeProto &node,
                                           Location loc, RankedTensorType input,
                                           Value w) {
  const std::string &op = node.op_type();
  auto wType = cast<RankedTensorType>(w.getType());
  if (wType.getRank() != 5 || !wType.hasStaticShape())
    return emitError(loc) << op << " of an NCDHW input expects a static weight "
                          << "[" << (op == "Conv" ? "O, C" : "C, O")
                          << " / group, kD, kH, kW], got " << wType;
  ArrayRef<int64_t> taps = wType.getShape().drop_front(2);
  FailureOr<Window3d> win = window3d(
      node, loc, input,
      attrInts(node, "kernel_shape").value_or(SmallVector<int64_t>(taps)));
  if (succeeded(win) && ArrayRef<int64_t>(win->kernel) != taps)
    return emitError(loc) << op << " kernel_shape " << shapeString(win->kernel)
                          << " differs from the weight " << wType;
  if (succeeded(win) && win->kernel[0] > kMaxDepthTaps)
    return emitError(loc) << op << " of an NCDHW input supports kernel depths "
                          << "up to " << kMaxDepthTaps << " (one 2-D "
                          << "convolution per depth tap), got "
                          << win->kernel[0];
  return win;
}

FailureOr<Value> Importer::conv3d(const onnx::NodeProto &node, Location loc,
                                  Value x, Value w, Value bias) {
  auto type = cast<RankedTensorType>(x.getType());
  FailureOr<Window3d> win = convWindow3d(node, loc, type, w);
  if (failed(win))
    return failure();
  ArrayRef<int64_t> shape = type.getShape(), p = win->pads;
  int64_t n = type.isDynamicDim(0) ? -1 : shape[0], c = shape[1];
  int64_t depth = shape[2] + p[0] + p[3];
  int64_t span = win->dilations[0] * (win->kernel[0] - 1) + 1;
  if (depth < span)
    return emitError(loc) << "Conv's depth window (" << span << ") exceeds the "
                          << "padded depth " << depth << " of " << type;
  int64_t outD = (depth - span) / win->strides[0] + 1;
  // [N, C, D, H, W] -> depth-padded [N, D', C, H, W].
  FailureOr<Value> padded = x;
  if (p[0] || p[3])
    padded = create<l1::PadOp>(
        loc, x,
        builder.getDenseI64ArrayAttr({0, 0, p[0], 0, 0, 0, 0, p[3], 0, 0}),
        builder.getStringAttr("constant"), builder.getF64FloatAttr(0.0));
  FailureOr<Value> byDepth =
      failed(padded) ? padded
                     : create<l1::TransposeOp>(
                           loc, *padded,
                           builder.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
  if (failed(byDepth))
    return failure();
  Value sum;
  for (int64_t k = 0; k < win->kernel[0]; ++k) {
    int64_t start = k * win->dilations[0];
    FailureOr<Value> taps = create<l1::SliceOp>(
        loc, *byDepth, builder.getDenseI64ArrayAttr({start}),
        builder.getDenseI64ArrayAttr({start + (outD - 1) * win->strides[0] + 1}),
        builder.getDenseI64ArrayAttr({1}),
        builder.getDenseI64ArrayAttr({win->strides[0]}));
    FailureOr<Value> images =
        failed(taps) ? taps
                     : create<l1::ReshapeOp>(
                           loc, *taps,
                           builder.getDenseI64ArrayAttr(
                               {n < 0 ? -1 : n * outD, c, shape[3], shape[4]}));
    FailureOr<Value> slice = create<l1::SliceOp>(
        loc, w, builder.getDenseI64ArrayAttr({k}),
        builder.getDenseI64ArrayAttr({k + 1}), builder.getDenseI64ArrayAttr({2}),
        builder.getDenseI64ArrayAttr({1}));
    FailureOr<Value> weight =
        failed(slice) ? slice
                      : create<l1::SqueezeOp>(loc, *slice,
                                              builder.getDenseI64ArrayAttr({2}));
    if (failed(images) || failed(weight))
      return failure();
    FailureOr<Value> conv = create<l1::Conv2dOp>(
        loc, *images, *weight, k == 0 ? bias : Value(),
        builder.getDenseI64ArrayAttr(ArrayRef(win->strides).drop_front()),
        builder.getDenseI64ArrayAttr({p[1], p[2], p[4], p[5]}),
        builder.getDenseI64ArrayAttr(ArrayRef(win->dilations).drop_front()),
        builder.getI64IntegerAttr(attrInt(node, "group", 1)), TypeAttr());
    if (failed(conv))
      return failure();
    FailureOr<Value> next = sum ? create<l1::AddOp>(loc, sum, *conv) : conv;
    if (failed(next))
      return failure();
    sum = *next;
  }
  // [N * D_out, O, H', W'] -> [N, O, D_out, H', W'].
  ArrayRef<int64_t> planes = cast<RankedTensorType>(sum.getType()).getShape();
  FailureOr<Value> split = create<l1::ReshapeOp>(
      loc, sum,
      builder.getDenseI64ArrayAttr({n, outD, planes[1], planes[2], planes[3]}));
  return failed(split) ? split
                       : create<l1::TransposeOp>(
                             loc, *split,
                             builder.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
}

FailureOr<Value> Importer::convTranspose3d(const onnx::NodeProto &node,
                                           Location loc, Value x, Value w,
                                           Value bias) {
  auto type = cast<RankedTensorType>(x.getType());
  FailureOr<Window3d> win = convWindow3d(node, loc, type, w);
  if (failed(win))
    return failure();
  SmallVector<int64_t> outPad = attrInts(node, "output_padding")
                                    .value_or(SmallVector<int64_t>(3, 0));
  if (outPad.size() != 3 ||
      !llvm::all_of(outPad, [](int64_t v) { return v >= 0 && v < kMaxWindow; }))
    return emitError(loc) << "ConvTranspose of an NCDHW input expects 3 "
                          << "output paddings in [0, 2^30)";
  SmallVector<int64_t> pads = attrInts(node, "pads").value_or(
      SmallVector<int64_t>(6, 0));
  ArrayRef<int64_t> shape = type.getShape();
  if (failed(transposedPads(node, loc, shape.drop_front(2), win->kernel,
                            win->strides, win->dilations,
                            attrInts(node, "output_shape"), outPad, pads)))
    return failure();
  int64_t n = type.isDynamicDim(0) ? -1 : shape[0], c = shape[1],
          d = shape[2], stride = win->strides[0], dilation = win->dilations[0];
  int64_t spread = (d - 1) * stride + 1;
  int64_t full = spread + (win->kernel[0] - 1) * dilation + outPad[0];
  if (pads[0] + pads[3] >= full)
    return emitError(loc) << "ConvTranspose's depth pads (" << pads[0] << ", "
                          << pads[3] << ") leave nothing of its " << full
                          << " output depths";
  auto attr = [&](ArrayRef<int64_t> v) { return builder.getDenseI64ArrayAttr(v); };
  // [N, C, D, H, W] -> a batch of N x D images [C, H, W].
  FailureOr<Value> byDepth =
      create<l1::TransposeOp>(loc, x, attr({0, 2, 1, 3, 4}));
  FailureOr<Value> images =
      failed(byDepth) ? byDepth
                      : create<l1::ReshapeOp>(
                            loc, *byDepth,
                            attr({n < 0 ? -1 : n * d, c, shape[3], shape[4]}));
  if (failed(images))
    return failure();
  Value sum;
  for (int64_t k = 0; k < win->kernel[0]; ++k) {
    FailureOr<Value> slice = create<l1::SliceOp>(loc, w, attr({k}), attr({k + 1}),
                                                 attr({2}), attr({1}));
    FailureOr<Value> weight =
        failed(slice) ? slice : create<l1::SqueezeOp>(loc, *slice, attr({2}));
    FailureOr<Value> planes =
        failed(weight)
            ? weight
            : create<l1::ConvTranspose2dOp>(
                  loc, *images, *weight, Value(),
                  attr(ArrayRef(win->strides).drop_front()),
                  attr({pads[1], pads[2], pads[4], pads[5]}),
                  attr(ArrayRef(win->dilations).drop_front()),
                  attr(ArrayRef(outPad).drop_front()),
                  builder.getI64IntegerAttr(attrInt(node, "group", 1)));
    if (failed(planes))
      return failure();
    ArrayRef<int64_t> p = cast<RankedTensorType>(planes->getType()).getShape();
    int64_t o = p[1], h = p[2], wd = p[3];
    // [N, D, O, H', W'], spread to depths i * stride: [N, D, stride, ...]
    // with zeros after each result, cut after the last.
    FailureOr<Value> tap = create<l1::ReshapeOp>(loc, *planes,
                                                 attr({n, d, 1, o, h, wd}));
    if (succeeded(tap) && stride > 1)
      tap = create<l1::PadOp>(
          loc, *tap, attr({0, 0, 0, 0, 0, 0, 0, 0, stride - 1, 0, 0, 0}),
          builder.getStringAttr("constant"), builder.getF64FloatAttr(0.0));
    if (succeeded(tap))
      tap = create<l1::ReshapeOp>(loc, *tap, attr({n, d * stride, o, h, wd}));
    if (succeeded(tap) && stride > 1)
      tap = create<l1::SliceOp>(loc, *tap, attr({0}), attr({spread}), attr({1}),
                                attr({1}));
    // Shifted to start at depth k * dilation of the full output.
    int64_t before = k * dilation, after = full - spread - before;
    if (succeeded(tap) && (before || after))
      tap = create<l1::PadOp>(
          loc, *tap, attr({0, before, 0, 0, 0, 0, after, 0, 0, 0}),
          builder.getStringAttr("constant"), builder.getF64FloatAttr(0.0));
    if (failed(tap))
      return failure();
    FailureOr<Value> next = sum ? create<l1::AddOp>(loc, sum, *tap) : tap;
    if (failed(next))
      return failure();
    sum = *next;
  }
  FailureOr<Value> cropped =
      pads[0] || pads[3]
          ? create<l1::SliceOp>(loc, sum, attr({pads[0]}),
                                attr({full - pads[3]}), attr({1}), attr({1}))
          : FailureOr<Value>(sum);
  FailureOr<Value> result =
      failed(cropped) ? cropped
                      : create<l1::TransposeOp>(loc, *cropped,
                                                attr({0, 2, 1, 3, 4}));
  if (failed(result) || !bias)
    return result;
  // The 2-D ops check their bias; this one is added here.
  auto outType = cast<RankedTensorType>(result->getType());
  auto biasType = cast<RankedTensorType>(bias.getType());
  int64_t channels = outType.getDimSize(1);
  if (biasType.getRank() != 1 || biasType.getDimSize(0) != channels ||
      biasType.getElementType() != outType.getElementType())
    return emitError(loc) << "ConvTranspose expects a bias of one "
                          << outType.getElementType() << " per output channel ("
                          << channels << "), got " << biasType;
  FailureOr<Value> perChannel =
      create<l1::ReshapeOp>(loc, bias, attr({channels, 1, 1, 1}));
  return failed(perChannel) ? perChannel
                            : create<l1::AddOp>(loc, *result, *perChannel);
}

} // namespace cuvil::onnx_import
