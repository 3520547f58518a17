//===- RaiseLayerNorm.cpp - decomposed layer norms into cuvil.layer_norm --===//
//
// ONNX before opset 17 has no LayerNormalization: torch exports
// nn.LayerNorm as
//
//   mean = ReduceMean(x, trailing axes, keepdims)   d = x - mean
//   var  = ReduceMean(d * d, same axes, keepdims)   (Pow(d, 2) canonicalizes
//   y    = d / Sqrt(var + eps) [* gamma] [+ beta]     to d * d)
//
// nine ops and four passes over the activations. This pass recognizes the
// pattern and replaces it by one `cuvil.layer_norm` over the trailing axes
// (gamma and beta of the normalized shape become its scale and bias), the
// single kernel that computes mean and variance in one sweep each. Every
// intermediate must be used only inside the pattern.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/ConstantUtil.h"
#include "cuvil/passes/FusionUtil.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace cuvil {
#define GEN_PASS_DEF_CUVILRAISELAYERNORM
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

/// The op defining `value` if it is an `OpTy` whose result has one use.
template <typename OpTy> OpTy singleUseDef(Value value) {
  auto op = value.getDefiningOp<OpTy>();
  return op && op->getResult(0).hasOneUse() ? op : OpTy();
}

/// The first normalized axis if `mean` reduces the trailing axes of its
/// input with keepdims, else -1.
int64_t trailingAxis(l1::ReduceMeanOp mean) {
  auto type = cast<RankedTensorType>(mean.getInput().getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> axes;
  for (int64_t a : mean.getAxes())
    axes.push_back(a < 0 ? a + rank : a);
  llvm::sort(axes);
  if (!mean.getKeepdims() || axes.empty() || axes.back() != rank - 1)
    return -1;
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1)
      return -1;
  return axes.front();
}

/// True if `value` has the normalized shape (x's dims from `axis` on), so
/// that it is a per-element scale or bias of layer_norm.
bool isNormalizedShape(Value value, RankedTensorType xType, int64_t axis) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getElementType() == xType.getElementType() &&
         type.getShape() == xType.getShape().drop_front(axis);
}

struct RaiseLayerNorm : cuvil::impl::CuvilRaiseLayerNormBase<RaiseLayerNorm> {
  void runOnOperation() override {
    SmallVector<l1::DivOp> divs;
    getOperation().walk([&](l1::DivOp div) { divs.push_back(div); });
    for (l1::DivOp div : divs)
      raise(div);
  }

  void raise(l1::DivOp div) {
    // d / sqrt(var + eps)
    auto sqrt = singleUseDef<l1::SqrtOp>(div.getRhs());
    auto addEps = sqrt ? singleUseDef<l1::AddOp>(sqrt.getInput()) : nullptr;
    if (!addEps)
      return;
    Value varValue = addEps.getLhs();
    std::optional<APFloat> eps = cuvil::getSplatFloat(addEps.getRhs());
    if (!eps) {
      varValue = addEps.getRhs();
      eps = cuvil::getSplatFloat(addEps.getLhs());
    }
    auto var = eps ? singleUseDef<l1::ReduceMeanOp>(varValue) : nullptr;
    auto square = var ? singleUseDef<l1::MulOp>(var.getInput()) : nullptr;
    Value d = div.getLhs();
    if (!square || square.getLhs() != d || square.getRhs() != d)
      return;
    // d = x - mean(x), used only by the square and the division.
    auto sub = d.getDefiningOp<l1::SubOp>();
    auto mean = sub ? singleUseDef<l1::ReduceMeanOp>(sub.getRhs()) : nullptr;
    if (!mean || mean.getInput() != sub.getLhs() ||
        !llvm::all_of(d.getUsers(), [&](Operation *user) {
          return user == square.getOperation() || user == div.getOperation();
        }))
      return;
    Value x = sub.getLhs();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t axis = trailingAxis(mean);
    if (!xType.getElementType().isF32() || axis < 0 ||
        trailingAxis(var) != axis || mean.getAxes().size() != var.getAxes().size() ||
        sub.getType() != xType || div.getType() != xType)
      return;

    // Then, optionally, * gamma and + beta of the normalized shape.
    SmallVector<Operation *> pattern = {mean, sub, square, var, addEps, sqrt,
                                        div};
    Operation *last = div;
    Value scale, bias;
    auto other = [](Operation *op, Value mine) {
      return op->getOperand(0) == mine ? op->getOperand(1) : op->getOperand(0);
    };
    if (auto mul = dyn_cast_or_null<l1::MulOp>(
            div->hasOneUse() ? *div->getUsers().begin() : nullptr);
        mul && mul.getType() == xType &&
        isNormalizedShape(other(mul, div), xType, axis)) {
      scale = other(mul, div);
      pattern.push_back(mul);
      last = mul;
    }
    if (auto add = dyn_cast_or_null<l1::AddOp>(
            last->hasOneUse() ? *last->getUsers().begin() : nullptr);
        add && add.getType() == xType &&
        isNormalizedShape(other(add, last->getResult(0)), xType, axis)) {
      bias = other(add, last->getResult(0));
      pattern.push_back(add);
      last = add;
    }

    OpBuilder builder(last);
    auto norm = l1::LayerNormOp::create(
        builder, cuvil::fusedLocation(builder, pattern), x, scale, bias,
        builder.getI64IntegerAttr(axis), builder.getF64FloatAttr(eps->convertToDouble()));
    last->getResult(0).replaceAllUsesWith(norm.getResult());
    Operation *epsConstant = addEps.getLhs() == varValue
                                 ? addEps.getRhs().getDefiningOp()
                                 : addEps.getLhs().getDefiningOp();
    for (Operation *op : llvm::reverse(pattern))
      op->erase();
    if (epsConstant->use_empty())
      epsConstant->erase();
    cuvil::addStatistic(getOperation(), *this, numRaised, "raised");
  }
};

} // namespace
