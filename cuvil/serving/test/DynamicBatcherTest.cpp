//===- DynamicBatcherTest.cpp - batching with a recording executor --------===//

#include "cuvil/serving/DynamicBatcher.h"

#include "gtest/gtest.h"

#include <cstring>
#include <new>
#include <thread>

namespace cuvil::serving {
namespace {

/// y[r] = x[r] * 2 + batch-run index, one int32 per row; records the batch
/// sizes it ran.
class RecordingExecutor : public Executor {
public:
  explicit RecordingExecutor(std::vector<int64_t> &batches, std::mutex &mutex)
      : batches_(batches), mutex_(mutex) {}
  absl::Status run(int64_t batch, const std::vector<const void *> &inputs,
                   const std::vector<void *> &outputs) override {
    const int32_t *x = static_cast<const int32_t *>(inputs[0]);
    int32_t *y = static_cast<int32_t *>(outputs[0]);
    for (int64_t r = 0; r < batch; ++r)
      y[r] = x[r] * 2;
    std::lock_guard<std::mutex> lock(mutex_);
    batches_.push_back(batch);
    if (x[0] < 0)
      return absl::InternalError("negative input");
    return absl::OkStatus();
  }

private:
  std::vector<int64_t> &batches_;
  std::mutex &mutex_;
};

ModelSignature rowSignature(bool dynamic) {
  ModelSignature signature;
  signature.inputs = {{"x", DataType::kINT32, {dynamic ? -1 : 1}, std::nullopt}};
  signature.outputs = {{"y", DataType::kINT32, {dynamic ? -1 : 1}, std::nullopt}};
  signature.dynamicBatch = dynamic;
  signature.maxBatch = dynamic ? 4 : 1;
  signature.inputRowBytes = {4};
  signature.outputRowBytes = {4};
  return signature;
}

std::string rows(std::initializer_list<int32_t> values) {
  std::string bytes(values.size() * 4, '\0');
  std::memcpy(bytes.data(), values.begin(), bytes.size());
  return bytes;
}

TEST(DynamicBatcherTest, MergesQueuedRequestsUpToTheMaximumInOrder) {
  std::vector<int64_t> batches;
  std::mutex mutex;
  std::vector<std::unique_ptr<Executor>> executors;
  executors.push_back(std::make_unique<RecordingExecutor>(batches, mutex));
  auto metrics = std::make_shared<ModelMetrics>();
  DynamicBatcher batcher(rowSignature(true), std::move(executors),
                         {4, std::chrono::milliseconds(300)}, metrics);
  // Five requests of 1, 2, 1, 1, 2 rows: 4 rows fit one batch (1+2+1), the
  // rest (1+2) the next.
  std::vector<std::string> inputs = {rows({1}), rows({2, 3}), rows({4}), rows({5}), rows({6, 7})};
  std::vector<int64_t> sizes = {1, 2, 1, 1, 2};
  std::vector<absl::StatusOr<BatchResult>> results(inputs.size(),
                                                   absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < inputs.size(); ++i) {
    threads.emplace_back([&, i] {
      std::vector<const std::string *> in = {&inputs[i]};
      results[i] = batcher.run(sizes[i], in);
    });
    // Keep arrival order deterministic.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(batches, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(results[1]->outputs[0], rows({4, 6}));
  EXPECT_EQ(results[4]->outputs[0], rows({12, 14}));
  for (auto &result : results)
    ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(metrics->executionCount.load(), 2u);
  EXPECT_EQ(metrics->inferenceCount.load(), 7u);
}

TEST(DynamicBatcherTest, StaticModelsRunEachRequestAlone) {
  std::vector<int64_t> batches;
  std::mutex mutex;
  std::vector<std::unique_ptr<Executor>> executors;
  executors.push_back(std::make_unique<RecordingExecutor>(batches, mutex));
  DynamicBatcher batcher(rowSignature(false), std::move(executors),
                         {1, std::chrono::milliseconds(50)}, nullptr);
  std::string a = rows({5}), b = rows({6});
  std::thread other([&] { ASSERT_TRUE(batcher.run(1, {&a}).ok()); });
  absl::StatusOr<BatchResult> result = batcher.run(1, {&b});
  other.join();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->outputs[0], rows({12}));
  EXPECT_EQ(batches, (std::vector<int64_t>{1, 1}));
}

/// Records the thread each run happens on.
class ThreadRecorder : public Executor {
public:
  absl::Status run(int64_t batch, const std::vector<const void *> &inputs,
                   const std::vector<void *> &outputs) override {
    std::memcpy(outputs[0], inputs[0], 4 * batch);
    thread = std::this_thread::get_id();
    return absl::OkStatus();
  }
  std::thread::id thread;
};

TEST(DynamicBatcherTest, AnIdleBatcherWithoutDelayRunsOnTheCallersThread) {
  auto recorder = std::make_unique<ThreadRecorder>();
  ThreadRecorder *raw = recorder.get();
  std::vector<std::unique_ptr<Executor>> executors;
  executors.push_back(std::move(recorder));
  DynamicBatcher batcher(rowSignature(true), std::move(executors),
                         {4, std::chrono::microseconds(0)}, nullptr);
  std::string input = rows({9});
  absl::StatusOr<BatchResult> result = batcher.run(1, {&input});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->outputs[0], input);
  EXPECT_EQ(raw->thread, std::this_thread::get_id());
}

TEST(DynamicBatcherTest, AnErrorReachesEveryRequestOfTheBatch) {
  std::vector<int64_t> batches;
  std::mutex mutex;
  std::vector<std::unique_ptr<Executor>> executors;
  executors.push_back(std::make_unique<RecordingExecutor>(batches, mutex));
  DynamicBatcher batcher(rowSignature(true), std::move(executors),
                         {4, std::chrono::milliseconds(200)}, nullptr);
  std::string bad = rows({-1}), good = rows({1});
  absl::StatusOr<BatchResult> first = absl::UnknownError("");
  std::thread thread([&] { first = batcher.run(1, {&bad}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  absl::StatusOr<BatchResult> second = batcher.run(1, {&good});
  thread.join();
  EXPECT_EQ(first.status().message(), "negative input");
  EXPECT_EQ(second.status().message(), "negative input");
}

TEST(DynamicBatcherTest, DestructionFinishesQueuedWork) {
  std::vector<int64_t> batches;
  std::mutex mutex;
  std::vector<std::unique_ptr<Executor>> executors;
  executors.push_back(std::make_unique<RecordingExecutor>(batches, mutex));
  auto batcher = std::make_unique<DynamicBatcher>(
      rowSignature(true), std::move(executors), BatchSettings{4, std::chrono::seconds(1)},
      nullptr);
  std::string input = rows({3});
  absl::StatusOr<BatchResult> result = absl::UnknownError("");
  std::thread thread([&] { result = batcher->run(1, {&input}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto start = std::chrono::steady_clock::now();
  batcher.reset(); // must not wait out the whole delay, nor drop the request
  thread.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->outputs[0], rows({6}));
}

TEST(DynamicBatcherTest, AHugeMaximumBatchAllocatesOnlyWhatIsMerged) {
  // A model compiled with --max-batch=2^31-1 (or more): the batcher used to
  // size its buffers for the maximum (bad_alloc, abort); it now holds only
  // the rows it merges.
  std::vector<int64_t> batches;
  std::mutex mutex;
  ModelSignature signature = rowSignature(true);
  for (int64_t maxBatch : {int64_t{2147483647}, int64_t{1} << 40}) {
    signature.maxBatch = maxBatch;
    std::vector<std::unique_ptr<Executor>> one;
    one.push_back(std::make_unique<RecordingExecutor>(batches, mutex));
    DynamicBatcher batcher(signature, std::move(one), {maxBatch, std::chrono::seconds(1)},
                           nullptr);
    std::string a = rows({1, 2}), b = rows({3});
    absl::StatusOr<BatchResult> first = absl::UnknownError("");
    std::thread thread([&] { first = batcher.run(2, {&a}); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    absl::StatusOr<BatchResult> second = batcher.run(1, {&b});
    thread.join();
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(first->outputs[0], rows({2, 4}));
    EXPECT_EQ(second->outputs[0], rows({6}));
  }
  EXPECT_EQ(batches, (std::vector<int64_t>{3, 3}));
}

/// Fails to allocate, as a model asked for an impossible answer might.
class AllocationFailure : public Executor {
public:
  absl::Status run(int64_t, const std::vector<const void *> &,
                   const std::vector<void *> &) override {
    throw std::bad_alloc();
  }
};

TEST(DynamicBatcherTest, RunningOutOfMemoryIsAnErrorNotAnAbort) {
  std::vector<std::unique_ptr<Executor>> executors;
  executors.push_back(std::make_unique<AllocationFailure>());
  DynamicBatcher batcher(rowSignature(true), std::move(executors),
                         {4, std::chrono::milliseconds(100)}, nullptr);
  std::string a = rows({1}), b = rows({2});
  absl::StatusOr<BatchResult> first = absl::UnknownError("");
  // Merged on a worker thread, and alone on the caller's.
  std::thread thread([&] { first = batcher.run(1, {&a}); });
  absl::StatusOr<BatchResult> second = batcher.run(1, {&b});
  thread.join();
  for (const auto *result : {&first, &second}) {
    ASSERT_FALSE(result->ok());
    EXPECT_EQ(result->status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_NE(result->status().message().find("ran out of memory"), absl::string_view::npos);
  }
}

} // namespace
} // namespace cuvil::serving
