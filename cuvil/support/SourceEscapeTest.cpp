//===- SourceEscapeTest.cpp - hostile text through the C escapes ----------===//
//
// The C compiler is the reference: hostile names (comment terminators,
// trigraphs, line splices, NUL, non-UTF-8, long text) and random bytes are
// written into a C program's comments and string literals, which must
// compile under strict flags with nothing injected, and print back exactly
// the original bytes.
//
//===----------------------------------------------------------------------===//

#include "cuvil/support/SourceEscape.h"
#include "cuvil/support/FileUtil.h"

#include "gtest/gtest.h"
#include "llvm/Support/JSON.h"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace cuvil {
namespace {

std::vector<std::string> hostileTexts() {
  std::vector<std::string> texts = {
      "x */ __attribute__((constructor)) static void p(void){system(\"touch "
      "/tmp/pwned\");} /*",
      "*/",
      "/*",
      "a/",
      "//",
      "end\\",
      "line\nbreak",
      "cr\rlf",
      "quote\" and \\ back",
      "?\?/",
      "?\?=define",
      "trailing?",
      std::string("nul\0inside", 10),
      std::string("\0", 1),
      "\xff\xfe not utf-8 \xc3",
      "caf\xc3\xa9 \xe2\x82\xac",
      "%NAME% %METADATA%",
      "",
      std::string(400, 'n') + "*/",
  };
  // Random byte strings with a fixed seed: reproducible, and every byte
  // value occurs.
  std::mt19937 random(20261201);
  for (int i = 0; i < 64; ++i) {
    std::string text(random() % 300, '\0');
    for (char &c : text)
      c = static_cast<char>(random() & 0xff);
    texts.push_back(std::move(text));
  }
  std::string all;
  for (int c = 0; c < 256; ++c)
    all += static_cast<char>(c);
  texts.push_back(all);
  return texts;
}

std::string hex(const std::string &bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

/// Runs `command`; returns its standard output, or fails the test.
std::string runCommand(const std::string &command) {
  std::string output;
  FILE *pipe = ::popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << command;
  if (!pipe)
    return output;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    output.append(buffer, n);
  int status = ::pclose(pipe);
  EXPECT_EQ(status, 0) << command << "\n" << output;
  return output;
}

std::string tempDir() {
  const char *tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/escapeXXXXXX";
  EXPECT_NE(::mkdtemp(dir.data()), nullptr);
  return dir;
}

TEST(SourceEscapeTest, CompilerReadsBackEveryByteAndNothingElse) {
  std::vector<std::string> texts = hostileTexts();
  std::string program = "#include <stdio.h>\n\n";
  std::string expected;
  for (size_t i = 0; i < texts.size(); ++i) {
    // A comment that closed early would make the next line code (a syntax
    // error) or hide the definition (an undefined name in main).
    program += "/* text " + std::to_string(i) + ": '" +
               cCommentText(texts[i]) + "' */\n";
    program += "static const char text" + std::to_string(i) +
               "[] =\n    " + cStringLiteral(texts[i]) + ";\n";
    expected += hex(texts[i]) + "\n";
  }
  program += "\nint main(void) {\n  size_t i;\n";
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string name = "text" + std::to_string(i);
    program += "  for (i = 0; i + 1 < sizeof(" + name + "); ++i)\n"
               "    printf(\"%02x\", (unsigned char)" + name + "[i]);\n"
               "  printf(\"\\n\");\n";
  }
  program += "  return 0;\n}\n";

  std::string dir = tempDir();
  ASSERT_TRUE(writeFileAtomically(dir + "/names.c", program).ok());
  // Trigraphs on (C99 has them), every warning an error.
  for (const char *compiler : {"gcc", "/usr/lib/llvm-22/bin/clang"}) {
    SCOPED_TRACE(compiler);
    runCommand(std::string(compiler) +
               " -std=c99 -pedantic -trigraphs -Wall -Wextra -Werror "
               "-Wno-overlength-strings " + dir + "/names.c -o " + dir +
               "/names 2>&1");
    EXPECT_EQ(runCommand(dir + "/names"), expected);
  }
}

TEST(SourceEscapeTest, CommentTextIsPlainAndBounded) {
  EXPECT_EQ(cCommentText("layer1/conv_0 (model.py:12)"),
            "layer1/conv_0 (model.py:12)");
  EXPECT_EQ(cCommentText("x */ y"), "x \\x2a/ y");
  EXPECT_EQ(cCommentText("a/"), "a\\x2f");
  EXPECT_EQ(cCommentText(std::string("\0\n", 2)), "\\x00\\x0a");
  std::string comment = cCommentText(std::string(400, 'n'));
  EXPECT_EQ(comment, std::string(kMaxCommentText, 'n') + "...");
}

TEST(SourceEscapeTest, PrintableTextEscapesControlCharacters) {
  EXPECT_EQ(printableText("conv\x1b[2J\nerror: forged\tline caf\xc3\xa9"),
            "conv\\x1b[2J\\x0aerror: forged\tline caf\xc3\xa9");
  EXPECT_EQ(printableText(std::string("a\0b\x7f", 4)), "a\\x00b\\x7f");
}

TEST(SourceEscapeTest, JsonTextIsValidUtf8AndRoundTrips) {
  for (const std::string &text : hostileTexts()) {
    std::string value = jsonText(text);
    ASSERT_TRUE(llvm::json::isUTF8(value));
    if (llvm::json::isUTF8(text)) {
      EXPECT_EQ(value, text);
    }
    std::string printed;
    llvm::raw_string_ostream os(printed);
    os << llvm::json::Value(value);
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(printed);
    ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
    EXPECT_EQ(parsed->getAsString().value_or("<not a string>").str(), value);
  }
  EXPECT_EQ(jsonText("\xff" "a"), "\xef\xbf\xbd" "a");
}

} // namespace
} // namespace cuvil
