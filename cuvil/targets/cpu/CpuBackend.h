//===- CpuBackend.h - what the CPU targets share ----------------*- C++ -*-===//
//
// The x86-64 and aarch64 targets are one backend over two architectures
// (after IREE's llvm-cpu): the same level2 passes (transforms/), emitter
// (emitter/), kernel families (runtime/) and toolchain, the same outputs
// (a .so, C99, the header) and the same C ABI. A target says how to build
// for its architecture and CPU: cpuTargetOf().
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_CPU_CPUBACKEND_H
#define CUVIL_TARGETS_CPU_CPUBACKEND_H

#include "cuvil/targets/Target.h"
#include "cuvil/targets/cpu/CpuTarget.h"

namespace cuvil::cpu {

class CpuBackend : public TargetBackend {
public:
  std::vector<EmitKindInfo> getEmitKinds() const override;
  absl::Status checkOptions(const TargetOptions &options,
                            llvm::StringRef emit) const override;
  void registerPasses() const override;
  void buildLevel2Pipeline(mlir::OpPassManager &pm) const override;
  std::vector<std::string> epilogueActivations() const override;
  bool affineBatchNorm() const override { return true; }
  bool quantizedResiduals() const override { return true; }
  std::vector<std::string> explainKernels(mlir::ModuleOp module) const override;
  absl::StatusOr<std::vector<ArtifactFile>>
  serialize(mlir::ModuleOp module, llvm::StringRef emit,
            const TargetOptions &options,
            const SerializeInfo &info) const override;

protected:
  /// How to build for the CPU a module's #cuvil.target (of this target)
  /// describes.
  virtual CpuTarget cpuTargetOf(l1::TargetAttr target) const = 0;
};

} // namespace cuvil::cpu

#endif // CUVIL_TARGETS_CPU_CPUBACKEND_H
