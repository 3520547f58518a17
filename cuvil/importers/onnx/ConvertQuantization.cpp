//===- ConvertQuantization.cpp - QDQ and QLinear ops ----------------------===//
//
// QDQ graphs and the QLinear integer ops onto level1's quantized types
// (cuvil/ir/Quantization.h).
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

namespace cuvil::onnx_import {

//===----------------------------------------------------------------------===//
// Quantization (QDQ): the ONNX tensors stay integers; the quantized types
// live between a storage cast and the level1 op that uses them.
//===----------------------------------------------------------------------===//

FailureOr<quant::QuantizedType>
Importer::quantizedType(const onnx::NodeProto &node, Location loc,
                        RankedTensorType tensor, Type storage, Type expressed,
                        QuantInputs inputs) {
  if (attrInt(node, "block_size", 0) != 0)
    return emitError(loc) << node.op_type()
                          << " with block_size (blocked quantization) is not "
                             "supported";
  FailureOr<HostTensor> scale = requireHost(node, inputs.scale, "scale");
  if (failed(scale))
    return failure();
  if (!scale->isFloat() || scale->shape.size() > 1)
    return emitError(loc) << node.op_type()
                          << " expects a float scalar or 1-D scale";
  SmallVector<int64_t> zeros(scale->numElements(), 0);
  if (hasInput(node, inputs.zero)) {
    FailureOr<HostTensor> zero = requireHost(node, inputs.zero, "zero point");
    if (failed(zero))
      return failure();
    if (zero->elementType != storage || zero->shape != scale->shape)
      return emitError(loc)
             << node.op_type() << " has a zero point of type "
             << RankedTensorType::get(zero->shape, zero->elementType)
             << " for a scale of shape " << shapeString(scale->shape)
             << " and " << storage << " values";
    zeros = zero->ints;
  }
  auto integer = dyn_cast<IntegerType>(storage);
  if (!integer || !llvm::is_contained({8u, 16u, 32u}, integer.getWidth()) ||
      (integer.isUnsigned() && integer.getWidth() != 8))
    return emitError(loc) << node.op_type() << " to or from " << storage
                          << " is not supported (int8, uint8, int16, int32)";
  unsigned width = integer.getWidth();
  bool isSigned = !integer.isUnsigned();
  int64_t lo = isSigned ? -(int64_t{1} << (width - 1)) : 0;
  int64_t hi = isSigned ? (int64_t{1} << (width - 1)) - 1
                        : (int64_t{1} << width) - 1;
  unsigned flags = isSigned ? quant::QuantizationFlags::Signed : 0;
  Type signless = IntegerType::get(&context, width);
  auto emit = [&] { return emitError(loc) << node.op_type() << ": "; };
  // One scale, even as a 1-D tensor, is per tensor (it broadcasts).
  if (scale->numElements() == 1) {
    auto type = quant::UniformQuantizedType::getChecked(
        emit, flags, signless, expressed, scale->floats[0], zeros[0], lo, hi);
    if (!type)
      return failure();
    return cast<quant::QuantizedType>(type);
  }
  int64_t axis = inputs.axis ? *inputs.axis : attrInt(node, "axis", 1);
  int64_t rank = tensor.getRank();
  if (axis < -rank || axis >= rank)
    return emitError(loc) << node.op_type() << " axis " << axis
                          << " is out of range for a rank-" << rank
                          << " tensor";
  axis = axis < 0 ? axis + rank : axis;
  auto type = quant::UniformQuantizedPerAxisType::getChecked(
      emit, flags, signless, expressed, scale->floats, zeros,
      static_cast<int32_t>(axis), lo, hi);
  if (!type)
    return failure();
  return cast<quant::QuantizedType>(type);
}

LogicalResult Importer::convertQuantizeLinear(const onnx::NodeProto &node,
                                              Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  // Without a zero point the result is uint8.
  Type storage = IntegerType::get(&context, 8, IntegerType::Unsigned);
  if (hasInput(node, 2)) {
    FailureOr<RankedTensorType> zero = getType(node, 2);
    if (failed(zero))
      return failure();
    storage = zero->getElementType();
  }
  if (!isa<FloatType>(type.getElementType()))
    return emitError(loc) << "QuantizeLinear of " << type.getElementType()
                          << " values: it quantizes floats";
  FailureOr<quant::QuantizedType> q =
      quantizedType(node, loc, type, storage, type.getElementType());
  if (failed(q))
    return failure();
  auto quantized = l1::QuantizeOp::create(builder, loc, type.clone(*q), *x);
  define(node, 0,
         l1::StorageCastOp::create(builder, loc, type.clone(storage),
                                   quantized)
             .getResult());
  return success();
}

LogicalResult Importer::convertDequantizeLinear(const onnx::NodeProto &node,
                                                Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  FailureOr<RankedTensorType> scale = getType(node, 1);
  if (failed(x) || failed(scale))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  FailureOr<quant::QuantizedType> q = quantizedType(
      node, loc, type, type.getElementType(), scale->getElementType());
  if (failed(q))
    return failure();
  auto quantized =
      l1::StorageCastOp::create(builder, loc, type.clone(*q), *x);
  return defineResult(node, create<l1::DequantizeOp>(loc, quantized));
}


/// QLinearMatMul(a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero):
/// dequantize both operands, multiply, quantize the product, the QDQ form
/// of the same arithmetic. cuvil-fold-quantized-products makes it an
/// integer product when b is constant symmetric int8; otherwise it is
/// computed in float32 (with a note) and only the rounding of a product
/// exactly halfway between two levels can differ from integer arithmetic.
LogicalResult Importer::convertQLinearMatMul(const onnx::NodeProto &node,
                                             Location loc) {
  FailureOr<Value> a = getValue(node, 0), b = getValue(node, 3);
  FailureOr<RankedTensorType> scale = getType(node, 1), yZero = getType(node, 7);
  if (failed(a) || failed(b) || failed(scale) || failed(yZero))
    return failure();
  Type expressed = scale->getElementType();
  auto dequantized = [&](Value x, QuantInputs at) -> FailureOr<Value> {
    auto type = cast<RankedTensorType>(x.getType());
    FailureOr<quant::QuantizedType> q = quantizedType(
        node, loc, type, type.getElementType(), expressed, at);
    if (failed(q))
      return failure();
    Value stored = l1::StorageCastOp::create(builder, loc, type.clone(*q), x);
    return create<l1::DequantizeOp>(loc, stored);
  };
  auto bType = cast<RankedTensorType>(b->getType());
  // a is quantized per tensor; b per tensor or per column (its last axis).
  FailureOr<Value> ad = dequantized(*a, {1, 2, std::nullopt});
  FailureOr<Value> bd = dequantized(*b, {4, 5, bType.getRank() - 1});
  if (failed(ad) || failed(bd))
    return failure();
  FailureOr<Value> y = create<l1::MatmulOp>(loc, *ad, *bd);
  if (failed(y))
    return failure();
  auto yType = cast<RankedTensorType>(y->getType());
  Type storage = yZero->getElementType();
  FailureOr<quant::QuantizedType> qy =
      quantizedType(node, loc, yType, storage, expressed, {6, 7, std::nullopt});
  if (failed(qy))
    return failure();
  Value quantized = l1::QuantizeOp::create(builder, loc, yType.clone(*qy), *y);
  define(node, 0,
         l1::StorageCastOp::create(builder, loc, yType.clone(storage), quantized)
             .getResult());
  return success();
}

} // namespace cuvil::onnx_import
