#include "cuvil/passes/ConstantUtil.h"

#include "cuvil/ir/CuvilOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

namespace cuvil {

FailureOr<std::string> getConstantBytes(ElementsAttr value) {
  auto type = cast<ShapedType>(value.getType());
  if (type.getElementTypeBitWidth() % 8 != 0)
    return failure();
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return failure();
    ArrayRef<char> raw = blob->getData();
    return std::string(raw.begin(), raw.end());
  }
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    ArrayRef<char> raw = dense.getRawData();
    std::string bytes;
    if (dense.isSplat()) {
      for (int64_t i = 0; i < type.getNumElements(); ++i)
        bytes.append(raw.begin(), raw.end());
    } else {
      bytes.assign(raw.begin(), raw.end());
    }
    return bytes;
  }
  return failure();
}

FailureOr<std::vector<float>> getF32Constant(Value value) {
  auto constant = value.getDefiningOp<l1::ConstantOp>();
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!constant || !type || !type.getElementType().isF32() ||
      !type.hasStaticShape())
    return failure();
  FailureOr<std::string> bytes = getConstantBytes(constant.getValue());
  if (failed(bytes) ||
      bytes->size() != static_cast<size_t>(type.getNumElements()) * 4)
    return failure();
  std::vector<float> values(type.getNumElements());
  std::memcpy(values.data(), bytes->data(), bytes->size());
  return values;
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
