// cuvil_epilogue_row against the unfused ops it replaces, applied one after
// another in float: row bias, column bias, residual, then relu or clip. The
// same bits (fusing must not change a model's results), for every subset
// of the steps, at a row whose residual starts at an offset.
extern "C" {
#include "cuvil/targets/cpu/runtime/epilogue/epilogue.h"
}

#include "gtest/gtest.h"

#include <random>
#include <vector>

namespace {

TEST(EpilogueTest, MatchesTheUnfusedOpsBitForBit) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  const int64_t count = 37, row = 2, offset = 5;
  std::vector<float> rowBias(4), colBias(count), residual(offset + count), out(count);
  for (std::vector<float> *v : {&rowBias, &colBias, &residual, &out})
    for (float &x : *v)
      x = dist(rng);
  for (int steps = 0; steps < 8; ++steps)
    for (int activation : {CUVIL_ACT_NONE, CUVIL_ACT_RELU, CUVIL_ACT_CLIP}) {
      bool useRow = steps & 1, useCol = steps & 2, useResidual = steps & 4;
      cuvil_epilogue e = {useRow ? rowBias.data() : nullptr,
                          useResidual ? residual.data() : nullptr,
                          activation,
                          -0.5f,
                          0.75f,
                          useCol ? colBias.data() : nullptr};
      std::vector<float> got = out;
      cuvil_epilogue_row(&e, got.data(), offset, row, count);
      for (int64_t j = 0; j < count; ++j) {
        float want = out[j];
        if (useRow)
          want = want + rowBias[row];
        if (useCol)
          want = want + colBias[j];
        if (useResidual)
          want = want + residual[offset + j];
        if (activation == CUVIL_ACT_RELU)
          want = want > 0.0f ? want : 0.0f;
        if (activation == CUVIL_ACT_CLIP)
          want = want < -0.5f ? -0.5f : want > 0.75f ? 0.75f : want;
        ASSERT_EQ(got[j], want) << "steps " << steps << " activation " << activation
                                << " at " << j;
      }
    }
}

} // namespace
