//===- Aarch64Target.h - the 64-bit Arm Linux target ------------*- C++ -*-===//

#ifndef CUVIL_TARGETS_AARCH64_AARCH64TARGET_H
#define CUVIL_TARGETS_AARCH64_AARCH64TARGET_H

#include "cuvil/targets/Target.h"

namespace cuvil::aarch64 {

/// Adds the aarch64 target ("aarch64", "aarch64-linux-gnu") to `registry`.
void registerAarch64Target(TargetRegistry &registry);

} // namespace cuvil::aarch64

#endif // CUVIL_TARGETS_AARCH64_AARCH64TARGET_H
