#include "cuvil/passes/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace cuvil {

void buildLevel1Pipeline(mlir::OpPassManager &pm) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

void registerCuvilPipelines() {
  mlir::PassPipelineRegistration<>(
      "cuvil-level1-pipeline",
      "Simplify level1: fold constants and shapes, canonicalize, CSE",
      [](mlir::OpPassManager &pm) { buildLevel1Pipeline(pm); });
}

} // namespace cuvil
