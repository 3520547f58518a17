// Every sgemm4 variant this CPU can run (listed once in sgemm4.inc) against
// a double-precision product, over shapes that hit the vector blocks and the
// remainders, 1 to 4 rows, and strided A.
extern "C" {
#include "cuvil/targets/cpu/runtime/contract/contract.h"
#include "cuvil/targets/cpu/runtime/gemm/gemm.h"
}

#include "cuvil/targets/cpu/runtime/cpu_has.h"
#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Variant {
  const char *name;
  cuvil_sgemm4_fn fn;
  std::string features;
};

std::vector<Variant> variants() {
  return {
#define CUVIL_SGEMM4_VARIANT(name, target, features)                           \
  {#name, cuvil_sgemm4_##name, features},
#include "cuvil/targets/cpu/runtime/gemm/sgemm4.inc"
#undef CUVIL_SGEMM4_VARIANT
  };
}

using cuvil::runtime_testing::cpuHas;

TEST(Sgemm4Test, VariantsMatchDoublePrecision) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  int tested = 0;
  for (const Variant &v : variants()) {
    if (!cpuHas(v.features)) {
      std::printf("skipping %s: this CPU lacks %s\n", v.name,
                  v.features.c_str());
      continue;
    }
    ++tested;
    for (int64_t rows = 1; rows <= 4; ++rows) {
      for (int64_t n : {1, 15, 16, 33, 64, 100}) {
        for (int64_t k : {1, 7, 64}) {
          for (int64_t aCol : {1, 3}) {
            int64_t aRow = aCol == 1 ? k + 2 : 1;
            std::vector<float> a(4 * (k + 2) * 3), b(k * (n + 1));
            for (float &x : a)
              x = dist(rng);
            for (float &x : b)
              x = dist(rng);
            std::vector<std::vector<float>> c(4, std::vector<float>(n, NAN));
            float *cp[4] = {c[0].data(), c[1].data(), c[2].data(), c[3].data()};
            v.fn(rows, n, k, a.data(), aRow, aCol, b.data(), n + 1, cp, 0);
            for (int64_t q = 0; q < 4; ++q) {
              for (int64_t j = 0; j < n; ++j) {
                if (q >= rows) {
                  EXPECT_TRUE(std::isnan(c[q][j]))
                      << v.name << " wrote row " << q;
                  continue;
                }
                double want = 0;
                for (int64_t l = 0; l < k; ++l)
                  want += double(a[q * aRow + l * aCol]) * b[l * (n + 1) + j];
                EXPECT_NEAR(c[q][j], want, 1e-5 * (1 + k))
                    << v.name << " rows=" << rows << " n=" << n << " k=" << k
                    << " at (" << q << ", " << j << ")";
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GE(tested, 1);
}

// Splitting k into blocks, the later ones with `accumulate`, continues each
// element's running sum: the same bits as one pass (what lets the blocked
// products promise results independent of blocking). Rows past `rows` are
// neither read nor written.
TEST(Sgemm4Test, AccumulateContinuesTheSum) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const Variant &v : variants()) {
    if (!cpuHas(v.features))
      continue;
    for (int64_t rows = 1; rows <= 4; ++rows) {
      for (int64_t n : {5, 16, 32, 45}) {
        const int64_t k = 77, split = 30;
        std::vector<float> a(4 * k), b(k * n);
        for (float &x : a)
          x = dist(rng);
        for (float &x : b)
          x = dist(rng);
        std::vector<std::vector<float>> whole(4, std::vector<float>(n, NAN)),
            blocked(4, std::vector<float>(n, NAN));
        float *wp[4] = {whole[0].data(), whole[1].data(), whole[2].data(),
                        whole[3].data()};
        float *bp[4] = {blocked[0].data(), blocked[1].data(), blocked[2].data(),
                        blocked[3].data()};
        v.fn(rows, n, k, a.data(), k, 1, b.data(), n, wp, 0);
        v.fn(rows, n, split, a.data(), k, 1, b.data(), n, bp, 0);
        v.fn(rows, n, k - split, a.data() + split, k, 1, b.data() + split * n,
             n, bp, 1);
        for (int64_t q = 0; q < 4; ++q)
          for (int64_t j = 0; j < n; ++j) {
            if (q >= rows) {
              EXPECT_TRUE(std::isnan(blocked[q][j])) << v.name;
              continue;
            }
            EXPECT_EQ(whole[q][j], blocked[q][j])
                << v.name << " rows=" << rows << " n=" << n << " at (" << q
                << ", " << j << ")";
          }
      }
    }
  }
}

// cuvil_matmul_f32 with scratch packs each B in strips (row by row, B
// plain or transposed, a last strip of fewer columns) and runs the blocked
// product over k in blocks; without, it runs the rows directly. Both against
// double precision, batches with their own B.
TEST(Sgemm4Test, MatmulPackedAndDirectMatchDoublePrecision) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const int64_t batch = 2, m = 13, k = 300;
  for (int64_t n : {64, 70}) {
    for (bool transposed : {false, true}) {
      std::vector<float> a(batch * m * k), b(batch * k * n);
      for (float &x : a)
        x = dist(rng);
      for (float &x : b)
        x = dist(rng);
      // B[l][j] at l * bRow + j * bCol.
      int64_t bRow = transposed ? 1 : n, bCol = transposed ? k : 1;
      std::vector<float> scratch(cuvil_matmul_scratch_floats(n, k));
      for (bool packed : {true, false}) {
        std::vector<float> c(batch * m * n, NAN);
        cuvil_matmul_f32(nullptr, packed ? scratch.data() : nullptr, batch, m,
                         n, k, a.data(), m * k, k, 1, b.data(), k * n, bRow,
                         bCol, c.data(), nullptr);
        for (int64_t i = 0; i < batch; ++i)
          for (int64_t r = 0; r < m; ++r)
            for (int64_t j = 0; j < n; ++j) {
              double want = 0;
              for (int64_t l = 0; l < k; ++l)
                want += double(a[(i * m + r) * k + l]) *
                        b[i * k * n + l * bRow + j * bCol];
              ASSERT_NEAR(c[(i * m + r) * n + j], want, 1e-5 * k)
                  << "n=" << n << " transposed=" << transposed
                  << " packed=" << packed << " at (" << i << ", " << r << ", "
                  << j << ")";
            }
      }
    }
  }
}

} // namespace
