//===- AllTargets.cpp - the targets of this build -------------------------===//
//
// A new target: its folder under cuvil/targets, and one line below.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/AllTargets.h"

#include "cuvil/targets/aarch64/Aarch64Target.h"
#include "cuvil/targets/fpga/FpgaTarget.h"
#include "cuvil/targets/mlu/MluTarget.h"
#include "cuvil/targets/x86/X86Target.h"

namespace cuvil {

const TargetRegistry &getAllTargets() {
  static const TargetRegistry *registry = [] {
    auto *targets = new TargetRegistry();
    x86::registerX86Target(*targets);
    aarch64::registerAarch64Target(*targets);
    fpga::registerFpgaTarget(*targets);
    mlu::registerMluTarget(*targets);
    return targets;
  }();
  return *registry;
}

} // namespace cuvil
