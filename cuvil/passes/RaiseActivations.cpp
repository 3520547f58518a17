//===- RaiseActivations.cpp - x * gate(x) into cuvil.silu / hardswish -----===//
//
// ONNX has no SiLU, and no HardSwish before opset 14: torch exports nn.SiLU
// as Mul(x, Sigmoid(x)) and nn.Hardswish at opset 13 and below as
// Mul(x, HardSigmoid(x, alpha = 1/6, beta = 1/2)). Left so, x has two
// users and the convolution producing it cannot take the activation into
// its epilogue (cuvil-fuse-epilogues): the activation then costs its own
// pass over the tensor. This pass replaces each such pair by the one op it
// spells, `cuvil.silu` or `cuvil.hardswish`, when the gate has no other
// user.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <type_traits>
#include <utility>

namespace cuvil {
#define GEN_PASS_DEF_CUVILRAISEACTIVATIONS
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

/// HardSigmoid's parameters in hard-swish: alpha 1/6 (as a float32
/// attribute carries it) and beta 1/2.
bool isHardSwishGate(l1::HardSigmoidOp gate) {
  return static_cast<float>(gate.getAlpha().convertToDouble()) ==
             static_cast<float>(1.0 / 6.0) &&
         gate.getBeta().convertToDouble() == 0.5;
}

/// mul(x, gate(x)) or mul(gate(x), x) -> raised(x), for a gate used only
/// by the product (of float operands, whose types are the product's).
template <typename GateOp, typename RaisedOp>
struct RaiseGatedProduct : OpRewritePattern<l1::MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(l1::MulOp mul,
                                PatternRewriter &rewriter) const override {
    Type type = mul.getType();
    if (!isa<FloatType>(getElementTypeOrSelf(type)) ||
        mul.getLhs().getType() != type || mul.getRhs().getType() != type)
      return failure();
    for (auto [x, g] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())}) {
      auto gate = g.template getDefiningOp<GateOp>();
      if (!gate || gate.getInput() != x || !g.hasOneUse())
        continue;
      if constexpr (std::is_same_v<GateOp, l1::HardSigmoidOp>)
        if (!isHardSwishGate(gate))
          continue;
      rewriter.replaceOpWithNewOp<RaisedOp>(mul, type, x);
      rewriter.eraseOp(gate);
      return success();
    }
    return failure();
  }
};

struct RaiseActivations
    : cuvil::impl::CuvilRaiseActivationsBase<RaiseActivations> {
  void runOnOperation() override {
    int64_t before = countRaised();
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseGatedProduct<l1::SigmoidOp, l1::SiluOp>,
                 RaiseGatedProduct<l1::HardSigmoidOp, l1::HardSwishOp>>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (int64_t raised = countRaised() - before)
      cuvil::addStatistic(getOperation(), *this, numRaised, "raised", raised);
  }

  int64_t countRaised() {
    int64_t count = 0;
    getOperation().walk(
        [&](Operation *op) { count += isa<l1::SiluOp, l1::HardSwishOp>(op); });
    return count;
  }
};

} // namespace
