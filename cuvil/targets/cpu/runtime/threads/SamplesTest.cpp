// cuvil_run_samples: every sample is computed once, by a call that sees its
// own input and output rows; parallel chunks run without the pool, each on
// its own workspace; the samples left over run with the pool; a failing
// chunk's status comes back.
extern "C" {
#include "cuvil/targets/cpu/runtime/threads/samples.h"
}

#include "gtest/gtest.h"

#include <mutex>
#include <set>
#include <vector>

namespace {

constexpr int kFeatures = 3;
constexpr size_t kStride = 128;

struct Call {
  int64_t batch;
  const unsigned char *arena;
  bool pooled;
};

std::mutex callsMutex;
std::vector<Call> calls;

// y[s][f] = 2 * x[s][f] + bias[f]; a negative x fails the call. The
// workspace is written all over, so two calls sharing one would be caught
// by the check that follows.
int fakeModel(int64_t batch, const void *const *inputs, void *const *outputs,
              unsigned char *arena, cuvil_pool *pool) {
  const float *x = static_cast<const float *>(inputs[0]);
  const float *bias = static_cast<const float *>(inputs[1]);
  float *y = static_cast<float *>(outputs[0]);
  unsigned char mark = static_cast<unsigned char>(x[0]);
  for (size_t i = 0; i < kStride; ++i)
    arena[i] = mark;
  int status = 0;
  for (int64_t s = 0; s < batch; ++s)
    for (int f = 0; f < kFeatures; ++f) {
      float v = x[s * kFeatures + f];
      if (v < 0)
        status = 1;
      y[s * kFeatures + f] = 2 * v + bias[f];
    }
  for (size_t i = 0; i < kStride; ++i)
    if (arena[i] != mark)
      status = 2;
  std::lock_guard<std::mutex> lock(callsMutex);
  calls.push_back({batch, arena, pool != nullptr});
  return status;
}

const size_t kInputBytes[] = {kFeatures * sizeof(float), 0};
const size_t kOutputBytes[] = {kFeatures * sizeof(float)};
const cuvil_sample_model kModel = {fakeModel, 2, 1, kInputBytes, kOutputBytes,
                                   kStride};

TEST(SamplesTest, ChunksCoverTheBatchOnTheirOwnWorkspaces) {
  const float bias[kFeatures] = {0.5f, -1.0f, 3.0f};
  for (int threads : {1, 2, 3, 4}) {
    cuvil_pool *pool = cuvil_pool_create(threads);
    for (int arenas : {1, 2, 4}) {
      std::vector<unsigned char> arena(arenas * kStride);
      for (int64_t batch = 1; batch <= 9; ++batch) {
        std::vector<float> x(batch * kFeatures), y(batch * kFeatures, -99);
        for (size_t i = 0; i < x.size(); ++i)
          x[i] = static_cast<float>(i % 7 + 1);
        const void *ins[] = {x.data(), bias};
        void *outs[] = {y.data()};
        calls.clear();
        ASSERT_EQ(cuvil_run_samples(&kModel, batch, ins, outs, arena.data(),
                                    arenas, pool),
                  0);
        for (size_t i = 0; i < y.size(); ++i)
          ASSERT_EQ(y[i], 2 * x[i] + bias[i % kFeatures]) << "element " << i;

        int64_t chunks = std::min<int64_t>({threads, arenas, batch});
        std::set<const unsigned char *> chunkArenas;
        int64_t covered = 0;
        for (const Call &call : calls) {
          covered += call.batch;
          if (chunks < 2) {
            EXPECT_EQ(call.arena, arena.data());
            EXPECT_EQ(call.pooled, pool != nullptr);
          } else if (!call.pooled) {
            EXPECT_EQ(call.batch, batch / chunks);
            EXPECT_TRUE(chunkArenas.insert(call.arena).second)
                << "two chunks on one workspace";
            EXPECT_LT(call.arena, arena.data() + arenas * kStride);
          } else {
            EXPECT_EQ(call.batch, batch % chunks) << "the samples left";
          }
        }
        EXPECT_EQ(covered, batch);
        EXPECT_EQ(static_cast<int64_t>(chunkArenas.size()),
                  chunks < 2 ? 0 : chunks);
      }
    }
    cuvil_pool_destroy(pool);
  }
}

TEST(SamplesTest, AFailingChunkFailsTheCall) {
  cuvil_pool *pool = cuvil_pool_create(2);
  std::vector<unsigned char> arena(2 * kStride);
  const float bias[kFeatures] = {0, 0, 0};
  for (int64_t bad : {0, 5, 8}) {
    std::vector<float> x(9 * kFeatures, 1.0f), y(9 * kFeatures);
    x[bad * kFeatures + 1] = -1.0f; // chunk 0, chunk 1, the sample left
    const void *ins[] = {x.data(), bias};
    void *outs[] = {y.data()};
    EXPECT_EQ(cuvil_run_samples(&kModel, 9, ins, outs, arena.data(), 2, pool),
              1)
        << "bad sample " << bad;
  }
  cuvil_pool_destroy(pool);
}

TEST(SamplesTest, PoolThreads) {
  EXPECT_EQ(cuvil_pool_threads(nullptr), 1);
  cuvil_pool *pool = cuvil_pool_create(3);
  EXPECT_EQ(cuvil_pool_threads(pool), 3);
  cuvil_pool_destroy(pool);
}

} // namespace
