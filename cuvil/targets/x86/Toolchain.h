//===- Toolchain.h - building model .so files with clang 22 -----*- C++ -*-===//
//
// cuvilc builds artifacts with the LLVM 22 toolchain binaries (clang, lld)
// that scripts/bootstrap installs, rather than linking libclang into the
// compiler: the driver handles assembling, .incbin and linking for us, the
// compiler binary stays small, and the exact commands are reproducible by
// hand (`--emit=c`, then the same clang line).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_X86_TOOLCHAIN_H
#define CUVIL_TARGETS_X86_TOOLCHAIN_H

#include "cuvil/targets/x86/CEmitter.h"
#include "cuvil/targets/x86/Cpu.h"

#include "absl/status/statusor.h"

#include <string>
#include <vector>

namespace cuvil::x86 {

/// The clang binary: $CUVIL_CLANG, else LLVM 22's.
std::string getClangPath();

/// Compiles and links `model` into a shared object; returns its bytes.
absl::StatusOr<std::string> buildSharedObject(const EmittedModel &model,
                                              const CpuTarget &cpu);

} // namespace cuvil::x86

#endif // CUVIL_TARGETS_X86_TOOLCHAIN_H
