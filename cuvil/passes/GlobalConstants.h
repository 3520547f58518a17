//===- GlobalConstants.h - level2 constants as memref globals ---*- C++ -*-===//
//
// Level2 passes that repack weights for a kernel (the CPU's packed panels,
// an MLU's fixed-point rows) store the new bytes as a private constant
// global, a 64-byte aligned dense resource as the importers give weights.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PASSES_GLOBALCONSTANTS_H
#define CUVIL_PASSES_GLOBALCONSTANTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace cuvil {

/// A new private constant global of `type` holding `bytes`, before `func`
/// in its module, named `name` (renamed on a clash).
mlir::memref::GlobalOp
createConstantGlobal(mlir::SymbolTable &symbols, mlir::Operation *func,
                     mlir::Location loc, llvm::StringRef name,
                     mlir::MemRefType type, llvm::ArrayRef<char> bytes);

/// createConstantGlobal before `user`'s function, and its memref.get_global
/// before `user`: the new constant as `user` reads it.
mlir::Value createConstantGlobalRead(mlir::SymbolTable &symbols,
                                     mlir::Operation *user,
                                     llvm::StringRef name,
                                     mlir::MemRefType type,
                                     llvm::ArrayRef<char> bytes);

} // namespace cuvil

#endif // CUVIL_PASSES_GLOBALCONSTANTS_H
