#include "cuvil/support/ElementsBytes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "gtest/gtest.h"

#include <cstring>

namespace {

TEST(ElementsBytesTest, DenseSplatBoolAndResource) {
  mlir::MLIRContext context;
  mlir::Builder b(&context);
  auto f32x3 = mlir::RankedTensorType::get({3}, b.getF32Type());

  auto dense = mlir::DenseElementsAttr::get(f32x3, {1.0f, 2.0f, 3.0f});
  absl::StatusOr<std::string> bytes = cuvil::getElementsBytes(dense);
  ASSERT_TRUE(bytes.ok());
  float values[3];
  ASSERT_EQ(bytes->size(), sizeof(values));
  std::memcpy(values, bytes->data(), sizeof(values));
  EXPECT_EQ(values[2], 3.0f);

  auto splat = mlir::DenseElementsAttr::get(f32x3, 0.5f);
  bytes = cuvil::getElementsBytes(splat);
  ASSERT_TRUE(bytes.ok());
  ASSERT_EQ(bytes->size(), 12u);
  std::memcpy(values, bytes->data(), sizeof(values));
  EXPECT_EQ(values[0], 0.5f);
  EXPECT_EQ(values[2], 0.5f);

  auto bools = mlir::DenseElementsAttr::get(
      mlir::RankedTensorType::get({3}, b.getI1Type()),
      llvm::ArrayRef<bool>{true, false, true});
  bytes = cuvil::getElementsBytes(bools);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, std::string("\x01\x00\x01", 3));

  float blobData[3] = {4.0f, 5.0f, 6.0f};
  auto resource = mlir::DenseResourceElementsAttr::get(
      f32x3, "w",
      mlir::HeapAsmResourceBlob::allocateAndCopyWithAlign(
          llvm::ArrayRef<char>(reinterpret_cast<char *>(blobData),
                               sizeof(blobData)),
          64));
  bytes = cuvil::getElementsBytes(resource);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes,
            std::string(reinterpret_cast<char *>(blobData), sizeof(blobData)));

  EXPECT_FALSE(cuvil::getElementsBytes(b.getI64IntegerAttr(1)).ok());
}

// Half-precision constants round to nearest even: 1 + 2^-8 is halfway
// between two bfloat16 values and goes to the even one (1.0), 1 + 3 * 2^-8
// up to 1 + 2^-6; float16 keeps 1 + 2^-8 exactly.
TEST(ElementsBytesTest, HalfBitsRoundToNearestEven) {
  mlir::MLIRContext context;
  mlir::Builder b(&context);
  EXPECT_EQ(cuvil::toHalfBits(1.00390625, b.getBF16Type()), 0x3F80);
  EXPECT_EQ(cuvil::toHalfBits(1.01171875, b.getBF16Type()), 0x3F82);
  EXPECT_EQ(cuvil::toHalfBits(-2.0, b.getBF16Type()), 0xC000);
  EXPECT_EQ(cuvil::toHalfBits(1.00390625, b.getF16Type()), 0x3C04);
}

} // namespace

