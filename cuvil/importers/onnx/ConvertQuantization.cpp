//===- ConvertQuantization.cpp - QDQ and QLinear ops ----------------------===//
//
// QDQ graphs and the QLinear integer ops onto level1's quantized types
// (cuvil/ir/Quantization.h).
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

#include <cmath>

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
  FailureOr<HostTensor> zero = failure();
  if (hasInput(node, inputs.zero)) {
    zero = requireHost(node, inputs.zero, "zero point");
    if (failed(zero))
      return failure();
  }
  FailureOr<HostTensor> scale = failure();
  if (inputs.scale == QuantInputs::kUnitScale) {
    scale = HostTensor{expressed, {}, {}, {1.0}};
    if (succeeded(zero))
      scale = HostTensor{expressed, zero->shape, {},
                         SmallVector<double>(zero->numElements(), 1.0)};
  } else {
    scale = requireHost(node, inputs.scale, "scale");
  }
  if (failed(scale))
    return failure();
  if (!scale->isFloat() || scale->shape.size() > 1)
    return emitError(loc) << node.op_type()
                          << " expects a float scalar or 1-D scale";
  SmallVector<int64_t> zeros(scale->numElements(), 0);
  if (succeeded(zero)) {
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
  if (!getHost(node, 1) || (hasInput(node, 2) && !getHost(node, 2)))
    return defineResult(node, quantizeAtRunTime(node, loc, *x, storage));
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
  if (!getHost(node, 1) || (hasInput(node, 2) && !getHost(node, 2)))
    return defineResult(node, dequantizeAtRunTime(node, loc, *x));
  FailureOr<quant::QuantizedType> q = quantizedType(
      node, loc, type, type.getElementType(), scale->getElementType());
  if (failed(q))
    return failure();
  auto quantized =
      l1::StorageCastOp::create(builder, loc, type.clone(*q), *x);
  return defineResult(node, create<l1::DequantizeOp>(loc, quantized));
}


FailureOr<Value> Importer::dequantized(const onnx::NodeProto &node,
                                       Location loc, Value x, Type expressed,
                                       QuantInputs at) {
  auto type = cast<RankedTensorType>(x.getType());
  FailureOr<quant::QuantizedType> q =
      quantizedType(node, loc, type, type.getElementType(), expressed, at);
  if (failed(q))
    return failure();
  Value stored = l1::StorageCastOp::create(builder, loc, type.clone(*q), x);
  return create<l1::DequantizeOp>(loc, stored);
}

FailureOr<Value> Importer::quantized(const onnx::NodeProto &node, Location loc,
                                     Value y, Type storage, QuantInputs at) {
  auto type = cast<RankedTensorType>(y.getType());
  FailureOr<quant::QuantizedType> q =
      quantizedType(node, loc, type, storage, type.getElementType(), at);
  if (failed(q))
    return failure();
  Value quantized = l1::QuantizeOp::create(builder, loc, type.clone(*q), y);
  return l1::StorageCastOp::create(builder, loc, type.clone(storage),
                                   quantized)
      .getResult();
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
  int64_t bRank = cast<RankedTensorType>(b->getType()).getRank();
  // a is quantized per tensor; b per tensor or per column (its last axis).
  FailureOr<Value> ad = dequantized(node, loc, *a, expressed, {1, 2, {}});
  FailureOr<Value> bd =
      dequantized(node, loc, *b, expressed, {4, 5, bRank - 1});
  if (failed(ad) || failed(bd))
    return failure();
  FailureOr<Value> y = create<l1::MatmulOp>(loc, *ad, *bd, TypeAttr());
  if (failed(y))
    return failure();
  return defineResult(node, quantized(node, loc, *y, yZero->getElementType(),
                                      {6, 7, {}}));
}

/// QLinearConv(x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, B):
/// the QDQ form, as QLinearMatMul, with the int32 bias B dequantized at
/// x_scale * w_scale (per output channel where w is).
LogicalResult Importer::convertQLinearConv(const onnx::NodeProto &node,
                                           Location loc) {
  FailureOr<Value> x = getValue(node, 0), w = getValue(node, 3);
  FailureOr<RankedTensorType> scale = getType(node, 1), yZero = getType(node, 7);
  if (failed(x) || failed(w) || failed(scale) || failed(yZero))
    return failure();
  Type expressed = scale->getElementType();
  FailureOr<Value> xd = dequantized(node, loc, *x, expressed, {1, 2, {}});
  FailureOr<Value> wd = dequantized(node, loc, *w, expressed, {4, 5, 0});
  if (failed(xd) || failed(wd))
    return failure();
  Value bias;
  if (hasInput(node, 8)) {
    FailureOr<Value> b = getValue(node, 8);
    FailureOr<HostTensor> xs = requireHost(node, 1, "scale");
    FailureOr<HostTensor> ws = requireHost(node, 4, "scale");
    if (failed(b) || failed(xs) || failed(ws))
      return failure();
    auto bType = cast<RankedTensorType>(b->getType());
    if (!bType.getElementType().isInteger(32) || bType.getRank() != 1)
      return emitError(loc) << "QLinearConv expects an int32 bias of rank 1, "
                               "got "
                            << bType;
    if (xs->numElements() != 1 || !ws->isFloat())
      return emitError(loc) << "QLinearConv expects a per-tensor input scale "
                               "and a float weight scale";
    SmallVector<double> scales;
    for (double s : ws->floats)
      scales.push_back(static_cast<float>(xs->floats[0]) *
                       static_cast<float>(s));
    auto i32 = IntegerType::get(&context, 32);
    int64_t lo = std::numeric_limits<int32_t>::min(),
            hi = std::numeric_limits<int32_t>::max();
    auto emit = [&] { return emitError(loc) << "QLinearConv bias: "; };
    Type q =
        scales.size() == 1
            ? Type(quant::UniformQuantizedType::getChecked(
                  emit, quant::QuantizationFlags::Signed, i32, expressed,
                  scales[0], 0, lo, hi))
            : Type(quant::UniformQuantizedPerAxisType::getChecked(
                  emit, quant::QuantizationFlags::Signed, i32, expressed,
                  scales, SmallVector<int64_t>(scales.size(), 0), 0, lo, hi));
    if (!q)
      return failure();
    Value stored = l1::StorageCastOp::create(builder, loc, bType.clone(q), *b);
    FailureOr<Value> bd = create<l1::DequantizeOp>(loc, stored);
    if (failed(bd))
      return failure();
    bias = *bd;
  }
  FailureOr<Value> y = buildConv(node, loc, *xd, *wd, bias);
  if (failed(y))
    return failure();
  return defineResult(node, quantized(node, loc, *y, yZero->getElementType(),
                                      {6, 7, {}}));
}

/// The largest |q - zero point| a value of quantized type `q` can take.
static int64_t maxOffset(quant::QuantizedType q) {
  SmallVector<int64_t> zeros;
  if (auto perAxis = dyn_cast<quant::UniformQuantizedPerAxisType>(q))
    zeros.assign(perAxis.getZeroPoints().begin(),
                 perAxis.getZeroPoints().end());
  else
    zeros.push_back(cast<quant::UniformQuantizedType>(q).getZeroPoint());
  int64_t most = 0;
  for (int64_t z : zeros)
    most = std::max({most, z - q.getStorageTypeMin(),
                     q.getStorageTypeMax() - z});
  return most;
}

/// The zero point of output channel `c` of `q`.
static int64_t zeroPointAt(quant::QuantizedType q, int64_t c) {
  if (auto perAxis = dyn_cast<quant::UniformQuantizedPerAxisType>(q))
    return perAxis.getZeroPoints()[c];
  return cast<quant::UniformQuantizedType>(q).getZeroPoint();
}

std::optional<int64_t> Importer::largestWeightSum(const onnx::NodeProto &node,
                                                  quant::QuantizedType w,
                                                  bool conv) {
  ValueEntry *entry = lookup(node.input(1));
  if (!entry || !entry->initializer)
    return std::nullopt;
  std::string bytes;
  FailureOr<HostTensor> host =
      decodeTensor(*entry->initializer, /*full=*/true, bytes);
  if (failed(host) || host->isFloat() || host->shape.size() < 2)
    return std::nullopt;
  // One sum per output: a conv's output channel (axis 0), a product's
  // column in each batch.
  ArrayRef<int64_t> shape = host->shape;
  int64_t n = shape.back(), k = shape[shape.size() - 2];
  int64_t perChannel = host->numElements() / std::max<int64_t>(shape[0], 1);
  // Zero points of the wrong count are the verifier's to report.
  if (auto perAxis = dyn_cast<quant::UniformQuantizedPerAxisType>(w))
    if (static_cast<int64_t>(perAxis.getZeroPoints().size()) !=
        (conv ? shape[0] : n))
      return std::nullopt;
  llvm::DenseMap<int64_t, int64_t> sums;
  for (int64_t i = 0, e = host->numElements(); i < e; ++i) {
    int64_t channel = conv ? i / perChannel : i % n;
    int64_t key = conv ? channel : (i / (k * n)) * n + channel;
    sums[key] += std::abs(host->ints[i] - zeroPointAt(w, channel));
  }
  int64_t most = 0;
  for (auto &entry : sums)
    most = std::max(most, entry.second);
  return most;
}

LogicalResult Importer::checkExactSums(const onnx::NodeProto &node,
                                       Location loc, quant::QuantizedType x,
                                       quant::QuantizedType w, int64_t terms,
                                       bool conv) {
  // Every partial sum is at most sum_k |x_k - zx| |w_k - zw|: bounded by
  // the weights' values when they are constants, their type otherwise.
  std::optional<int64_t> weights = largestWeightSum(node, w, conv);
  double bound = static_cast<double>(maxOffset(x)) *
                 (weights ? *weights : maxOffset(w) * terms);
  constexpr double kExact = 1 << 24;
  if (bound < kExact)
    return success();
  return emitError(loc)
         << node.op_type() << " sums up to " << terms
         << " products of 8-bit values into int32; Cuvil computes them in "
            "float32, exact only below 2^24, and these can reach "
         << static_cast<int64_t>(bound)
         << ". Express the layer in QDQ form (QuantizeLinear / "
            "DequantizeLinear) or as QLinearConv / QLinearMatMul, whose "
            "result is requantized";
}

/// ConvInteger(x, w, x_zero, w_zero) and MatMulInteger(a, b, a_zero,
/// b_zero): int32 sums of (q - zero point) products. Imported as the
/// product of values dequantized at scale 1, converted to int32; exact
/// because checkExactSums bounds every partial sum below 2^24, and folded
/// onto the int8 kernels when the weights are constant symmetric int8.
LogicalResult Importer::convertIntegerProduct(const onnx::NodeProto &node,
                                              Location loc) {
  FailureOr<Value> x = getValue(node, 0), w = getValue(node, 1);
  if (failed(x) || failed(w))
    return failure();
  auto xType = cast<RankedTensorType>(x->getType());
  auto wType = cast<RankedTensorType>(w->getType());
  bool conv = node.op_type() == "ConvInteger";
  if (xType.getRank() < 2 || wType.getRank() < (conv ? 3 : 2))
    return emitError(loc) << node.op_type() << " of " << xType << " and "
                          << wType << ": the operands' ranks are too small";
  // Zero points: x (a) per tensor, or per row for MatMulInteger; w (b) per
  // output channel (axis 0) for convolutions, per column for products.
  Type f32 = builder.getF32Type();
  int64_t xAxis = conv ? 1 : xType.getRank() - 2;
  int64_t wAxis = conv ? 0 : wType.getRank() - 1;
  FailureOr<Value> xd =
      dequantized(node, loc, *x, f32, {QuantInputs::kUnitScale, 2, xAxis});
  FailureOr<Value> wd =
      dequantized(node, loc, *w, f32, {QuantInputs::kUnitScale, 3, wAxis});
  if (failed(xd) || failed(wd))
    return failure();
  auto quantizedOf = [](Value dequantized) {
    return cast<quant::QuantizedType>(
        cast<RankedTensorType>(dequantized.getDefiningOp()->getOperand(0)
                                   .getType())
            .getElementType());
  };
  // Terms per sum: the weight's elements per output channel (conv) or K.
  int64_t terms = 1;
  for (int64_t i = conv ? 1 : wType.getRank() - 2,
               e = conv ? wType.getRank() : wType.getRank() - 1;
       i < e; ++i)
    terms *= wType.getDimSize(i);
  if (ShapedType::isDynamic(terms) || terms < 0)
    return emitError(loc) << node.op_type()
                          << " needs the weight's reduced dimensions at "
                             "compile time";
  if (failed(checkExactSums(node, loc, quantizedOf(*xd), quantizedOf(*wd),
                            terms, conv)))
    return failure();
  FailureOr<Value> y = conv ? buildConv(node, loc, *xd, *wd, Value())
                            : create<l1::MatmulOp>(loc, *xd, *wd, TypeAttr());
  if (failed(y))
    return failure();
  auto yType = cast<RankedTensorType>(y->getType());
  define(node, 0,
         l1::CastOp::create(builder, loc,
                            yType.clone(IntegerType::get(&context, 32)), *y)
             .getResult());
  return success();
}

} // namespace cuvil::onnx_import

namespace cuvil::onnx_import {

// DynamicQuantizeLinear: uint8 with the scale and zero point of x's own
// range, widened to hold 0, computed at run time as ONNX specifies:
//   scale = (max(x, 0) - min(x, 0)) / 255,
//   zero point = clip(round(-min(x, 0) / scale), 0, 255),
//   y = clip(round(x / scale) + zero point, 0, 255),
// rounding half to even. The three outputs are plain tensors (uint8, f32,
// uint8), not a quantized type: the scale is not known at compile time.
LogicalResult
Importer::convertDynamicQuantizeLinear(const onnx::NodeProto &node,
                                       Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (!type.getElementType().isF32())
    return emitError(loc) << "DynamicQuantizeLinear expects float32 input, got "
                          << type;
  SmallVector<int64_t> all(type.getRank());
  std::iota(all.begin(), all.end(), 0);
  auto axes = builder.getDenseI64ArrayAttr(all);
  Type f32 = builder.getF32Type();
  Value zero = scalarConstant(loc, f32, 0);
  auto clip255 = [&](FailureOr<Value> v) -> FailureOr<Value> {
    if (failed(v))
      return failure();
    return create<l1::ClipOp>(loc, *v, builder.getF64FloatAttr(0),
                              builder.getF64FloatAttr(255));
  };
  auto rounded = [&](FailureOr<Value> v) -> FailureOr<Value> {
    return failed(v) ? v : create<l1::RoundOp>(loc, *v);
  };
  FailureOr<Value> low = type.getRank() == 0
                             ? *x
                             : create<l1::ReduceMinOp>(loc, *x, axes, UnitAttr());
  FailureOr<Value> high = type.getRank() == 0
                              ? *x
                              : create<l1::ReduceMaxOp>(loc, *x, axes, UnitAttr());
  if (failed(low) || failed(high))
    return failure();
  low = create<l1::MinOp>(loc, *low, zero);
  high = create<l1::MaxOp>(loc, *high, zero);
  if (failed(low) || failed(high))
    return failure();
  FailureOr<Value> range = create<l1::SubOp>(loc, *high, *low);
  FailureOr<Value> scale =
      failed(range) ? range
                    : create<l1::DivOp>(loc, *range,
                                        scalarConstant(loc, f32, 255));
  if (failed(scale))
    return failure();
  FailureOr<Value> negated = create<l1::NegOp>(loc, *low);
  FailureOr<Value> zeroPoint = clip255(rounded(
      failed(negated) ? negated : create<l1::DivOp>(loc, *negated, *scale)));
  if (failed(zeroPoint))
    return failure();
  Type u8 = IntegerType::get(&context, 8, IntegerType::Unsigned);
  FailureOr<Value> y = saturatingQuantize(loc, *x, *scale, *zeroPoint, u8);
  if (failed(y))
    return failure();
  auto toU8 = [&](Value v) {
    return l1::CastOp::create(
        builder, loc, cast<RankedTensorType>(v.getType()).clone(u8), v);
  };
  define(node, 0, *y);
  if (node.output_size() > 1 && !node.output(1).empty())
    define(node, 1, *scale);
  if (node.output_size() > 2 && !node.output(2).empty())
    define(node, 2, toU8(*zeroPoint));
  return success();
}

FailureOr<Value> Importer::saturatingQuantize(Location loc, Value x,
                                              Value scale, Value zeroPoint,
                                              Type storage) {
  unsigned bits = storage.getIntOrFloatBitWidth();
  bool isSigned = !storage.isUnsignedInteger();
  double low = isSigned ? -std::ldexp(1.0, bits - 1) : 0.0;
  double high = isSigned ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
  FailureOr<Value> steps = create<l1::DivOp>(loc, x, scale);
  steps = failed(steps) ? steps : create<l1::RoundOp>(loc, *steps);
  steps = failed(steps) ? steps : create<l1::AddOp>(loc, *steps, zeroPoint);
  steps = failed(steps) ? steps
                        : create<l1::ClipOp>(loc, *steps,
                                             builder.getF64FloatAttr(low),
                                             builder.getF64FloatAttr(high));
  if (failed(steps))
    return failure();
  return l1::CastOp::create(
             builder, loc,
             cast<RankedTensorType>(steps->getType()).clone(storage), *steps)
      .getResult();
}

// QuantizeLinear and DequantizeLinear whose scale or zero point the model
// computes (a dynamic quantization graph): the arithmetic itself, in the
// float type `element`, a per-axis scale broadcast along `axis`.
FailureOr<std::pair<Value, Value>>
Importer::runTimeScaleAndZero(const onnx::NodeProto &node, Location loc,
                              RankedTensorType type, Type element) {
  FailureOr<Value> scale = getValue(node, 1);
  if (failed(scale))
    return failure();
  Value zeroPoint = scalarConstant(loc, element, 0);
  if (hasInput(node, 2)) {
    FailureOr<Value> given = getValue(node, 2);
    if (failed(given))
      return failure();
    zeroPoint = l1::CastOp::create(
        builder, loc, cast<RankedTensorType>(given->getType()).clone(element),
        *given);
  }
  auto scaleType = cast<RankedTensorType>(scale->getType());
  if (scaleType.getElementType() != element || scaleType.getRank() > 1)
    return emitError(loc) << node.op_type() << " expects a scalar or 1-D "
                          << "scale of " << element << ", got " << scaleType;
  if (scaleType.getRank() == 0 || type.getRank() <= 1)
    return std::make_pair(*scale, zeroPoint);
  int64_t axis = attrInt(node, "axis", 1);
  axis = axis < 0 ? axis + type.getRank() : axis;
  if (axis < 0 || axis >= type.getRank())
    return emitError(loc) << node.op_type() << " axis "
                          << attrInt(node, "axis", 1) << " is out of range for "
                          << type;
  SmallVector<int64_t> others;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != axis)
      others.push_back(d);
  auto spread = builder.getDenseI64ArrayAttr(others);
  FailureOr<Value> s = create<l1::UnsqueezeOp>(loc, *scale, spread);
  FailureOr<Value> z = cast<RankedTensorType>(zeroPoint.getType()).getRank() == 1
                           ? create<l1::UnsqueezeOp>(loc, zeroPoint, spread)
                           : FailureOr<Value>(zeroPoint);
  if (failed(s) || failed(z))
    return failure();
  return std::make_pair(*s, *z);
}

FailureOr<Value> Importer::quantizeAtRunTime(const onnx::NodeProto &node,
                                             Location loc, Value x,
                                             Type storage) {
  auto type = cast<RankedTensorType>(x.getType());
  FailureOr<std::pair<Value, Value>> params =
      runTimeScaleAndZero(node, loc, type, type.getElementType());
  if (failed(params))
    return failure();
  return saturatingQuantize(loc, x, params->first, params->second, storage);
}

FailureOr<Value> Importer::dequantizeAtRunTime(const onnx::NodeProto &node,
                                               Location loc, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  FailureOr<RankedTensorType> scaleType = getType(node, 1);
  if (failed(scaleType))
    return failure();
  Type element = scaleType->getElementType();
  if (!isa<FloatType>(element))
    return emitError(loc) << "DequantizeLinear expects a float scale, got "
                          << *scaleType;
  FailureOr<std::pair<Value, Value>> params =
      runTimeScaleAndZero(node, loc, type, element);
  if (failed(params))
    return failure();
  Value wide = l1::CastOp::create(builder, loc, type.clone(element), x);
  FailureOr<Value> centered = create<l1::SubOp>(loc, wide, params->second);
  return failed(centered) ? centered
                          : create<l1::MulOp>(loc, *centered, params->first);
}

} // namespace cuvil::onnx_import
