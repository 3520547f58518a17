//===- BatchNormToAffine.cpp - batch norm as x * s + t --------------------===//
//
// An inference batch norm that no convolution absorbed (cuvil-fold-batch-norm:
// DenseNet's and pre-activation ResNets' norms after a concatenation or an
// addition) is a per-channel affine map. With constant statistics it becomes
//   s = scale / sqrt(variance + epsilon),   t = bias - mean * s
// (computed in double, each rounded once to f32), a cuvil.mul and a cuvil.add
// by [C, 1, ...] constants, so that cuvil-fuse-elementwise makes it one map
// with the activation after it instead of a kernel call and a second pass
// over the tensor.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/ConstantUtil.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace cuvil {
#define GEN_PASS_DEF_CUVILBATCHNORMTOAFFINE
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

struct BatchNormToAffine : OpRewritePattern<l1::BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(l1::BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(bn.getInput().getType());
    if (!type || type != bn.getResult().getType() ||
        !type.getElementType().isF32() || type.getRank() < 2 ||
        type.isDynamicDim(1))
      return rewriter.notifyMatchFailure(bn, "not a static-channel f32 tensor");
    int64_t channels = type.getDimSize(1);
    std::vector<float> params[4];
    Value operands[4] = {bn.getScale(), bn.getBias(), bn.getMean(),
                         bn.getVariance()};
    for (int i = 0; i < 4; ++i) {
      FailureOr<std::vector<float>> values = cuvil::getF32Constant(operands[i]);
      if (failed(values) || static_cast<int64_t>(values->size()) != channels)
        return rewriter.notifyMatchFailure(bn, "statistics not constant");
      params[i] = std::move(*values);
    }
    const std::vector<float> &scale = params[0], &bias = params[1],
                             &mean = params[2], &variance = params[3];
    double epsilon = bn.getEpsilon().convertToDouble();
    std::vector<float> s(channels), t(channels);
    for (int64_t c = 0; c < channels; ++c) {
      double factor =
          scale[c] / std::sqrt(static_cast<double>(variance[c]) + epsilon);
      s[c] = static_cast<float>(factor);
      t[c] =
          static_cast<float>(bias[c] - static_cast<double>(mean[c]) * factor);
    }
    // [C, 1, ...]: numpy broadcasting puts C on the input's dimension 1.
    SmallVector<int64_t> shape(type.getRank() - 1, 1);
    shape[0] = channels;
    auto paramType = RankedTensorType::get(shape, type.getElementType());
    Location loc = bn.getLoc();
    Value sv = cuvil::createResourceConstant(
        rewriter, loc, paramType, "batch_norm_scale", cuvil::toBytes(s));
    Value tv = cuvil::createResourceConstant(
        rewriter, loc, paramType, "batch_norm_shift", cuvil::toBytes(t));
    Value scaled = rewriter.create<l1::MulOp>(loc, type, bn.getInput(), sv);
    rewriter.replaceOpWithNewOp<l1::AddOp>(bn, type, scaled, tv);
    return success();
  }
};

struct BatchNormToAffinePass
    : cuvil::impl::CuvilBatchNormToAffineBase<BatchNormToAffinePass> {
  void runOnOperation() override {
    int64_t before = 0, after = 0;
    getOperation().walk([&](l1::BatchNormOp) { ++before; });
    RewritePatternSet patterns(&getContext());
    patterns.add<BatchNormToAffine>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    getOperation().walk([&](l1::BatchNormOp) { ++after; });
    if (before > after)
      cuvil::addStatistic(getOperation(), *this, numRewritten, "rewritten",
                          before - after);
  }
};

} // namespace
