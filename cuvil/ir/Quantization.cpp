//===- Quantization.cpp - level1 quantize / dequantize / requantize -------===//
//
// The verifiers of the quantization ops: a quantized tensor's element type
// is a uniform `!quant.uniform` type (per tensor, or per axis with one
// scale per index of a dimension of the tensor) over integer storage of 8,
// 16 or 32 bits, with positive finite scales and zero points in the storage
// range; the float side of each op is its expressed type.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Inference.h"
#include "cuvil/ir/Quantization.h"

#include <algorithm>
#include <cmath>

namespace cuvil::l1 {

using namespace mlir;

namespace {

/// A diagnostic at `op` about its `role` ("result", "input").
InFlightDiagnostic typeError(Operation *op, StringRef role, Type type) {
  return op->emitOpError() << role << " type " << type << " ";
}

LogicalResult verifyScales(Operation *op, StringRef role, Type type,
                           ArrayRef<double> scales, ArrayRef<int64_t> zeros,
                           quant::QuantizedType q) {
  for (auto [scale, zero] : llvm::zip(scales, zeros)) {
    if (!std::isfinite(scale) || scale <= 0)
      return typeError(op, role, type)
             << "has scale " << scale << "; scales must be positive and finite";
    if (zero < q.getStorageTypeMin() || zero > q.getStorageTypeMax())
      return typeError(op, role, type)
             << "has zero point " << zero << " outside its storage range ["
             << q.getStorageTypeMin() << ", " << q.getStorageTypeMax() << "]";
  }
  return success();
}

} // namespace

LogicalResult verifyQuantizedTensor(Operation *op, StringRef role,
                                    RankedTensorType type) {
  auto q = dyn_cast<quant::QuantizedType>(type.getElementType());
  if (!q)
    return typeError(op, role, type) << "is not quantized";
  unsigned width = q.getStorageTypeIntegralWidth();
  if (width != 8 && width != 16 && width != 32)
    return typeError(op, role, type)
           << "stores " << width << "-bit integers; Cuvil quantizes to 8, "
              "16 or 32 bits";
  if (!isa<FloatType>(q.getExpressedType()))
    return typeError(op, role, type) << "does not express a float type";
  if (auto uniform = dyn_cast<quant::UniformQuantizedType>(q))
    return verifyScales(op, role, type, uniform.getScale(),
                        uniform.getZeroPoint(), q);
  auto perAxis = dyn_cast<quant::UniformQuantizedPerAxisType>(q);
  if (!perAxis)
    return typeError(op, role, type)
           << "is not uniform; Cuvil quantizes per tensor or per axis";
  int64_t axis = perAxis.getQuantizedDimension();
  if (axis < 0 || axis >= type.getRank())
    return typeError(op, role, type)
           << "quantizes along axis " << axis << " of a rank-"
           << type.getRank() << " tensor";
  int64_t size = type.getDimSize(axis);
  auto scales = perAxis.getScales();
  if (ShapedType::isDynamic(size))
    return typeError(op, role, type)
           << "quantizes along axis " << axis
           << ", which is dynamic: its scales need a static size";
  if (size != static_cast<int64_t>(scales.size()))
    return typeError(op, role, type)
           << "has " << scales.size() << " scales for the " << size
           << " indices of axis " << axis;
  return verifyScales(op, role, type, scales, perAxis.getZeroPoints(), q);
}

namespace {

/// A conversion keeps the shape.
LogicalResult verifyConversion(Operation *op, RankedTensorType from,
                               RankedTensorType to) {
  if (from.getShape() != to.getShape())
    return op->emitOpError("changes the shape from ")
           << from << " to " << to << "; it only converts elements";
  return success();
}

LogicalResult verifyExpressed(Operation *op, RankedTensorType quantized,
                              Type floatType) {
  auto q = cast<quant::QuantizedType>(quantized.getElementType());
  if (q.getExpressedType() != floatType)
    return op->emitOpError("converts between ")
           << floatType << " and " << q << ", which expresses "
           << q.getExpressedType();
  return success();
}

} // namespace

LogicalResult QuantizeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  if (failed(verifyQuantizedTensor(*this, "result", out)) ||
      failed(verifyConversion(*this, in, out)))
    return failure();
  return verifyExpressed(*this, out, in.getElementType());
}

LogicalResult DequantizeOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  auto q = cast<quant::QuantizedType>(in.getElementType());
  if (!isa<FloatType>(q.getExpressedType()))
    return emitOptionalError(loc, "'cuvil.dequantize' input type ", in,
                             " does not express a float type");
  types.push_back(in.clone(q.getExpressedType()));
  return success();
}

LogicalResult RequantizeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  if (failed(verifyQuantizedTensor(*this, "input", in)) ||
      failed(verifyQuantizedTensor(*this, "result", out)) ||
      failed(verifyConversion(*this, in, out)))
    return failure();
  auto from = cast<quant::QuantizedType>(in.getElementType());
  return verifyExpressed(*this, out, from.getExpressedType());
}

LogicalResult StorageCastOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  bool inQuantized = isa<quant::QuantizedType>(in.getElementType());
  bool outQuantized = isa<quant::QuantizedType>(out.getElementType());
  if (inQuantized == outQuantized)
    return emitOpError("casts ")
           << in << " to " << out
           << "; one side must be quantized and the other its storage";
  RankedTensorType quantized = inQuantized ? in : out;
  RankedTensorType storage = inQuantized ? out : in;
  if (failed(verifyQuantizedTensor(*this, inQuantized ? "input" : "result",
                                   quantized)) ||
      failed(verifyConversion(*this, in, out)))
    return failure();
  Type expected = storageElementType(quantized.getElementType());
  if (storage.getElementType() != expected)
    return emitOpError("casts ")
           << quantized.getElementType() << ", stored as " << expected
           << ", to or from " << storage.getElementType();
  return success();
}

/// Why weights `w` (`what`, "rhs" or "weights") are not symmetric int8 per
/// tensor or along `axis` (`along`: "per column (axis 1)"), if so.
static std::optional<std::string> symmetricInt8(quant::QuantizedType w,
                                                int32_t axis, StringRef what,
                                                StringRef along) {
  std::string its = ("its " + what + " must be ").str();
  if (w.getStorageTypeIntegralWidth() != 8 || !w.isSigned())
    return its + "int8";
  if (auto perTensor = dyn_cast<quant::UniformQuantizedType>(w)) {
    if (perTensor.getZeroPoint() != 0)
      return its + "symmetric (zero point 0)";
  } else if (auto perAxis = dyn_cast<quant::UniformQuantizedPerAxisType>(w)) {
    if (perAxis.getQuantizedDimension() != axis)
      return its + "quantized per tensor or " + along.str();
    if (llvm::any_of(perAxis.getZeroPoints(), [](int64_t z) { return z; }))
      return its + "symmetric (zero points 0)";
  }
  return std::nullopt;
}

std::optional<std::string> quantizedMatmulMismatch(RankedTensorType lhs,
                                                   RankedTensorType rhs) {
  auto a = dyn_cast<quant::UniformQuantizedType>(lhs.getElementType());
  if (!a || a.getStorageTypeIntegralWidth() != 8)
    return "its lhs must be quantized per tensor to 8 bits";
  auto w = cast<quant::QuantizedType>(rhs.getElementType());
  if (std::optional<std::string> why =
          symmetricInt8(w, 1, "rhs", "per column (axis 1)"))
    return why;
  if (a.getExpressedType() != w.getExpressedType())
    return "its operands must express one float type";
  if (lhs.getRank() < 2 || rhs.getRank() != 2)
    return "it multiplies [..., M, K] by [K, N]";
  int64_t k = lhs.getDimSize(lhs.getRank() - 1);
  if (ShapedType::isDynamic(k) || k != rhs.getDimSize(0))
    return "its contracting dimensions must be static and equal";
  if (k > 65536)
    return "K must be at most 65536 (its sums are exact in int32)";
  return std::nullopt;
}

LogicalResult QuantizedMatmulOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (std::optional<std::string> why = quantizedMatmulMismatch(lhs, rhs))
    return emitOptionalError(loc, "'cuvil.quantized_matmul' op of ", lhs,
                             " and ", rhs, ": ", *why);
  SmallVector<int64_t> shape(lhs.getShape());
  shape.back() = rhs.getDimSize(1);
  auto a = cast<quant::QuantizedType>(lhs.getElementType());
  types.push_back(RankedTensorType::get(shape, a.getExpressedType()));
  return success();
}

bool isDepthwise(RankedTensorType input, RankedTensorType weight,
                 int64_t groups) {
  return groups != 1 && input.getRank() == 4 &&
         input.getDimSize(1) == groups && weight.getRank() == 4 &&
         weight.getDimSize(0) == groups && weight.getDimSize(1) == 1;
}

/// Why `w` is not symmetric int8 per tensor or along `axis`, if it is not.
std::optional<std::string> quantizedConv2dMismatch(RankedTensorType input,
                                                   RankedTensorType weight,
                                                   int64_t groups) {
  auto a = dyn_cast<quant::UniformQuantizedType>(input.getElementType());
  if (!a || a.getStorageTypeIntegralWidth() != 8)
    return "its input must be quantized per tensor to 8 bits";
  auto w = cast<quant::QuantizedType>(weight.getElementType());
  if (std::optional<std::string> why =
          symmetricInt8(w, 0, "weights", "along axis 0"))
    return why;
  if (a.getExpressedType() != w.getExpressedType())
    return "its operands must express one float type";
  if (weight.getRank() != 4 || !weight.hasStaticShape())
    return "its weight must be a static OIHW tensor";
  if (isDepthwise(input, weight, groups) &&
      weight.getDimSize(2) * weight.getDimSize(3) > kMaxDepthwiseTaps)
    return "its depthwise window must have at most 512 taps (so that "
           "float32 sums of its products are exact)";
  // Each output sums C/G * KH * KW products.
  int64_t k = weight.getDimSize(1) * weight.getDimSize(2) * weight.getDimSize(3);
  if (k > 65536)
    return "C/G * KH * KW must be at most 65536 (its sums are exact in int32)";
  return std::nullopt;
}

SmallVector<int64_t, 2> QuantizedConv2dOp::getStridesOrDefault() {
  return SmallVector<int64_t, 2>(inference::withDefault(getStrides(), 2, 1));
}
SmallVector<int64_t, 4> QuantizedConv2dOp::getPaddingOrDefault() {
  return SmallVector<int64_t, 4>(inference::withDefault(getPadding(), 4, 0));
}
SmallVector<int64_t, 2> QuantizedConv2dOp::getDilationsOrDefault() {
  return SmallVector<int64_t, 2>(inference::withDefault(getDilations(), 2, 1));
}

LogicalResult QuantizedConv2dOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  if (std::optional<std::string> why =
          quantizedConv2dMismatch(input, weight, adaptor.getGroups()))
    return inference::inferError(loc, name, "of ", inference::formatType(input),
                                 " and ", inference::formatType(weight), ": ",
                                 *why);
  Type expressed =
      cast<quant::QuantizedType>(input.getElementType()).getExpressedType();
  std::optional<RankedTensorType> bias;
  if (Value b = adaptor.getBias()) {
    bias = cast<RankedTensorType>(b.getType());
    if (bias->getElementType() != expressed)
      return inference::inferError(loc, name, "expects a bias of ", expressed,
                                   ", got ", inference::formatType(*bias));
  }
  return inference::inferConv2dType(
      name, loc, input, weight, bias, adaptor.getStrides(),
      adaptor.getPadding(), adaptor.getDilations(), adaptor.getGroups(),
      expressed, types);
}

OpFoldResult StorageCastOp::fold(FoldAdaptor) {
  // cast(cast(x)) back to x's type is x.
  if (auto inner = getInput().getDefiningOp<StorageCastOp>())
    if (inner.getInput().getType() == getType())
      return inner.getInput();
  return {};
}

Type storageElementType(Type type) {
  auto q = dyn_cast<quant::QuantizedType>(type);
  if (!q)
    return type;
  return IntegerType::get(type.getContext(), q.getStorageTypeIntegralWidth(),
                          q.isSigned() ? IntegerType::Signless
                                       : IntegerType::Unsigned);
}

double kernelScale(double scale) {
  if (!(scale >= 1e-30) || !std::isfinite(scale))
    return 1.0;
  return static_cast<float>(scale);
}

quant::UniformQuantizedType activationType(MLIRContext *context, double lo,
                                           double hi) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  double scale = kernelScale((hi - lo) / 255.0);
  int64_t zero = std::clamp<int64_t>(std::llround(-lo / scale), 0, 255);
  return quant::UniformQuantizedType::get(
      /*flags=*/0, IntegerType::get(context, 8), Float32Type::get(context),
      scale, zero, 0, 255);
}

double powerOfTwoScale(double maxAbs, double limit) {
  if (!(maxAbs > 0) || !std::isfinite(maxAbs))
    return 1.0;
  int position = static_cast<int>(std::ceil(std::log2(maxAbs / limit)));
  // log2 may round across an exact power: the smallest scale that holds it.
  while (maxAbs > limit * std::ldexp(1.0, position))
    ++position;
  while (maxAbs <= limit * std::ldexp(1.0, position - 1))
    --position;
  return std::ldexp(1.0, std::clamp(position, -126, 127));
}

quant::UniformQuantizedType fixedPointActivationType(MLIRContext *context,
                                                     double lo, double hi) {
  double scale = powerOfTwoScale(std::max(std::fabs(lo), std::fabs(hi)), 127);
  return quant::UniformQuantizedType::get(
      quant::QuantizationFlags::Signed, IntegerType::get(context, 8),
      Float32Type::get(context), scale, 0, -128, 127);
}

} // namespace cuvil::l1
