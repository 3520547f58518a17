//===- Pipelines.h - Cuvil's compilation pipelines --------------*- C++ -*-===//
//
// The one definition of what runs, in which order: cuvilc, the Python
// extension and the tests all build their pass managers from here.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PASSES_PIPELINES_H
#define CUVIL_PASSES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace cuvil {

/// level1 -> verified, simplified level1 (folding, canonicalization, CSE).
void buildLevel1Pipeline(mlir::OpPassManager &pm);

/// Verified level1 -> level2: micro-kernel calls on buffers, with every
/// intermediate placed in one arena.
void buildLevel2Pipeline(mlir::OpPassManager &pm);

/// Registers every Cuvil pass, and the pipelines above as
/// `cuvil-level1-pipeline` and `cuvil-level2-pipeline`, for cuvil-opt.
void registerCuvilPipelines();

} // namespace cuvil

#endif // CUVIL_PASSES_PIPELINES_H
