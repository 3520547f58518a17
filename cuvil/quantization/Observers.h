//===- Observers.h - activation ranges from calibration data ----*- C++ -*-===//
//
// An observer sees every value a tensor takes over the calibration data and
// chooses the range [lo, hi] its int8 quantization covers:
//
// - min-max: the extremes seen (no value clipped; one outlier costs every
//   other value resolution);
// - percentile: the p-th and (100-p)-th percentiles (outliers clipped);
// - entropy: the symmetric threshold whose 8-bit quantization loses the
//   least information, the threshold minimizing KL(P || Q) between the
//   histogram of |x| clipped there and its quantization (TensorRT's
//   calibrator).
//
// Histograms need the extremes first, so histogram observers take two
// passes over the data: observe() every batch, then startHistogram() and
// observe() every batch again.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_QUANTIZATION_OBSERVERS_H
#define CUVIL_QUANTIZATION_OBSERVERS_H

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil::quantization {

enum class ObserverKind { kMinMax, kPercentile, kEntropy };

/// "minmax", "percentile" or "entropy".
absl::StatusOr<ObserverKind> parseObserverKind(absl::string_view name);
absl::string_view observerName(ObserverKind kind);

class RangeObserver {
public:
  /// `percentile` (in (50, 100]) is the percentile observer's p.
  explicit RangeObserver(ObserverKind kind, double percentile = 99.99);

  /// Whether a second pass (startHistogram, observe) is needed.
  bool needsHistogram() const { return kind != ObserverKind::kMinMax; }
  /// Ends the first pass; later observe() calls fill the histogram over
  /// [-A, A], A the largest magnitude seen.
  void startHistogram();
  /// Sees `n` values. NaNs are counted and skipped; infinities are
  /// extremes like any value.
  void observe(const float *values, int64_t n);

  double getMin() const { return min; }
  double getMax() const { return max; }
  int64_t getCount() const { return count; }
  int64_t getNaNCount() const { return nans; }
  /// The range the observer chose, within [getMin(), getMax()]; [0, 0]
  /// if nothing finite was seen.
  std::pair<double, double> getRange() const;

  static constexpr int kBins = 2048; // per sign

private:
  double quantile(double fraction) const;
  double entropyThreshold() const;

  ObserverKind kind;
  double percentile;
  double min = 0, max = 0;
  int64_t count = 0, nans = 0, histogramCount = 0;
  bool histogramStarted = false;
  double limit = 0;             // A
  std::vector<int64_t> histogram; // 2 * kBins over [-A, A]
};

} // namespace cuvil::quantization

#endif // CUVIL_QUANTIZATION_OBSERVERS_H
