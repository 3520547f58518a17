#include "re2/re2.h"

#include "gtest/gtest.h"

TEST(Re2Test, MatchesAndCaptures) {
  std::string model, version;
  ASSERT_TRUE(RE2::FullMatch("/v2/models/resnet/versions/3",
                             R"(/v2/models/([^/]+)/versions/(\d+))", &model,
                             &version));
  EXPECT_EQ(model, "resnet");
  EXPECT_EQ(version, "3");
  EXPECT_FALSE(RE2::FullMatch("/v2/health", R"(/v2/models/.*)"));
}
