//===- DynamicBatcher.h - request queue and model executors -----*- C++ -*-===//
//
// One per loaded model version. Requests queue in arrival order; each
// executor (a cuvil_context) takes the oldest request and, for a model with a
// dynamic batch, the requests behind it while their rows fit in the maximum
// batch, waiting at most the queue delay (counted from the oldest request's
// arrival) for more. Inputs are concatenated along dimension 0 into buffers
// grown to the batches merged (never sized for the maximum: a model compiled
// for 2^31 rows must not allocate for them) and kept while small, so the
// steady state allocates only the response tensors. A request arriving at an idle batcher with no queue delay
// runs on the caller's thread. Destruction finishes every queued request: a
// version being replaced drains on its own while the new one serves.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SERVING_DYNAMICBATCHER_H
#define CUVIL_SERVING_DYNAMICBATCHER_H

#include "cuvil/serving/Metrics.h"
#include "cuvil/serving/ModelLibrary.h"

#include "absl/status/statusor.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cuvil::serving {

struct BatchSettings {
  /// Rows a merged batch may hold (1 disables merging).
  int64_t maxBatch = 1;
  std::chrono::microseconds maxQueueDelay{0};
};

struct BatchResult {
  std::vector<std::string> outputs;
  std::chrono::microseconds queueTime{0}, computeTime{0};
};

class DynamicBatcher {
public:
  DynamicBatcher(ModelSignature signature, std::vector<std::unique_ptr<Executor>> executors,
                 BatchSettings settings, std::shared_ptr<ModelMetrics> metrics);
  ~DynamicBatcher();

  /// Runs `batch` rows (1 for a static model); `inputs` are whole tensors in
  /// signature order, already validated. Blocks until done.
  absl::StatusOr<BatchResult> run(int64_t batch, const std::vector<const std::string *> &inputs);

private:
  struct Pending;
  void work(size_t executor);
  static absl::StatusOr<BatchResult> pendingResult(Pending &pending);
  void execute(Executor &executor, std::vector<Pending *> &group, int64_t rows,
               std::vector<std::string> &inputBuffers, std::vector<std::string> &outputBuffers);
  absl::Status runGroup(Executor &executor, std::vector<Pending *> &group, int64_t rows,
                        std::vector<std::string> &inputBuffers,
                        std::vector<std::string> &outputBuffers);

  const ModelSignature signature_;
  std::vector<std::unique_ptr<Executor>> executors_;
  /// Held while an executor runs: by its worker, or by a caller taking the
  /// fast path (nothing queued, no delay to wait out, executor free), which
  /// runs on its own thread and skips two thread hand-offs.
  std::vector<std::unique_ptr<std::mutex>> executorBusy_;
  const BatchSettings settings_;
  std::shared_ptr<ModelMetrics> metrics_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Pending *> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

} // namespace cuvil::serving

#endif // CUVIL_SERVING_DYNAMICBATCHER_H
