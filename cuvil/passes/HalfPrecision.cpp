//===- HalfPrecision.cpp - what the half-precision passes share -----------===//

#include "cuvil/passes/HalfPrecision.h"

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
