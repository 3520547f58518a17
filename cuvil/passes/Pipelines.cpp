#include "cuvil/passes/Pipelines.h"

#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace cuvil {

void buildLevel1Pipeline(mlir::OpPassManager &pm) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilFoldBatchNorm());
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilPrepackWeights());
  // Drops the constants folding and prepacking replaced.
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilRaiseLayerNorm());
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilBatchParallelConvs());
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilFuseEpilogues());
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilFuseElementwise());
}

void buildLevel2Pipeline(mlir::OpPassManager &pm) {
  pm.addPass(createCuvilLowerToLevel2());
  pm.addPass(createCuvilPackProductWeights());
  pm.addPass(createCuvilAssignLayouts());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(createCuvilPlanMemory());
}

void registerCuvilPipelines() {
  registerCuvilPasses();
  mlir::PassPipelineRegistration<>(
      "cuvil-level1-pipeline",
      "Simplify level1: fold constants and shapes, canonicalize, CSE",
      [](mlir::OpPassManager &pm) { buildLevel1Pipeline(pm); });
  mlir::PassPipelineRegistration<>(
      "cuvil-level2-pipeline",
      "level1 -> level2: bufferize into micro-kernel calls, pack product "
      "weights, plan memory",
      [](mlir::OpPassManager &pm) { buildLevel2Pipeline(pm); });
}

} // namespace cuvil
