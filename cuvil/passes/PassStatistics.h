//===- PassStatistics.h - pass statistics that survive NDEBUG --*- C++ -*-===//
//
// Debian's LLVM is built without statistics (mlir::Pass::Statistic is a
// no-op there), so Cuvil's passes also count into this registry, keyed by
// the MLIRContext the pass runs in (compiles in different threads never mix)
// and read by `cuvilc --pass-statistics`.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PASSES_PASSSTATISTICS_H
#define CUVIL_PASSES_PASSSTATISTICS_H

#include "mlir/Pass/Pass.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil {

struct PassStatistic {
  std::string pass, name;
  uint64_t value = 0;
};

/// Adds `value` to `statistic` of `pass`, running on `op`, and to the
/// registry under `name` (the statistic's name in Passes.td: Debian's no-op
/// statistics do not keep it).
void addStatistic(mlir::Operation *op, mlir::Pass &pass, mlir::Pass::Statistic &statistic,
                  llvm::StringRef name, uint64_t value = 1);

/// Bytes of a statically shaped tensor type, 0 if a dimension is dynamic:
/// what a fusion saves writing and reading back (`bytes-saved`).
int64_t staticTensorBytes(mlir::Type type);

/// The statistics recorded in `context`, in the order first recorded, and
/// forgets them.
std::vector<PassStatistic> takeStatistics(mlir::MLIRContext *context);

} // namespace cuvil

#endif // CUVIL_PASSES_PASSSTATISTICS_H
