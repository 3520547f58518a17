//===- BatchingCostModel.h - when merging parallel kernels pays -*- C++ -*-===//
//
// The memory-traffic model behind cuvil-batch-parallel-convs. N kernels that
// read the same input and write separate outputs either run apart (each
// streams the input, its weights and its output, and pays a call) or merged
// (the input once, all weights and outputs, one call, then a split copy that
// reads the merged output and writes the branch outputs). Time is bytes over
// the bandwidth the working set streams at (#cuvil.target's bandwidthFor)
// plus per-call overhead; merging pays when separate / merged reaches the
// target's batching threshold.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PASSES_BATCHINGCOSTMODEL_H
#define CUVIL_PASSES_BATCHINGCOSTMODEL_H

#include "cuvil/ir/CuvilAttrs.h"

#include <cstdint>
#include <vector>

namespace cuvil {

struct ParallelBranches {
  int64_t inputBytes = 0;
  /// Per branch.
  std::vector<int64_t> weightBytes, outputBytes;
};

struct BatchingEstimate {
  double separateSeconds = 0, mergedSeconds = 0;
  bool pays = false;
  double speedup() const { return mergedSeconds > 0 ? separateSeconds / mergedSeconds : 0; }
};

BatchingEstimate estimateBatching(l1::TargetAttr target,
                                  const ParallelBranches &branches);

} // namespace cuvil

#endif // CUVIL_PASSES_BATCHINGCOSTMODEL_H
