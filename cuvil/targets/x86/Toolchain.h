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

#include "absl/status/statusor.h"

#include <string>
#include <vector>

namespace cuvil::x86 {

/// A resolved --cpu: the clang -march value and the ISA features it implies
/// (the ones the artifact checks at run time).
struct CpuTarget {
  std::string march;
  std::vector<std::string> features;
};

/// Resolves "native" (the compiling machine), "x86-64", "x86-64-v2/v3/v4" or
/// a CPU name LLVM knows ("znver4", "skylake-avx512").
absl::StatusOr<CpuTarget> resolveCpu(const std::string &cpu);

/// The clang binary: $CUVIL_CLANG, else LLVM 22's.
std::string getClangPath();

/// Compiles and links `model` into a shared object; returns its bytes.
absl::StatusOr<std::string> buildSharedObject(const EmittedModel &model,
                                              const CpuTarget &cpu);

} // namespace cuvil::x86

#endif // CUVIL_TARGETS_X86_TOOLCHAIN_H
