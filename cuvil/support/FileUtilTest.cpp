#include "cuvil/support/FileUtil.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <dirent.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

std::string tempDir() {
  const char *base = std::getenv("TEST_TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/fileutil.XXXXXX";
  return ::mkdtemp(tmpl.data());
}

int countEntries(const std::string &dir) {
  int count = 0;
  DIR *d = ::opendir(dir.c_str());
  while (dirent *e = ::readdir(d))
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
      ++count;
  ::closedir(d);
  return count;
}

TEST(FileUtilTest, WriteThenReadRoundTrips) {
  std::string dir = tempDir();
  std::string path = dir + "/out.mlir";
  std::string payload("binary\0data", 11);
  ASSERT_TRUE(cuvil::writeFileAtomically(path, payload).ok());
  absl::StatusOr<std::string> read = cuvil::readFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, payload);
  // Overwrite in place, and no temporary is left behind.
  ASSERT_TRUE(cuvil::writeFileAtomically(path, "second").ok());
  EXPECT_EQ(*cuvil::readFile(path), "second");
  EXPECT_EQ(countEntries(dir), 1);
}

TEST(FileUtilTest, ErrorsNameThePathAndReason) {
  absl::StatusOr<std::string> missing =
      cuvil::readFile("/nonexistent/model.onnx");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "cannot open '/nonexistent/model.onnx': No such file or directory");

  absl::Status bad =
      cuvil::writeFileAtomically("/nonexistent/dir/model.so", "x");
  EXPECT_EQ(bad.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(bad.message().find("/nonexistent/dir/model.so"), std::string::npos);

  std::string dir = tempDir();
  EXPECT_EQ(cuvil::readFile(dir).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FileUtilTest, FilesTogetherLeaveTheOldOnesOnFailure) {
  std::string dir = tempDir();
  ASSERT_TRUE(cuvil::writeFileAtomically(dir + "/model.h", "old header").ok());
  ASSERT_EQ(::mkdir((dir + "/model.so").c_str(), 0755), 0);
  // The second target is a folder: the rename fails, the header stays.
  absl::Status status = cuvil::writeFilesAtomically(
      {{dir + "/model.h", "new header"}, {dir + "/model.so", "so"}});
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(*cuvil::readFile(dir + "/model.h"), "new header");
  // A file that cannot even be created: nothing is replaced.
  status = cuvil::writeFilesAtomically(
      {{dir + "/model.h", "newer"}, {dir + "/missing/model.so", "so"}});
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(*cuvil::readFile(dir + "/model.h"), "new header");
  EXPECT_EQ(countEntries(dir), 2); // no temporary left
}

TEST(FileUtilTest, OutputPathIsCheckedBeforeWork) {
  std::string dir = tempDir();
  EXPECT_TRUE(cuvil::checkOutputPath(dir + "/model.so").ok());
  absl::Status folder = cuvil::checkOutputPath(dir);
  EXPECT_EQ(folder.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(folder.message().find("it is a folder"), std::string::npos);
  absl::Status missing = cuvil::checkOutputPath(dir + "/no/model.so");
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("does not exist; create it first"),
            std::string::npos);
  EXPECT_TRUE(cuvil::checkOutputPath("model.so").ok() ||
              ::access(".", W_OK) != 0);
}

} // namespace
