#include "cuvil/support/ElementsBytes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace cuvil {

absl::StatusOr<std::string> getElementsBytes(mlir::Attribute value) {
  if (auto resource = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(value)) {
    mlir::AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return absl::InvalidArgumentError("a dense resource without data");
    llvm::ArrayRef<char> raw = blob->getData();
    return std::string(raw.begin(), raw.end());
  }
  auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(value);
  if (!dense)
    return absl::InvalidArgumentError("not dense data");
  int64_t count = dense.getType().getNumElements();
  std::string bytes;
  if (dense.getElementType().isInteger(1)) {
    // Stored bit-packed; a model keeps one byte per bool.
    for (bool v : dense.getValues<bool>())
      bytes.push_back(v ? 1 : 0);
    if (dense.isSplat())
      bytes.assign(count, bytes.empty() ? 0 : bytes[0]);
    return bytes;
  }
  llvm::ArrayRef<char> raw = dense.getRawData();
  if (!dense.isSplat())
    return std::string(raw.begin(), raw.end());
  for (int64_t i = 0; i < count; ++i)
    bytes.append(raw.begin(), raw.end());
  return bytes;
}

uint16_t toHalfBits(double value, mlir::FloatType half) {
  llvm::APFloat v(value);
  bool lost = false;
  v.convert(half.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return static_cast<uint16_t>(v.bitcastToAPInt().getZExtValue());
}

} // namespace cuvil
