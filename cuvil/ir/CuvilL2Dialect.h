//===- CuvilL2Dialect.h - level2 dialect, attributes, types -----*- C++ -*-===//

#ifndef CUVIL_IR_CUVILL2DIALECT_H
#define CUVIL_IR_CUVILL2DIALECT_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "cuvil/ir/CuvilL2Dialect.h.inc"
#include "cuvil/ir/CuvilL2Enums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "cuvil/ir/CuvilL2Attrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "cuvil/ir/CuvilL2Types.h.inc"

namespace cuvil::l2 {

/// Bytes a buffer of `type` occupies: its physical shape (blocked
/// dimensions padded) times the element's storage size. Dynamic dimensions
/// take their value from `bounds`, in order. Fails (with `emitError`) on a
/// dynamic dimension without a bound or an element type without a size.
llvm::FailureOr<int64_t>
getBufferBytes(mlir::MemRefType type, llvm::ArrayRef<int64_t> bounds,
               llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

} // namespace cuvil::l2

#endif // CUVIL_IR_CUVILL2DIALECT_H
