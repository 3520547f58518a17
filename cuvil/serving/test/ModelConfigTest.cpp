//===- ModelConfigTest.cpp - config.json parsing --------------------------===//

#include "cuvil/serving/ModelConfig.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace cuvil::serving {
namespace {

TEST(ModelConfigTest, DefaultsBatchWithoutDelay) {
  absl::StatusOr<ModelConfig> config = parseModelConfig("{}", "c");
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(config->dynamicBatching);
  EXPECT_EQ(config->maxQueueDelayMicroseconds, 0);
  EXPECT_EQ(config->instanceCount, 1);
  EXPECT_EQ(config->versionPolicy.select({1, 2, 3}), std::vector<int64_t>{3});
}

TEST(ModelConfigTest, ParsesEveryField) {
  absl::StatusOr<ModelConfig> config = parseModelConfig(
      R"({"max_batch_size": 4, "dynamic_batching": {"max_queue_delay_microseconds": 250},
          "instance_count": 2, "threads": 3,
          "version_policy": {"specific": {"versions": [1, 3]}}})",
      "c");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->maxBatchSize, 4);
  EXPECT_EQ(config->maxQueueDelayMicroseconds, 250);
  EXPECT_EQ(config->instanceCount, 2);
  EXPECT_EQ(config->threads, 3);
  EXPECT_EQ(config->versionPolicy.select({1, 2, 3}), (std::vector<int64_t>{1, 3}));
  // toJson round-trips.
  absl::StatusOr<ModelConfig> again = parseModelConfig(config->toJson(), "c");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *config);
}

TEST(ModelConfigTest, VersionPolicies) {
  absl::StatusOr<ModelConfig> latest =
      parseModelConfig(R"({"version_policy": {"latest": {"num_versions": 2}}})", "c");
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->versionPolicy.select({1, 5, 7}), (std::vector<int64_t>{5, 7}));
  absl::StatusOr<ModelConfig> all = parseModelConfig(R"({"version_policy": {"all": {}}})", "c");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->versionPolicy.select({1, 5}), (std::vector<int64_t>{1, 5}));
  absl::StatusOr<ModelConfig> off = parseModelConfig(R"({"dynamic_batching": false})", "c");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->dynamicBatching);
}

TEST(ModelConfigTest, ErrorsNameTheSourceAndField) {
  const std::pair<const char *, const char *> cases[] = {
      {"[", "m/config.json: not valid JSON"},
      {R"({"max_batch": 2})", "unknown field 'max_batch' in the model config"},
      {R"({"instance_count": 0})", "'instance_count' is 0, outside 1..64"},
      {R"({"threads": "two"})", "'threads' must be an integer"},
      {R"({"dynamic_batching": {"delay": 1}})", "unknown field 'delay' in dynamic_batching"},
      {R"({"version_policy": {"latest": {}, "all": {}}})", "exactly one of"},
      {R"({"version_policy": {"specific": {"versions": []}}})", "non-empty 'versions'"},
  };
  for (const auto &[text, message] : cases) {
    absl::StatusOr<ModelConfig> config = parseModelConfig(text, "m/config.json");
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_NE(config.status().message().find(message), absl::string_view::npos)
        << config.status().message();
  }
}

TEST(ModelConfigTest, RecordsHashesForEveryOrEachVersion) {
  const std::string hash(64, 'a');
  absl::StatusOr<ModelConfig> every =
      parseModelConfig(absl::StrCat(R"({"sha256": ")", std::string(64, 'A'), R"("})"), "c");
  ASSERT_TRUE(every.ok()) << every.status();
  EXPECT_EQ(every->sha256For(1), hash); // lowercased, as sha256sum prints
  EXPECT_EQ(every->sha256For(7), hash);
  absl::StatusOr<ModelConfig> each = parseModelConfig(
      absl::StrCat(R"({"sha256": {"2": ")", hash, R"("}})"), "c");
  ASSERT_TRUE(each.ok()) << each.status();
  EXPECT_EQ(each->sha256For(2), hash);
  EXPECT_EQ(each->sha256For(1), std::nullopt);
  absl::StatusOr<ModelConfig> again = parseModelConfig(each->toJson(), "c");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *each);
  for (const auto &[text, message] : std::vector<std::pair<std::string, std::string>>{
           {R"({"sha256": "abc"})", "must be a SHA-256 of 64 hexadecimal digits"},
           {absl::StrCat(R"({"sha256": ")", std::string(63, 'a'), R"(g"})"), "64 hexadecimal"},
           {absl::StrCat(R"({"sha256": {"01": ")", hash, R"("}})"),
            "the keys of 'sha256' are version numbers, not '01'"},
           {R"({"sha256": 5})", "not 5"}}) {
    absl::StatusOr<ModelConfig> config = parseModelConfig(text, "c");
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_NE(config.status().message().find(message), absl::string_view::npos)
        << config.status().message();
  }
}

TEST(ModelConfigTest, VersionNumbersAreCanonicalDecimals) {
  EXPECT_EQ(parseVersionNumber("1"), 1);
  EXPECT_EQ(parseVersionNumber("120"), 120);
  EXPECT_EQ(parseVersionNumber("999999999999999999"), 999999999999999999);
  for (const char *text : {"", "0", "01", "+1", "-1", " 1", "1 ", "1.0", "0x1", "1e3",
                           "9999999999999999999", "１"})
    EXPECT_EQ(parseVersionNumber(text), std::nullopt) << text;
}

} // namespace
} // namespace cuvil::serving
