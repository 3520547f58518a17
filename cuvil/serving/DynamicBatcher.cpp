//===- DynamicBatcher.cpp - request queue and model executors -------------===//

#include "cuvil/serving/DynamicBatcher.h"

#include "absl/strings/str_cat.h"

#include <cstring>
#include <future>
#include <new>

namespace cuvil::serving {

using Clock = std::chrono::steady_clock;

/// Merge buffers above this are freed after their batch.
constexpr size_t kKeptBufferBytes = 16 << 20;

struct DynamicBatcher::Pending {
  int64_t batch;
  const std::vector<const std::string *> *inputs;
  Clock::time_point arrival;
  std::promise<void> done;
  absl::Status status;
  BatchResult result;
};

DynamicBatcher::DynamicBatcher(ModelSignature signature,
                               std::vector<std::unique_ptr<Executor>> executors,
                               BatchSettings settings, std::shared_ptr<ModelMetrics> metrics)
    : signature_(std::move(signature)), executors_(std::move(executors)), settings_(settings),
      metrics_(std::move(metrics)) {
  for (size_t i = 0; i < executors_.size(); ++i)
    executorBusy_.push_back(std::make_unique<std::mutex>());
  for (size_t i = 0; i < executors_.size(); ++i)
    workers_.emplace_back([this, i] { work(i); });
}

DynamicBatcher::~DynamicBatcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread &worker : workers_)
    worker.join();
}

absl::StatusOr<BatchResult> DynamicBatcher::run(int64_t batch,
                                                const std::vector<const std::string *> &inputs) {
  Pending pending{batch, &inputs, Clock::now(), {}, {}, {}};
  std::future<void> done = pending.done.get_future();
  {
    std::unique_lock<std::mutex> lock(mutex_);
    bool mayWait = signature_.dynamicBatch && settings_.maxBatch > 1 &&
                   settings_.maxQueueDelay.count() > 0;
    if (queue_.empty() && !mayWait && !stopping_) {
      for (size_t i = 0; i < executors_.size(); ++i) {
        std::unique_lock<std::mutex> busy(*executorBusy_[i], std::try_to_lock);
        if (!busy.owns_lock())
          continue;
        lock.unlock();
        std::vector<Pending *> group = {&pending};
        std::vector<std::string> none;
        execute(*executors_[i], group, batch, none, none);
        return pendingResult(pending);
      }
    }
    queue_.push_back(&pending);
  }
  wake_.notify_all();
  done.wait();
  return pendingResult(pending);
}

absl::StatusOr<BatchResult> DynamicBatcher::pendingResult(Pending &pending) {
  if (!pending.status.ok())
    return pending.status;
  return std::move(pending.result);
}

void DynamicBatcher::work(size_t index) {
  Executor &executor = *executors_[index];
  // Concatenation buffers, grown by execute() to the batches it merges.
  std::vector<std::string> inputBuffers(signature_.inputs.size()),
      outputBuffers(signature_.outputs.size());
  const bool merge = signature_.dynamicBatch && settings_.maxBatch > 1;
  std::vector<Pending *> group;
  while (true) {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty())
      return; // stopping, and nothing left to finish
    group.clear();
    int64_t rows = 0;
    auto takeFitting = [&] {
      while (!queue_.empty() && (group.empty() || (merge && rows + queue_.front()->batch <=
                                                                  settings_.maxBatch))) {
        rows += queue_.front()->batch;
        group.push_back(queue_.front());
        queue_.pop_front();
      }
    };
    takeFitting();
    if (merge && settings_.maxQueueDelay.count() > 0) {
      Clock::time_point deadline = group.front()->arrival + settings_.maxQueueDelay;
      while (rows < settings_.maxBatch && !stopping_ && queue_.empty()) {
        if (wake_.wait_until(lock, deadline) == std::cv_status::timeout)
          break;
        takeFitting();
        if (!queue_.empty())
          break; // the next request does not fit
      }
      takeFitting();
    }
    bool more = !queue_.empty();
    lock.unlock();
    if (more)
      wake_.notify_one();
    std::lock_guard<std::mutex> busy(*executorBusy_[index]);
    execute(executor, group, rows, inputBuffers, outputBuffers);
    // Kept for the next batch, unless large: the requests that needed them
    // held their bytes against the server's budget, the buffers would not.
    for (auto *buffers : {&inputBuffers, &outputBuffers})
      for (std::string &buffer : *buffers)
        if (buffer.capacity() > kKeptBufferBytes)
          std::string().swap(buffer);
  }
}

void DynamicBatcher::execute(Executor &executor, std::vector<Pending *> &group, int64_t rows,
                             std::vector<std::string> &inputBuffers,
                             std::vector<std::string> &outputBuffers) {
  Clock::time_point start = Clock::now();
  absl::Status status;
  try {
    status = runGroup(executor, group, rows, inputBuffers, outputBuffers);
  } catch (const std::bad_alloc &) {
    // A worker thread must not die of it: the requests get the error.
    for (Pending *pending : group)
      pending->result.outputs.clear();
    status = absl::ResourceExhaustedError(absl::StrCat(
        "the server ran out of memory for a batch of ", rows, " rows; send smaller batches"));
  }
  Clock::time_point end = Clock::now();
  if (metrics_)
    metrics_->recordExecution(signature_.dynamicBatch ? rows : 1);
  for (Pending *pending : group) {
    pending->status = status;
    pending->result.queueTime =
        std::chrono::duration_cast<std::chrono::microseconds>(start - pending->arrival);
    pending->result.computeTime = std::chrono::duration_cast<std::chrono::microseconds>(end - start);
    pending->done.set_value();
  }
}

absl::Status DynamicBatcher::runGroup(Executor &executor, std::vector<Pending *> &group,
                                      int64_t rows, std::vector<std::string> &inputBuffers,
                                      std::vector<std::string> &outputBuffers) {
  const size_t numInputs = signature_.inputs.size(), numOutputs = signature_.outputs.size();
  std::vector<const void *> inputs(numInputs);
  std::vector<void *> outputs(numOutputs);
  if (group.size() == 1) {
    // One request: run on its own tensors, no copies.
    Pending &only = *group.front();
    for (size_t i = 0; i < numInputs; ++i)
      inputs[i] = (*only.inputs)[i]->data();
    only.result.outputs.resize(numOutputs);
    for (size_t i = 0; i < numOutputs; ++i) {
      only.result.outputs[i].resize(signature_.outputRowBytes[i] *
                                    (signature_.dynamicBatch ? only.batch : 1));
      outputs[i] = only.result.outputs[i].data();
    }
    return executor.run(signature_.dynamicBatch ? only.batch : 1, inputs, outputs);
  }
  // rows <= maxBatch, whose products with the row sizes the server checked
  // when it loaded the model.
  for (size_t i = 0; i < numInputs; ++i) {
    size_t bytes = signature_.inputRowBytes[i] * static_cast<size_t>(rows);
    if (inputBuffers[i].size() < bytes)
      inputBuffers[i].resize(bytes);
    char *cursor = inputBuffers[i].data();
    for (Pending *pending : group) {
      const std::string &tensor = *(*pending->inputs)[i];
      std::memcpy(cursor, tensor.data(), tensor.size());
      cursor += tensor.size();
    }
    inputs[i] = inputBuffers[i].data();
  }
  for (size_t i = 0; i < numOutputs; ++i) {
    size_t bytes = signature_.outputRowBytes[i] * static_cast<size_t>(rows);
    if (outputBuffers[i].size() < bytes)
      outputBuffers[i].resize(bytes);
    outputs[i] = outputBuffers[i].data();
  }
  absl::Status status = executor.run(rows, inputs, outputs);
  if (!status.ok())
    return status;
  for (size_t i = 0; i < numOutputs; ++i) {
    const char *cursor = outputBuffers[i].data();
    for (Pending *pending : group) {
      size_t bytes = signature_.outputRowBytes[i] * pending->batch;
      pending->result.outputs.emplace_back(cursor, bytes);
      cursor += bytes;
    }
  }
  return absl::OkStatus();
}

} // namespace cuvil::serving
