#include "cuvil/quantization/Observers.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace {

using cuvil::quantization::ObserverKind;
using cuvil::quantization::RangeObserver;

/// Runs both passes over `values` in chunks, as calibration does.
std::pair<double, double> observe(RangeObserver &observer,
                                  const std::vector<float> &values) {
  auto pass = [&] {
    for (size_t at = 0; at < values.size(); at += 1000)
      observer.observe(values.data() + at,
                       std::min<size_t>(1000, values.size() - at));
  };
  pass();
  if (observer.needsHistogram()) {
    observer.startHistogram();
    pass();
  }
  return observer.getRange();
}

std::vector<float> gaussian(int n, unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(n);
  for (float &v : values)
    v = normal(random);
  return values;
}

TEST(ObserversTest, MinMaxIsTheExtremesAndSkipsNaN) {
  RangeObserver observer(ObserverKind::kMinMax);
  std::vector<float> values = {0.5f, -3.25f, std::nanf(""), 7.0f, 1.0f};
  auto [lo, hi] = observe(observer, values);
  EXPECT_EQ(lo, -3.25);
  EXPECT_EQ(hi, 7.0);
  EXPECT_EQ(observer.getCount(), 4);
  EXPECT_EQ(observer.getNaNCount(), 1);
}

TEST(ObserversTest, NothingSeenIsZero) {
  RangeObserver observer(ObserverKind::kEntropy);
  auto [lo, hi] = observe(observer, {});
  EXPECT_EQ(lo, 0.0);
  EXPECT_EQ(hi, 0.0);
}

// 0, 1, ..., 9999 and one outlier: the 99th percentile is 9900 to within a
// histogram bin (2 * 1e6 / 4096 wide), far inside the outlier.
TEST(ObserversTest, PercentileClipsOutliers) {
  std::vector<float> values;
  for (int i = 0; i < 10000; ++i)
    values.push_back(static_cast<float>(i));
  values.push_back(1e6f);
  RangeObserver observer(ObserverKind::kPercentile, 99.0);
  auto [lo, hi] = observe(observer, values);
  double bin = 1e6 / RangeObserver::kBins;
  EXPECT_NEAR(hi, 9900.0, bin);
  EXPECT_GE(lo, 0.0); // never beyond the data
  EXPECT_LE(lo, 100.0 + bin);
  EXPECT_EQ(observer.getMax(), 1e6);
}

// Standard normal data with one huge outlier: min-max spends the levels on
// the outlier; the entropy threshold T clips it and keeps the data (the
// histogram's bins are 200 / 2048 wide, so T is at least 128 of them).
TEST(ObserversTest, EntropyThresholdIgnoresARareOutlier) {
  std::vector<float> values = gaussian(200000, 7);
  values.push_back(200.0f);
  RangeObserver observer(ObserverKind::kEntropy);
  auto [lo, hi] = observe(observer, values);
  EXPECT_GT(hi, 2.0);
  EXPECT_LT(hi, 20.0);
  // Symmetric for signed data, within the extremes.
  EXPECT_EQ(lo, std::max(observer.getMin(), -hi));
}

// A Gaussian's sparse tails cost more resolution than clipping them does:
// the threshold is inside the extremes but past two sigma.
TEST(ObserversTest, EntropyClipsGaussianTails) {
  RangeObserver observer(ObserverKind::kEntropy);
  auto [lo, hi] = observe(observer, gaussian(200000, 11));
  EXPECT_LT(hi, observer.getMax());
  EXPECT_GT(hi, 2.0);
  EXPECT_GE(lo, observer.getMin());
  EXPECT_LT(hi - lo, observer.getMax() - observer.getMin());
}

// Uniform non-negative data (post-ReLU) has nothing to clip: the threshold
// is at the end of the data.
TEST(ObserversTest, EntropyKeepsUniformData) {
  std::vector<float> values;
  for (int i = 0; i < 100000; ++i)
    values.push_back(static_cast<float>(i % 1000) / 100.0f);
  RangeObserver observer(ObserverKind::kEntropy);
  auto [lo, hi] = observe(observer, values);
  EXPECT_EQ(lo, 0.0);
  EXPECT_GT(hi, 9.0);
  EXPECT_LE(hi, 9.99);
}

TEST(ObserversTest, Names) {
  EXPECT_EQ(*cuvil::quantization::parseObserverKind("entropy"),
            ObserverKind::kEntropy);
  absl::StatusOr<ObserverKind> bad =
      cuvil::quantization::parseObserverKind("kl");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "unknown observer 'kl'; expected minmax, percentile or entropy");
}

} // namespace
