//===- cuvil-opt.cpp - mlir-opt for Cuvil's dialects and passes -----------===//
//
// Parses, verifies, transforms and prints Cuvil IR; the driver of every lit
// test. Registers the cuvil dialects, the upstream dialects they mix with,
// the generic upstream transforms (canonicalize, cse, ...), Cuvil's passes
// and pipelines, and every registered target's passes.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/Registration.h"
#include "cuvil/passes/Pipelines.h"
#include "cuvil/targets/AllTargets.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  cuvil::registerCuvilPipelines(cuvil::getAllTargets());
  mlir::DialectRegistry registry;
  cuvil::registerCuvilDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Cuvil optimizer driver\n", registry));
}
