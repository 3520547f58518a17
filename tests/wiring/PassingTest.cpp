#include "gtest/gtest.h"

TEST(WiringTest, GoogletestRunsUnderBazel) { EXPECT_EQ(1 + 1, 2); }
