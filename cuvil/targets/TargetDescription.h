//===- TargetDescription.h - what the passes know of the hardware -*- C++ -*-===//
//
// The numbers cost models and tile choices read instead of constants in code:
// vector width, cache sizes, cores, bandwidths and per-kernel overhead, plus
// the threshold above which bandwidth-aware batching merges kernels. The
// driver resolves one for the --cpu being compiled for and attaches it to
// the module as `cuvil.target`, so passes (and lit tests, which write the
// attribute by hand) see the same description.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_TARGETDESCRIPTION_H
#define CUVIL_TARGETS_TARGETDESCRIPTION_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil {

struct TargetDescription {
  int64_t vectorBits = 256;
  int64_t l1Bytes = 32 << 10;
  int64_t l2Bytes = 1 << 20;
  int64_t l3Bytes = 32 << 20;
  int64_t cores = 1;
  /// Sustained streaming bandwidth of one core from memory (or a last-level
  /// cache too far to count on), and from its own L2.
  double memoryBytesPerSecond = 12e9;
  double l2BytesPerSecond = 60e9;
  /// Fixed cost of one kernel call: dispatch, waking workers, tail effects.
  double kernelOverheadSeconds = 1e-6;
  /// Merge independent kernels when the cost model predicts at least this
  /// speed-up (1.1: 10%).
  double batchingThreshold = 1.1;

  /// Bytes per second at which a working set of `bytes` streams: from L2 if
  /// it fits, else from memory.
  double bandwidthFor(int64_t bytes) const {
    return bytes <= l2Bytes ? l2BytesPerSecond : memoryBytesPerSecond;
  }

  mlir::DictionaryAttr toAttribute(mlir::MLIRContext *context) const;
  /// The description in `attr` (fields it lacks keep their defaults).
  static TargetDescription fromAttribute(mlir::DictionaryAttr attr);
  /// The module's `cuvil.target`, or the defaults.
  static TargetDescription forModule(mlir::ModuleOp module);
};

constexpr const char *kTargetAttrName = "cuvil.target";

/// The description for an x86 target with these ISA `features` ("avx2",
/// "avx512f", ...): vector width from the features; caches and cores of the
/// compiling machine when `native`, else typical server-core values.
TargetDescription describeX86Target(const std::vector<std::string> &features, bool native);

} // namespace cuvil

#endif // CUVIL_TARGETS_TARGETDESCRIPTION_H
