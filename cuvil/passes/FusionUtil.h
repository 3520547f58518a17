//===- FusionUtil.h - what fusion passes share ------------------*- C++ -*-===//
//
// The fusion passes (cuvil-fuse-epilogues, cuvil-fuse-elementwise) replace a
// set of ops by one op: its operands are the values the set reads from
// outside, its location names every op it replaces.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PASSES_FUSIONUTIL_H
#define CUVIL_PASSES_FUSIONUTIL_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

namespace cuvil {

/// The values `ops` read that none of them defines, in first-use order,
/// each once, except those `skip` (if given) returns true for.
llvm::SmallVector<mlir::Value>
externalOperands(llvm::ArrayRef<mlir::Operation *> ops,
                 llvm::function_ref<bool(mlir::Value)> skip = nullptr);

/// One location for the op that replaces `ops`: all of theirs, fused.
mlir::Location fusedLocation(mlir::OpBuilder &builder,
                             llvm::ArrayRef<mlir::Operation *> ops);

} // namespace cuvil

#endif // CUVIL_PASSES_FUSIONUTIL_H
