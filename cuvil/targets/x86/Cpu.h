//===- Cpu.h - the x86 CPU a model is built for -----------------*- C++ -*-===//

#ifndef CUVIL_TARGETS_X86_CPU_H
#define CUVIL_TARGETS_X86_CPU_H

#include "cuvil/ir/CuvilAttrs.h"
#include "cuvil/targets/cpu/CpuTarget.h"

#include "absl/status/statusor.h"

#include <string>
#include <vector>

namespace cuvil::x86 {

/// A resolved --cpu: the clang -march value and the ISA features it implies
/// (the ones the artifact checks at run time).
struct ResolvedCpu {
  std::string march;
  std::vector<std::string> features;
};

/// Resolves "native" (the compiling machine), "x86-64", "x86-64-v2/v3/v4" or
/// a CPU name LLVM knows ("znver4", "skylake-avx512").
absl::StatusOr<ResolvedCpu> resolveCpu(const std::string &cpu);

/// The #cuvil.target of `cpu`: vector width from its features; caches and
/// cores of the compiling machine when `native`, else typical server-core
/// values (the attribute's defaults).
l1::TargetAttr describeCpu(mlir::MLIRContext *context, const ResolvedCpu &cpu,
                           bool native);

/// What the CPU backend builds for the x86-64 CPU a #cuvil.target
/// describes: -march, and the cpuid checks of its features.
cpu::CpuTarget cpuTargetOf(l1::TargetAttr target);

} // namespace cuvil::x86

#endif // CUVIL_TARGETS_X86_CPU_H
