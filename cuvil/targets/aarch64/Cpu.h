//===- Cpu.h - the 64-bit Arm CPU a model is built for ----------*- C++ -*-===//

#ifndef CUVIL_TARGETS_AARCH64_CPU_H
#define CUVIL_TARGETS_AARCH64_CPU_H

#include "cuvil/ir/CuvilAttrs.h"
#include "cuvil/targets/cpu/CpuTarget.h"

#include "absl/status/statusor.h"

#include <string>
#include <vector>

namespace cuvil::aarch64 {

/// A resolved --cpu: the clang -mcpu value and the ISA features it implies
/// that the kernel reports in its hwcaps (the ones the artifact checks
/// when it runs), by LLVM's names ("neon", "dotprod", "fullfp16", ...).
struct ResolvedCpu {
  std::string mcpu;
  std::vector<std::string> features;
};

/// Resolves "generic" (any armv8-a: NEON only), an LLVM AArch64 CPU name
/// ("cortex-a72", "cortex-a76", "neoverse-n1") or "native": the compiling
/// machine's CPU on an aarch64 host, "generic" when cross-compiling.
absl::StatusOr<ResolvedCpu> resolveCpu(const std::string &cpu);

/// The #cuvil.target of `cpu`: 128-bit vectors, NCHW4c channel blocks,
/// the CPU's caches where known.
l1::TargetAttr describeCpu(mlir::MLIRContext *context, const ResolvedCpu &cpu);

/// What the CPU backend builds for the aarch64 CPU a #cuvil.target
/// describes: the cross triple, -mcpu, and the hwcap checks of its
/// features.
cpu::CpuTarget cpuTargetOf(l1::TargetAttr target);

} // namespace cuvil::aarch64

#endif // CUVIL_TARGETS_AARCH64_CPU_H
