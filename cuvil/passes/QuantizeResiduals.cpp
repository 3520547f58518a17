//===- QuantizeResiduals.cpp - int8 shortcuts read their 8-bit tensor -----===//
//
// add(c, y) -> add(c, dequantize(q)) where c is an int8 convolution's
// result used only by the add, and q = quantize(y) to 8 bits per tensor
// comes before it (the next layer's input: in ResNet and MobileNetV2 the
// block's output y is quantized for the next block's first convolution and
// added, as float32, at the end of that block). Then y's quantize is often
// its only user and joins the convolution producing y, and the add reads
// bytes: the float32 tensor between blocks, written once and read twice,
// is gone. The shortcut carries the value the int8 model has there, as in
// PyTorch's quantized ResNet.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace cuvil {
#define GEN_PASS_DEF_CUVILQUANTIZERESIDUALS
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

/// A quantize of `value` to 8 bits per tensor before `user` in its block,
/// or null.
l1::QuantizeOp eightBitQuantizeBefore(Value value, Operation *user) {
  for (Operation *op : value.getUsers()) {
    auto quantize = dyn_cast<l1::QuantizeOp>(op);
    if (!quantize || quantize->getBlock() != user->getBlock() ||
        !quantize->isBeforeInBlock(user))
      continue;
    auto type = dyn_cast<quant::UniformQuantizedType>(
        quantize.getType().getElementType());
    if (type && type.getStorageTypeIntegralWidth() == 8 &&
        type.getExpressedType().isF32())
      return quantize;
  }
  return {};
}

struct ReadShortcutQuantized : OpRewritePattern<l1::AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(l1::AddOp add,
                                PatternRewriter &rewriter) const override {
    for (unsigned i = 0; i < 2; ++i) {
      Value conv = add->getOperand(i), shortcut = add->getOperand(1 - i);
      if (!conv.getDefiningOp<l1::QuantizedConv2dOp>() || !conv.hasOneUse() ||
          conv.getType() != shortcut.getType() ||
          conv.getType() != add.getType())
        continue;
      l1::QuantizeOp quantize = eightBitQuantizeBefore(shortcut, add);
      if (!quantize)
        continue;
      rewriter.setInsertionPointAfter(quantize);
      Value bytes = l1::DequantizeOp::create(rewriter, add.getLoc(),
                                             quantize.getResult());
      rewriter.modifyOpInPlace(add, [&] { add->setOperand(1 - i, bytes); });
      return success();
    }
    return rewriter.notifyMatchFailure(add, "not an int8 shortcut");
  }
};

struct QuantizeResiduals
    : cuvil::impl::CuvilQuantizeResidualsBase<QuantizeResiduals> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ReadShortcutQuantized>(&getContext());
    int64_t before = countShortcuts();
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (int64_t rewritten = countShortcuts() - before)
      cuvil::addStatistic(getOperation(), *this, numShortcuts, "shortcuts",
                          rewritten);
  }

  /// Adds of an int8 convolution and a dequantized tensor.
  int64_t countShortcuts() {
    int64_t count = 0;
    getOperation().walk([&](l1::AddOp add) {
      count +=
          llvm::any_of(add->getOperands(),
                       [](Value v) {
                         return v.getDefiningOp<l1::DequantizeOp>() != nullptr;
                       }) &&
          llvm::any_of(add->getOperands(), [](Value v) {
            return v.getDefiningOp<l1::QuantizedConv2dOp>() != nullptr;
          });
    });
    return count;
  }
};

} // namespace
