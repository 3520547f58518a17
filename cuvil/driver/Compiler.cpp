#include "cuvil/driver/Compiler.h"

#include "cuvil/ir/Registration.h"
#include "cuvil/passes/Pipelines.h"
#include "cuvil/support/Diagnostics.h"
#include "cuvil/support/FileUtil.h"
#include "cuvil/support/StatusMacros.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

namespace cuvil {

namespace {

struct EmitKindName {
  EmitKind kind;
  const char *name;
};

constexpr EmitKindName kEmitKinds[] = {
    {EmitKind::MlirLevel1, "mlir-level1"},
};

/// Reports "[i/n] what (elapsed)" lines through the progress callback.
class ProgressReporter {
public:
  ProgressReporter(const CompileOptions &options, int numStages)
      : callback(options.progress), numStages(numStages),
        start(std::chrono::steady_clock::now()) {}

  void stage(absl::string_view what) {
    if (!callback)
      return;
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    callback(absl::StrFormat("[%d/%d] %s (%.2fs)", ++current, numStages, what,
                             seconds));
  }

private:
  std::function<void(absl::string_view)> callback;
  int numStages;
  int current = 0;
  std::chrono::steady_clock::time_point start;
};

bool endsWith(absl::string_view text, absl::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.substr(text.size() - suffix.size()) == suffix;
}

} // namespace

absl::StatusOr<EmitKind> parseEmitKind(absl::string_view text) {
  for (const EmitKindName &entry : kEmitKinds)
    if (text == entry.name)
      return entry.kind;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown --emit value '", text, "'; expected one of: ",
                   absl::StrJoin(getEmitKindNames(), ", ")));
}

std::vector<std::string> getEmitKindNames() {
  std::vector<std::string> names;
  for (const EmitKindName &entry : kEmitKinds)
    names.push_back(entry.name);
  return names;
}

absl::StatusOr<std::string> compile(const CompileOptions &options) {
  const std::string &path = options.inputPath;
  if (!endsWith(path, ".mlir"))
    return absl::UnimplementedError(absl::StrCat(
        "cannot read '", path,
        "': this build of Cuvil reads level1 MLIR (.mlir) models only"));

  ProgressReporter progress(options, /*numStages=*/3);
  progress.stage(absl::StrCat("reading ", path));
  ASSIGN_OR_RETURN(std::string source, readFile(path));

  mlir::DialectRegistry registry;
  registerCuvilDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  StatusDiagnosticHandler diagnostics(&context);

  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(source, path,
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  mlir::ParserConfig config(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, config);
  if (!module || failed(mlir::verify(*module)))
    return diagnostics.consumeStatus(absl::StatusCode::kInvalidArgument);

  progress.stage("optimizing level1");
  mlir::PassManager pm(&context);
  if (options.printIrAfterAll) {
    // Printing after every pass needs the whole module, single-threaded.
    pm.enableIRPrinting(
        /*shouldPrintBeforePass=*/[](mlir::Pass *, mlir::Operation *) {
          return false;
        },
        /*shouldPrintAfterPass=*/[](mlir::Pass *, mlir::Operation *) {
          return true;
        },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
  }
  buildLevel1Pipeline(pm);
  if (failed(pm.run(*module)))
    return diagnostics.consumeStatus(absl::StatusCode::kInvalidArgument);

  progress.stage("emitting mlir-level1");
  std::string output;
  llvm::raw_string_ostream os(output);
  module->print(os);
  os.flush();
  RETURN_IF_ERROR(diagnostics.consumeStatus());
  return output;
}

} // namespace cuvil
