//===- Passes.h - the x86 target's level2 passes ----------------*- C++ -*-===//

#ifndef CUVIL_TARGETS_X86_TRANSFORMS_PASSES_H
#define CUVIL_TARGETS_X86_TRANSFORMS_PASSES_H

#include "cuvil/ir/CuvilL2Dialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace cuvil::x86 {

#define GEN_PASS_DECL
#include "cuvil/targets/x86/transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cuvil/targets/x86/transforms/Passes.h.inc"

/// Registers the passes above (cuvil-x86-*).
void registerX86Passes();

/// The x86 passes of the level2 pipeline, in order: casts fused into the
/// bfloat16 convolutions that read them, kernel selection,
/// compile-time packing of product weights, blocked layouts.
void buildX86Level2Pipeline(mlir::OpPassManager &pm);

} // namespace cuvil::x86

#endif // CUVIL_TARGETS_X86_TRANSFORMS_PASSES_H
