//===- HalfPrecision.cpp - what the half-precision passes share -----------===//

#include "cuvil/passes/HalfPrecision.h"

#include "cuvil/passes/ConstantUtil.h"
#include "cuvil/passes/LinearLayers.h"
#include "cuvil/support/Diagnostics.h"
#include "cuvil/support/ElementsBytes.h"

namespace cuvil {

using namespace mlir;

std::string toHalfBytes(const std::vector<float> &values, FloatType half) {
  std::string bytes(2 * values.size(), '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t bits = toHalfBits(values[i], half);
    bytes[2 * i] = static_cast<char>(bits & 0xff);
    bytes[2 * i + 1] = static_cast<char>(bits >> 8);
  }
  return bytes;
}

/// "bfloat16" or "float16".
static std::string precisionName(FloatType half) {
  return half.isBF16() ? "bfloat16" : "float16";
}

std::optional<std::string> whyNotHalfConv(l1::Conv2dOp conv, FloatType half,
                                          bool staticImage) {
  if (conv.getGroups() != 1)
    return "it is grouped (the " + precisionName(half) +
           " kernels compute ungrouped convolutions)";
  if (conv.getAccType())
    return std::string("it is already a reduced-precision convolution");
  if (!conv.getWeight().getDefiningOp<l1::ConstantOp>())
    return std::string("its weights are computed at run time");
  auto weights = cast<RankedTensorType>(conv.getWeight().getType());
  auto input = cast<RankedTensorType>(conv.getInput().getType());
  if (!weights.getElementType().isF32() || !weights.hasStaticShape() ||
      !input.getElementType().isF32() ||
      (staticImage &&
       llvm::any_of(input.getShape().drop_front(), ShapedType::isDynamic)))
    return std::string("its input or weights are not static float32");
  return std::nullopt;
}

HalfOperands castToHalf(OpBuilder &builder, Location loc, Value activation,
                        const std::vector<float> &weights,
                        ArrayRef<int64_t> shape, FloatType half) {
  auto type = cast<RankedTensorType>(activation.getType());
  Value x = l1::CastOp::create(builder, loc, type.clone(half), activation);
  Value w = createResourceConstant(
      builder, loc, RankedTensorType::get(shape, half),
      half.isBF16() ? "bf16_weights" : "f16_weights",
      toHalfBytes(weights, half));
  return {x, w};
}

LogicalResult convertProducts(
    func::FuncOp func, ArrayRef<std::string> keepFp32,
    const std::function<std::optional<std::string>(Operation *)> &whyNot,
    const std::function<LogicalResult(Operation *)> &convert) {
  SmallVector<Operation *> products;
  func.walk([&](Operation *op) {
    if (isQuantizableKind(op))
      products.push_back(op);
  });
  for (Operation *op : products) {
    std::string node = describeLocation(op->getLoc()).node;
    if (std::optional<std::string> entry = keptInFp32(op, node, keepFp32)) {
      op->emitWarning("kept in float32, as asked (keep-fp32 '")
          << *entry << "')";
      continue;
    }
    if (std::optional<std::string> why = whyNot(op)) {
      op->emitWarning("stays float32: ") << *why;
      continue;
    }
    if (failed(convert(op)))
      return failure();
  }
  return success();
}

} // namespace cuvil
