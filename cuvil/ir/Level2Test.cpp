// level2 helpers the targets and memory planning rely on: blocked layouts'
// physical shapes and index maps, buffer sizes, and side effects.

#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/ir/Registration.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

namespace {

using namespace mlir;
using namespace cuvil::l2;

class Level2Test : public ::testing::Test {
protected:
  Level2Test() {
    DialectRegistry registry;
    cuvil::registerCuvilDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  LayoutAttr layout(StringRef logical, StringRef physical) {
    return LayoutAttr::get(&context, logical, physical);
  }

  std::string str(AffineMap map) {
    std::string s;
    llvm::raw_string_ostream os(s);
    map.print(os);
    return s;
  }

  MLIRContext context;
};

TEST_F(Level2Test, BlockedLayoutShapesAndMaps) {
  LayoutAttr nchw16c = layout("NCHW", "NCHW16c");
  EXPECT_FALSE(nchw16c.isPlain());
  EXPECT_EQ(nchw16c.getBlockSize(1), 16);
  EXPECT_EQ(nchw16c.getBlockSize(0), 1);
  // 20 channels pad to 2 blocks.
  EXPECT_EQ(nchw16c.getPhysicalShape({1, 20, 7, 7}),
            (SmallVector<int64_t>{1, 2, 7, 7, 16}));
  EXPECT_EQ(nchw16c.getPhysicalShape({ShapedType::kDynamic, 64, 7, 7}),
            (SmallVector<int64_t>{ShapedType::kDynamic, 4, 7, 7, 16}));
  EXPECT_EQ(str(nchw16c.getAffineMap()),
            "(d0, d1, d2, d3) -> (d0, d1 floordiv 16, d2, d3, d1 mod 16)");

  // Weights blocked on both channel dims, input channels innermost-but-one.
  LayoutAttr oihw = layout("OIHW", "OIHW8i16o");
  EXPECT_EQ(oihw.getPhysicalShape({64, 3, 3, 3}),
            (SmallVector<int64_t>{4, 1, 3, 3, 8, 16}));
  EXPECT_EQ(str(oihw.getAffineMap()),
            "(d0, d1, d2, d3) -> (d0 floordiv 16, d1 floordiv 8, d2, d3, "
            "d1 mod 8, d0 mod 16)");

  // A pure permutation.
  LayoutAttr nhwc = layout("NCHW", "NHWC");
  EXPECT_EQ(nhwc.getPhysicalShape({1, 3, 224, 224}),
            (SmallVector<int64_t>{1, 224, 224, 3}));
  EXPECT_EQ(str(nhwc.getAffineMap()), "(d0, d1, d2, d3) -> (d0, d2, d3, d1)");
  EXPECT_TRUE(layout("NC", "NC").isPlain());
  EXPECT_TRUE(layout("NC", "NC").getAffineMap().isIdentity());
}

TEST_F(Level2Test, BufferBytes) {
  auto f32 = Float32Type::get(&context);
  auto noError = [&] {
    ADD_FAILURE() << "unexpected error";
    return emitError(UnknownLoc::get(&context));
  };
  // Plain, blocked (padded) and dynamic with a bound.
  EXPECT_EQ(*getBufferBytes(MemRefType::get({2, 3}, f32), {}, noError), 24);
  auto blocked = MemRefType::get({1, 20, 4, 4}, f32, layout("NCHW", "NCHW16c"));
  EXPECT_EQ(*getBufferBytes(blocked, {}, noError), 2048);
  auto dynamic = MemRefType::get({ShapedType::kDynamic, 8}, f32);
  EXPECT_EQ(*getBufferBytes(dynamic, {16}, noError), 512);
  // Fixed point is stored in the next power-of-two byte size; i1 in a byte.
  auto q12 = FixedPointType::get(&context, 12, 6, true);
  EXPECT_EQ(q12.getStorageBits(), 16u);
  EXPECT_EQ(*getBufferBytes(MemRefType::get({10}, q12), {}, noError), 20);
  auto i1 = IntegerType::get(&context, 1);
  EXPECT_EQ(*getBufferBytes(MemRefType::get({10}, i1), {}, noError), 10);

  // Errors: no bound, overflow.
  int errors = 0;
  auto countError = [&] {
    ++errors;
    return emitError(UnknownLoc::get(&context));
  };
  context.getDiagEngine().registerHandler(
      [](Diagnostic &) { return success(); });
  EXPECT_TRUE(failed(getBufferBytes(dynamic, {}, countError)));
  int64_t big = int64_t{1} << 40;
  EXPECT_TRUE(
      failed(getBufferBytes(MemRefType::get({big, big}, f32), {}, countError)));
  EXPECT_EQ(errors, 2);
}

TEST_F(Level2Test, CopyKindsAndKernelEffects) {
  const char *source = R"mlir(
    func.func @f(%a: memref<1x16x2x2xf32>,
                 %b: memref<1x16x2x2xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>,
                 %c: memref<1x16x2x2xf32, #cuvil_l2.space<nram>>) {
      cuvil_l2.copy %a, %b : memref<1x16x2x2xf32>, memref<1x16x2x2xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
      cuvil_l2.copy %a, %c : memref<1x16x2x2xf32>, memref<1x16x2x2xf32, #cuvil_l2.space<nram>>
      cuvil_l2.ukernel_call "k" ins(%a : memref<1x16x2x2xf32>) outs(%c : memref<1x16x2x2xf32, #cuvil_l2.space<nram>>)
      return
    })mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(module);
  func::FuncOp func = *module->getOps<func::FuncOp>().begin();
  SmallVector<CopyOp> copies;
  func.walk([&](CopyOp op) { copies.push_back(op); });
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_TRUE(copies[0].isReorder());
  EXPECT_FALSE(copies[0].isTransfer());
  EXPECT_FALSE(copies[1].isReorder());
  EXPECT_TRUE(copies[1].isTransfer());

  UKernelCallOp call;
  func.walk([&](UKernelCallOp op) { call = op; });
  ASSERT_TRUE(call);
  SmallVector<MemoryEffects::EffectInstance> effects;
  call.getEffects(effects);
  // Reads the input, reads and writes the output.
  ASSERT_EQ(effects.size(), 3u);
  EXPECT_TRUE(isa<MemoryEffects::Read>(effects[0].getEffect()));
  EXPECT_EQ(effects[0].getValue(), call.getInputs()[0]);
  EXPECT_TRUE(isa<MemoryEffects::Write>(effects[2].getEffect()));
  EXPECT_EQ(effects[2].getValue(), call.getOutputs()[0]);
}

} // namespace
