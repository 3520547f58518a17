//===- Runtime.h - which runtime families a model's C includes --*- C++ -*-===//
//
// The x86 runtime (runtime/) is a set of kernel families, one folder each,
// listed with their dependencies in runtime/families.inc. A model's
// translation unit includes only the families its planned level2 calls,
// with their dependencies, each once and in dependency order, preceded by
// the macros that choose the target's variants.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_CPU_RUNTIME_H
#define CUVIL_TARGETS_CPU_RUNTIME_H

#include "cuvil/ir/CuvilL2Ops.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace cuvil::cpu {

/// What a model takes from the runtime.
struct RuntimeSelection {
  /// Families (runtime/families.inc) the model's code calls;
  /// assembleRuntime adds what they depend on.
  std::set<std::string> families;
  /// The target's L2 bytes per core (CUVIL_L2_BYTES, at least 64 KiB): the
  /// matrix products size their blocks to it.
  int64_t l2Bytes = 1 << 20;
  /// The SIMD variants (CUVIL_ENABLE_SIMD_KERNELS); off for the portable
  /// C99 output (--emit=c), which keeps to the reference kernels.
  bool simd = false;
  /// The variant of each micro-kernel family (gemm/sgemm4.inc,
  /// conv/dwconv.inc, conv_blocked/convb.inc); convb "none" when no
  /// blocked direct convolution runs (its ~40 tile functions are left out).
  std::string sgemm4 = "reference", dwconv = "reference", convb = "none";
  /// Whether a blocked direct convolution writes 8-channel blocks, which
  /// the AVX-512 tiles run two per register (those ~28 functions are
  /// compiled only then: CUVIL_OMIT_CONVB_PAIRS otherwise).
  bool convbPairs = false;
  /// The int8 product's (qgemm/qgemm.inc) and the bfloat16 product's
  /// (bgemm/bgemm.inc); "none" when nothing calls them.
  std::string qgemm4 = "none", bgemm8 = "none";
  /// The int8 product's variant for narrow weights (cuvil.narrow_weights),
  /// "none" when no call has them.
  std::string qgemm4Narrow = "none";
  /// The int8 blocked convolution's tiles (qconv/qconvb.inc) for any
  /// weights and for narrow ones; "none" when nothing calls them (only the
  /// chosen tiles are compiled).
  std::string qconvb = "none", qconvbNarrow = "none";
  /// The bfloat16 convolution's tiles (bconv/bconvb.inc); "none" when
  /// nothing calls them (only the chosen tiles are compiled).
  std::string bconvb = "none";
  /// The forest walk (trees/trees.inc); "none" when no tree ensemble runs.
  std::string forestWalk = "none";
  /// The comparison (CUVIL_TREE_LT or _LE) every perfect forest of the
  /// model makes, 0 if none or they differ: the perfect walks are then
  /// compiled for it alone (CUVIL_PERFECT_COMPARISON).
  int perfectComparison = 0;
  /// The deepest perfect forest's depth (0: none): the walks' code for
  /// deeper levels is left out (CUVIL_PERFECT_MAX_DEPTH).
  int perfectMaxDepth = 0;
  /// The float16 product's (hgemm/hgemm.inc); "none" when nothing calls it.
  std::string hgemm4 = "none";
};

/// The runtime families by name, in dependency order.
std::vector<std::string> runtimeFamilies();

/// The family of a level2 micro-kernel the emitter calls the runtime for
/// ("" for the ones it writes as loops in the run function).
std::string familyOf(cuvil::l2::UKernelCallOp call);

/// `families` and all they depend on, in dependency order. Unknown names
/// are an internal error (reported through llvm::report_fatal_error).
std::vector<std::string> runtimeClosure(const std::set<std::string> &families);

/// The variant of a micro-kernel family for a CPU: of its .inc file's
/// (name, features) pairs, in order, the last whose space-separated
/// features the CPU has ("reference" needs none).
std::string chooseVariant(
    const std::vector<std::pair<std::string, std::string>> &variants,
    const std::vector<std::string> &cpuFeatures);

/// What `func` (planned level2) needs: the families of the micro-kernels it
/// calls (by name and `cuvil.algorithm`), of its reorders and maps, and the
/// thread pool every context owns; the variants for `cpuFeatures` when
/// `simd`, tuned for `cpu` (an LLVM CPU name) where a variant's speed
/// differs between CPUs with the same features.
RuntimeSelection selectRuntime(mlir::func::FuncOp func, const std::string &cpu,
                               const std::vector<std::string> &cpuFeatures,
                               bool simd, int64_t l2Bytes);

/// The embedded text of a runtime file by its path under runtime/
/// ("abi/entry.c"); a missing file is an internal error.
llvm::StringRef runtimeFile(llvm::StringRef path);

/// The C text of the selection: the variant macros, every model's scalar
/// helpers (math/scalar.h), then the headers, then
/// the sources of its families' closure. The model's code follows it.
std::string assembleRuntime(const RuntimeSelection &selection);

} // namespace cuvil::cpu

#endif // CUVIL_TARGETS_CPU_RUNTIME_H
