// cuvil_gather against numpy-style indexing (np.take(data, indices, axis)):
// any element size, int32 or int64 indices, negative ones counting from the
// end, and 1 (no crash) for an index out of range either way.
extern "C" {
#include "cuvil/targets/cpu/runtime/data/data.h"
}

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

/// np.take on bytes: data [outer, axis, inner] of `size`-byte elements.
std::vector<uint8_t> take(const std::vector<uint8_t> &data, int64_t size, int64_t outer,
                          int64_t axis, int64_t inner, const std::vector<int64_t> &indices) {
  std::vector<uint8_t> out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t index : indices) {
      int64_t a = index < 0 ? index + axis : index;
      const uint8_t *row = data.data() + ((o * axis + a) * inner) * size;
      out.insert(out.end(), row, row + inner * size);
    }
  return out;
}

TEST(GatherTest, MatchesNumpyTake) {
  const int64_t outer = 3, axis = 5, inner = 4;
  const std::vector<int64_t> indices = {4, 0, -1, 2, -5, 2};
  for (int64_t size : {1, 2, 4, 8}) {
    std::vector<uint8_t> data(outer * axis * inner * size);
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = uint8_t(i * 37 + 11);
    std::vector<uint8_t> want = take(data, size, outer, axis, inner, indices);
    std::vector<int32_t> narrow(indices.begin(), indices.end());
    for (int wide : {1, 0}) {
      std::vector<uint8_t> got(want.size(), 0xAB);
      const void *idx = wide ? static_cast<const void *>(indices.data())
                             : static_cast<const void *>(narrow.data());
      ASSERT_EQ(cuvil_gather(size, outer, axis, inner, data.data(), idx, wide,
                             int64_t(indices.size()), got.data()),
                0);
      EXPECT_EQ(got, want) << size << "-byte elements, " << (wide ? "int64" : "int32")
                           << " indices";
    }
  }
}

TEST(GatherTest, RejectsIndicesOutOfRange) {
  std::vector<float> data(2 * 3, 1.0f), out(2, 0.0f);
  for (int64_t bad : {int64_t{3}, int64_t{-4}, INT64_MAX, INT64_MIN}) {
    EXPECT_EQ(cuvil_gather(sizeof(float), 2, 3, 1, data.data(), &bad, 1, 1, out.data()), 1)
        << "index " << bad;
  }
  int32_t bad32 = -4;
  EXPECT_EQ(cuvil_gather(sizeof(float), 2, 3, 1, data.data(), &bad32, 0, 1, out.data()), 1);
}

} // namespace
