//===- ModelLibraryTest.cpp - reading a model's metadata ------------------===//

#include "cuvil/serving/ModelLibrary.h"

#include "gtest/gtest.h"

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
  EXPECT_EQ(signature->inputs[1].datatype, DataType::kInt64);
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

TEST(ModelLibraryTest, LoadErrorsExplain) {
  absl::StatusOr<std::shared_ptr<ModelLibrary>> missing = ModelLibrary::load("/nonexistent.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

} // namespace
} // namespace cuvil::serving
