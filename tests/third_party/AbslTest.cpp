#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "gtest/gtest.h"

TEST(AbslTest, DebianAbseilLinks) {
  absl::flat_hash_map<std::string, int> dims;
  for (absl::string_view part : absl::StrSplit("x=1x3x224x224", '='))
    dims[std::string(part)] = static_cast<int>(part.size());
  EXPECT_EQ(dims["x"], 1);
  absl::StatusOr<int> value = absl::NotFoundError("no");
  EXPECT_EQ(value.status().code(), absl::StatusCode::kNotFound);
  absl::Mutex mu;
  absl::MutexLock lock(&mu);
  EXPECT_EQ(absl::StrFormat("%.1f ms", absl::ToDoubleMilliseconds(
                                           absl::Microseconds(1500))),
            "1.5 ms");
}
