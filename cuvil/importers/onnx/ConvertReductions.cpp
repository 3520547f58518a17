//===- ConvertReductions.cpp - softmax, reductions, normalizations --------===//
//
// Softmax and LogSoftmax, Reduce*, ArgMax / ArgMin, the
// standardizing normalizations and LayerNormalization.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

namespace cuvil::onnx_import {

LogicalResult Importer::convertSoftmax(const onnx::NodeProto &node,
                                       Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  int64_t axis = attrInt(node, "axis", opset < 13 ? 1 : -1);
  bool isLog = node.op_type() == "LogSoftmax";
  auto softmax = [&](Value v, int64_t a) {
    return isLog
               ? create<l1::LogSoftmaxOp>(loc, v, builder.getI64IntegerAttr(a))
               : create<l1::SoftmaxOp>(loc, v, builder.getI64IntegerAttr(a));
  };
  if (axis < -rank || axis >= rank)
    return emitError(loc) << node.op_type() << " axis " << axis
                          << " is out of range for rank " << rank;
  int64_t normalized = axis < 0 ? axis + rank : axis;
  // Before opset 13 the input is coerced to 2-D at `axis` and normalized
  // over the flattened trailing dims; equivalent when axis is the last.
  if (opset >= 13 || normalized == rank - 1) {
    FailureOr<Value> r = softmax(*x, normalized);
    if (failed(r))
      return failure();
    define(node, 0, *r);
    return success();
  }
  FailureOr<Value> flat =
      create<l1::FlattenOp>(loc, *x, builder.getI64IntegerAttr(normalized));
  if (failed(flat))
    return failure();
  FailureOr<Value> r = softmax(*flat, 1);
  if (failed(r))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d : type.getShape())
    shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  if (llvm::count(shape, -1) > 1)
    return emitError(loc) << node.op_type() << " (opset " << opset
                          << ") on more than one dynamic dim is not supported";
  FailureOr<Value> back =
      create<l1::ReshapeOp>(loc, *r, builder.getDenseI64ArrayAttr(shape));
  return defineResult(node, back);
}

LogicalResult Importer::convertReduce(const onnx::NodeProto &node,
                                      Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  // Axes moved from an attribute to an input: ReduceSum at 13, others at 18.
  bool axesAsInput = node.op_type() == "ReduceSum" ? opset >= 13 : opset >= 18;
  SmallVector<int64_t> axes;
  if (axesAsInput) {
    if (hasInput(node, 1)) {
      FailureOr<SmallVector<int64_t>> v = requireInts(node, 1, "axes");
      if (failed(v))
        return failure();
      axes = *v;
    }
  } else if (auto a = attrInts(node, "axes")) {
    axes = *a;
  }
  if (axes.empty()) {
    if (attrInt(node, "noop_with_empty_axes", 0)) {
      define(node, 0, *x);
      return success();
    }
    for (int64_t i = 0; i < type.getRank(); ++i)
      axes.push_back(i);
  }
  auto axesAttr = builder.getDenseI64ArrayAttr(axes);
  UnitAttr keep =
      attrInt(node, "keepdims", 1) ? builder.getUnitAttr() : UnitAttr();
  const std::string &op = node.op_type();
  // The norms and logs of sums are a sum between elementwise ops.
  auto sum = [&](FailureOr<Value> v, UnitAttr keepDims) -> FailureOr<Value> {
    if (failed(v))
      return failure();
    return create<l1::ReduceSumOp>(loc, *v, axesAttr, keepDims);
  };
  auto square = [&](Value v) { return create<l1::MulOp>(loc, v, v); };
  FailureOr<Value> r = failure();
  if (op == "ReduceSum")
    r = sum(*x, keep);
  else if (op == "ReduceMean")
    r = create<l1::ReduceMeanOp>(loc, *x, axesAttr, keep);
  else if (op == "ReduceMax")
    r = create<l1::ReduceMaxOp>(loc, *x, axesAttr, keep);
  else if (op == "ReduceMin")
    r = create<l1::ReduceMinOp>(loc, *x, axesAttr, keep);
  else if (op == "ReduceProd")
    r = create<l1::ReduceProdOp>(loc, *x, axesAttr, keep);
  else if (op == "ReduceL1")
    r = sum(create<l1::AbsOp>(loc, *x), keep);
  else if (op == "ReduceSumSquare")
    r = sum(square(*x), keep);
  else if (op == "ReduceL2") {
    r = sum(square(*x), keep);
    if (succeeded(r))
      r = create<l1::SqrtOp>(loc, *r);
  } else if (op == "ReduceLogSum") {
    r = sum(*x, keep);
    if (succeeded(r))
      r = create<l1::LogOp>(loc, *r);
  } else {
    // ReduceLogSumExp: max + log(sum(exp(x - max))), which cannot overflow.
    FailureOr<Value> peakKept =
        create<l1::ReduceMaxOp>(loc, *x, axesAttr, builder.getUnitAttr());
    FailureOr<Value> peak =
        keep ? peakKept : create<l1::ReduceMaxOp>(loc, *x, axesAttr, keep);
    if (failed(peakKept) || failed(peak))
      return failure();
    FailureOr<Value> shifted = create<l1::SubOp>(loc, *x, *peakKept);
    if (succeeded(shifted))
      r = sum(create<l1::ExpOp>(loc, *shifted), keep);
    if (succeeded(r))
      r = create<l1::LogOp>(loc, *r);
    if (succeeded(r))
      r = create<l1::AddOp>(loc, *r, *peak);
  }
  return defineResult(node, r);
}

LogicalResult Importer::convertArgReduce(const onnx::NodeProto &node,
                                         Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  IntegerAttr axis = builder.getI64IntegerAttr(attrInt(node, "axis", 0));
  UnitAttr keep =
      attrInt(node, "keepdims", 1) ? builder.getUnitAttr() : UnitAttr();
  UnitAttr last = attrInt(node, "select_last_index", 0) ? builder.getUnitAttr()
                                                        : UnitAttr();
  if (node.op_type() == "ArgMax")
    return defineResult(node, create<l1::ArgMaxOp>(loc, *x, axis, keep, last));
  return defineResult(node, create<l1::ArgMinOp>(loc, *x, axis, keep, last));
}

LogicalResult Importer::convertStandardize(const onnx::NodeProto &node,
                                           Location loc) {
  // (x - mean) / sqrt(variance + eps) over the spatial axes, per channel
  // scaled and shifted (InstanceNormalization); or (x - mean) /
  // (sqrt(variance) + 1e-9) over `axes` (MeanVarianceNormalization).
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  bool instance = node.op_type() == "InstanceNormalization";
  if (!isa<FloatType>(type.getElementType()) || rank < (instance ? 3 : 1))
    return emitError(loc) << node.op_type() << " expects a float tensor"
                          << (instance ? " of rank >= 3" : "") << ", got "
                          << type;
  SmallVector<int64_t> axes;
  if (instance) {
    for (int64_t d = 2; d < rank; ++d)
      axes.push_back(d);
  } else {
    axes = attrInts(node, "axes").value_or(SmallVector<int64_t>{0, 2, 3});
  }
  Type element = type.getElementType();
  auto axesAttr = builder.getDenseI64ArrayAttr(axes);
  FailureOr<Value> mean =
      create<l1::ReduceMeanOp>(loc, *x, axesAttr, builder.getUnitAttr());
  if (failed(mean))
    return failure();
  FailureOr<Value> centered = create<l1::SubOp>(loc, *x, *mean);
  FailureOr<Value> squared = failed(centered)
                                 ? centered
                                 : create<l1::MulOp>(loc, *centered, *centered);
  FailureOr<Value> variance =
      failed(squared) ? squared
                      : create<l1::ReduceMeanOp>(loc, *squared, axesAttr,
                                                 builder.getUnitAttr());
  if (failed(variance))
    return failure();
  FailureOr<Value> y = failure();
  if (instance) {
    FailureOr<Value> spread = create<l1::AddOp>(
        loc, *variance,
        scalarConstant(loc, element, attrFloat(node, "epsilon", 1e-5)));
    FailureOr<Value> inverse =
        failed(spread) ? spread : create<l1::RsqrtOp>(loc, *spread);
    y = failed(inverse) ? inverse : create<l1::MulOp>(loc, *centered, *inverse);
    // Per-channel scale and bias, as [C, 1, ..., 1].
    SmallVector<int64_t> perChannel(rank - 1, 1);
    perChannel[0] = type.getDimSize(1);
    for (int input : {1, 2}) {
      FailureOr<Value> p = getValue(node, input);
      if (failed(y) || failed(p))
        return failure();
      FailureOr<Value> shaped = create<l1::ReshapeOp>(
          loc, *p, builder.getDenseI64ArrayAttr(perChannel));
      if (failed(shaped))
        return failure();
      y = input == 1 ? create<l1::MulOp>(loc, *y, *shaped)
                     : create<l1::AddOp>(loc, *y, *shaped);
    }
  } else {
    FailureOr<Value> deviation = create<l1::SqrtOp>(loc, *variance);
    FailureOr<Value> guarded =
        failed(deviation)
            ? deviation
            : create<l1::AddOp>(loc, *deviation,
                                scalarConstant(loc, element, 1e-9));
    y = failed(guarded) ? guarded : create<l1::DivOp>(loc, *centered, *guarded);
  }
  return defineResult(node, y);
}

LogicalResult Importer::convertLayerNorm(const onnx::NodeProto &node,
                                         Location loc) {
  FailureOr<Value> x = getValue(node, 0), scale = getValue(node, 1);
  if (failed(x) || failed(scale))
    return failure();
  Value bias;
  if (hasInput(node, 2)) {
    FailureOr<Value> b = getValue(node, 2);
    if (failed(b))
      return failure();
    bias = *b;
  }
  int64_t axis = attrInt(node, "axis", -1);
  double epsilon = attrFloat(node, "epsilon", 1e-5);
  FailureOr<Value> r = create<l1::LayerNormOp>(
      loc, *x, *scale, bias, builder.getI64IntegerAttr(axis),
      builder.getF64FloatAttr(epsilon));
  if (failed(r))
    return failure();
  define(node, 0, *r);
  // The optional Mean and InvStdDev outputs (kept dims), when used.
  bool wantsStats = (node.output_size() > 1 && !node.output(1).empty()) ||
                    (node.output_size() > 2 && !node.output(2).empty());
  if (!wantsStats)
    return success();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  int64_t first = axis < 0 ? axis + rank : axis;
  SmallVector<int64_t> axes;
  for (int64_t d = first; d < rank; ++d)
    axes.push_back(d);
  auto axesAttr = builder.getDenseI64ArrayAttr(axes);
  FailureOr<Value> mean =
      create<l1::ReduceMeanOp>(loc, *x, axesAttr, builder.getUnitAttr());
  if (failed(mean))
    return failure();
  define(node, 1, *mean);
  FailureOr<Value> centered = create<l1::SubOp>(loc, *x, *mean);
  FailureOr<Value> squared = failed(centered)
                                 ? centered
                                 : create<l1::MulOp>(loc, *centered, *centered);
  FailureOr<Value> variance =
      failed(squared) ? squared
                      : create<l1::ReduceMeanOp>(loc, *squared, axesAttr,
                                                 builder.getUnitAttr());
  if (failed(variance))
    return failure();
  Value eps = l1::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(
          RankedTensorType::get({}, type.getElementType()),
          builder.getFloatAttr(type.getElementType(), epsilon)));
  FailureOr<Value> shifted = create<l1::AddOp>(loc, *variance, eps);
  FailureOr<Value> invStd =
      failed(shifted) ? shifted : create<l1::RsqrtOp>(loc, *shifted);
  if (failed(invStd))
    return failure();
  define(node, 2, *invStd);
  return success();
}

} // namespace cuvil::onnx_import
