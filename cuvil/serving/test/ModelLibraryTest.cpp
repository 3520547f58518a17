//===- ModelLibraryTest.cpp - reading a model's metadata ------------------===//

#include "cuvil/serving/ModelLibrary.h"

#include "cuvil/abi/Sha256.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace cuvil::serving {
namespace {

TEST(ModelLibraryTest, ParsesTheSignature) {
  absl::StatusOr<ModelSignature> signature = parseSignature(
      R"({"abi_version": 1, "inputs": [{"name": "x", "dtype": "float32", "shape": [-1, 3, 4]},
                                        {"name": "i", "dtype": "int64", "shape": [-1]}],
          "outputs": [{"name": "y", "dtype": "bool", "shape": [-1, 2]}], "max_batch": 8})");
  ASSERT_TRUE(signature.ok()) << signature.status();
  EXPECT_TRUE(signature->dynamicBatch);
  EXPECT_EQ(signature->maxBatch, 8);
  EXPECT_EQ(signature->inputs[1].datatype, DataType::kINT64);
  EXPECT_EQ(signature->inputRowBytes, (std::vector<size_t>{48, 8}));
  EXPECT_EQ(signature->outputRowBytes, (std::vector<size_t>{2}));
}

TEST(ModelLibraryTest, StaticModelsHaveNoBatch) {
  absl::StatusOr<ModelSignature> signature = parseSignature(
      R"({"abi_version": 1, "inputs": [{"name": "x", "dtype": "float64", "shape": [2, 3]}],
          "outputs": [{"name": "y", "dtype": "float64", "shape": [2, 3]}], "max_batch": 1})");
  ASSERT_TRUE(signature.ok());
  EXPECT_FALSE(signature->dynamicBatch);
  EXPECT_EQ(signature->inputRowBytes, (std::vector<size_t>{48}));
}

TEST(ModelLibraryTest, RejectsWhatItCannotServe) {
  const std::pair<const char *, const char *> cases[] = {
      {"nope", "not JSON"},
      {R"({"abi_version": 3, "inputs": [], "outputs": []})", "C ABI version 3"},
      {R"({"abi_version": 1, "inputs": [{"name": "x", "dtype": "float16", "shape": [1]}],
           "outputs": []})",
       "cannot serve"},
      {R"({"abi_version": 1, "inputs": [{"name": "x", "dtype": "float32", "shape": [1, -1]}],
           "outputs": []})",
       "dynamic dimension other than the batch"},
      {R"({"abi_version": 1, "inputs": [{"name": "x", "dtype": "float32"}], "outputs": []})",
       "lacks name, dtype or shape"},
  };
  for (const auto &[json, message] : cases) {
    absl::StatusOr<ModelSignature> signature = parseSignature(json);
    ASSERT_FALSE(signature.ok()) << json;
    EXPECT_NE(signature.status().message().find(message), absl::string_view::npos)
        << signature.status().message();
  }
}

TEST(ModelLibraryTest, ReadsSizesAs64BitValues) {
  for (const char *maxBatch : {"2147483647", "2147483648", "9223372036854775807"}) {
    absl::StatusOr<ModelSignature> signature = parseSignature(absl::StrCat(
        R"({"abi_version": 1, "inputs": [{"name": "x", "dtype": "float32", "shape": [-1, 4]}],
            "outputs": [{"name": "y", "dtype": "float32", "shape": [-1, 4]}], "max_batch": )",
        maxBatch, "}"));
    ASSERT_TRUE(signature.ok()) << signature.status();
    EXPECT_EQ(absl::StrCat(signature->maxBatch), maxBatch);
  }
  const std::pair<const char *, const char *> cases[] = {
      {R"({"abi_version": 1, "inputs": [{"name": "x", "dtype": "float32", "shape": [-1]}],
           "outputs": [], "max_batch": 18446744073709551615})",
       "max_batch is 18446744073709551615, not an integer in 0..2^63-1"},
      {R"({"abi_version": 1, "inputs": [{"name": "x", "dtype": "float32", "shape": [-1]}],
           "outputs": [], "max_batch": -3})",
       "max_batch is -3"},
      {R"({"abi_version": 1, "inputs": [{"name": "x", "dtype": "float32", "shape": [-5, 2]}],
           "outputs": []})",
       "a dimension of 'x' is -5"},
      {R"({"abi_version": 1, "inputs": [{"name": "x", "dtype": "float64",
           "shape": [-1, 4294967296, 4294967296]}], "outputs": []})",
       "tensor 'x' of shape [-1, 4294967296, 4294967296] is too large"},
  };
  for (const auto &[json, message] : cases) {
    absl::StatusOr<ModelSignature> signature = parseSignature(json);
    ASSERT_FALSE(signature.ok()) << json;
    EXPECT_NE(signature.status().message().find(message), absl::string_view::npos)
        << signature.status().message();
  }
}

std::string tmpDir() {
  const char *dir = std::getenv("TEST_TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void writeAll(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

/// A stand-in model whose constructor creates `marker` when it is loaded.
std::string buildModel(const std::string &name, const std::string &marker, bool note,
                       const char *sectionMetadata) {
  std::string metadata = R"({\"abi_version\": 1, \"inputs\": [{\"name\": \"x\", )"
                         R"(\"dtype\": \"float32\", \"shape\": [1]}], \"outputs\": []})";
  std::string c = absl::StrCat(
      "#include <stdio.h>\n#include <stdint.h>\n",
      "__attribute__((constructor)) static void ran(void) { FILE *f = fopen(\"", marker,
      "\", \"w\"); if (f) fclose(f); }\n",
      "__attribute__((section(\".cuvil.metadata\"), used)) static const char section[] = \"",
      sectionMetadata ? sectionMetadata : metadata, "\";\n",
      "static const char metadata[] = \"", metadata, "\";\n",
      "const char *cuvil_model_metadata(void) { return metadata; }\n",
      "const char *cuvil_status_message(int s) { return \"stub\"; }\n",
      "int cuvil_model_num_inputs(void) { return 1; }\n",
      "int cuvil_model_num_outputs(void) { return 0; }\n",
      "int cuvil_model_workspace_size(void) { return 0; }\n",
      "int cuvil_model_run(void) { return 0; }\n",
      "int cuvil_context_create(int n, void **c) { *c = (void *)1; return 0; }\n",
      "int cuvil_context_run(void *c, int64_t b, const void *const *i, void *const *o) "
      "{ return 0; }\n",
      "const char *cuvil_context_error(const void *c) { return \"\"; }\n",
      "void cuvil_context_destroy(void *c) {}\n");
  if (note)
    c += "__asm__(\".pushsection .note.cuvil,\\\"a\\\",%note\\n.balign 4\\n.long 6\\n.long 4\\n"
         ".long 1\\n.asciz \\\"Cuvil\\\"\\n.balign 4\\n.long 1\\n.popsection\\n\");\n";
  std::string base = absl::StrCat(tmpDir(), "/", name);
  writeAll(base + ".c", c);
  std::string command = absl::StrCat("cc -shared -fPIC -o ", base, ".so ", base, ".c");
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return base + ".so";
}

TEST(ModelLibraryTest, NothingRunsBeforeTheFileIsChecked) {
  std::string marker = tmpDir() + "/constructor-ran";
  std::remove(marker.c_str());
  // Refused from its bytes: the constructor never runs.
  std::string noNote = buildModel("nonote", marker, false, nullptr);
  absl::StatusOr<std::shared_ptr<ModelLibrary>> refused = ModelLibrary::load(noNote);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("has no Cuvil ABI note"), absl::string_view::npos)
      << refused.status();
  std::string good = buildModel("good", marker, true, nullptr);
  std::string bytes = readAll(good);
  std::string truncated = tmpDir() + "/truncated.so";
  for (size_t length : {size_t{0}, size_t{100}, bytes.size() / 3, bytes.size() - 1}) {
    writeAll(truncated, bytes.substr(0, length));
    absl::StatusOr<std::shared_ptr<ModelLibrary>> partial = ModelLibrary::load(truncated);
    ASSERT_FALSE(partial.ok()) << length;
    EXPECT_EQ(partial.status().code(), absl::StatusCode::kInvalidArgument);
  }
  LoadOptions wrongHash;
  wrongHash.sha256 = std::string(64, '0');
  absl::StatusOr<std::shared_ptr<ModelLibrary>> mismatch = ModelLibrary::load(good, wrongHash);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find(absl::StrCat(
                "has SHA-256 ", abi::sha256Hex(bytes), ", not the ", std::string(64, '0'),
                " its config records")),
            absl::string_view::npos)
      << mismatch.status();
  EXPECT_FALSE(std::ifstream(marker).good()) << "a refused library ran its constructor";

  // The same file, checked and hashed right: loaded, and only now it runs.
  LoadOptions rightHash;
  rightHash.sha256 = abi::sha256Hex(bytes);
  absl::StatusOr<std::shared_ptr<ModelLibrary>> loaded = ModelLibrary::load(good, rightHash);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(std::ifstream(marker).good());
  EXPECT_EQ((*loaded)->signature().inputs[0].name, "x");
}

TEST(ModelLibraryTest, TheMetadataCheckedIsTheMetadataServed) {
  std::string marker = tmpDir() + "/other-marker";
  std::string other = buildModel("othermeta", marker, true, R"({\"abi_version\": 1, \"inputs\": [], \"outputs\": []})");
  absl::StatusOr<std::shared_ptr<ModelLibrary>> library = ModelLibrary::load(other);
  ASSERT_FALSE(library.ok());
  EXPECT_NE(library.status().message().find(
                "cuvil_model_metadata() does not return its .cuvil.metadata section"),
            absl::string_view::npos)
      << library.status();
}

TEST(ModelLibraryTest, LoadErrorsExplain) {
  absl::StatusOr<std::shared_ptr<ModelLibrary>> missing = ModelLibrary::load("/nonexistent.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

} // namespace
} // namespace cuvil::serving
