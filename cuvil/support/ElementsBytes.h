//===- ElementsBytes.h - the stored bytes of a constant tensor --*- C++ -*-===//

#ifndef CUVIL_SUPPORT_ELEMENTSBYTES_H
#define CUVIL_SUPPORT_ELEMENTSBYTES_H

#include "absl/status/statusor.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cstdint>
#include <string>

namespace cuvil {

/// The row-major bytes of a constant (`dense_resource` or `dense`, splats
/// expanded), as a model stores them: i1 as one byte (0 or 1) per element.
/// Weights passes and the emitters read constants through this.
absl::StatusOr<std::string> getElementsBytes(mlir::Attribute value);

/// `value` rounded to nearest even in `half` (f16 or bf16), as its bits:
/// how half-precision constants are stored.
uint16_t toHalfBits(double value, mlir::FloatType half);

} // namespace cuvil

#endif // CUVIL_SUPPORT_ELEMENTSBYTES_H
