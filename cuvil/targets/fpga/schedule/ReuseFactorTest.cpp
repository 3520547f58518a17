// Valid reuse factors of dense layers, worked out by hand from the rules
// in ReuseFactor.h: the jet tagger's 16 -> 64 and 32 -> 5 layers and a
// 4 -> 3 toy, snapping, and the smallest factor a multiplier budget allows.
#include "cuvil/targets/fpga/schedule/ReuseFactor.h"

#include "gtest/gtest.h"

namespace cuvil::fpga {
namespace {

using Factors = std::vector<int64_t>;

TEST(ReuseFactorTest, ValidFactorsOfSmallLayers) {
  // 4 x 3 = 12 products: 3 leaves 4 multipliers (not a multiple of the 3
  // outputs), 6 is no multiple of the 4 inputs.
  EXPECT_EQ(validReuseFactors(4, 3), (Factors{1, 2, 4, 12}));
  // 16 x 64: every power of two up to 1024.
  EXPECT_EQ(validReuseFactors(16, 64),
            (Factors{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}));
  // 32 x 5 = 160: 5, 10 and 20 leave 32, 16 and 8 multipliers for 5
  // outputs; 32 and 160 are multiples of the inputs, 80 is not.
  EXPECT_EQ(validReuseFactors(32, 5), (Factors{1, 2, 4, 8, 16, 32, 160}));
  EXPECT_EQ(multipliersAt(32, 5, 16), 10);
  EXPECT_EQ(multipliersAt(16, 64, 1), 1024);
}

TEST(ReuseFactorTest, InvalidFactorsSnapToTheNearestValidOne) {
  struct Case {
    int64_t nIn, nOut, requested, chosen;
  };
  for (Case c : {Case{4, 3, 3, 2},      // 2 and 4 tie: the smaller
                 Case{4, 3, 6, 4},      // 4 is nearer than 12
                 Case{4, 3, 100, 12},   // beyond the products
                 Case{4, 3, 0, 1},      // below 1
                 Case{16, 64, 12, 8},   // 8 and 16 tie
                 Case{16, 64, 24, 16},  // 16 and 32 tie
                 Case{32, 5, 100, 160}, // 32 is 68 away, 160 is 60
                 Case{32, 5, 5, 4}}) {
    absl::StatusOr<ReuseChoice> choice =
        snapReuseFactor("dense", c.nIn, c.nOut, c.requested);
    ASSERT_TRUE(choice.ok()) << choice.status();
    EXPECT_EQ(choice->reuse, c.chosen)
        << c.nIn << "x" << c.nOut << " asked " << c.requested;
  }
  absl::StatusOr<ReuseChoice> kept = snapReuseFactor("fc1", 16, 64, 32);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->reuse, 32);
  EXPECT_EQ(kept->message, "");
  absl::StatusOr<ReuseChoice> snapped = snapReuseFactor("fc1", 16, 64, 12);
  ASSERT_TRUE(snapped.ok());
  EXPECT_EQ(snapped->message,
            "layer 'fc1': reuse factor 12 is not valid for 16 inputs and 64 "
            "outputs (a valid one divides the 1024 products, and is a "
            "multiple of the inputs or gives a multiple of the outputs in "
            "multipliers); using 8");
  EXPECT_FALSE(snapReuseFactor("empty", 0, 4, 1).ok());
}

TEST(ReuseFactorTest, TheSmallestFactorWithinABudget) {
  // 1024 products on 100 multipliers: 16 is the first valid factor with
  // 1024 / R <= 100 (11 to 15 are not valid).
  absl::StatusOr<int64_t> r = smallestReuseWithin("fc1", 16, 64, 100);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, 16);
  EXPECT_EQ(*smallestReuseWithin("fc1", 16, 64, 1024), 1);
  EXPECT_EQ(*smallestReuseWithin("out", 32, 5, 9), 32); // 16 would need 10
  absl::StatusOr<int64_t> none = smallestReuseWithin("fc1", 16, 64, 0);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(),
            "layer 'fc1' needs at least 1 multiplier(s) at any reuse factor; "
            "the budget has 0");
}

} // namespace
} // namespace cuvil::fpga
