#include "cuvil/passes/ConstantUtil.h"

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/support/ElementsBytes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

namespace cuvil {

FailureOr<std::vector<float>> getF32Constant(Value value) {
  auto constant = value.getDefiningOp<l1::ConstantOp>();
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!constant || !type || !type.getElementType().isF32() ||
      !type.hasStaticShape())
    return failure();
  absl::StatusOr<std::string> bytes = getElementsBytes(constant.getValue());
  if (!bytes.ok() ||
      bytes->size() != static_cast<size_t>(type.getNumElements()) * 4)
    return failure();
  std::vector<float> values(type.getNumElements());
  std::memcpy(values.data(), bytes->data(), bytes->size());
  return values;
}

std::optional<APFloat> getSplatFloat(Value value) {
  auto constant = value.getDefiningOp<l1::ConstantOp>();
  auto dense = constant ? dyn_cast<DenseFPElementsAttr>(constant.getValue())
                        : DenseFPElementsAttr();
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>();
}

std::string toBytes(const std::vector<float> &values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

Value createResourceConstant(OpBuilder &builder, Location loc,
                             RankedTensorType type, StringRef name,
                             const std::string &bytes) {
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(bytes.data(), bytes.size()), 64);
  auto attr = DenseResourceElementsAttr::get(type, name, std::move(blob));
  return l1::ConstantOp::create(builder, loc, attr).getResult();
}

} // namespace cuvil
