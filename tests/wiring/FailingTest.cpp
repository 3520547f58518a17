// Deliberately failing (tagged manual): tests/test_wiring.py runs it through
// scripts/test to show that a failing gtest turns the run red.
#include "gtest/gtest.h"

TEST(WiringTest, DeliberatelyFails) {
  EXPECT_EQ(2 + 2, 5) << "deliberate failure from tests/wiring";
}
