// The models' thread pool: every index of a job runs exactly once, for any
// count and thread count, and a worker that ends up on its caller's CPU
// leaves it (a polling pool would otherwise run both on one core for good).
extern "C" {
#include "cuvil/targets/cpu/runtime/threads/threads.h"
}

#include "gtest/gtest.h"

#include <sched.h>

#include <atomic>
#include <vector>

namespace {

struct Coverage {
  std::vector<std::atomic<int>> hits;
  explicit Coverage(int64_t count) : hits(count) {}
};

void countHits(void *arg, int64_t begin, int64_t end) {
  auto *coverage = static_cast<Coverage *>(arg);
  for (int64_t i = begin; i < end; ++i)
    coverage->hits[i].fetch_add(1);
}

TEST(ThreadPoolTest, EveryIndexRunsOnce) {
  for (int threads : {1, 2, 3, 5}) {
    cuvil_pool *pool = cuvil_pool_create(threads);
    EXPECT_EQ(pool == nullptr, threads == 1);
    for (int64_t count : {0, 1, 2, 3, 7, 64, 1001}) {
      for (int repeat = 0; repeat < 3; ++repeat) {
        Coverage coverage(count);
        cuvil_parallel_for(pool, count, countHits, &coverage);
        for (int64_t i = 0; i < count; ++i)
          ASSERT_EQ(coverage.hits[i].load(), 1)
              << "index " << i << " of " << count << ", " << threads << " threads";
      }
    }
    cuvil_pool_destroy(pool);
  }
}

// Each slice records the CPU it ran on; with `pinTo` >= 0 the worker's
// slice first pins its thread there, as a scheduler that placed it on its
// caller's CPU would have.
struct Placement {
  int pinTo = -1;
  std::atomic<int> callerCpu{-1}, workerCpu{-1};
};

void recordCpu(void *arg, int64_t begin, int64_t end) {
  auto *placement = static_cast<Placement *>(arg);
  (void)end;
  if (begin == 0) {
    placement->callerCpu = sched_getcpu();
    return;
  }
  if (placement->pinTo >= 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(placement->pinTo, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  }
  placement->workerCpu = sched_getcpu();
}

TEST(ThreadPoolTest, WorkerLeavesTheCallersCpu) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  if (CPU_COUNT(&allowed) < 2)
    GTEST_SKIP() << "needs two CPUs";
  int callerCpu = 0;
  while (!CPU_ISSET(callerCpu, &allowed))
    ++callerCpu;
  cuvil_pool *pool = cuvil_pool_create(2);
  ASSERT_NE(pool, nullptr);

  // The caller stays on one CPU; the first job puts the worker there too.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(callerCpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  Placement colocate;
  colocate.pinTo = callerCpu;
  cuvil_parallel_for(pool, 2, recordCpu, &colocate);
  EXPECT_EQ(colocate.callerCpu.load(), callerCpu);
  EXPECT_EQ(colocate.workerCpu.load(), callerCpu);

  // From the next job on, the worker runs elsewhere.
  for (int job = 0; job < 20; ++job) {
    Placement placement;
    cuvil_parallel_for(pool, 2, recordCpu, &placement);
    EXPECT_EQ(placement.callerCpu.load(), callerCpu);
    EXPECT_NE(placement.workerCpu.load(), callerCpu) << "job " << job;
    EXPECT_TRUE(CPU_ISSET(placement.workerCpu.load(), &allowed));
  }
  cuvil_pool_destroy(pool);
  ASSERT_EQ(sched_setaffinity(0, sizeof(allowed), &allowed), 0);
}

} // namespace
