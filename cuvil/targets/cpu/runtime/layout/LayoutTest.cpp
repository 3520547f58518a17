// cuvil_reorder_f32 against the layout's definition: NCHW<B>c element
// [n][c / B][s][c % B] is NCHW element [n][c][s], lanes past the last
// channel are zero, and blocking then unblocking gives the input back, for
// channel counts that fill or leave a partial last block.
extern "C" {
#include "cuvil/targets/cpu/runtime/layout/layout.h"
}

#include "gtest/gtest.h"

#include <random>
#include <vector>

namespace {

TEST(LayoutTest, BlocksByTheDefinitionAndRoundTrips) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t block : {1, 4, 8, 16})
    for (int64_t c : {1, 7, 16, 20, 33}) {
      const int64_t n = 2, spatial = 15, blocks = (c + block - 1) / block;
      std::vector<float> plain(n * c * spatial);
      for (float &v : plain)
        v = dist(rng);
      std::vector<float> blocked(n * blocks * block * spatial, -3.0f);
      cuvil_reorder_f32(1, n, c, spatial, block, plain.data(), blocked.data());
      for (int64_t b = 0; b < n; ++b)
        for (int64_t ch = 0; ch < blocks * block; ++ch)
          for (int64_t s = 0; s < spatial; ++s) {
            float got = blocked[((b * blocks + ch / block) * spatial + s) * block + ch % block];
            ASSERT_EQ(got, ch < c ? plain[(b * c + ch) * spatial + s] : 0.0f)
                << "block " << block << " c=" << c << " at (" << b << ", " << ch << ", " << s
                << ")";
          }
      std::vector<float> back(plain.size(), -5.0f);
      cuvil_reorder_f32(0, n, c, spatial, block, blocked.data(), back.data());
      EXPECT_EQ(back, plain) << "block " << block << " c=" << c;
    }
}

} // namespace
