//===- X86Target.h - the x86-64 target --------------------------*- C++ -*-===//

#ifndef CUVIL_TARGETS_X86_X86TARGET_H
#define CUVIL_TARGETS_X86_X86TARGET_H

#include "cuvil/targets/Target.h"

namespace cuvil::x86 {

/// Adds the x86-64 target: a .so needing only libc, its header, or one C99
/// file, from micro-kernels chosen for the CPU's features.
void registerX86Target(TargetRegistry &registry);

} // namespace cuvil::x86

#endif // CUVIL_TARGETS_X86_X86TARGET_H
