//===- ExplainKernels.h - which kernel each layer runs, and why -*- C++ -*-===//

#ifndef CUVIL_TARGETS_CPU_EXPLAINKERNELS_H
#define CUVIL_TARGETS_CPU_EXPLAINKERNELS_H

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace cuvil::cpu {

/// A heading, then one line per kernel call, generated loop and reorder of
/// a module the CPU level2 pipeline lowered: the layer (its location), the
/// kernel that computes it (algorithm, layout, fused epilogue) and why
/// (cuvilc --explain-kernels).
std::vector<std::string> explainKernels(mlir::ModuleOp module);

} // namespace cuvil::cpu

#endif // CUVIL_TARGETS_CPU_EXPLAINKERNELS_H
