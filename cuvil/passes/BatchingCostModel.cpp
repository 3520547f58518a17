//===- BatchingCostModel.cpp - when merging parallel kernels pays ---------===//

#include "cuvil/passes/BatchingCostModel.h"

namespace cuvil {

BatchingEstimate estimateBatching(l1::TargetAttr target,
                                  const ParallelBranches &branches) {
  BatchingEstimate estimate;
  size_t n = branches.weightBytes.size();
  if (n < 2 || branches.outputBytes.size() != n)
    return estimate;
  auto stream = [&](int64_t bytes) { return bytes / target.bandwidthFor(bytes); };
  double overhead = target.getKernelOverheadSeconds().convertToDouble();
  int64_t weights = 0, outputs = 0;
  for (size_t i = 0; i < n; ++i) {
    weights += branches.weightBytes[i];
    outputs += branches.outputBytes[i];
    estimate.separateSeconds += stream(branches.inputBytes) +
                                stream(branches.weightBytes[i]) +
                                stream(branches.outputBytes[i]) + overhead;
  }
  // The split reads the merged output and writes the branches' outputs.
  estimate.mergedSeconds = stream(branches.inputBytes) + stream(weights) + stream(outputs) +
                           overhead + 2 * stream(outputs) +
                           overhead;
  estimate.pays =
      estimate.speedup() >= target.getBatchingThreshold().convertToDouble();
  return estimate;
}

} // namespace cuvil
