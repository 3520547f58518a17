//===- FoldBatchNorm.cpp - batch norm into the preceding convolution ------===//
//
// Inference batch norm is a per-channel affine map, so after a convolution
// with constant weights it folds into them:
//   s = scale / sqrt(variance + epsilon)
//   W'[o] = W[o] * s[o],   b'[o] = (b[o] - mean[o]) * s[o] + bias[o]
// computed in double and rounded once to f32. The convolution must be the
// batch norm's only producer use; everything must be an f32 constant.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/ConstantUtil.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <cmath>
#include <cstring>

namespace cuvil {
#define GEN_PASS_DEF_CUVILFOLDBATCHNORM
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {


struct FoldBatchNorm : cuvil::impl::CuvilFoldBatchNormBase<FoldBatchNorm> {
  void runOnOperation() override {
    SmallVector<l1::BatchNormOp> norms;
    getOperation().walk([&](l1::BatchNormOp bn) { norms.push_back(bn); });
    for (l1::BatchNormOp bn : norms)
      if (succeeded(fold(bn)))
        cuvil::addStatistic(getOperation(), *this, numFolded, "folded");
  }

  LogicalResult fold(l1::BatchNormOp bn) {
    auto conv = bn.getInput().getDefiningOp<l1::Conv2dOp>();
    if (!conv || !conv.getResult().hasOneUse())
      return failure();
    auto weightType = cast<RankedTensorType>(conv.getWeight().getType());
    FailureOr<std::vector<float>> weight =
        cuvil::getF32Constant(conv.getWeight());
    FailureOr<std::vector<float>> scale = cuvil::getF32Constant(bn.getScale());
    FailureOr<std::vector<float>> shift = cuvil::getF32Constant(bn.getBias());
    FailureOr<std::vector<float>> mean = cuvil::getF32Constant(bn.getMean());
    FailureOr<std::vector<float>> variance =
        cuvil::getF32Constant(bn.getVariance());
    if (failed(weight) || failed(scale) || failed(shift) || failed(mean) ||
        failed(variance))
      return failure();
    int64_t channels = weightType.getDimSize(0);
    for (const std::vector<float> *v : {&*scale, &*shift, &*mean, &*variance})
      if (static_cast<int64_t>(v->size()) != channels)
        return failure();
    std::vector<float> bias(channels, 0.0f);
    if (Value b = conv.getBias()) {
      FailureOr<std::vector<float>> values = cuvil::getF32Constant(b);
      if (failed(values) || static_cast<int64_t>(values->size()) != channels)
        return failure();
      bias = *values;
    }

    int64_t perChannel = weight->size() / channels;
    double epsilon = bn.getEpsilon().convertToDouble();
    for (int64_t o = 0; o < channels; ++o) {
      double s = (*scale)[o] / std::sqrt((double)(*variance)[o] + epsilon);
      for (int64_t i = 0; i < perChannel; ++i) {
        float &w = (*weight)[o * perChannel + i];
        w = static_cast<float>(w * s);
      }
      bias[o] =
          static_cast<float>((bias[o] - (double)(*mean)[o]) * s + (*shift)[o]);
    }

    OpBuilder builder(conv);
    Location loc = bn.getLoc();
    Value newWeight =
        cuvil::createResourceConstant(builder, loc, weightType,
                                      "conv_weight_bn_folded",
                                      cuvil::toBytes(*weight));
    Value newBias = cuvil::createResourceConstant(
        builder, loc,
        RankedTensorType::get({channels}, weightType.getElementType()),
        "conv_bias_bn_folded", cuvil::toBytes(bias));
    conv.getWeightMutable().assign(newWeight);
    if (conv.getBias())
      conv.getBiasMutable().assign(newBias);
    else
      conv.getBiasMutable().append(newBias);
    // The convolution now computes the batch norm's result; it keeps both
    // locations for diagnostics.
    conv->setLoc(builder.getFusedLoc({conv.getLoc(), bn.getLoc()}));
    bn.getResult().replaceAllUsesWith(conv.getResult());
    bn.erase();
    return success();
  }
};

} // namespace
