//===- HoistQuantize.cpp - quantize before max pooling --------------------===//
//
// quantize(max_pool2d(x)) -> max_pool2d(quantize(x)). Quantizing is
// monotonic (round, then saturate), so it commutes with max: the pool then
// reads 8-bit values, and the quantize meets the op producing x, where
// cuvil-fuse-epilogues folds it into an int8 convolution's epilogue
// (conv, relu, quantize, max pool in ResNet's stem: no float32 tensor
// left between the two int8 layers). Padding is the storage minimum, the
// quantize of -infinity. Only a NaN differs: the float pool skips it, the
// quantized one pools its zero point.
//
// A pool whose result is also used as float (ResNet's first shortcut)
// moves all the same, its float users reading the pooled bytes
// dequantized: the value the int8 model has at that point (as in
// PyTorch's quantized ResNet, whose shortcut adds quantized tensors),
// while the 4x wider float pool and the stem's float output go.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace cuvil {
#define GEN_PASS_DEF_CUVILHOISTQUANTIZE
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

struct HoistQuantizeOverMaxPool : OpRewritePattern<l1::QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(l1::QuantizeOp quantize,
                                PatternRewriter &rewriter) const override {
    auto pool = quantize.getInput().getDefiningOp<l1::MaxPool2dOp>();
    if (!pool)
      return rewriter.notifyMatchFailure(quantize, "not of a max pool");
    // Per-axis scales do not order all stored integers alike.
    auto element = dyn_cast<quant::UniformQuantizedType>(
        quantize.getType().getElementType());
    if (!element)
      return rewriter.notifyMatchFailure(quantize, "not quantized per tensor");
    auto inputType = cast<RankedTensorType>(pool.getInput().getType());
    rewriter.setInsertionPoint(pool);
    Value quantized = l1::QuantizeOp::create(
        rewriter, quantize.getLoc(), inputType.clone(element), pool.getInput());
    IRMapping operands;
    operands.map(pool.getInput(), quantized);
    Operation *pooled = rewriter.clone(*pool, operands);
    rewriter.modifyOpInPlace(pooled, [&] {
      pooled->getResult(0).setType(quantize.getType());
    });
    rewriter.replaceOp(quantize, pooled->getResults());
    // Float users read the pooled bytes dequantized, so that the float pool
    // goes (else both pools run, one on a 4x larger tensor).
    if (llvm::any_of(pool->getUsers(), [](Operation *user) {
          return !isa<l1::QuantizeOp>(user);
        })) {
      rewriter.setInsertionPointAfter(pooled);
      Value dequantized = l1::DequantizeOp::create(rewriter, pool.getLoc(),
                                                   pooled->getResult(0));
      rewriter.replaceUsesWithIf(pool->getResult(0), dequantized,
                                 [](OpOperand &use) {
                                   return !isa<l1::QuantizeOp>(use.getOwner());
                                 });
    }
    if (pool->use_empty())
      rewriter.eraseOp(pool);
    return success();
  }
};

struct HoistQuantize : cuvil::impl::CuvilHoistQuantizeBase<HoistQuantize> {
  void runOnOperation() override {
    int64_t before = countQuantizedPools();
    RewritePatternSet patterns(&getContext());
    cuvil::populateHoistQuantizePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    int64_t hoisted = countQuantizedPools() - before;
    if (hoisted > 0)
      cuvil::addStatistic(getOperation(), *this, numHoisted, "hoisted",
                          hoisted);
  }

  int64_t countQuantizedPools() {
    int64_t count = 0;
    getOperation().walk([&](l1::MaxPool2dOp pool) {
      count += isa<quant::QuantizedType>(getElementTypeOrSelf(pool.getType()));
    });
    return count;
  }
};

} // namespace

void cuvil::populateHoistQuantizePatterns(RewritePatternSet &patterns) {
  patterns.add<HoistQuantizeOverMaxPool>(patterns.getContext());
}
