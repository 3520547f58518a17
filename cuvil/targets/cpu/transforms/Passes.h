//===- Passes.h - the x86 target's level2 passes ----------------*- C++ -*-===//

#ifndef CUVIL_TARGETS_CPU_TRANSFORMS_PASSES_H
#define CUVIL_TARGETS_CPU_TRANSFORMS_PASSES_H

#include "cuvil/ir/CuvilL2Dialect.h"
#include "cuvil/targets/cpu/RuntimeContract.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace cuvil::cpu {

#define GEN_PASS_DECL
#include "cuvil/targets/cpu/transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cuvil/targets/cpu/transforms/Passes.h.inc"

/// Why a convolution runs the algorithm it runs (cuvil-cpu-select-kernels)
/// and why it stays NCHW (cuvil-cpu-assign-layouts): string attributes on
/// the call that cuvilc --explain-kernels prints.
inline constexpr llvm::StringLiteral kAlgorithmWhyAttr = "cpu.algorithm_why";
inline constexpr llvm::StringLiteral kLayoutWhyAttr = "cpu.layout_why";

/// Registers the passes above (cuvil-cpu-*).
void registerCpuPasses();

/// The x86 passes of the level2 pipeline, in order: casts fused into the
/// bfloat16 convolutions that read them, kernel selection,
/// compile-time packing of product weights, blocked layouts.
void buildCpuLevel2Pipeline(mlir::OpPassManager &pm);

} // namespace cuvil::cpu

#endif // CUVIL_TARGETS_CPU_TRANSFORMS_PASSES_H
