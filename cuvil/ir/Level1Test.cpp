// Builds level1 programs the way importers do, with no result types given,
// and checks that inference fills in every intermediate type and that the
// result verifies; and that a bad signature fails with the op and location.

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Registration.h"
#include "cuvil/support/Diagnostics.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

#include "gtest/gtest.h"

#include <vector>

namespace {

using namespace mlir;
using namespace cuvil::l1;

class Level1Test : public ::testing::Test {
protected:
  Level1Test() {
    DialectRegistry registry;
    cuvil::registerCuvilDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// A func with `inputs` and a builder at its entry.
  func::FuncOp makeFunc(ArrayRef<Type> inputs) {
    module = ModuleOp::create(UnknownLoc::get(&context));
    OpBuilder builder(module->getBodyRegion());
    auto func = func::FuncOp::create(builder, UnknownLoc::get(&context), "main",
                                     builder.getFunctionType(inputs, {}));
    func.addEntryBlock();
    return func;
  }

  /// A weight as a dense constant of `shape` filled with `value`.
  Value weight(OpBuilder &b, ArrayRef<int64_t> shape, float value) {
    auto type = RankedTensorType::get(shape, b.getF32Type());
    return ConstantOp::create(b, b.getUnknownLoc(),
                              DenseElementsAttr::get(type, value));
  }

  std::string str(Type type) {
    std::string s;
    llvm::raw_string_ostream os(s);
    type.print(os);
    return s;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(Level1Test, QuickStartClassifierInfersAndVerifies) {
  // softmax(x @ eye(10) * 0.1, dim=1) with x: 1x10.
  auto f32 = Float32Type::get(&context);
  func::FuncOp func = makeFunc({RankedTensorType::get({1, 10}, f32)});
  OpBuilder b = OpBuilder::atBlockBegin(&func.front());
  Location loc = b.getUnknownLoc();
  std::vector<float> eye(100, 0.0f);
  for (int i = 0; i < 10; ++i)
    eye[i * 11] = 1.0f;
  Value identity = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get({10, 10}, f32),
                             ArrayRef<float>(eye)));
  Value scale = ConstantOp::create(
      b, loc, DenseElementsAttr::get(RankedTensorType::get({}, f32), 0.1f));
  Value mm = MatmulOp::create(b, loc, func.getArgument(0), identity, TypeAttr());
  Value scaled = MulOp::create(b, loc, mm, scale);
  Value probs = SoftmaxOp::create(b, loc, scaled, /*axis=*/1);
  func::ReturnOp::create(b, loc, probs);
  func.setType(b.getFunctionType(func.getArgumentTypes(), {probs.getType()}));

  EXPECT_EQ(str(mm.getType()), "tensor<1x10xf32>");
  EXPECT_EQ(str(scaled.getType()), "tensor<1x10xf32>");
  EXPECT_EQ(str(probs.getType()), "tensor<1x10xf32>");
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(Level1Test, ResNetBasicBlocksInferAndVerify) {
  auto f32 = Float32Type::get(&context);
  const int64_t dyn = ShapedType::kDynamic;
  func::FuncOp func = makeFunc({RankedTensorType::get({dyn, 64, 56, 56}, f32)});
  OpBuilder b = OpBuilder::atBlockBegin(&func.front());
  Location loc = b.getUnknownLoc();

  auto convBn = [&](Value x, int64_t inC, int64_t outC, int64_t k,
                    int64_t stride) -> Value {
    int64_t pad = k / 2;
    Value conv =
        Conv2dOp::create(b, loc, x, weight(b, {outC, inC, k, k}, 0.01f),
                         /*bias=*/Value(), ArrayRef<int64_t>{stride, stride},
                         ArrayRef<int64_t>{pad, pad, pad, pad},
                         /*dilations=*/ArrayRef<int64_t>{1, 1}, /*groups=*/1,
                         /*acc_type=*/TypeAttr());
    Value c = weight(b, {outC}, 1.0f);
    return BatchNormOp::create(b, loc, conv, c, c, c, c,
                               b.getF64FloatAttr(1e-5));
  };

  // Block 1: identity shortcut.
  Value x = func.getArgument(0);
  Value y = ReluOp::create(b, loc, convBn(x, 64, 64, 3, 1));
  y = convBn(y, 64, 64, 3, 1);
  Value block1 = ReluOp::create(b, loc, AddOp::create(b, loc, y, x));
  // Block 2: stride 2 with a 1x1 projection shortcut, 64 -> 128 channels.
  Value z = ReluOp::create(b, loc, convBn(block1, 64, 128, 3, 2));
  z = convBn(z, 128, 128, 3, 1);
  Value shortcut = convBn(block1, 64, 128, 1, 2);
  Value block2 = ReluOp::create(b, loc, AddOp::create(b, loc, z, shortcut));
  func::ReturnOp::create(b, loc, block2);
  func.setType(b.getFunctionType(func.getArgumentTypes(), {block2.getType()}));

  EXPECT_EQ(str(block1.getType()), "tensor<?x64x56x56xf32>");
  EXPECT_EQ(str(shortcut.getType()), "tensor<?x128x28x28xf32>");
  EXPECT_EQ(str(block2.getType()), "tensor<?x128x28x28xf32>");
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(Level1Test, BadSignatureFailsWithOpAndLocation) {
  // The quick-start function given a (1, 12) input: x @ eye(10) cannot work.
  auto f32 = Float32Type::get(&context);
  func::FuncOp func = makeFunc({RankedTensorType::get({1, 12}, f32)});
  OpBuilder b = OpBuilder::atBlockBegin(&func.front());
  Value identity = weight(b, {10, 10}, 1.0f);
  Location loc = NameLoc::get(StringAttr::get(&context, "aten::matmul"),
                              FileLineColLoc::get(&context, "model.py", 7, 12));

  cuvil::StatusDiagnosticHandler handler(&context);
  SmallVector<Type> types;
  SmallVector<Value> operands = {func.getArgument(0), identity};
  MatmulOp::Adaptor adaptor(operands);
  EXPECT_TRUE(
      failed(MatmulOp::inferReturnTypes(&context, loc, adaptor, types)));
  absl::Status status = handler.consumeStatus();
  EXPECT_EQ(
      status.message(),
      "'aten::matmul' (model.py:7:12): error: 'cuvil.matmul' op "
      "contracting dimensions differ: lhs tensor<1x12xf32> has 12 columns "
      "but rhs tensor<10x10xf32> has 10 rows");
}

} // namespace
