//===- ArtifactWriter.cpp - the model's C, header, ABI and metadata -------===//
//
// Wraps the emitted run function in the files of an artifact: the model
// TU (runtime families, scalar helpers, weights, the run function), the
// public header and the ABI TU (runtime/abi/: abi.h and entry.c, real C the
// build compiles and tests, preceded here by the model's macros), and the
// metadata JSON (llvm::json). Everything from the model is escaped for the
// language it lands in (cuvil/support/SourceEscape.h).
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/CEmitter.h"

#include "cuvil/support/Diagnostics.h"
#include "cuvil/support/SourceEscape.h"
#include "cuvil/targets/cpu/Runtime.h"
#include "cuvil/targets/cpu/emitter/Emitter.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

namespace cuvil::cpu {

using namespace mlir;
using emitter::dtypeName;

namespace {

/// The C ABI version of docs/abi.md the artifact implements.
constexpr int kAbiVersion = 1;

/// The line of entry.c the artifact's model.h stands for.
constexpr char kAbiInclude[] = "#include \"cuvil/targets/cpu/runtime/abi/abi.h\"";

/// What the artifact says about the model, shared by the writers below.
struct ModelFacts {
  int64_t numInputs, numOutputs, maxBatch;
  /// The header's description of each tensor (names escaped).
  std::string ioComments;
  llvm::json::Array inputs, outputs;
};

ModelFacts describeModel(ModuleOp module, func::FuncOp func) {
  ModelFacts facts;
  facts.numInputs = func->getAttrOfType<IntegerAttr>("cuvil.num_inputs").getInt();
  facts.numOutputs =
      func->getAttrOfType<IntegerAttr>("cuvil.num_outputs").getInt();
  facts.maxBatch = 0;
  if (auto attr = module->getAttrOfType<IntegerAttr>("cuvil.max_batch"))
    facts.maxBatch = attr.getInt();
  // Names come from the model: comments quote them escaped, JSON holds
  // them as UTF-8.
  auto describe = [&](int64_t index, bool isInput) {
    BlockArgument arg =
        func.getArgument(1 + index + (isInput ? 0 : facts.numInputs));
    auto type = cast<MemRefType>(arg.getType());
    std::string name = (isInput ? "input" : "output") + std::to_string(index);
    if (auto attr =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "cuvil.name"))
      name = attr.str();
    llvm::json::Array shape;
    std::vector<std::string> dims;
    for (int64_t d : type.getShape()) {
      bool dynamic = ShapedType::isDynamic(d);
      shape.push_back(dynamic ? int64_t{-1} : d);
      dims.push_back(dynamic ? "batch" : std::to_string(d));
    }
    llvm::json::Object tensor{{"name", jsonText(name)},
                              {"dtype", dtypeName(type.getElementType())},
                              {"shape", std::move(shape)}};
    std::string meaning;
    if (auto q = dyn_cast<quant::UniformQuantizedType>(type.getElementType())) {
      tensor["quantization"] = llvm::json::Object{
          {"scale", q.getScale()}, {"zero_point", q.getZeroPoint()}};
      meaning = absl::StrFormat(", real = %.9g * (q - %d)", q.getScale(),
                                q.getZeroPoint());
    }
    facts.ioComments += "/* " + std::string(isInput ? "input " : "output ") +
                        std::to_string(index) + " '" + cCommentText(name) +
                        "': " + dtypeName(type.getElementType()) + " [" +
                        absl::StrJoin(dims, ", ") + "]" + meaning + " */\n";
    return tensor;
  };
  for (int64_t i = 0; i < facts.numInputs; ++i)
    facts.inputs.push_back(describe(i, true));
  for (int64_t i = 0; i < facts.numOutputs; ++i)
    facts.outputs.push_back(describe(i, false));
  return facts;
}

std::string metadataJson(func::FuncOp func, ModelFacts &facts,
                         const emitter::Emitter &emitter,
                         const RuntimeSelection &runtime,
                         const EmitOptions &options) {
  llvm::json::Array features;
  for (const std::string &f : options.target.features)
    features.push_back(jsonText(f));
  llvm::json::Object metadata{
      {"abi_version", kAbiVersion},
      {"model", jsonText(func.getName())},
      {"inputs", std::move(facts.inputs)},
      {"outputs", std::move(facts.outputs)},
      {"max_batch", facts.maxBatch},
      {"workspace_bytes", emitter.arenaBytes},
      // A context of T threads runs a batch as up to T chunks of samples,
      // each on its own workspace of workspace_bytes.
      {"sample_parallel", emitter.sampleParallel()},
      {"weights",
       llvm::json::Object{
           {"storage", options.externalWeights ? "external" : "embedded"},
           {"bytes", emitter.weightBytes}}},
      {"target", llvm::json::Object{{"triple", options.target.triple},
                                    {"cpu", jsonText(options.target.cpu)},
                                    {"features", std::move(features)}}},
      // The micro-kernel variants the target's features chose (Runtime.h).
      {"kernels", llvm::json::Object{{"sgemm4", runtime.sgemm4},
                                     {"dwconv", runtime.dwconv},
                                     {"convb", runtime.convb},
                                     {"qgemm4", runtime.qgemm4},
                                     {"qgemm4_narrow", runtime.qgemm4Narrow},
                                     {"qconvb", runtime.qconvb},
                                     {"qconvb_narrow", runtime.qconvbNarrow},
                                     {"bgemm8", runtime.bgemm8},
                                     {"bconvb", runtime.bconvb},
                                     {"hgemm4", runtime.hgemm4},
                                     {"forest_walk", runtime.forestWalk}}},
      {"compiler", jsonText(options.compilerVersion)},
      {"model_hash", jsonText(options.modelHash)},
  };
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(std::move(metadata));
  return text;
}

/// model.h: the model's macros and tensors, then runtime/abi/abi.h.
std::string headerText(func::FuncOp func, const ModelFacts &facts,
                       const emitter::Emitter &emitter,
                       const EmitOptions &options) {
  return "/* Generated by " + cCommentText(options.compilerVersion) +
         " for model '" + cCommentText(func.getName()) +
         "'. Do not edit.\n *\n"
         " * The C ABI of a Cuvil model (docs/abi.md): reentrant, no global "
         "state,\n * every call returns a cuvil_status. Link with the "
         "model's library (.so or .a), or dlopen its .so.\n */\n"
         "#ifndef CUVIL_MODEL_H\n#define CUVIL_MODEL_H\n\n"
         "#define CUVIL_ABI_VERSION " + std::to_string(kAbiVersion) + "\n"
         "#define CUVIL_MODEL_NUM_INPUTS " + std::to_string(facts.numInputs) +
         "\n#define CUVIL_MODEL_NUM_OUTPUTS " +
         std::to_string(facts.numOutputs) +
         "\n/* Largest batch (dynamic dimension 0); 0 if the model has a "
         "static shape. */\n#define CUVIL_MODEL_MAX_BATCH " +
         std::to_string(facts.maxBatch) +
         "\n/* Bytes of workspace cuvil_model_run needs (any batch up to the "
         "maximum). */\n#define CUVIL_MODEL_WORKSPACE_SIZE " +
         std::to_string(emitter.arenaBytes) +
         "\n/* Threads a context uses when created with num_threads = 0. */\n"
         "#define CUVIL_MODEL_DEFAULT_THREADS " +
         std::to_string(std::max(options.threadsDefault, 1)) + "\n\n" +
         facts.ioComments + "\n" + runtimeFile("abi/abi.h").str() +
         "\n#endif /* CUVIL_MODEL_H */\n";
}

/// A C string literal as a macro's body (its lines continued).
std::string macroLiteral(const std::string &text) {
  return absl::StrReplaceAll(cStringLiteral(text), {{"\n", " \\\n"}});
}

/// The ABI TU: entry.c after the macros it reads, model.h in place of its
/// include of abi.h.
std::string abiText(const std::string &metadata,
                    const emitter::Emitter &emitter,
                    const EmitOptions &options) {
  std::string prelude =
      "/* Generated by " + cCommentText(options.compilerVersion) +
      ": the exported entry points (runtime/abi/entry.c). */\n"
      "#define CUVIL_METADATA_JSON " + macroLiteral(metadata) + "\n"
      "#define CUVIL_CPU_MESSAGE " +
      macroLiteral("this CPU lacks an instruction set the model was "
                   "compiled for (" + options.target.cpu + ")") + "\n" +
      options.target.cpuCheckMacro +
      "#define CUVIL_EXTERNAL_WEIGHTS " +
      (options.externalWeights ? "1" : "0") +
      "\n#define CUVIL_WEIGHTS_BYTES ((size_t)" +
      std::to_string(emitter.weightsBlob.size()) + ")\n" +
      "#define CUVIL_MODEL_SAMPLE_PARALLEL " +
      (emitter.sampleParallel() ? "1" : "0") + "\n";
  std::string entry = runtimeFile("abi/entry.c").str();
  if (entry.find(kAbiInclude) == std::string::npos)
    llvm::report_fatal_error("runtime/abi/entry.c does not include abi.h");
  return prelude +
         absl::StrReplaceAll(entry, {{kAbiInclude, "#include \"model.h\""}});
}

/// The model TU's start: feature macros, includes, attribute macros.
std::string modelPrelude(const EmitOptions &options) {
  return "/* Generated by " + cCommentText(options.compilerVersion) +
         ": the model's code. Do not edit. */\n"
         "#ifndef _GNU_SOURCE\n#define _GNU_SOURCE /* the thread pool's "
         "sched_getcpu */\n#endif\n"
         "#include <math.h>\n#include <stdint.h>\n#include <stddef.h>\n"
         "#include <string.h>\n\n#include \"model.h\"\n\n"
         "#if defined(__GNUC__)\n"
         "#define CUVIL_ALIGN64 __attribute__((aligned(64)))\n"
         "#define CUVIL_INTERNAL __attribute__((visibility(\"hidden\")))\n"
         "#define CUVIL_NOINLINE __attribute__((noinline))\n"
         "#else\n#define CUVIL_ALIGN64\n#define CUVIL_INTERNAL\n"
         "#define CUVIL_NOINLINE\n#endif\n\n";
}

/// How the model's code reaches its weights: inline arrays, the mapped
/// file, or the blob assembled into the .so (written to `result`).
std::string weightsAccess(emitter::Emitter &emitter, const EmitOptions &options,
                          EmittedModel &result) {
  if (options.inlineWeights)
    return emitter.weightsDecls;
  result.weightsBlob = std::move(emitter.weightsBlob);
  if (options.externalWeights)
    // Mapped by the entry points' constructor (runtime/abi/entry.c).
    return "extern const unsigned char *cuvil_weights_external "
           "CUVIL_INTERNAL;\n#define cuvil_weights cuvil_weights_external\n";
  // A top-level asm statement of the ABI TU: assembling the blob there
  // saves the C compiler a third run (a tenth of a second per model).
  result.weightsAsm = absl::StrCat(R"(/* The model's weights, 64-byte aligned, read-only. */
__asm__("  .pushsection .rodata.cuvil_weights,\"a\",@progbits\n"
        "  .balign 64\n"
        "  .globl cuvil_weights\n"
        "  .hidden cuvil_weights\n"
        "  .type cuvil_weights,@object\n"
        "cuvil_weights:\n"
        "  .incbin \"weights.bin\"\n"
        "  .size cuvil_weights, )",
                                    result.weightsBlob.size(), R"(\n"
        "  .popsection\n");
)");
  return "extern const unsigned char cuvil_weights[] CUVIL_INTERNAL;\n";
}

} // namespace

std::string EmittedModel::singleSource() const {
  // One translation unit: the header once, then the model, then the ABI;
  // the model's feature macro (the thread pool's sched_getcpu) goes first.
  std::string model =
      absl::StrReplaceAll(modelSource, {{"#include \"model.h\"\n", ""}});
  std::string abi =
      absl::StrReplaceAll(abiSource, {{"#include \"model.h\"\n", ""}});
  return "#ifndef _GNU_SOURCE\n#define _GNU_SOURCE\n#endif\n" + header + "\n" +
         model + "\n" + abi;
}

absl::StatusOr<EmittedModel> emitModel(ModuleOp module,
                                       const EmitOptions &options) {
  StatusDiagnosticHandler diagnostics(module.getContext());
  func::FuncOp func;
  for (func::FuncOp candidate : module.getOps<func::FuncOp>()) {
    if (candidate.isExternal())
      continue;
    if (func)
      return absl::UnimplementedError(absl::StrCat(
          "the ", options.target.name, " target compiles one function per model"));
    func = candidate;
  }
  if (!func || !func->hasAttr("cuvil.num_inputs"))
    return absl::InvalidArgumentError("no planned level2 function to emit");
  emitter::Emitter emitter(func, options);
  if (failed(emitter.run()))
    return diagnostics.consumeStatus(absl::StatusCode::kInvalidArgument);

  // The runtime families the model calls, and the micro-kernel variants the
  // target's features choose.
  RuntimeSelection runtime =
      selectRuntime(func, options.target.cpu, options.target.features,
                    !options.inlineWeights, options.l2Bytes);
  ModelFacts facts = describeModel(module, func);
  EmittedModel result;
  result.header = headerText(func, facts, emitter, options);
  result.metadata = metadataJson(func, facts, emitter, runtime, options);
  result.abiSource = abiText(result.metadata, emitter, options);
  // The runtime's text starts with the scalar helpers every model's loops
  // call (runtime/math/scalar.h).
  result.modelSource = modelPrelude(options) + assembleRuntime(runtime) +
                       "\n" + weightsAccess(emitter, options, result) + "\n" +
                       emitter.runFunctions();
  return result;
}

} // namespace cuvil::cpu
