//===- BatchingCostModelTest.cpp - the batching cost model ----------------===//

#include "cuvil/passes/BatchingCostModel.h"

#include "gtest/gtest.h"

namespace cuvil {
namespace {

TargetDescription simpleTarget() {
  TargetDescription target;
  target.l2Bytes = 1000;
  target.memoryBytesPerSecond = 1e9; // 1 ns a byte
  target.l2BytesPerSecond = 1e10;    // 0.1 ns a byte
  target.kernelOverheadSeconds = 1e-6;
  target.batchingThreshold = 1.1;
  return target;
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
  TargetDescription strict = simpleTarget();
  strict.batchingThreshold = 2.0; // 1.6x predicted: not enough
  EXPECT_FALSE(estimateBatching(strict, branches).pays);
}

TEST(BatchingCostModelTest, FewerThanTwoBranchesNeverMerge) {
  EXPECT_FALSE(estimateBatching(simpleTarget(), {4000, {100}, {500}}).pays);
}

TEST(BatchingCostModelTest, DescriptionRoundTripsThroughTheModuleAttribute) {
  mlir::MLIRContext context;
  TargetDescription target = simpleTarget();
  target.vectorBits = 512;
  TargetDescription back = TargetDescription::fromAttribute(target.toAttribute(&context));
  EXPECT_EQ(back.vectorBits, 512);
  EXPECT_EQ(back.l2Bytes, 1000);
  EXPECT_DOUBLE_EQ(back.memoryBytesPerSecond, 1e9);
  EXPECT_DOUBLE_EQ(back.batchingThreshold, 1.1);
}

} // namespace
} // namespace cuvil
