//===- ConvertRuntimeSlice.cpp - a window at a run-time start ---------------===//
//
// Slice whose start is computed at run time (a loop's x[i:i+c]): a gather
// of a fixed number of indices from a checked start.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

#include <optional>

namespace cuvil::onnx_import {

namespace {

/// `v` without the ops that only reshape a one-element tensor around it.
Value peelOneElement(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (!isa<l1::UnsqueezeOp, l1::SqueezeOp, l1::ReshapeOp>(op) ||
        cast<ShapedType>(v.getType()).getNumElements() != 1)
      break;
    v = op->getOperand(0);
  }
  return v;
}

/// The integer a one-element constant holds.
std::optional<int64_t> oneIntegerConstant(Value v) {
  auto constant = peelOneElement(v).getDefiningOp<l1::ConstantOp>();
  auto elements = constant ? dyn_cast<DenseIntElementsAttr>(constant.getValue())
                           : DenseIntElementsAttr();
  if (!elements || elements.getNumElements() != 1)
    return std::nullopt;
  return (*elements.begin()).getSExtValue();
}

/// c when `ends` computes `starts` + c (a window of fixed size at a
/// run-time position, as a loop's `x[i:i+c]`).
std::optional<int64_t> constantOffset(Value ends, Value starts) {
  Value s = peelOneElement(starts), e = peelOneElement(ends);
  if (e == s)
    return 0;
  if (auto add = e.getDefiningOp<l1::AddOp>()) {
    if (peelOneElement(add.getLhs()) == s)
      return oneIntegerConstant(add.getRhs());
    if (peelOneElement(add.getRhs()) == s)
      return oneIntegerConstant(add.getLhs());
  }
  if (auto sub = e.getDefiningOp<l1::SubOp>();
      sub && peelOneElement(sub.getLhs()) == s)
    if (std::optional<int64_t> c = oneIntegerConstant(sub.getRhs()))
      return -*c;
  return std::nullopt;
}

} // namespace

/// The first index of a window of `size` at run-time `starts` (one
/// element) along a dimension of `dim`, as ONNX normalizes a negative
/// start; `dim` (out of range: the gather's error) where ONNX would clamp
/// or empty the window.
FailureOr<Value> Importer::checkedWindowStart(Location loc, Value starts,
                                              int64_t dim, int64_t size) {
  Type i64 = builder.getI64Type();
  FailureOr<Value> start = asScalar(loc, starts);
  if (failed(start))
    return failure();
  if (!cast<ShapedType>(start->getType()).getElementType().isInteger(64))
    start =
        l1::CastOp::create(builder, loc, RankedTensorType::get({}, i64), *start)
            .getResult();
  Value zero = scalarConstant(loc, i64, 0),
        dimV = scalarConstant(loc, i64, dim),
        sizeV = scalarConstant(loc, i64, size);
  // The first index as ONNX normalizes it, and whether the window holds
  // its `size` elements.
  FailureOr<Value> negative = create<l1::LessOp>(loc, *start, zero);
  FailureOr<Value> shifted = create<l1::AddOp>(loc, *start, dimV);
  FailureOr<Value> end = create<l1::AddOp>(loc, *start, sizeV);
  if (failed(negative) || failed(shifted) || failed(end))
    return failure();
  FailureOr<Value> first =
      create<l1::WhereOp>(loc, *negative, *shifted, *start);
  if (failed(first))
    return failure();
  FailureOr<Value> last = create<l1::AddOp>(loc, *first, sizeV);
  FailureOr<Value> fromZero = create<l1::GreaterEqualOp>(loc, *first, zero);
  FailureOr<Value> toDim = create<l1::LessEqualOp>(loc, *last, dimV);
  FailureOr<Value> endPositive = create<l1::GreaterEqualOp>(loc, *end, zero);
  if (failed(last) || failed(fromZero) || failed(toDim) || failed(endPositive))
    return failure();
  FailureOr<Value> crossing = create<l1::AndOp>(loc, *negative, *endPositive);
  FailureOr<Value> inside = create<l1::AndOp>(loc, *fromZero, *toDim);
  if (failed(crossing) || failed(inside))
    return failure();
  FailureOr<Value> whole = create<l1::NotOp>(loc, *crossing);
  if (failed(whole))
    return failure();
  FailureOr<Value> valid = create<l1::AndOp>(loc, *inside, *whole);
  if (failed(valid))
    return failure();
  return create<l1::WhereOp>(loc, *valid, *first, dimV);
}

/// A Slice whose start is computed at run time and whose end is the start
/// plus a constant c: a gather of c indices from the start, on one axis,
/// step 1. Where ONNX would clamp the window (a start past dim - c, or one
/// that counts from the end while the end does not), the indices fall out
/// of range and the call returns its invalid-argument error: the result
/// would not have c elements.
LogicalResult Importer::convertRuntimeSlice(const onnx::NodeProto &node,
                                            Location loc) {
  FailureOr<Value> x = getValue(node, 0), starts = getValue(node, 1);
  if (failed(x) || failed(starts) || !hasInput(node, 2))
    return failure();
  FailureOr<Value> ends = getValue(node, 2);
  if (failed(ends))
    return failure();
  auto unsupported = [&](const Twine &why) {
    return emitError(loc) << "Slice with starts computed at run time (input '"
                          << node.input(1) << "') " << why;
  };
  if (cast<ShapedType>(starts->getType()).getNumElements() != 1)
    return unsupported("slices one axis only; give one start");
  std::optional<int64_t> size = constantOffset(*ends, *starts);
  if (!size)
    return unsupported("needs its ends to be the starts plus a constant (a "
                       "window of fixed size), so that its shape is known");
  if (*size <= 0)
    return unsupported("is empty: its ends are its starts plus " +
                       Twine(*size));
  auto type = cast<RankedTensorType>(x->getType());
  int64_t axis = 0;
  if (hasInput(node, 3)) {
    FailureOr<SmallVector<int64_t>> axes = requireInts(node, 3, "axes");
    if (failed(axes))
      return failure();
    if (axes->size() != 1)
      return unsupported("slices one axis only");
    axis = (*axes)[0] < 0 ? (*axes)[0] + type.getRank() : (*axes)[0];
  }
  if (hasInput(node, 4)) {
    FailureOr<SmallVector<int64_t>> steps = requireInts(node, 4, "steps");
    if (failed(steps))
      return failure();
    if (*steps != SmallVector<int64_t>{1})
      return unsupported("takes step 1 only");
  }
  if (axis < 0 || axis >= type.getRank() || type.isDynamicDim(axis))
    return unsupported("needs a static dimension to slice, got axis " +
                       Twine(axis) + " of a rank-" + Twine(type.getRank()) +
                       " input");
  int64_t dim = type.getDimSize(axis);
  if (*size > dim)
    return unsupported("takes a window of " + Twine(*size) +
                       ", more than the dimension's " + Twine(dim));
  FailureOr<Value> base = checkedWindowStart(loc, *starts, dim, *size);
  if (failed(base))
    return failure();
  Type i64 = builder.getI64Type();
  SmallVector<int64_t> offsets;
  for (int64_t i = 0; i < *size; ++i)
    offsets.push_back(i);
  Value iota = l1::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(RankedTensorType::get({*size}, i64),
                             ArrayRef(offsets)));
  FailureOr<Value> indices = create<l1::AddOp>(loc, *base, iota);
  if (failed(indices))
    return failure();
  return defineResult(
      node,
      create<l1::GatherOp>(loc, *x, *indices, builder.getI64IntegerAttr(axis)));
}

} // namespace cuvil::onnx_import
