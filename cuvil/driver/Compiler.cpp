#include "cuvil/driver/Compiler.h"

#include "cuvil/importers/onnx/OnnxImporter.h"
#include "cuvil/ir/Registration.h"
#include "cuvil/passes/Pipelines.h"
#include "cuvil/support/Diagnostics.h"
#include "cuvil/support/FileUtil.h"
#include "cuvil/support/StatusMacros.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/numbers.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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

absl::Status parseInputShape(absl::string_view text,
                             std::map<std::string, std::vector<int64_t>> &shapes) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad input shape '", text, "': ", why,
        "; expected NAME=DIMxDIMx... such as x=1x3x224x224 (? or -1: dynamic)"));
  };
  std::vector<std::string> parts = absl::StrSplit(text, absl::MaxSplits('=', 1));
  if (parts.size() != 2 || parts[0].empty())
    return bad("no '='");
  std::vector<int64_t> dims;
  if (!parts[1].empty()) {
    for (absl::string_view dim : absl::StrSplit(parts[1], 'x')) {
      int64_t value = 0;
      if (dim == "?" || dim == "-1")
        value = -1;
      else if (!absl::SimpleAtoi(dim, &value) || value < 0)
        return bad(absl::StrCat("'", dim, "' is not a dimension"));
      dims.push_back(value);
    }
  }
  if (shapes.count(parts[0]))
    return bad(absl::StrCat("'", parts[0], "' is given twice"));
  shapes[parts[0]] = std::move(dims);
  return absl::OkStatus();
}

/// Reads `path` as level1 MLIR or ONNX into a verified module.
static absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>>
loadModel(mlir::MLIRContext &context, StatusDiagnosticHandler &diagnostics,
          const CompileOptions &options, const std::string &source) {
  const std::string &path = options.inputPath;
  if (endsWith(path, ".onnx")) {
    OnnxImportOptions onnxOptions;
    onnxOptions.modelPath = path;
    size_t slash = path.rfind('/');
    onnxOptions.externalDataDir =
        slash == std::string::npos ? "." : path.substr(0, slash);
    onnxOptions.inputShapes = options.inputShapes;
    onnxOptions.dynamicBatch = options.maxBatch.has_value();
    return importOnnxModel(context, source, onnxOptions);
  }
  if (!options.inputShapes.empty())
    return absl::InvalidArgumentError(
        "--input-shape applies to ONNX models; a .mlir model states its "
        "input types itself");
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
  return module;
}

absl::StatusOr<std::string> compile(const CompileOptions &options) {
  const std::string &path = options.inputPath;
  if (!endsWith(path, ".mlir") && !endsWith(path, ".onnx"))
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read '", path,
        "': Cuvil reads ONNX (.onnx) and level1 MLIR (.mlir) models"));
  if (options.maxBatch && *options.maxBatch < 1)
    return absl::InvalidArgumentError("--max-batch must be at least 1");

  ProgressReporter progress(options, /*numStages=*/3);
  progress.stage(absl::StrCat("reading ", path));
  ASSIGN_OR_RETURN(std::string source, readFile(path));

  mlir::DialectRegistry registry;
  registerCuvilDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  StatusDiagnosticHandler diagnostics(&context);
  ASSIGN_OR_RETURN(mlir::OwningOpRef<mlir::ModuleOp> module,
                   loadModel(context, diagnostics, options, source));
  if (options.maxBatch) {
    // The batch bound travels with the module to memory planning and the
    // artifact's metadata.
    bool anyDynamicBatch = false;
    module->walk([&](mlir::func::FuncOp func) {
      for (mlir::Type type : func.getArgumentTypes())
        if (auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type))
          anyDynamicBatch |= tensor.getRank() > 0 && tensor.isDynamicDim(0);
    });
    if (!anyDynamicBatch)
      return absl::InvalidArgumentError(
          "--max-batch needs an input whose first dimension is dynamic "
          "(write it as ? in the model's input type)");
    module->getOperation()->setAttr(
        "cuvil.max_batch",
        mlir::IntegerAttr::get(mlir::IntegerType::get(&context, 64),
                               *options.maxBatch));
  }

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
