//===- X86Target.cpp - the x86-64 target ----------------------------------===//

#include "cuvil/targets/x86/X86Target.h"

#include "cuvil/support/StatusMacros.h"
#include "cuvil/targets/cpu/CpuBackend.h"
#include "cuvil/targets/x86/Cpu.h"

namespace cuvil::x86 {
namespace {

class X86Target : public cpu::CpuBackend {
public:
  llvm::StringRef getName() const override { return "x86"; }
  llvm::StringRef getDescription() const override {
    return "x86-64 Linux: a .so needing only libc and libm, with a C ABI";
  }
  std::vector<std::string> getTriples() const override {
    return {"x86_64-linux-gnu"};
  }

  absl::StatusOr<l1::TargetAttr>
  resolveTarget(mlir::MLIRContext *context,
                const TargetOptions &options) const override {
    ASSIGN_OR_RETURN(ResolvedCpu cpu, resolveCpu(options.cpu));
    return describeCpu(context, cpu, /*native=*/options.cpu == "native");
  }

protected:
  cpu::CpuTarget cpuTargetOf(l1::TargetAttr target) const override {
    return x86::cpuTargetOf(target);
  }
};

} // namespace

void registerX86Target(TargetRegistry &registry) {
  registry.add(std::make_unique<X86Target>());
}

} // namespace cuvil::x86
