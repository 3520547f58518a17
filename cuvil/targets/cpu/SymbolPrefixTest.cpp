#include "cuvil/targets/cpu/SymbolPrefix.h"

#include "gtest/gtest.h"

namespace cuvil::cpu {
namespace {

TEST(SymbolPrefixTest, AcceptsIdentifiers) {
  EXPECT_TRUE(checkSymbolPrefix("").ok());
  EXPECT_TRUE(checkSymbolPrefix("resnet").ok());
  EXPECT_TRUE(checkSymbolPrefix("Model_2").ok());
  EXPECT_TRUE(checkSymbolPrefix(std::string(64, 'a')).ok());
}

TEST(SymbolPrefixTest, RefusesWhatIsNoIdentifier) {
  for (const char *bad : {"2model", "_model", "model_", "re-snet", "a b",
                          "m\xc3\xa9", "x;int y"}) {
    absl::Status status = checkSymbolPrefix(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(status.message().find("--symbol-prefix"), std::string::npos);
  }
  EXPECT_FALSE(checkSymbolPrefix(std::string(65, 'a')).ok());
}

TEST(SymbolPrefixTest, NamesFunctions) {
  EXPECT_EQ(prefixedSymbol("cuvil_model_run", "resnet"), "resnet_model_run");
  EXPECT_EQ(prefixedSymbol("cuvil_status_message", "a"), "a_status_message");
  EXPECT_EQ(prefixedSymbol("cuvil_model_run", ""), "cuvil_model_run");
}

TEST(SymbolPrefixTest, MapsTheHeadersIdentifiersOnly) {
  const char *header =
      "#ifndef CUVIL_MODEL_H\n#define CUVIL_MODEL_H\n"
      "#define CUVIL_ABI_VERSION 1\n#define CUVIL_MODEL_NUM_INPUTS 2\n"
      "/* input 0 'cuvil_model_runner': float32 [1, 4] */\n"
      "#ifndef CUVIL_ABI_H\n#define CUVIL_ABI_H\n"
      "#ifndef CUVIL_STATUS_DEFINED\ntypedef enum cuvil_status { CUVIL_OK = 0 "
      "} cuvil_status;\n#endif\n"
      "typedef struct cuvil_context cuvil_context;\n"
      "int cuvil_context_create(int num_threads, cuvil_context **context);\n"
      "int cuvil_model_run(int64_t batch);\n#endif\n#endif\n";
  EXPECT_EQ(
      prefixHeader(header, "net2"),
      "#ifndef NET2_CUVIL_MODEL_H\n#define NET2_CUVIL_MODEL_H\n"
      "#define CUVIL_ABI_VERSION 1\n#define NET2_MODEL_NUM_INPUTS 2\n"
      "/* input 0 'cuvil_model_runner': float32 [1, 4] */\n"
      "#ifndef NET2_CUVIL_ABI_H\n#define NET2_CUVIL_ABI_H\n"
      "#ifndef CUVIL_STATUS_DEFINED\ntypedef enum cuvil_status { CUVIL_OK = 0 "
      "} cuvil_status;\n#endif\n"
      "typedef struct net2_context net2_context;\n"
      "int net2_context_create(int num_threads, net2_context **context);\n"
      "int net2_model_run(int64_t batch);\n#endif\n#endif\n");
  EXPECT_EQ(prefixHeader(header, ""), header);
}

} // namespace
} // namespace cuvil::cpu
