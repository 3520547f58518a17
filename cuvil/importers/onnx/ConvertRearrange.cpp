//===- ConvertRearrange.cpp - ONNX ops that move or generate elements -----===//
//
// Tile, DepthToSpace and SpaceToDepth are reshapes around a transpose or an
// expand; Trilu is a select by a constant triangular mask; Size, Range and
// EyeLike are values known at import time (constants, or host tensors that
// shape code folds further).
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>
#include <numeric>

namespace cuvil::onnx_import {

namespace {

/// The static shape of `type`, with the first dimension -1 if it is the
/// dynamic batch; nullopt if any other dimension is dynamic.
std::optional<SmallVector<int64_t>> shapeWithBatch(RankedTensorType type) {
  SmallVector<int64_t> shape(type.getShape());
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (!ShapedType::isDynamic(d))
      continue;
    if (i != 0)
      return std::nullopt;
    d = -1;
  }
  return shape;
}

/// 0, 1, ..., n - 1 along `axis` of a rank-`rank` i64 tensor (size 1
/// elsewhere), to compare indices against.
} // namespace

DenseElementsAttr iotaAlong(Builder &b, int64_t rank, int64_t axis, int64_t n) {
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = n;
  SmallVector<int64_t> values(n);
  std::iota(values.begin(), values.end(), 0);
  return DenseElementsAttr::get(RankedTensorType::get(shape, b.getI64Type()),
                                ArrayRef<int64_t>(values));
}

LogicalResult Importer::convertTile(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  FailureOr<SmallVector<int64_t>> repeats = requireInts(node, 1, "repeats");
  if (failed(x) || failed(repeats))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (static_cast<int64_t>(repeats->size()) != type.getRank())
    return emitError(loc) << "Tile expects one repeat per dimension of its "
                          << type.getRank() << "-D input, got "
                          << repeats->size();
  if (llvm::any_of(*repeats, [](int64_t r) { return r < 0; }))
    return emitError(loc) << "Tile expects repeats >= 0, got "
                          << shapeString(*repeats);
  if (llvm::all_of(*repeats, [](int64_t r) { return r == 1; })) {
    define(node, 0, *x);
    return success();
  }
  if (!type.hasStaticShape())
    return emitError(loc) << "Tile of a tensor with a dynamic dimension is "
                             "not supported; compile with a static batch "
                             "(--input-shape)";
  // [d0, d1, ...] -> [1, d0, 1, d1, ...] -> [r0, d0, r1, d1, ...] ->
  // [r0 * d0, r1 * d1, ...]: each repeat is a broadcast dimension.
  SmallVector<int64_t> spread, expanded, tiled;
  for (auto [d, r] : llvm::zip(type.getShape(), *repeats)) {
    spread.append({1, d});
    expanded.append({r, d});
    tiled.push_back(r * d);
  }
  FailureOr<Value> r =
      create<l1::ReshapeOp>(loc, *x, builder.getDenseI64ArrayAttr(spread));
  if (succeeded(r))
    r = create<l1::ExpandOp>(loc, *r, builder.getDenseI64ArrayAttr(expanded));
  if (succeeded(r))
    r = create<l1::ReshapeOp>(loc, *r, builder.getDenseI64ArrayAttr(tiled));
  return defineResult(node, r);
}

LogicalResult Importer::convertDepthSpace(const onnx::NodeProto &node,
                                          Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  const std::string &op = node.op_type();
  auto type = cast<RankedTensorType>(x->getType());
  std::optional<SmallVector<int64_t>> shape = shapeWithBatch(type);
  if (type.getRank() != 4 || !shape)
    return emitError(loc) << op << " expects an NCHW input with static C, H "
                          << "and W, got " << type;
  int64_t b = attrInt(node, "blocksize", 0);
  if (b < 1)
    return emitError(loc) << op << " expects blocksize >= 1, got " << b;
  int64_t n = (*shape)[0], c = (*shape)[1], h = (*shape)[2], w = (*shape)[3];
  SmallVector<int64_t> split, perm, merged;
  if (op == "DepthToSpace") {
    if (c % (b * b) != 0)
      return emitError(loc) << "DepthToSpace expects channels divisible by "
                            << "blocksize^2 = " << b * b << ", got " << c;
    // DCR: channels are (row offset, column offset, channel); CRD:
    // (channel, row offset, column offset).
    std::string mode = attrString(node, "mode", "DCR");
    if (mode != "DCR" && mode != "CRD")
      return emitError(loc)
             << "DepthToSpace mode must be DCR or CRD, got '" << mode << "'";
    int64_t out = c / (b * b);
    split = mode == "DCR" ? SmallVector<int64_t>{n, b, b, out, h, w}
                          : SmallVector<int64_t>{n, out, b, b, h, w};
    perm = mode == "DCR" ? SmallVector<int64_t>{0, 3, 4, 1, 5, 2}
                         : SmallVector<int64_t>{0, 1, 4, 2, 5, 3};
    merged = {n, out, h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0)
      return emitError(loc)
             << "SpaceToDepth expects height and width "
             << "divisible by blocksize " << b << ", got " << h << "x" << w;
    split = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    merged = {n, c * b * b, h / b, w / b};
  }
  FailureOr<Value> r =
      create<l1::ReshapeOp>(loc, *x, builder.getDenseI64ArrayAttr(split));
  if (succeeded(r))
    r = create<l1::TransposeOp>(loc, *r, builder.getDenseI64ArrayAttr(perm));
  if (succeeded(r))
    r = create<l1::ReshapeOp>(loc, *r, builder.getDenseI64ArrayAttr(merged));
  return defineResult(node, r);
}

LogicalResult Importer::convertTrilu(const onnx::NodeProto &node,
                                     Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  int64_t k = 0;
  if (hasInput(node, 1)) {
    FailureOr<SmallVector<int64_t>> given = requireInts(node, 1, "k");
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return emitError(loc) << "Trilu expects a scalar k";
    k = given->front();
  }
  bool upper = attrInt(node, "upper", 1) != 0;
  auto type = cast<RankedTensorType>(x->getType());
  if (type.getRank() < 2)
    return emitError(loc) << "Trilu expects a tensor of rank >= 2, got "
                          << type;
  int64_t rows = type.getDimSize(type.getRank() - 2),
          cols = type.getDimSize(type.getRank() - 1);
  if (ShapedType::isDynamic(rows) || ShapedType::isDynamic(cols))
    return emitError(loc) << "Trilu expects static matrix dimensions, got "
                          << type;
  // Kept: j - i >= k above the diagonal (upper), j - i <= k below.
  SmallVector<bool> mask;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      mask.push_back(upper ? j - i >= k : j - i <= k);
  auto maskType = RankedTensorType::get({rows, cols}, builder.getI1Type());
  Value keep = l1::ConstantOp::create(builder, loc,
                                      DenseElementsAttr::get(maskType, mask));
  Value zero = scalarConstant(loc, type.getElementType(), 0);
  return defineResult(node, create<l1::WhereOp>(loc, keep, *x, zero));
}

LogicalResult Importer::convertSize(const onnx::NodeProto &node, Location loc) {
  FailureOr<RankedTensorType> type = getType(node, 0);
  if (failed(type))
    return failure();
  HostTensor host;
  host.elementType = builder.getI64Type();
  host.ints.push_back(type->hasStaticShape() ? type->getNumElements()
                                             : kUnknown);
  defineHost(node, 0, std::move(host));
  return success();
}

LogicalResult Importer::convertRange(const onnx::NodeProto &node,
                                     Location loc) {
  FailureOr<HostTensor> start = requireHost(node, 0, "start"),
                        limit = requireHost(node, 1, "limit"),
                        delta = requireHost(node, 2, "delta");
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  for (const HostTensor *t : {&*start, &*limit, &*delta})
    if (t->numElements() != 1 || t->hasUnknown())
      return emitError(loc) << "Range expects scalar start, limit and delta "
                               "known at compile time";
  double first = start->at(0), step = delta->at(0);
  if (step == 0)
    return emitError(loc) << "Range expects a non-zero delta";
  double count = std::max(std::ceil((limit->at(0) - first) / step), 0.0);
  if (count > kMaxHostElements)
    return emitError(loc) << "Range of " << count << " elements is larger "
                          << "than Cuvil builds at compile time ("
                          << kMaxHostElements << ")";
  HostTensor host;
  host.elementType = start->elementType;
  host.shape = {static_cast<int64_t>(count)};
  for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) {
    if (host.isFloat())
      host.floats.push_back(first + i * step);
    else
      host.ints.push_back(start->ints[0] + i * delta->ints[0]);
  }
  defineHost(node, 0, std::move(host));
  return success();
}

LogicalResult Importer::convertEyeLike(const onnx::NodeProto &node,
                                       Location loc) {
  FailureOr<RankedTensorType> type = getType(node, 0);
  if (failed(type))
    return failure();
  if (type->getRank() != 2 || !type->hasStaticShape())
    return emitError(loc) << "EyeLike expects a 2-D input of static shape, "
                          << "got " << *type;
  Type element = type->getElementType();
  if (const onnx::AttributeProto *dtype = attr(node, "dtype")) {
    element = toMlirType(&context, dtype->i());
    if (!element)
      return emitError(loc) << "EyeLike to " << onnxTypeName(dtype->i())
                            << " is not supported";
  }
  int64_t k = attrInt(node, "k", 0);
  int64_t rows = type->getDimSize(0), cols = type->getDimSize(1);
  auto resultType = RankedTensorType::get({rows, cols}, element);
  SmallVector<Attribute> elements;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double one = j - i == k ? 1 : 0;
      elements.push_back(isa<FloatType>(element)
                             ? Attribute(FloatAttr::get(element, one))
                             : Attribute(IntegerAttr::get(
                                   element, static_cast<int64_t>(one))));
    }
  define(node, 0,
         l1::ConstantOp::create(builder, loc,
                                DenseElementsAttr::get(resultType, elements)));
  return success();
}

LogicalResult Importer::convertHardmax(const onnx::NodeProto &node,
                                       Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  int64_t axis = attrInt(node, "axis", opset < 13 ? 1 : -1);
  if (axis < -rank || axis >= rank)
    return emitError(loc) << "Hardmax axis " << axis
                          << " is out of range for rank " << rank;
  axis = axis < 0 ? axis + rank : axis;
  Value input = *x;
  if (opset < 13) {
    // Before opset 13 the input is a matrix of rows [0, axis) x [axis, rank).
    if (!type.hasStaticShape())
      return emitError(loc) << "Hardmax before opset 13 needs a static shape";
    int64_t rows = 1, cols = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < axis ? rows : cols) *= type.getDimSize(d);
    FailureOr<Value> matrix = create<l1::ReshapeOp>(
        loc, *x, builder.getDenseI64ArrayAttr({rows, cols}));
    if (failed(matrix))
      return failure();
    input = *matrix;
    axis = 1;
  }
  auto inType = cast<RankedTensorType>(input.getType());
  int64_t n = inType.getDimSize(axis);
  if (ShapedType::isDynamic(n))
    return emitError(loc) << "Hardmax along a dynamic dimension is not "
                             "supported";
  FailureOr<Value> first =
      create<l1::ArgMaxOp>(loc, input, builder.getI64IntegerAttr(axis),
                           builder.getUnitAttr(), UnitAttr());
  if (failed(first))
    return failure();
  Value iota = l1::ConstantOp::create(
      builder, loc, iotaAlong(builder, inType.getRank(), axis, n));
  FailureOr<Value> hot = create<l1::EqualOp>(loc, *first, iota);
  if (failed(hot))
    return failure();
  Value y = l1::CastOp::create(
      builder, loc,
      cast<RankedTensorType>(hot->getType()).clone(inType.getElementType()),
      *hot);
  if (opset < 13) {
    FailureOr<Value> back = create<l1::ReshapeOp>(
        loc, y, builder.getDenseI64ArrayAttr(type.getShape()));
    if (failed(back))
      return failure();
    y = *back;
  }
  define(node, 0, y);
  return success();
}

LogicalResult Importer::convertOneHot(const onnx::NodeProto &node,
                                      Location loc) {
  FailureOr<Value> indices = getValue(node, 0);
  FailureOr<HostTensor> depth = requireHost(node, 1, "depth"),
                        values = requireHost(node, 2, "values");
  if (failed(indices) || failed(depth) || failed(values))
    return failure();
  if (depth->numElements() != 1 || values->numElements() != 2)
    return emitError(loc) << "OneHot expects a scalar depth and two values "
                             "(off, on)";
  auto depthValue = static_cast<int64_t>(depth->at(0));
  if (depthValue < 1)
    return emitError(loc) << "OneHot expects depth >= 1, got " << depthValue;
  auto type = cast<RankedTensorType>((*indices).getType());
  int64_t rank = type.getRank() + 1;
  int64_t axis = attrInt(node, "axis", -1);
  if (axis < -rank || axis >= rank)
    return emitError(loc) << "OneHot axis " << axis
                          << " is out of range for rank " << rank;
  axis = axis < 0 ? axis + rank : axis;
  // Indices as i64 (floats truncate), negative ones counted from depth.
  auto i64 = builder.getI64Type();
  Value idx = *indices;
  if (type.getElementType() != i64)
    idx = l1::CastOp::create(builder, loc, type.clone(i64), idx);
  Value depthConst = scalarConstant(loc, i64, depthValue);
  Value zero = scalarConstant(loc, i64, 0);
  FailureOr<Value> negative = create<l1::LessOp>(loc, idx, zero);
  FailureOr<Value> wrapped = create<l1::AddOp>(loc, idx, depthConst);
  if (failed(negative) || failed(wrapped))
    return failure();
  FailureOr<Value> fixed = create<l1::WhereOp>(loc, *negative, *wrapped, idx);
  FailureOr<Value> spread =
      failed(fixed) ? fixed
                    : create<l1::UnsqueezeOp>(
                          loc, *fixed, builder.getDenseI64ArrayAttr({axis}));
  if (failed(spread))
    return failure();
  Value iota = l1::ConstantOp::create(
      builder, loc, iotaAlong(builder, rank, axis, depthValue));
  FailureOr<Value> hot = create<l1::EqualOp>(loc, *spread, iota);
  if (failed(hot))
    return failure();
  Type element = values->elementType;
  Value off = scalarConstant(loc, element, values->at(0));
  Value on = scalarConstant(loc, element, values->at(1));
  return defineResult(node, create<l1::WhereOp>(loc, *hot, on, off));
}

LogicalResult Importer::convertCumSum(const onnx::NodeProto &node,
                                      Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  FailureOr<SmallVector<int64_t>> axis = requireInts(node, 1, "axis");
  if (failed(x) || failed(axis))
    return failure();
  if (axis->size() != 1)
    return emitError(loc) << "CumSum expects a scalar axis";
  auto flag = [&](StringRef name) {
    return attrInt(node, name, 0) ? builder.getUnitAttr() : UnitAttr();
  };
  return defineResult(
      node,
      create<l1::CumSumOp>(loc, *x, builder.getI64IntegerAttr(axis->front()),
                           flag("exclusive"), flag("reverse")));
}

LogicalResult Importer::convertWindow(const onnx::NodeProto &node,
                                      Location loc) {
  FailureOr<SmallVector<int64_t>> size = requireInts(node, 0, "size");
  if (failed(size))
    return failure();
  const std::string &op = node.op_type();
  if (size->size() != 1 || size->front() < 0 ||
      size->front() > kMaxHostElements)
    return emitError(loc) << op << " expects a size in [0, " << kMaxHostElements
                          << "]";
  Type element = toMlirType(
      &context, attrInt(node, "output_datatype", onnx::TensorProto::FLOAT));
  if (!element)
    return emitError(loc) << op << " output_datatype is not supported";
  int64_t n = size->front();
  // Periodic windows are those of n + 1 points without the last.
  double span = attrInt(node, "periodic", 1) ? n : n - 1;
  std::vector<double> values;
  for (int64_t i = 0; i < n; ++i) {
    double phase = span > 0 ? 2 * M_PI * i / span : 0, w;
    if (op == "HannWindow")
      w = 0.5 - 0.5 * std::cos(phase);
    else if (op == "HammingWindow")
      w = 25.0 / 46 - 21.0 / 46 * std::cos(phase);
    else
      w = 0.42 - 0.5 * std::cos(phase) + 0.08 * std::cos(2 * phase);
    values.push_back(w);
  }
  defineHost(node, 0, HostTensor::of(element, {n}, values));
  return success();
}

} // namespace cuvil::onnx_import
