#include "cuvil/quantization/Observers.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cuvil::quantization {

absl::StatusOr<ObserverKind> parseObserverKind(absl::string_view name) {
  if (name == "minmax")
    return ObserverKind::kMinMax;
  if (name == "percentile")
    return ObserverKind::kPercentile;
  if (name == "entropy")
    return ObserverKind::kEntropy;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown observer '", name,
                   "'; expected minmax, percentile or entropy"));
}

absl::string_view observerName(ObserverKind kind) {
  switch (kind) {
  case ObserverKind::kMinMax:
    return "minmax";
  case ObserverKind::kPercentile:
    return "percentile";
  case ObserverKind::kEntropy:
    return "entropy";
  }
  return "";
}

RangeObserver::RangeObserver(ObserverKind kind, double percentile)
    : kind(kind), percentile(percentile) {}

void RangeObserver::startHistogram() {
  histogramStarted = true;
  limit = std::max(std::fabs(min), std::fabs(max));
  histogram.assign(2 * kBins, 0);
}

void RangeObserver::observe(const float *values, int64_t n) {
  if (!histogramStarted) {
    for (int64_t i = 0; i < n; ++i) {
      float v = values[i];
      if (std::isnan(v)) {
        ++nans;
        continue;
      }
      if (count++ == 0)
        min = max = v;
      min = std::min<double>(min, v);
      max = std::max<double>(max, v);
    }
    return;
  }
  if (!(limit > 0) || !std::isfinite(limit))
    return;
  double perBin = kBins / limit;
  for (int64_t i = 0; i < n; ++i) {
    float v = values[i];
    if (std::isnan(v))
      continue;
    double at = std::floor((v + limit) * perBin);
    int64_t bin = std::clamp<int64_t>(
        std::isfinite(at) ? static_cast<int64_t>(at) : (v > 0 ? 2 * kBins : 0),
        0, 2 * kBins - 1);
    ++histogram[bin];
    ++histogramCount;
  }
}

/// The value below which `fraction` of the histogram's values lie (the
/// edge of the bin where the cumulative count reaches it).
double RangeObserver::quantile(double fraction) const {
  double target = fraction * histogramCount;
  int64_t seen = 0;
  double width = limit / kBins;
  for (int64_t bin = 0; bin < 2 * kBins; ++bin) {
    seen += histogram[bin];
    if (seen >= target)
      return -limit + (fraction < 0.5 ? bin : bin + 1) * width;
  }
  return limit;
}

/// The threshold T in (0, A] whose quantization of the |x| histogram, with
/// everything beyond T clipped to it, diverges least from the clipped
/// histogram itself.
double RangeObserver::entropyThreshold() const {
  std::vector<double> magnitude(kBins, 0);
  for (int64_t bin = 0; bin < kBins; ++bin)
    magnitude[bin] = histogram[kBins + bin] + histogram[kBins - 1 - bin];
  // Non-negative data has 256 levels (uint8 from zero), signed data 128
  // per side.
  int levels = min >= 0 ? 256 : 128;
  double best = std::numeric_limits<double>::infinity();
  int bestBins = kBins;
  std::vector<double> p, q;
  for (int bins = levels; bins <= kBins; ++bins) {
    p.assign(magnitude.begin(), magnitude.begin() + bins);
    for (int64_t bin = bins; bin < kBins; ++bin)
      p[bins - 1] += magnitude[bin];
    double total = 0;
    for (double v : p)
      total += v;
    if (total == 0)
      continue;
    // Q: each level's mass (of the unclipped bins) spread evenly over the
    // bins P has values in.
    q.assign(bins, 0);
    for (int level = 0; level < levels; ++level) {
      int begin = static_cast<int>(static_cast<int64_t>(level) * bins / levels);
      int end = static_cast<int>(static_cast<int64_t>(level + 1) * bins / levels);
      double mass = 0;
      int nonEmpty = 0;
      for (int b = begin; b < end; ++b) {
        mass += magnitude[b];
        nonEmpty += p[b] != 0;
      }
      for (int b = begin; b < end; ++b)
        if (p[b] != 0)
          q[b] = mass / nonEmpty;
    }
    double qTotal = 0;
    for (double v : q)
      qTotal += v;
    if (qTotal == 0)
      continue;
    // A level whose only values were clipped into it has Q = 0 where P is
    // not: smoothed, so that it costs much but stays comparable.
    constexpr double kEpsilon = 1e-12;
    double divergence = 0;
    for (int b = 0; b < bins; ++b) {
      if (p[b] == 0)
        continue;
      double pb = p[b] / total, qb = std::max(q[b] / qTotal, kEpsilon);
      divergence += pb * std::log(pb / qb);
    }
    if (divergence < best) {
      best = divergence;
      bestBins = bins;
    }
  }
  return bestBins * (limit / kBins);
}

std::pair<double, double> RangeObserver::getRange() const {
  if (count == 0 || !std::isfinite(min) || !std::isfinite(max))
    return {count == 0 ? 0.0 : std::max(min, -3.4e38),
            count == 0 ? 0.0 : std::min(max, 3.4e38)};
  if (kind == ObserverKind::kMinMax || !histogramStarted || !(limit > 0))
    return {min, max};
  if (kind == ObserverKind::kPercentile) {
    double lo = quantile(1.0 - percentile / 100.0);
    double hi = quantile(percentile / 100.0);
    return {std::clamp(lo, min, max), std::clamp(hi, min, max)};
  }
  double threshold = entropyThreshold();
  return {std::max(min, -threshold), std::min(max, threshold)};
}

} // namespace cuvil::quantization
