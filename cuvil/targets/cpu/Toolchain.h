//===- Toolchain.h - building model .so files with clang 22 -----*- C++ -*-===//
//
// cuvilc builds artifacts with the LLVM 22 toolchain binaries (clang, lld)
// that scripts/bootstrap installs, rather than linking libclang into the
// compiler: the driver handles assembling, .incbin and linking for us, the
// compiler binary stays small, and the exact commands are reproducible by
// hand (`--emit=c`, then the same clang line).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_CPU_TOOLCHAIN_H
#define CUVIL_TARGETS_CPU_TOOLCHAIN_H

#include "cuvil/targets/cpu/CEmitter.h"
#include "cuvil/targets/cpu/CpuTarget.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace cuvil::cpu {

/// The clang binary: $CUVIL_CLANG, else LLVM 22's.
std::string getClangPath();

/// Compiles and links `model` into a shared object for `cpu` (its triple,
/// so a cross build needs only clang, lld and that triple's C library);
/// returns its bytes. With a `symbolPrefix` (SymbolPrefix.h) it exports
/// the ABI under those names.
absl::StatusOr<std::string> buildSharedObject(const EmittedModel &model,
                                              const CpuTarget &cpu,
                                              llvm::StringRef symbolPrefix = "");

/// Compiles `model` into a static library (an ar archive of one object)
/// for `cpu`, to link into a program: only the ABI's functions are global
/// in it, under `symbolPrefix`'s names if one is given; returns its bytes.
/// The program links it with -lm (and -lpthread before glibc 2.34).
absl::StatusOr<std::string> buildStaticLibrary(const EmittedModel &model,
                                               const CpuTarget &cpu,
                                               llvm::StringRef symbolPrefix = "");

} // namespace cuvil::cpu

#endif // CUVIL_TARGETS_CPU_TOOLCHAIN_H
