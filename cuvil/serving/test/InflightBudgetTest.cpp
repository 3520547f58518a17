//===- InflightBudgetTest.cpp - the server-wide byte budget ---------------===//

#include "cuvil/serving/InflightBudget.h"

#include "gtest/gtest.h"

#include <thread>
#include <vector>

namespace cuvil::serving {
namespace {

TEST(InflightBudgetTest, RefusesWhatDoesNotFitAndGivesBackOnRelease) {
  InflightBudget budget(100);
  absl::StatusOr<Reservation> a = budget.reserve(60, "a body");
  ASSERT_TRUE(a.ok());
  absl::StatusOr<Reservation> b = budget.reserve(50, "another body");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(b.status().message().find("holds 60 bytes of requests in flight and another body "
                                      "needs 50 more, above its limit of 100"),
            absl::string_view::npos)
      << b.status();
  EXPECT_EQ(budget.refused(), 1u);
  // Alone above the limit: no retry helps.
  absl::StatusOr<Reservation> huge = budget.reserve(101, "a body");
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument);
  // Growing counts what is already held.
  EXPECT_EQ(a->grow(41, "decoding").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(a->grow(40, "decoding").ok());
  EXPECT_EQ(budget.used(), 100u);
  *a = Reservation(); // released by the move
  EXPECT_EQ(budget.used(), 0u);
  {
    absl::StatusOr<Reservation> c = budget.reserve(100, "c");
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(budget.used(), 100u);
  }
  EXPECT_EQ(budget.used(), 0u);
}

TEST(InflightBudgetTest, ConcurrentReservationsNeverExceedTheLimit) {
  InflightBudget budget(1000);
  std::atomic<uint64_t> peak{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        absl::StatusOr<Reservation> held = budget.reserve(300, "r");
        if (!held.ok())
          continue;
        uint64_t used = budget.used();
        uint64_t seen = peak.load();
        while (used > seen && !peak.compare_exchange_weak(seen, used)) {
        }
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_LE(peak.load(), 1000u);
  EXPECT_EQ(budget.used(), 0u);
}

} // namespace
} // namespace cuvil::serving
