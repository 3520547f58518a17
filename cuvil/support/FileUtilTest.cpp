#include "cuvil/support/FileUtil.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <dirent.h>
#include <string>
#include <sys/stat.h>

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

} // namespace
