//===- Aarch64Target.cpp - the 64-bit Arm Linux target --------------------===//
//
// Edge boards: the CPU backend's .so for aarch64-linux-gnu, cross-compiled
// by clang and lld against the arm64 C library (docs/edge.md), with the
// runtime's NEON variants chosen by the CPU's features.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/aarch64/Aarch64Target.h"

#include "cuvil/support/StatusMacros.h"
#include "cuvil/targets/aarch64/Cpu.h"
#include "cuvil/targets/cpu/CpuBackend.h"

namespace cuvil::aarch64 {
namespace {

class Aarch64Target : public cpu::CpuBackend {
public:
  llvm::StringRef getName() const override { return "aarch64"; }
  llvm::StringRef getDescription() const override {
    return "64-bit Arm Linux (cross-compiled): a .so needing only libc and "
           "libm, with the same C ABI, on NEON kernels";
  }
  std::vector<std::string> getTriples() const override {
    return {"aarch64-linux-gnu"};
  }

  absl::StatusOr<l1::TargetAttr>
  resolveTarget(mlir::MLIRContext *context,
                const TargetOptions &options) const override {
    ASSIGN_OR_RETURN(ResolvedCpu cpu, resolveCpu(options.cpu));
    return describeCpu(context, cpu);
  }

protected:
  cpu::CpuTarget cpuTargetOf(l1::TargetAttr target) const override {
    return aarch64::cpuTargetOf(target);
  }
};

} // namespace

void registerAarch64Target(TargetRegistry &registry) {
  registry.add(std::make_unique<Aarch64Target>());
}

} // namespace cuvil::aarch64
