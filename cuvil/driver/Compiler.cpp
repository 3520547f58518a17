#include "cuvil/driver/Compiler.h"

#include "cuvil/importers/lightgbm/LightgbmImporter.h"
#include "cuvil/importers/onnx/OnnxImporter.h"
#include "cuvil/importers/xgboost/Ubjson.h"
#include "cuvil/importers/xgboost/XgboostImporter.h"
#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Registration.h"
#include "cuvil/passes/Passes.h"
#include "cuvil/passes/Pipelines.h"
#include "cuvil/support/Diagnostics.h"
#include "cuvil/support/FileUtil.h"
#include "cuvil/support/StatusMacros.h"
#include "cuvil/support/TensorBytes.h"
#include "cuvil/support/Version.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/targets/AllTargets.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

namespace cuvil {

namespace {

/// Reports "[i/n] what (elapsed)" lines through the progress callback.
class ProgressReporter {
public:
  ProgressReporter(const CompileOptions &options, int numStages)
      : callback(options.progress), numStages(numStages),
        start(std::chrono::steady_clock::now()) {}

  void stage(absl::string_view what) {
    if (!callback)
      return;
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
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

std::vector<std::string> getEmitKindNames(const TargetBackend &target) {
  std::vector<std::string> names;
  for (const EmitKindInfo &kind : target.getEmitKinds())
    names.push_back(kind.name);
  names.push_back(kEmitLevel1);
  names.push_back(kEmitLevel2);
  return names;
}

absl::StatusOr<const TargetBackend *> lookupTarget(const TargetRegistry &targets,
                                                   const std::string &name) {
  if (const TargetBackend *target = targets.lookup(name))
    return target;
  return absl::InvalidArgumentError(absl::StrCat(
      "unsupported --target '", name,
      "'; this build targets: ", targets.describeChoices()));
}

absl::StatusOr<std::optional<EmitKindInfo>>
lookupEmitKind(const TargetBackend &target, const std::string &emit) {
  if (emit == kEmitLevel1 || emit == kEmitLevel2)
    return std::optional<EmitKindInfo>();
  for (const EmitKindInfo &kind : target.getEmitKinds())
    if (kind.name == emit)
      return std::optional<EmitKindInfo>(kind);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown --emit value '", emit, "'; expected one of: ",
                   absl::StrJoin(getEmitKindNames(target), ", ")));
}

absl::Status
parseInputShape(absl::string_view text,
                std::map<std::string, std::vector<int64_t>> &shapes) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad input shape '", text, "': ", why,
                     "; expected NAME=DIMxDIMx... such as x=1x3x224x224 (? or "
                     "-1: dynamic)"));
  };
  std::vector<std::string> parts =
      absl::StrSplit(text, absl::MaxSplits('=', 1));
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

/// Fails at the first value whose tensor type needs more than 2^63 bytes:
/// no pass may multiply such dimensions. (The ONNX importer checks its own.)
static mlir::LogicalResult checkTensorSizes(mlir::ModuleOp module) {
  mlir::WalkResult result = module->walk([](mlir::Operation *op) {
    auto tooBig = [](mlir::Type type) {
      auto shaped = llvm::dyn_cast<mlir::ShapedType>(type);
      return shaped && shaped.hasRank() && !getStaticTensorBytes(shaped);
    };
    for (mlir::Region &region : op->getRegions())
      for (mlir::Block &block : region)
        for (mlir::BlockArgument arg : block.getArguments())
          if (tooBig(arg.getType())) {
            op->emitOpError("has an argument of type ")
                << arg.getType() << ", which needs more than 2^63 bytes";
            return mlir::WalkResult::interrupt();
          }
    for (mlir::Type type : op->getResultTypes())
      if (tooBig(type)) {
        op->emitOpError("has a result of type ")
            << type << ", which needs more than 2^63 bytes";
        return mlir::WalkResult::interrupt();
      }
    return mlir::WalkResult::advance();
  });
  return mlir::failure(result.wasInterrupted());
}

/// Reads `path` as level1 MLIR or ONNX into a verified module.
static absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>>
loadModel(mlir::MLIRContext &context, StatusDiagnosticHandler &diagnostics,
          const CompileOptions &options, const std::string &source) {
  const std::string &path = options.inputPath;
  if (options.treeFloat32Features && !endsWith(path, ".txt") &&
      !endsWith(path, ".json") && !endsWith(path, ".ubj"))
    return absl::InvalidArgumentError(
        "--tree-features applies to LightGBM (and XGBoost) models; an ONNX "
        "or .mlir model states its input types itself");
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
        "--input-shape applies to ONNX models; a .mlir, .json, .ubj or .txt "
        "model states its input types itself");
  if (endsWith(path, ".json") || endsWith(path, ".ubj")) {
    std::string json;
    if (endsWith(path, ".ubj")) {
      absl::StatusOr<std::string> text = ubjsonToJson(source);
      if (!text.ok())
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": ", text.status().message()));
      json = std::move(*text);
    }
    XgboostImportOptions xgboostOptions;
    xgboostOptions.modelPath = path;
    xgboostOptions.output = options.treeOutput;
    xgboostOptions.missingValue = options.treeMissing;
    absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module =
        importXgboostModel(context, json.empty() ? source : json,
                           xgboostOptions);
    // An import that built a module that fails to verify reports why.
    if (!module.ok() && diagnostics.hadError())
      return diagnostics.consumeStatus(absl::StatusCode::kInvalidArgument);
    return module;
  }
  if (endsWith(path, ".txt")) {
    if (options.treeMissing)
      return absl::InvalidArgumentError(
          "--tree-missing applies to XGBoost models; a LightGBM model's "
          "nodes say how they treat missing values");
    LightgbmImportOptions lightgbmOptions;
    lightgbmOptions.modelPath = path;
    lightgbmOptions.output = options.treeOutput;
    lightgbmOptions.float32Features = options.treeFloat32Features;
    absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module =
        importLightgbmModel(context, source, lightgbmOptions);
    if (!module.ok() && diagnostics.hadError())
      return diagnostics.consumeStatus(absl::StatusCode::kInvalidArgument);
    return module;
  }
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(source, path,
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  mlir::ParserConfig config(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, config);
  if (!module || failed(mlir::verify(*module)) ||
      failed(checkTensorSizes(*module)))
    return diagnostics.consumeStatus(absl::StatusCode::kInvalidArgument);
  return module;
}

static std::string printModule(mlir::ModuleOp module) {
  std::string output;
  llvm::raw_string_ostream os(output);
  module->print(os);
  return output;
}

static std::string hexSha256(absl::string_view bytes) {
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
  std::string hex = "sha256:";
  for (uint8_t b : digest)
    hex += absl::StrFormat("%02x", b);
  return hex;
}

/// What runs before int8 or bf16 picks its layers: simplification, then
/// batch norms folded into their convolutions, so that the folded weights
/// are the ones quantized or rounded.
static void addReducedPrecisionPrelude(mlir::OpPassManager &pm) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilFoldBatchNorm());
  pm.addPass(mlir::createCanonicalizerPass());
}

/// Runs calibration (cuvil/quantization/Calibration.h) on `module`, whose
/// layers to quantize are marked: the float32 copy it observes is built for
/// this machine with the x86 target, in a folder removed afterwards.
static absl::StatusOr<quantization::QuantizationReport>
calibrateModel(mlir::MLIRContext &context, StatusDiagnosticHandler &diagnostics,
               mlir::ModuleOp module,
               const CompileOptions::Quantization &options, bool integerIo,
               const TargetRegistry &targets,
               const std::function<void(absl::string_view)> &progress) {
  const TargetBackend *host = targets.lookup("x86");
  if (!host)
    return absl::UnimplementedError(
        "int8 calibration runs the model on this machine, which needs the "
        "x86 target in this build");
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("cuvil-calibration", dir))
    return absl::InternalError("cannot create a folder for calibration");
  struct RemoveDir {
    std::string path;
    ~RemoveDir() { llvm::sys::fs::remove_directories(path); }
  } removeDir{dir.str().str()};

  auto compileForHost = [&](mlir::ModuleOp copy) -> absl::StatusOr<std::string> {
    TargetOptions hostOptions;
    hostOptions.cpu = "native";
    ASSIGN_OR_RETURN(l1::TargetAttr target,
                     host->resolveTarget(&context, hostOptions));
    copy->setAttr(l1::TargetAttr::kAttrName, target);
    mlir::PassManager pm(&context);
    buildLevel1Pipeline(pm);
    buildLevel2Pipeline(pm, *host);
    if (failed(pm.run(copy))) {
      absl::Status status = diagnostics.consumeStatus();
      return absl::Status(status.code(),
                          absl::StrCat("building the float32 model for "
                                       "calibration: ",
                                       status.message()));
    }
    // Told once, by the quantized compile: its notes and pass statistics.
    diagnostics.takeWarnings();
    takeStatistics(&context);
    SerializeInfo info;
    info.modelHash = "calibration";
    info.compilerVersion = absl::StrCat("cuvilc ", getVersionString());
    ASSIGN_OR_RETURN(std::vector<ArtifactFile> files,
                     host->serialize(copy, "so", hostOptions, info));
    std::string path = removeDir.path + "/calibration.so";
    RETURN_IF_ERROR(writeFilesAtomically({{path, files.front().contents}}));
    return path;
  };
  quantization::CalibrationOptions calibration = options.calibration;
  calibration.observeIo = integerIo;
  return quantization::calibrate(module, calibration, compileForHost,
                                 progress);
}

absl::StatusOr<Artifact> compile(const CompileOptions &options) {
  return compile(options, getAllTargets());
}

absl::StatusOr<Artifact> compile(const CompileOptions &options,
                                 const TargetRegistry &targets) {
  const std::string &path = options.inputPath;
  if (!endsWith(path, ".mlir") && !endsWith(path, ".onnx") &&
      !endsWith(path, ".json") && !endsWith(path, ".ubj") &&
      !endsWith(path, ".txt"))
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read '", path,
        "': Cuvil reads ONNX (.onnx), XGBoost (.json, .ubj), LightGBM (.txt) "
        "and level1 MLIR (.mlir) models"));
  if (options.maxBatch && *options.maxBatch < 1)
    return absl::InvalidArgumentError("--max-batch must be at least 1");
  ASSIGN_OR_RETURN(const TargetBackend *backend,
                   lookupTarget(targets, options.target));
  ASSIGN_OR_RETURN(std::optional<EmitKindInfo> emitKind,
                   lookupEmitKind(*backend, options.emit));
  RETURN_IF_ERROR(backend->checkOptions(options.targetOptions, options.emit));
  bool toLevel2 = options.emit != kEmitLevel1;

  mlir::DialectRegistry registry;
  registerCuvilDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  // Errors name the op and the model's location; a dump of the op in
  // generic form helps no user (the reproducer has it for us).
  context.printOpOnDiagnostic(false);
  context.loadDialect<l1::CuvilDialect>();
  // Resolved for every output, before the model is read: the description
  // steers the level1 passes too, so --emit=mlir-level1 shows what the
  // artifact runs, and a bad --cpu fails at once.
  ASSIGN_OR_RETURN(l1::TargetAttr target,
                   backend->resolveTarget(&context, options.targetOptions));

  if (options.quantization.has_value() + options.bf16.has_value() +
          options.fp16.has_value() > 1)
    return absl::InvalidArgumentError(
        "int8 quantization, bfloat16 and float16 are exclusive: choose one");
  if (backend->asksInt8(options.targetOptions) && !options.quantization)
    return absl::InvalidArgumentError(absl::StrCat(
        "int8 on the ", backend->getName().str(),
        " target needs calibration data: --calibration=FILE.npz "
        "(numpy.savez(FILE, input_name=samples); in Python, calibration=) "
        "to choose each activation's position from"));
  if (options.integerIo && backend->int8Form().powerOfTwoScales)
    return absl::InvalidArgumentError(absl::StrCat(
        "--integer-io does not apply to the ", backend->getName().str(),
        " target: its C API takes and returns float32 tensors (each int8 "
        "layer quantizes its input on the device)"));
  if (options.quantization && backend->int8Form().powerOfTwoScales &&
      !backend->asksInt8(options.targetOptions))
    return absl::InvalidArgumentError(absl::StrCat(
        "the ", backend->getName().str(),
        " target's numbers are its precision: ask for int8 with "
        "--precision=int8 (precision=\"int8\") and the calibration data"));
  if (options.integerIo && (options.bf16 || options.fp16))
    return absl::InvalidArgumentError(absl::StrCat(
        "integer I/O passes 8-bit quantized tensors; a ",
        options.bf16 ? "bfloat16" : "float16",
        " model has none: drop --integer-io or quantize to int8"));
  ProgressReporter progress(options, 2 + options.quantization.has_value() +
                                         options.bf16.has_value() +
                                         options.fp16.has_value() +
                                         toLevel2 +
                                         (emitKind ? emitKind->stages : 0));
  progress.stage(absl::StrCat("reading ", path));
  std::string source;
  if (options.inputContents) {
    source = *options.inputContents;
  } else {
    ASSIGN_OR_RETURN(source, readFile(path));
  }

  StatusDiagnosticHandler diagnostics(&context);
  ASSIGN_OR_RETURN(mlir::OwningOpRef<mlir::ModuleOp> module,
                   loadModel(context, diagnostics, options, source));
  // The batch bound travels with the module to memory planning and the
  // artifact's metadata and checks. A dynamic batch without --max-batch is
  // bounded to 1, so the artifact never runs past its workspace.
  bool anyDynamicBatch = false;
  module->walk([&](mlir::func::FuncOp func) {
    for (mlir::Type type : func.getArgumentTypes())
      if (auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type))
        anyDynamicBatch |= tensor.getRank() > 0 && tensor.isDynamicDim(0);
  });
  if (options.maxBatch && !anyDynamicBatch)
    return absl::InvalidArgumentError(
        "--max-batch needs an input whose first dimension is dynamic "
        "(write it as ? in the model's input type)");
  if (anyDynamicBatch) {
    int64_t bound = options.maxBatch.value_or(1);
    if (!options.maxBatch && options.progress)
      options.progress("note: the model has a dynamic batch; it is bounded "
                       "to 1 (use --max-batch=N for batches up to N)");
    module->getOperation()->setAttr(
        "cuvil.max_batch",
        mlir::IntegerAttr::get(mlir::IntegerType::get(&context, 64), bound));
  }

  module->getOperation()->setAttr(l1::TargetAttr::kAttrName, target);

  std::vector<std::string> lastNotes; // the last pipeline's warnings
  auto runPipelineOn = [&](mlir::ModuleOp target,
                           auto buildPipeline) -> absl::Status {
    mlir::PassManager pm(&context);
    const std::vector<std::string> &after = options.printIrAfter;
    if (options.printIrAfterAll || !after.empty()) {
      bool all = options.printIrAfterAll;
      pm.enableIRPrinting(
          /*shouldPrintBeforePass=*/[](mlir::Pass *,
                                       mlir::Operation *) { return false; },
          /*shouldPrintAfterPass=*/
          [all, after](mlir::Pass *pass, mlir::Operation *) {
            return all || llvm::is_contained(after, pass->getArgument().str());
          },
          /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
    }
    if (options.timePasses)
      pm.enableTiming();
    if (!options.reproducerPath.empty()) {
      // Only this run's failure may leave the file.
      llvm::sys::fs::remove(options.reproducerPath);
      pm.enableCrashReproducerGeneration(options.reproducerPath,
                                         /*genLocalReproducer=*/false);
    }
    buildPipeline(pm);
    if (failed(pm.run(target))) {
      absl::Status status =
          diagnostics.consumeStatus(absl::StatusCode::kInvalidArgument);
      // A failure a pass explained is the user's: its reproducer only
      // when asked for.
      bool explained =
          !absl::StrContains(status.message(), kPipelineFailure.str());
      if (explained && !options.keepExplainedReproducer &&
          !options.reproducerPath.empty())
        llvm::sys::fs::remove(options.reproducerPath);
      if (!options.reproducerPath.empty() &&
          llvm::sys::fs::exists(options.reproducerPath)) {
        absl::Status withReproducer(
            status.code(),
            absl::StrCat(status.message(), "\nA reproducer is in ",
                         options.reproducerPath, "; rerun it with: cuvil-opt ",
                         "--run-reproducer ", options.reproducerPath));
        // The diagnostic's fields (getDiagnosticInfo) go with it.
        status.ForEachPayload(
            [&](absl::string_view url, const absl::Cord &payload) {
              withReproducer.SetPayload(url, payload);
            });
        status = std::move(withReproducer);
      }
      return status;
    }
    // Warnings (an op kept in float32) are the user's to read, as notes.
    lastNotes.clear();
    for (const std::string &warning : diagnostics.takeWarnings()) {
      lastNotes.push_back(absl::StrReplaceAll(warning, {{": warning: ", ": "}}));
      if (options.progress)
        options.progress("note: " + lastNotes.back());
    }
    return absl::OkStatus();
  };
  auto runPipeline = [&](auto buildPipeline) -> absl::Status {
    return runPipelineOn(*module, buildPipeline);
  };

  // Pass statistics are collected per context: taken after the passes, and
  // dropped however the compile ends, so that a later context at the same
  // address starts clean.
  Artifact artifact;
  struct DropStatistics {
    mlir::MLIRContext *context;
    ~DropStatistics() { takeStatistics(context); }
  } dropStatistics{&context};
  takeStatistics(&context);
  auto collectStatistics = [&] {
    for (const PassStatistic &s : takeStatistics(&context))
      artifact.passStatistics.push_back(
          absl::StrCat(s.pass, ": ", s.value, " ", s.name));
  };

  if (options.quantization) {
    progress.stage("calibrating int8 quantization");
    RETURN_IF_ERROR(runPipeline([&](mlir::OpPassManager &pm) {
      addReducedPrecisionPrelude(pm);
      CuvilMarkQuantizationCandidatesOptions mark;
      mark.keepFp32.assign(options.quantization->keepFp32.begin(),
                           options.quantization->keepFp32.end());
      mark.groupedConvolutions = backend->int8Form().groupedConvolutions;
      pm.addNestedPass<mlir::func::FuncOp>(
          createCuvilMarkQuantizationCandidates(mark));
    }));
    std::vector<std::string> kept = lastNotes;
    collectStatistics();
    ASSIGN_OR_RETURN(
        artifact.quantizationReport,
        calibrateModel(context, diagnostics, *module, *options.quantization,
                       options.integerIo, targets, options.progress));
    artifact.quantizationReport->float32 = std::move(kept);
  }

  // bfloat16 or float16: the layers converted after the same prelude as
  // int8's, `makePass` given the layers to keep in float32.
  auto convertToHalf = [&](const char *precision,
                           const std::vector<std::string> &keepFp32,
                           auto makePass) -> absl::Status {
    progress.stage(absl::StrCat("converting linear layers to ", precision));
    RETURN_IF_ERROR(runPipeline([&](mlir::OpPassManager &pm) {
      addReducedPrecisionPrelude(pm);
      pm.addNestedPass<mlir::func::FuncOp>(makePass(keepFp32));
    }));
    collectStatistics();
    return absl::OkStatus();
  };
  if (options.bf16)
    RETURN_IF_ERROR(convertToHalf(
        "bfloat16", options.bf16->keepFp32,
        [](const std::vector<std::string> &keep) {
          CuvilConvertProductsToBf16Options bf16;
          bf16.keepFp32.assign(keep.begin(), keep.end());
          return createCuvilConvertProductsToBf16(bf16);
        }));
  if (options.fp16)
    RETURN_IF_ERROR(convertToHalf(
        "float16", options.fp16->keepFp32,
        [](const std::vector<std::string> &keep) {
          CuvilConvertProductsToF16Options fp16;
          fp16.keepFp32.assign(keep.begin(), keep.end());
          return createCuvilConvertProductsToF16(fp16);
        }));

  progress.stage("optimizing level1");
  Level1Options level1;
  level1.integerIo = options.integerIo;
  level1.sampleParallel = options.sampleParallel;
  level1.fuseElementwise = backend->generatesFusedMaps();
  level1.affineBatchNorm = backend->affineBatchNorm();
  level1.epilogueActivations = backend->epilogueActivations();
  level1.quantizedResiduals = backend->quantizedResiduals();
  level1.quantizeShortcuts =
      backend->quantizedResiduals() && options.quantization.has_value();
  level1.powerOfTwoScales = backend->int8Form().powerOfTwoScales;
  level1.requantizingEpilogues = backend->int8Form().requantizingEpilogues;
  RETURN_IF_ERROR(runPipeline(
      [&](mlir::OpPassManager &pm) { buildLevel1Pipeline(pm, level1); }));
  {
    PipelineRunner run =
        [&](mlir::ModuleOp target,
            const std::function<void(mlir::OpPassManager &)> &build) {
          return runPipelineOn(target, build);
        };
    absl::Status finished =
        backend->finishLevel1(*module, options.targetOptions, run);
    if (!finished.ok()) {
      // As serialize: the target's diagnostics come first, with their ops.
      absl::Status diagnosed = diagnostics.consumeStatus(finished.code());
      return diagnosed.ok() ? finished : diagnosed;
    }
  }
  collectStatistics();
  if (artifact.quantizationReport) {
    quantization::QuantizationReport &report = *artifact.quantizationReport;
    quantization::describeCompiledLayers(*module, report);
    int64_t quantized = llvm::count_if(
        report.layers, [](const auto &layer) { return layer.quantized; });
    if (options.progress)
      options.progress(absl::StrFormat(
          "int8: %d layers quantized, %d ops kept in float32",
          quantized, report.float32.size() + report.layers.size() - quantized));
  }
  if (!toLevel2) {
    artifact.files.push_back({".mlir", printModule(*module)});
    RETURN_IF_ERROR(diagnostics.consumeStatus());
    return artifact;
  }

  progress.stage("lowering to level2 and planning memory");
  RETURN_IF_ERROR(runPipeline([backend](mlir::OpPassManager &pm) {
    buildLevel2Pipeline(pm, *backend);
  }));
  collectStatistics();
  if (options.explainKernels)
    artifact.kernelReport = backend->explainKernels(*module);
  module->walk([&](mlir::func::FuncOp func) {
    auto get = [&](llvm::StringRef name) {
      auto attr = func->getAttrOfType<mlir::IntegerAttr>(name);
      return attr ? attr.getInt() : 0;
    };
    artifact.memoryReport = absl::StrFormat(
        "arena %d bytes (intermediates %d bytes, live lower bound %d bytes)",
        get("cuvil.arena_bytes"), get("cuvil.intermediate_bytes"),
        get("cuvil.live_bytes_bound"));
  });
  if (!emitKind) {
    artifact.files.push_back({".mlir", printModule(*module)});
    return artifact;
  }

  SerializeInfo info;
  info.modelHash = hexSha256(source);
  info.compilerVersion = absl::StrCat("cuvilc ", getVersionString());
  info.stage = [&progress](llvm::StringRef what) {
    progress.stage(absl::string_view(what.data(), what.size()));
  };
  info.note = [&options](llvm::StringRef what) {
    if (options.progress)
      options.progress(absl::StrCat("note: ", what.str()));
  };
  absl::StatusOr<std::vector<ArtifactFile>> files = backend->serialize(
      *module, options.emit, options.targetOptions, info);
  if (!files.ok()) {
    // Diagnostics of the target's own checks come first, with their ops.
    absl::Status diagnosed =
        diagnostics.consumeStatus(files.status().code());
    return diagnosed.ok() ? files.status() : diagnosed;
  }
  artifact.files = *std::move(files);
  return artifact;
}

} // namespace cuvil
