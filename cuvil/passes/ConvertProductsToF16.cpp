//===- ConvertProductsToF16.cpp - linear layers in float16 arithmetic -----===//
//
// float16 as a precision option (quantize=FP16): the products, where the
// time goes, compute in float16 arithmetic, their sums too (a chain of
// fused float16 multiply-adds: twice the lanes of float32 on CPUs with
// float16 arithmetic, NEON's +fullfp16); everything else stays float32.
// A linear layer's activation is cast to float16, its weights stored in
// float16 (rounded to nearest even once, at compile time), its product cast
// back to float32 and its bias added there. An ungrouped convolution by
// constant weights likewise: input cast, OIHW weights in float16, no bias
// inside (the runtime's float16 convolution has none), its result cast back
// and its bias added in float32. Grouped and depthwise convolutions (bound
// by bytes, not multiply-adds) and run-time weights keep float32, with a
// warning; so does all of it, with one warning, on a target without
// float16 arithmetic, whose products would run on the portable kernels.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilAttrs.h"
#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/ConstantUtil.h"
#include "cuvil/passes/HalfPrecision.h"
#include "cuvil/passes/LinearLayers.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace cuvil {
#define GEN_PASS_DEF_CUVILCONVERTPRODUCTSTOF16
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

struct ConvertProductsToF16
    : cuvil::impl::CuvilConvertProductsToF16Base<ConvertProductsToF16> {
  using CuvilConvertProductsToF16Base::CuvilConvertProductsToF16Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    l1::TargetAttr target = l1::TargetAttr::lookupOrDefault(func);
    if (!target.hasFeature("fullfp16")) {
      func.emitWarning("stays float32: the target (")
          << target.getBackend() << " " << target.getCpu()
          << ") has no float16 arithmetic; its float16 products would run "
             "on the portable kernels, slower than float32 (--quantize=fp16 "
             "needs an aarch64 CPU with +fullfp16, such as cortex-a55, "
             "cortex-a76 or neoverse-n1)";
      return;
    }
    auto whyNot = [](Operation *op) {
      auto conv = dyn_cast<l1::Conv2dOp>(op);
      return conv ? cuvil::whyNotHalfConv(
                        conv, Builder(op->getContext()).getF16Type(),
                        /*staticImage=*/true)
                  : cuvil::whyNotConstantLinear(op);
    };
    auto convertOne = [&](Operation *op) {
      auto conv = dyn_cast<l1::Conv2dOp>(op);
      if (failed(conv ? convertConv(conv) : convert(op)))
        return failure();
      cuvil::addStatistic(func, *this, numConverted, "converted");
      return success();
    };
    if (failed(cuvil::convertProducts(func, keepFp32, whyNot, convertOne)))
      signalPassFailure();
  }

  /// `value` (float16) back in float32, plus `bias` (or none) broadcast
  /// over the channels of an NCHW result (`channels` true) or the last
  /// dimension.
  static Value backToF32(OpBuilder &builder, Location loc, Value value,
                         Value bias, bool channels) {
    auto type = cast<RankedTensorType>(value.getType());
    Value y = l1::CastOp::create(builder, loc,
                                 type.clone(builder.getF32Type()), value);
    if (!bias)
      return y;
    if (channels) {
      int64_t c = type.getDimSize(1);
      bias = l1::ReshapeOp::create(builder, loc, bias,
                                   builder.getDenseI64ArrayAttr({c, 1, 1}));
    }
    return l1::AddOp::create(builder, loc, y, bias);
  }

  LogicalResult convertConv(l1::Conv2dOp conv) {
    OpBuilder builder(conv);
    Location loc = conv.getLoc();
    FloatType f16 = builder.getF16Type();
    FailureOr<std::vector<float>> weights =
        cuvil::getF32Constant(conv.getWeight());
    if (failed(weights))
      return conv.emitOpError("has weights that cannot be read");
    auto weightType = cast<RankedTensorType>(conv.getWeight().getType());
    cuvil::HalfOperands half = cuvil::castToHalf(
        builder, loc, conv.getInput(), *weights, weightType.getShape(), f16);
    auto converted = l1::Conv2dOp::create(
        builder, loc, half.activation, half.weights, /*bias=*/Value(), conv.getStridesAttr(),
        conv.getPaddingAttr(), conv.getDilationsAttr(), conv.getGroupsAttr(),
        /*acc_type=*/TypeAttr());
    Value y = backToF32(builder, loc, converted.getResult(), conv.getBias(),
                        /*channels=*/true);
    if (y.getType() != conv.getType())
      return conv.emitOpError("in float16 gives ")
             << y.getType() << " instead of " << conv.getType();
    conv.replaceAllUsesWith(y);
    conv.erase();
    return success();
  }

  LogicalResult convert(Operation *op) {
    cuvil::LinearLayer layer = cuvil::getLinearLayer(op);
    OpBuilder builder(op);
    Location loc = op->getLoc();
    FloatType f16 = builder.getF16Type();
    cuvil::HalfOperands half = cuvil::castToHalf(
        builder, loc, layer.activation, layer.weights, {layer.k, layer.n}, f16);
    Value product = l1::MatmulOp::create(builder, loc, half.activation,
                                         half.weights, /*acc_type=*/TypeAttr());
    Value y = backToF32(builder, loc, product, layer.bias, /*channels=*/false);
    if (y.getType() != op->getResult(0).getType())
      return op->emitOpError("in float16 gives ")
             << y.getType() << " instead of " << op->getResult(0).getType();
    op->getResult(0).replaceAllUsesWith(y);
    op->erase();
    return success();
  }
};

} // namespace
