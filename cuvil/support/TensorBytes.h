//===- TensorBytes.h - the byte size of a tensor type, checked --*- C++ -*-===//
//
// Header-only: the importer's fuzzer (built outside Bazel's toolchain)
// compiles the importer with it.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SUPPORT_TENSORBYTES_H
#define CUVIL_SUPPORT_TENSORBYTES_H

#include "mlir/IR/BuiltinTypes.h"

#include <cstdint>
#include <optional>

namespace cuvil {

/// Bytes of a tensor of `type` (elements of less than a byte take one;
/// dynamic dimensions count as 1), or nullopt if the product overflows
/// int64: a model with such a tensor cannot be compiled, and must be told so
/// before anything multiplies its dimensions.
inline std::optional<int64_t> getStaticTensorBytes(mlir::ShapedType type) {
  mlir::Type element = type.getElementType();
  int64_t bytes =
      element.isIntOrFloat()
          ? std::max<int64_t>(1, (element.getIntOrFloatBitWidth() + 7) / 8)
          : 8;
  for (int64_t dim : type.getShape()) {
    if (mlir::ShapedType::isDynamic(dim))
      continue;
    if (dim < 0 || __builtin_mul_overflow(bytes, dim, &bytes))
      return std::nullopt;
  }
  return bytes;
}

} // namespace cuvil

#endif // CUVIL_SUPPORT_TENSORBYTES_H
