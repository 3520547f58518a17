//===- X86Target.cpp - the x86-64 target ----------------------------------===//

#include "cuvil/targets/x86/X86Target.h"

#include "cuvil/support/StatusMacros.h"
#include "cuvil/targets/x86/CEmitter.h"
#include "cuvil/targets/x86/Cpu.h"
#include "cuvil/targets/x86/Toolchain.h"
#include "cuvil/targets/x86/transforms/Passes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace cuvil::x86 {
namespace {

class X86Target : public TargetBackend {
public:
  llvm::StringRef getName() const override { return "x86"; }
  llvm::StringRef getDescription() const override {
    return "x86-64 Linux: a .so needing only libc and libm, with a C ABI";
  }
  std::vector<std::string> getTriples() const override {
    return {"x86_64-linux-gnu"};
  }

  std::vector<EmitKindInfo> getEmitKinds() const override {
    return {{"so",
             "a shared object needing only libc and libm, with its C header "
             "(and --external-weights beside it)",
             {".so", ".h", ".weights.bin"},
             /*stages=*/2,
             /*binary=*/true},
            {"c", "one C99 file: kernels, weights, run function and C ABI",
             {".c"}},
            {"header", "the model's C header", {".h"}}};
  }

  absl::Status checkOptions(const TargetOptions &options,
                            llvm::StringRef emit) const override {
    if (options.externalWeights && emit != "so")
      return absl::InvalidArgumentError(
          "--external-weights applies to --emit=so (the .so mmaps the file)");
    if (!options.settings.empty())
      return absl::InvalidArgumentError(absl::StrCat(
          "--", absl::StrReplaceAll(options.settings.begin()->first.substr(
                    0, options.settings.begin()->first.find(':')),
                                    {{"_", "-"}}),
          " applies to --target=fpga (an FPGA design's precision and "
          "parallelism); the x86 target computes in float32, or int8 / bf16 "
          "with --quantize"));
    if (options.threadsDefault < 1)
      return absl::InvalidArgumentError("--threads-default must be at least 1");
    return absl::OkStatus();
  }

  absl::StatusOr<l1::TargetAttr>
  resolveTarget(mlir::MLIRContext *context,
                const TargetOptions &options) const override {
    ASSIGN_OR_RETURN(CpuTarget cpu, resolveCpu(options.cpu));
    return describeCpu(context, cpu, /*native=*/options.cpu == "native");
  }

  void registerPasses() const override { registerX86Passes(); }

  void buildLevel2Pipeline(mlir::OpPassManager &pm) const override {
    buildX86Level2Pipeline(pm);
  }

  absl::StatusOr<std::vector<ArtifactFile>>
  serialize(mlir::ModuleOp module, llvm::StringRef emit,
            const TargetOptions &options,
            const SerializeInfo &info) const override {
    l1::TargetAttr target = l1::TargetAttr::lookup(module);
    if (!target)
      return absl::InvalidArgumentError(
          "the module has no #cuvil.target (cuvil.target) to build for");
    CpuTarget cpu = cpuOf(target);
    EmitOptions emitOptions;
    emitOptions.cpu = cpu.march;
    emitOptions.cpuFeatures = cpu.features;
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
    if (emit == "header")
      return std::vector<ArtifactFile>{{".h", emitted.header}};
    info.stage(absl::StrCat("building the shared object with clang (-march=",
                            cpu.march, ")"));
    ASSIGN_OR_RETURN(std::string so, buildSharedObject(emitted, cpu));
    std::vector<ArtifactFile> files = {{".so", std::move(so)},
                                       {".h", emitted.header}};
    if (options.externalWeights)
      files.push_back({".weights.bin", std::move(emitted.weightsBlob)});
    return files;
  }
};

} // namespace

void registerX86Target(TargetRegistry &registry) {
  registry.add(std::make_unique<X86Target>());
}

} // namespace cuvil::x86
