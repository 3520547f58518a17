// Cuvil's libraries linked into a program of your own: parses a level1
// model (checking every shape and dtype), runs Cuvil's passes on it by
// name, and prints the result.
//
//   ir_tool MODEL.mlir 'func.func(cuvil-fold-batch-norm)'
#include "cuvil/ir/Registration.h"
#include "cuvil/passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

int main(int argc, char **argv) {
  if (argc != 3) {
    llvm::errs() << "usage: ir_tool MODEL.mlir PIPELINE\n";
    return 2;
  }
  cuvil::registerCuvilPasses();
  mlir::DialectRegistry registry;
  cuvil::registerCuvilDialects(registry);
  mlir::MLIRContext context(registry);
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = mlir::openInputFile(argv[1], &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return 1;
  }
  // Errors print as FILE:LINE:COLUMN with the line quoted.
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler diagnostics(sources, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sources, &context);
  if (!module)
    return 1; // the parser has reported the error and its location
  mlir::PassManager pm(&context);
  if (mlir::failed(mlir::parsePassPipeline(argv[2], pm, llvm::errs())))
    return 2;
  if (mlir::failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}
