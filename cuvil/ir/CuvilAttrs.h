//===- CuvilAttrs.h - level1 attributes -------------------------*- C++ -*-===//

#ifndef CUVIL_IR_CUVILATTRS_H
#define CUVIL_IR_CUVILATTRS_H

#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/Attributes.h"
#include "llvm/ADT/APFloat.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include <string>

namespace cuvil::l1 {

/// The shortest decimal form that reads back as `value` (for attributes).
std::string formatDouble(const llvm::APFloat &value);

} // namespace cuvil::l1

#define GET_ATTRDEF_CLASSES
#include "cuvil/ir/CuvilAttrs.h.inc"

#endif // CUVIL_IR_CUVILATTRS_H
