//===- TargetInterfaceTest.cpp - a new target, without touching the driver ===//
//
// A registry holding only the listing target (ListingTarget.cpp) compiles a
// model through cuvil::compile: the target's device description reaches the
// IR, its level2 pass runs between the neutral lowering and memory planning,
// and its serializer receives the planned module.
//
//===----------------------------------------------------------------------===//

#include "cuvil/driver/Compiler.h"
#include "cuvil/targets/test/ListingTarget.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cuvil {
namespace {

using ::testing::HasSubstr;

// softmax(x @ W): W is a weight, the product writes an intermediate in the
// arena and the softmax writes the output.
constexpr char kModel[] = R"mlir(
func.func @model(%x: tensor<2x4xf32>) -> tensor<2x8xf32> {
  %w = cuvil.constant dense<0.25> : tensor<4x8xf32>
  %h = cuvil.matmul %x, %w : tensor<2x4xf32>, tensor<4x8xf32>
  %y = cuvil.softmax %h, axis = 1 : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
)mlir";

class TargetInterfaceTest : public ::testing::Test {
protected:
  TargetInterfaceTest() { testing::registerListingTarget(registry); }

  absl::StatusOr<Artifact> compileFor(const std::string &target,
                                      const std::string &emit) {
    CompileOptions options;
    options.inputPath = "model.mlir";
    options.inputContents = kModel;
    options.target = target;
    options.emit = emit;
    options.progress = [this](absl::string_view line) {
      progress.emplace_back(line);
    };
    return compile(options, registry);
  }

  TargetRegistry registry;
  std::vector<std::string> progress;
};

TEST_F(TargetInterfaceTest, ATargetRegisteredElsewhereCompilesAModel) {
  absl::StatusOr<Artifact> artifact = compileFor("listing", "listing");
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  ASSERT_EQ(artifact->files.size(), 1u);
  EXPECT_EQ(artifact->files[0].suffix, ".txt");
  // The planned module: the product into the arena, the softmax from there
  // into the output (argument 2: batch, x, y), both marked by the target's
  // own level2 pass.
  const std::string &listing = artifact->files[0].contents;
  EXPECT_THAT(listing, HasSubstr("arena 64 bytes\n"));
  EXPECT_THAT(listing,
              HasSubstr("matmul in:arg1 in:@model_constant_0 out:arena+0\n"));
  EXPECT_THAT(listing, HasSubstr("softmax in:arena+0 out:arg2\n"));
  EXPECT_THAT(listing, ::testing::Not(HasSubstr("unmarked")));
  EXPECT_THAT(listing, HasSubstr("model sha256:"));
  // The target's stage is counted among the driver's.
  ASSERT_FALSE(progress.empty());
  EXPECT_THAT(progress.back(), HasSubstr("[4/4] listing the calls"));
}

TEST_F(TargetInterfaceTest, ItsDeviceDescriptionIsInTheIr) {
  absl::StatusOr<Artifact> artifact =
      compileFor("listing-unknown-none", "mlir-level1");
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  EXPECT_THAT(artifact->files[0].contents,
              HasSubstr("#cuvil.target<backend = \"listing\", triple = "
                        "\"listing-unknown-none\", cpu = \"paper\""));
}

TEST_F(TargetInterfaceTest, ErrorsComeFromTheRegistryAndTheTarget) {
  absl::StatusOr<Artifact> unknown = compileFor("x86", "so");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("unsupported --target 'x86'; this build targets: "
                        "listing (listing-unknown-none)"));
  absl::StatusOr<Artifact> emit = compileFor("listing", "so");
  EXPECT_THAT(emit.status().message(),
              HasSubstr("expected one of: listing, mlir-level1, mlir-level2"));
  CompileOptions options;
  options.inputPath = "model.mlir";
  options.inputContents = kModel;
  options.target = "listing";
  options.emit = "listing";
  options.targetOptions.cpu = "skylake";
  EXPECT_THAT(compile(options, registry).status().message(),
              HasSubstr("the listing target runs on 'paper', not 'skylake'"));
  options.targetOptions.cpu = "native";
  options.targetOptions.externalWeights = true;
  EXPECT_THAT(compile(options, registry).status().message(),
              HasSubstr("has no weights to keep apart"));
}

TEST_F(TargetInterfaceTest, TheRegistryFindsTargetsByNameOrTriple) {
  ASSERT_NE(registry.lookup("listing"), nullptr);
  EXPECT_EQ(registry.lookup("listing"),
            registry.lookup("listing-unknown-none"));
  EXPECT_EQ(registry.lookup("x86"), nullptr);
  EXPECT_EQ(registry.list().size(), 1u);
}

} // namespace
} // namespace cuvil
