//===- MetricsTest.cpp - Prometheus rendering -----------------------------===//

#include "cuvil/serving/Metrics.h"

#include "gtest/gtest.h"

namespace cuvil::serving {
namespace {

TEST(MetricsTest, RendersCountersAndHistogram) {
  MetricsRegistry registry;
  std::shared_ptr<ModelMetrics> metrics = registry.get("m\"x", "1");
  metrics->recordRequest(true, 300, 10, 200);    // 0.3 ms
  metrics->recordRequest(false, 20'000, 0, 0);   // 20 ms
  metrics->recordExecution(4);
  EXPECT_EQ(registry.get("m\"x", "1"), metrics);  // one entry per model and version
  std::string text = registry.render();
  for (const char *line : {
           "# TYPE cuvil_inference_request_success counter",
           "cuvil_inference_request_success{model=\"m\\\"x\",version=\"1\"} 1",
           "cuvil_inference_request_failure{model=\"m\\\"x\",version=\"1\"} 1",
           "cuvil_inference_count{model=\"m\\\"x\",version=\"1\"} 4",
           "cuvil_inference_exec_count{model=\"m\\\"x\",version=\"1\"} 1",
           "cuvil_inference_request_duration_us{model=\"m\\\"x\",version=\"1\"} 20300",
           "cuvil_inference_request_duration_seconds_bucket{model=\"m\\\"x\",version=\"1\","
           "le=\"0.00025\"} 0",
           "cuvil_inference_request_duration_seconds_bucket{model=\"m\\\"x\",version=\"1\","
           "le=\"0.0005\"} 1",
           "cuvil_inference_request_duration_seconds_bucket{model=\"m\\\"x\",version=\"1\","
           "le=\"0.025\"} 2",
           "cuvil_inference_request_duration_seconds_count{model=\"m\\\"x\",version=\"1\"} 2",
       })
    EXPECT_NE(text.find(line), std::string::npos) << line << "\nnot in\n" << text;
}

} // namespace
} // namespace cuvil::serving
