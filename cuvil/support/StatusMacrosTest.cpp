#include "cuvil/support/StatusMacros.h"

#include "gtest/gtest.h"

#include <memory>
#include <string>

namespace {

absl::Status failIf(bool fail) {
  return fail ? absl::InvalidArgumentError("bad") : absl::OkStatus();
}

absl::Status chain(bool fail, int &reached) {
  RETURN_IF_ERROR(failIf(fail));
  reached = 1;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<std::string>> make(bool fail) {
  if (fail)
    return absl::NotFoundError("missing");
  return std::make_unique<std::string>("value");
}

absl::StatusOr<size_t> useMoveOnly(bool fail) {
  ASSIGN_OR_RETURN(std::unique_ptr<std::string> s, make(fail));
  size_t total = s->size();
  // A second use in the same scope must not collide with the first.
  ASSIGN_OR_RETURN(s, make(false));
  return total + s->size();
}

TEST(StatusMacrosTest, ReturnIfErrorPropagatesAndContinues) {
  int reached = 0;
  absl::Status s = chain(true, reached);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "bad");
  EXPECT_EQ(reached, 0);
  EXPECT_TRUE(chain(false, reached).ok());
  EXPECT_EQ(reached, 1);
}

TEST(StatusMacrosTest, AssignOrReturnMovesValueOrPropagates) {
  absl::StatusOr<size_t> ok = useMoveOnly(false);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 10u);
  absl::StatusOr<size_t> err = useMoveOnly(true);
  EXPECT_EQ(err.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(err.status().message(), "missing");
}

} // namespace
