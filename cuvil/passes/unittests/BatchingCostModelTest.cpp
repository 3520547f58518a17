//===- BatchingCostModelTest.cpp - the batching cost model ----------------===//

#include "cuvil/passes/BatchingCostModel.h"

#include "cuvil/ir/CuvilDialect.h"
#include "cuvil/ir/CuvilOps.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

namespace cuvil {
namespace {

/// 1 ns a byte from memory, 0.1 ns from L2 (1000 bytes), 1 us a call.
l1::TargetAttr simpleTarget(const std::string &threshold = "1.1") {
  static mlir::MLIRContext *context = [] {
    auto *c = new mlir::MLIRContext();
    c->loadDialect<l1::CuvilDialect>();
    return c;
  }();
  return llvm::cast<l1::TargetAttr>(mlir::parseAttribute(
      "#cuvil.target<backend = \"test\", l2_bytes = 1000, "
      "memory_bytes_per_second = 1.0e9, l2_bytes_per_second = 1.0e10, "
      "kernel_overhead_seconds = 1.0e-6, batching_threshold = " +
          threshold + ">",
      context));
}

TEST(BatchingCostModelTest, HandComputedEstimate) {
  // Input 4000 B (memory), branches: weights 100 + 200 (L2), outputs 500 +
  // 500 (L2), merged output 1000 (L2).
  ParallelBranches branches{4000, {100, 200}, {500, 500}};
  BatchingEstimate e = estimateBatching(simpleTarget(), branches);
  // Separate: 2 * 4 us + (10 + 20 + 50 + 50) ns + 2 us = 10.13 us.
  EXPECT_NEAR(e.separateSeconds, 10.13e-6, 1e-12);
  // Merged: 4 us + 30 ns + 100 ns + 1 us + 200 ns + 1 us = 6.33 us.
  EXPECT_NEAR(e.mergedSeconds, 6.33e-6, 1e-12);
  EXPECT_TRUE(e.pays);
  EXPECT_NEAR(e.speedup(), 10.13 / 6.33, 1e-9);
}

TEST(BatchingCostModelTest, LargeOutputsAgainstASmallInputDoNotPay) {
  // The split copy of big outputs costs more than re-reading a small input.
  ParallelBranches branches{800, {100, 100}, {50000, 50000}};
  BatchingEstimate e = estimateBatching(simpleTarget(), branches);
  EXPECT_FALSE(e.pays);
  EXPECT_LT(e.speedup(), 1.0);
}

TEST(BatchingCostModelTest, TheThresholdComesFromTheTarget) {
  ParallelBranches branches{4000, {100, 200}, {500, 500}};
  // 1.6x predicted: not enough for a threshold of 2.
  EXPECT_FALSE(estimateBatching(simpleTarget("2.0"), branches).pays);
}

TEST(BatchingCostModelTest, FewerThanTwoBranchesNeverMerge) {
  EXPECT_FALSE(estimateBatching(simpleTarget(), {4000, {100}, {500}}).pays);
}

} // namespace
} // namespace cuvil
