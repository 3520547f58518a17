//===- ConvertProductsToBf16.cpp - linear layers on bfloat16 values -------===//
//
// bfloat16 as a precision option (quantize=BF16): the products, where the
// time goes, read bfloat16 activations and weights, and sum in float32
// (`acc_type = f32`); everything else stays float32. The weights are
// stored in bfloat16 (half the bytes a batch-1 layer streams), rounded to
// nearest even once, at compile time; the activation is cast before each
// product. An ungrouped convolution by constant weights likewise: its
// input cast, its OIHW weights stored in bfloat16, its float32 bias kept
// in the convolution (summed in float32, `acc_type = f32`), so that its
// epilogue still fuses. Layers with no such form (grouped and depthwise
// convolutions among them: a depthwise one is bound by bytes, and half of
// its activation's bytes would not pay for the casts) keep float32, with a
// warning.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/ConstantUtil.h"
#include "cuvil/passes/HalfPrecision.h"
#include "cuvil/passes/LinearLayers.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace cuvil {
#define GEN_PASS_DEF_CUVILCONVERTPRODUCTSTOBF16
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

struct ConvertProductsToBf16
    : cuvil::impl::CuvilConvertProductsToBf16Base<ConvertProductsToBf16> {
  using CuvilConvertProductsToBf16Base::CuvilConvertProductsToBf16Base;

  void runOnOperation() override {
    auto whyNot = [](Operation *op) {
      auto conv = dyn_cast<l1::Conv2dOp>(op);
      return conv ? cuvil::whyNotHalfConv(
                        conv, Builder(op->getContext()).getBF16Type(),
                        /*staticImage=*/false)
                  : cuvil::whyNotConstantLinear(op);
    };
    auto convertOne = [&](Operation *op) {
      auto conv = dyn_cast<l1::Conv2dOp>(op);
      if (failed(conv ? convertConv(conv) : convert(op)))
        return failure();
      cuvil::addStatistic(getOperation(), *this, numConverted, "converted");
      return success();
    };
    if (failed(cuvil::convertProducts(getOperation(), keepFp32, whyNot,
                                      convertOne)))
      signalPassFailure();
  }

  LogicalResult convertConv(l1::Conv2dOp conv) {
    OpBuilder builder(conv);
    Location loc = conv.getLoc();
    FloatType bf16 = builder.getBF16Type();
    FailureOr<std::vector<float>> weights =
        cuvil::getF32Constant(conv.getWeight());
    if (failed(weights))
      return conv.emitOpError("has weights that cannot be read");
    auto weightType = cast<RankedTensorType>(conv.getWeight().getType());
    cuvil::HalfOperands half = cuvil::castToHalf(
        builder, loc, conv.getInput(), *weights, weightType.getShape(), bf16);
    auto converted = l1::Conv2dOp::create(
        builder, loc, half.activation, half.weights, conv.getBias(), conv.getStridesAttr(),
        conv.getPaddingAttr(), conv.getDilationsAttr(), conv.getGroupsAttr(),
        TypeAttr::get(builder.getF32Type()));
    if (converted.getType() != conv.getType())
      return conv.emitOpError("in bfloat16 gives ")
             << converted.getType() << " instead of " << conv.getType();
    conv.replaceAllUsesWith(converted.getResult());
    conv.erase();
    return success();
  }

  LogicalResult convert(Operation *op) {
    cuvil::LinearLayer layer = cuvil::getLinearLayer(op);
    OpBuilder builder(op);
    Location loc = op->getLoc();
    FloatType bf16 = builder.getBF16Type();
    cuvil::HalfOperands half = cuvil::castToHalf(
        builder, loc, layer.activation, layer.weights, {layer.k, layer.n}, bf16);
    Value y = l1::MatmulOp::create(builder, loc, half.activation, half.weights,
                                   TypeAttr::get(builder.getF32Type()));
    if (layer.bias)
      y = l1::AddOp::create(builder, loc, y, layer.bias);
    if (y.getType() != op->getResult(0).getType())
      return op->emitOpError("in bfloat16 gives ")
             << y.getType() << " instead of " << op->getResult(0).getType();
    op->getResult(0).replaceAllUsesWith(y);
    op->erase();
    return success();
  }
};

} // namespace
