//===- Metrics.h - Prometheus metrics of the server -------------*- C++ -*-===//
//
// Counters per model and version, kept across unloads (Prometheus counters
// never go back), rendered in the text exposition format at /metrics.
// inference_count / execution_count is the average batch size. Server-wide
// counters carry no model label: a request naming a model that does not
// exist counts there, and adds no series.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SERVING_METRICS_H
#define CUVIL_SERVING_METRICS_H

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace cuvil::serving {

struct ModelMetrics {
  /// Upper bounds (seconds) of the request-duration histogram.
  static constexpr std::array<double, 14> kBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
      0.025,  0.05,    0.1,    0.25,  0.5,    1.0,   5.0};

  std::atomic<uint64_t> requestSuccess{0}, requestFailure{0};
  std::atomic<uint64_t> inferenceCount{0}, executionCount{0};
  std::atomic<uint64_t> requestDurationUs{0}, queueDurationUs{0}, computeDurationUs{0};
  std::array<std::atomic<uint64_t>, kBuckets.size() + 1> requestDurationBuckets{};

  void recordRequest(bool ok, uint64_t requestUs, uint64_t queueUs, uint64_t computeUs);
  void recordExecution(uint64_t batch) {
    executionCount.fetch_add(1, std::memory_order_relaxed);
    inferenceCount.fetch_add(batch, std::memory_order_relaxed);
  }
};

struct ServerMetrics {
  /// Failed inference requests by absl::StatusCode (== gRPC code).
  static constexpr int kCodes = 17;
  std::array<std::atomic<uint64_t>, kCodes> inferenceFailures{};
  /// HTTP connections closed for not sending a request in time.
  std::atomic<uint64_t> httpRequestTimeouts{0};

  void recordFailure(absl::StatusCode code) {
    int index = static_cast<int>(code);
    inferenceFailures[index >= 0 && index < kCodes ? index : 2].fetch_add(
        1, std::memory_order_relaxed);
  }
};

class MetricsRegistry {
public:
  std::shared_ptr<ModelMetrics> get(const std::string &model, const std::string &version);
  std::string render() const;

  ServerMetrics server;

private:
  mutable absl::Mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<ModelMetrics>> models_
      ABSL_GUARDED_BY(mutex_);
};

} // namespace cuvil::serving

#endif // CUVIL_SERVING_METRICS_H
