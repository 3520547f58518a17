//===- Metrics.cpp - Prometheus metrics of the server ---------------------===//

#include "cuvil/serving/Metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace cuvil::serving {

void ModelMetrics::recordRequest(bool ok, uint64_t requestUs, uint64_t queueUs,
                                 uint64_t computeUs) {
  (ok ? requestSuccess : requestFailure).fetch_add(1, std::memory_order_relaxed);
  requestDurationUs.fetch_add(requestUs, std::memory_order_relaxed);
  queueDurationUs.fetch_add(queueUs, std::memory_order_relaxed);
  computeDurationUs.fetch_add(computeUs, std::memory_order_relaxed);
  size_t bucket = 0;
  while (bucket < kBuckets.size() && requestUs > kBuckets[bucket] * 1e6)
    ++bucket;
  requestDurationBuckets[bucket].fetch_add(1, std::memory_order_relaxed);
}

std::shared_ptr<ModelMetrics> MetricsRegistry::get(const std::string &model,
                                                   const std::string &version) {
  absl::MutexLock lock(&mutex_);
  std::shared_ptr<ModelMetrics> &entry = models_[{model, version}];
  if (!entry)
    entry = std::make_shared<ModelMetrics>();
  return entry;
}

namespace {

std::string labels(const std::pair<std::string, std::string> &key) {
  auto escape = [](const std::string &value) {
    return absl::StrReplaceAll(value, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
  };
  return absl::StrCat("model=\"", escape(key.first), "\",version=\"", escape(key.second), "\"");
}

} // namespace

std::string MetricsRegistry::render() const {
  absl::MutexLock lock(&mutex_);
  std::string out;
  struct Counter {
    const char *name;
    const char *help;
    std::atomic<uint64_t> ModelMetrics::*field;
  };
  static const Counter kCounters[] = {
      {"cuvil_inference_request_success", "Successful inference requests.",
       &ModelMetrics::requestSuccess},
      {"cuvil_inference_request_failure", "Failed inference requests.",
       &ModelMetrics::requestFailure},
      {"cuvil_inference_count", "Inferences performed (a batch of n counts n).",
       &ModelMetrics::inferenceCount},
      {"cuvil_inference_exec_count", "Model executions (batches run).",
       &ModelMetrics::executionCount},
      {"cuvil_inference_request_duration_us",
       "Cumulative request time, receipt of the decoded request to the response, in us.",
       &ModelMetrics::requestDurationUs},
      {"cuvil_inference_queue_duration_us", "Cumulative time requests waited in the batch queue, in us.",
       &ModelMetrics::queueDurationUs},
      {"cuvil_inference_compute_duration_us",
       "Cumulative model execution time of the batches requests ran in, in us.",
       &ModelMetrics::computeDurationUs},
  };
  for (const Counter &counter : kCounters) {
    absl::StrAppend(&out, "# HELP ", counter.name, " ", counter.help, "\n# TYPE ", counter.name,
                    " counter\n");
    for (const auto &[key, metrics] : models_)
      absl::StrAppend(&out, counter.name, "{", labels(key), "} ",
                      ((*metrics).*counter.field).load(std::memory_order_relaxed), "\n");
  }
  const char *histogram = "cuvil_inference_request_duration_seconds";
  absl::StrAppend(&out, "# HELP ", histogram, " Inference request duration.\n# TYPE ", histogram,
                  " histogram\n");
  for (const auto &[key, metrics] : models_) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= ModelMetrics::kBuckets.size(); ++i) {
      cumulative += metrics->requestDurationBuckets[i].load(std::memory_order_relaxed);
      std::string bound =
          i < ModelMetrics::kBuckets.size() ? absl::StrCat(ModelMetrics::kBuckets[i]) : "+Inf";
      absl::StrAppend(&out, histogram, "_bucket{", labels(key), ",le=\"", bound, "\"} ",
                      cumulative, "\n");
    }
    absl::StrAppend(&out, histogram, "_sum{", labels(key), "} ",
                    metrics->requestDurationUs.load(std::memory_order_relaxed) / 1e6, "\n");
    absl::StrAppend(&out, histogram, "_count{", labels(key), "} ", cumulative, "\n");
  }
  const char *failures = "cuvil_server_inference_failure";
  absl::StrAppend(&out, "# HELP ", failures,
                  " Failed inference requests of the whole server by status code, including "
                  "those naming no loaded model.\n# TYPE ", failures, " counter\n");
  for (int code = 1; code < ServerMetrics::kCodes; ++code)
    if (uint64_t count = server.inferenceFailures[code].load(std::memory_order_relaxed))
      absl::StrAppend(&out, failures, "{code=\"",
                      absl::StatusCodeToString(static_cast<absl::StatusCode>(code)), "\"} ",
                      count, "\n");
  absl::StrAppend(&out,
                  "# HELP cuvil_http_request_timeouts HTTP connections closed for not sending a "
                  "whole request within --http-request-timeout-secs.\n"
                  "# TYPE cuvil_http_request_timeouts counter\ncuvil_http_request_timeouts ",
                  server.httpRequestTimeouts.load(std::memory_order_relaxed), "\n");
  return out;
}

} // namespace cuvil::serving
