//===- CpuBackend.cpp - what the CPU targets share ------------------------===//

#include "cuvil/targets/cpu/CpuBackend.h"

#include "cuvil/support/StatusMacros.h"
#include "cuvil/targets/cpu/CEmitter.h"
#include "cuvil/targets/cpu/ExplainKernels.h"
#include "cuvil/targets/cpu/SymbolPrefix.h"
#include "cuvil/targets/cpu/Toolchain.h"
#include "cuvil/targets/cpu/transforms/Passes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace cuvil::cpu {

std::vector<EmitKindInfo> CpuBackend::getEmitKinds() const {
  return {{"so",
           "a shared object needing only libc and libm, with its C header "
           "(and --external-weights beside it)",
           {".so", ".h", ".weights.bin"},
           /*stages=*/2,
           /*binary=*/true},
          {"static",
           "a static library (an ar archive) and its C header, to link into "
           "a program (link with -lm); with --symbol-prefix, several models "
           "into one",
           {".a", ".h"},
           /*stages=*/2,
           /*binary=*/true},
          {"c", "one C99 file: kernels, weights, run function and C ABI",
           {".c"}},
          {"header", "the model's C header", {".h"}}};
}

absl::Status CpuBackend::checkOptions(const TargetOptions &options,
                                      llvm::StringRef emit) const {
  if (options.externalWeights && emit != "so")
    return absl::InvalidArgumentError(
        "--external-weights applies to --emit=so (the .so mmaps the file)");
  if (!options.settings.empty()) {
    const std::string &setting = options.settings.begin()->first;
    return absl::InvalidArgumentError(absl::StrCat(
        "--",
        absl::StrReplaceAll(setting.substr(0, setting.find(':')),
                            {{"_", "-"}}),
        " applies to --target=fpga (an FPGA design's precision and "
        "parallelism); the ",
        getName().str(),
        " target computes in float32, or int8 / bf16 with --quantize"));
  }
  if (!options.symbolPrefix.empty() && emit == "c")
    return absl::InvalidArgumentError(
        "--symbol-prefix applies to --emit=so, static and header (the "
        "symbols of built objects are renamed); --emit=c writes the "
        "unprefixed C ABI");
  RETURN_IF_ERROR(checkSymbolPrefix(options.symbolPrefix));
  if (options.threadsDefault < 1)
    return absl::InvalidArgumentError("--threads-default must be at least 1");
  return absl::OkStatus();
}

void CpuBackend::registerPasses() const { registerCpuPasses(); }

std::vector<std::string> CpuBackend::epilogueActivations() const {
  // runtime/epilogue/epilogue.h's CUVIL_ACT_*.
  return {"relu", "clip", "hardswish", "hardsigmoid", "sigmoid", "silu"};
}

std::vector<std::string>
CpuBackend::explainKernels(mlir::ModuleOp module) const {
  return cuvil::cpu::explainKernels(module);
}

void CpuBackend::buildLevel2Pipeline(mlir::OpPassManager &pm) const {
  buildCpuLevel2Pipeline(pm);
}

absl::StatusOr<std::vector<ArtifactFile>>
CpuBackend::serialize(mlir::ModuleOp module, llvm::StringRef emit,
                      const TargetOptions &options,
                      const SerializeInfo &info) const {
  l1::TargetAttr target = l1::TargetAttr::lookup(module);
  if (!target)
    return absl::InvalidArgumentError(
        "the module has no #cuvil.target (cuvil.target) to build for");
  EmitOptions emitOptions;
  emitOptions.target = cpuTargetOf(target);
  emitOptions.modelHash = info.modelHash;
  emitOptions.compilerVersion = info.compilerVersion;
  emitOptions.inlineWeights = emit == "c";
  emitOptions.threadsDefault = options.threadsDefault;
  emitOptions.l2Bytes = target.getL2Bytes();
  emitOptions.externalWeights = options.externalWeights;
  info.stage("emitting C");
  ASSIGN_OR_RETURN(EmittedModel emitted, emitModel(module, emitOptions));
  if (emit == "c")
    return std::vector<ArtifactFile>{{".c", emitted.singleSource()}};
  std::string header = prefixHeader(emitted.header, options.symbolPrefix);
  if (emit == "header")
    return std::vector<ArtifactFile>{{".h", std::move(header)}};
  bool isStatic = emit == "static";
  info.stage(absl::StrCat("building the ",
                          isStatic ? "static library" : "shared object",
                          " with clang (",
                          absl::StrJoin(emitOptions.target.modelFlags, " "),
                          ")"));
  if (isStatic) {
    ASSIGN_OR_RETURN(std::string archive,
                     buildStaticLibrary(emitted, emitOptions.target,
                                        options.symbolPrefix));
    return std::vector<ArtifactFile>{{".a", std::move(archive)},
                                     {".h", std::move(header)}};
  }
  ASSIGN_OR_RETURN(std::string so,
                   buildSharedObject(emitted, emitOptions.target,
                                     options.symbolPrefix));
  std::vector<ArtifactFile> files = {{".so", std::move(so)},
                                     {".h", std::move(header)}};
  if (options.externalWeights)
    files.push_back({".weights.bin", std::move(emitted.weightsBlob)});
  return files;
}

} // namespace cuvil::cpu
