//===- Passes.h - Cuvil passes ----------------------------------*- C++ -*-===//

#ifndef CUVIL_PASSES_PASSES_H
#define CUVIL_PASSES_PASSES_H

#include "cuvil/ir/CuvilL2Dialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace cuvil {

#define GEN_PASS_DECL
#include "cuvil/passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cuvil/passes/Passes.h.inc"

/// cuvil-hoist-quantize's rewrite: quantize(max_pool2d(x)) ->
/// max_pool2d(quantize(x)), for pipelines that run it with other patterns.
void populateHoistQuantizePatterns(mlir::RewritePatternSet &patterns);

} // namespace cuvil

#endif // CUVIL_PASSES_PASSES_H
