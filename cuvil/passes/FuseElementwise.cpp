//===- FuseElementwise.cpp - elementwise chains into one cuvil.map_reduce -===//
//
// Replaces each maximal group of float elementwise ops that share one
// iteration shape by a `cuvil.map_reduce` without reductions: a pure map
// whose region computes one output element from one element of each input,
// in arith/math scalar ops. ONNX's decomposed GELU (div, erf, add, mul, mul)
// or SiLU (sigmoid, mul) become one pass over memory, with no intermediate
// tensors. Splat constants become scalar constants inside the region.
//
// Grouping is greedy from the last op backwards: a producer joins its
// consumer's group when its result has the group's type and no user outside
// the group, so every intermediate value dies inside the map.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/ConstantUtil.h"
#include "cuvil/passes/FusionUtil.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>

namespace cuvil {
#define GEN_PASS_DEF_CUVILFUSEELEMENTWISE
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

/// Ops the pass knows how to compute one element of (see `scalarize`).
bool isScalarizable(Operation *op) {
  return isa<l1::AddOp, l1::SubOp, l1::MulOp, l1::DivOp, l1::PowOp, l1::MaxOp,
             l1::MinOp, l1::ReluOp, l1::ClipOp, l1::SigmoidOp, l1::TanhOp,
             l1::GeluOp, l1::SiluOp, l1::HardSwishOp, l1::HardSigmoidOp,
             l1::ExpOp, l1::LogOp, l1::SqrtOp, l1::RsqrtOp, l1::ReciprocalOp,
             l1::ErfOp, l1::NegOp, l1::AbsOp, l1::SinOp, l1::CosOp, l1::TanOp,
             l1::AsinOp, l1::AcosOp, l1::AtanOp, l1::SinhOp, l1::CoshOp,
             l1::AsinhOp, l1::AcoshOp, l1::AtanhOp, l1::CeilOp, l1::FloorOp,
             l1::RoundOp, l1::SoftplusOp, l1::SoftsignOp, l1::EluOp,
             l1::CeluOp, l1::SeluOp, l1::LeakyReluOp, l1::ThresholdedReluOp,
             l1::ShrinkOp, l1::SignOp, l1::PReluOp>(op);
}

/// The math dialect op computing one element of a level1 op that is a
/// plain function of <math.h>, or null.
Value mathFunction(OpBuilder &b, Location loc, Operation *op, Value x) {
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](l1::SinOp) { return math::SinOp::create(b, loc, x); })
      .Case([&](l1::CosOp) { return math::CosOp::create(b, loc, x); })
      .Case([&](l1::TanOp) { return math::TanOp::create(b, loc, x); })
      .Case([&](l1::AsinOp) { return math::AsinOp::create(b, loc, x); })
      .Case([&](l1::AcosOp) { return math::AcosOp::create(b, loc, x); })
      .Case([&](l1::AtanOp) { return math::AtanOp::create(b, loc, x); })
      .Case([&](l1::SinhOp) { return math::SinhOp::create(b, loc, x); })
      .Case([&](l1::CoshOp) { return math::CoshOp::create(b, loc, x); })
      .Case([&](l1::AsinhOp) { return math::AsinhOp::create(b, loc, x); })
      .Case([&](l1::AcoshOp) { return math::AcoshOp::create(b, loc, x); })
      .Case([&](l1::AtanhOp) { return math::AtanhOp::create(b, loc, x); })
      .Case([&](l1::CeilOp) { return math::CeilOp::create(b, loc, x); })
      .Case([&](l1::FloorOp) { return math::FloorOp::create(b, loc, x); })
      .Case([&](l1::RoundOp) { return math::RoundEvenOp::create(b, loc, x); })
      .Default([](Operation *) { return Value(); });
}

/// A scalarizable op at function level whose operands and result are all f32
/// or f64 tensors of one element type.
bool isFusable(Operation *op) {
  if (!isScalarizable(op) || !isa<func::FuncOp>(op->getParentOp()))
    return false;
  Type element =
      cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  if (!element.isF32() && !element.isF64())
    return false;
  return llvm::all_of(op->getOperandTypes(), [&](Type type) {
    return cast<RankedTensorType>(type).getElementType() == element;
  });
}

/// The scalar constant `c`, if `value` is an arith.constant.
bool isScalarConstant(Value value, double c) {
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  auto attr = constant ? dyn_cast<FloatAttr>(constant.getValue()) : nullptr;
  return attr && attr.getValueAsDouble() == c;
}

/// Builds the scalar computation of one element of `op` from its operands'
/// elements `x`. The formulas are those of the x86 kernels for the same ops
/// (cuvil/targets/cpu/emitter/Elementwise.cpp), so fusing changes no result.
Value scalarize(OpBuilder &b, Location loc, Operation *op, ValueRange x) {
  Type t = x[0].getType();
  auto c = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(t, v));
  };
  auto select = [&](Value cond, Value a, Value other) -> Value {
    return arith::SelectOp::create(b, loc, cond, a, other);
  };
  auto cmp = [&](arith::CmpFPredicate p, Value a, Value other) -> Value {
    return arith::CmpFOp::create(b, loc, p, a, other);
  };
  auto clamp = [&](Value v, double lo, double hi) {
    Value low = c(lo), high = c(hi);
    v = select(cmp(arith::CmpFPredicate::OLT, v, low), low, v);
    return select(cmp(arith::CmpFPredicate::OGT, v, high), high, v);
  };
  auto add = [&](Value a, Value other) -> Value {
    return arith::AddFOp::create(b, loc, a, other);
  };
  auto mul = [&](Value a, Value other) -> Value {
    return arith::MulFOp::create(b, loc, a, other);
  };
  auto div = [&](Value a, Value other) -> Value {
    return arith::DivFOp::create(b, loc, a, other);
  };
  auto neg = [&](Value a) -> Value { return arith::NegFOp::create(b, loc, a); };
  auto exp = [&](Value a) -> Value { return math::ExpOp::create(b, loc, a); };
  auto expm1 = [&](Value a) -> Value {
    return math::ExpM1Op::create(b, loc, a);
  };
  auto abs = [&](Value a) -> Value { return math::AbsFOp::create(b, loc, a); };
  using P = arith::CmpFPredicate;
  auto param = [](FloatAttr attr) { return attr.getValueAsDouble(); };
  if (Value f = mathFunction(b, loc, op, x[0]))
    return f;

  // C++ leaves the order in which one call's arguments are built to the
  // host compiler. It only orders the body's ops, not what they compute;
  // the cases whose order lit tests read op by op build in statement order.
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](l1::AddOp) { return add(x[0], x[1]); })
      .Case([&](l1::SubOp) -> Value {
        return arith::SubFOp::create(b, loc, x[0], x[1]);
      })
      .Case([&](l1::MulOp) { return mul(x[0], x[1]); })
      .Case([&](l1::DivOp) { return div(x[0], x[1]); })
      .Case([&](l1::PowOp) -> Value {
        // A constant exponent of 2 (decomposed norms) is a product.
        if (isScalarConstant(x[1], 2.0))
          return mul(x[0], x[0]);
        return math::PowFOp::create(b, loc, x[0], x[1]);
      })
      .Case([&](l1::MaxOp) -> Value {
        return arith::MaximumFOp::create(b, loc, x[0], x[1]);
      })
      .Case([&](l1::MinOp) -> Value {
        return arith::MinimumFOp::create(b, loc, x[0], x[1]);
      })
      .Case([&](l1::ReluOp) {
        Value zero = c(0);
        return select(cmp(arith::CmpFPredicate::OGT, x[0], zero), x[0], zero);
      })
      .Case([&](l1::ClipOp clip) {
        Value v = x[0];
        if (auto min = clip.getMinAttr()) {
          Value low = c(min.getValueAsDouble());
          v = select(cmp(arith::CmpFPredicate::OLT, v, low), low, v);
        }
        if (auto max = clip.getMaxAttr()) {
          Value high = c(max.getValueAsDouble());
          v = select(cmp(arith::CmpFPredicate::OGT, v, high), high, v);
        }
        return v;
      })
      .Case([&](l1::SigmoidOp) {
        Value e = exp(neg(x[0]));
        Value denominator = add(c(1), e);
        return div(c(1), denominator);
      })
      .Case([&](l1::TanhOp) -> Value {
        return math::TanhOp::create(b, loc, x[0]);
      })
      .Case([&](l1::GeluOp gelu) {
        Value half = mul(c(0.5), x[0]);
        if (gelu.getApproximate() == "tanh") {
          Value cube = mul(mul(x[0], x[0]), x[0]);
          Value sum = add(x[0], mul(c(0.044715), cube));
          Value inner = mul(c(0.7978845608028654), sum);
          return mul(half, add(c(1), math::TanhOp::create(b, loc, inner)));
        }
        Value erf =
            math::ErfOp::create(b, loc, mul(x[0], c(0.7071067811865476)));
        return mul(half, add(c(1), erf));
      })
      .Case([&](l1::SiluOp) {
        Value e = exp(neg(x[0]));
        return div(x[0], add(c(1), e));
      })
      .Case([&](l1::HardSwishOp) {
        Value six = c(6);
        return div(mul(x[0], clamp(add(x[0], c(3)), 0, 6)), six);
      })
      .Case([&](l1::HardSigmoidOp hs) {
        Value beta = c(hs.getBeta().convertToDouble());
        Value v = add(mul(c(hs.getAlpha().convertToDouble()), x[0]), beta);
        return clamp(v, 0, 1);
      })
      .Case([&](l1::ExpOp) { return exp(x[0]); })
      .Case(
          [&](l1::LogOp) -> Value { return math::LogOp::create(b, loc, x[0]); })
      .Case([&](l1::SqrtOp) -> Value {
        return math::SqrtOp::create(b, loc, x[0]);
      })
      .Case([&](l1::RsqrtOp) {
        return div(c(1), math::SqrtOp::create(b, loc, x[0]));
      })
      .Case([&](l1::ReciprocalOp) { return div(c(1), x[0]); })
      .Case(
          [&](l1::ErfOp) -> Value { return math::ErfOp::create(b, loc, x[0]); })
      .Case([&](l1::NegOp) { return neg(x[0]); })
      .Case([&](l1::AbsOp) { return abs(x[0]); })
      // The formulas of the x86 kernels (Elementwise.cpp) for these too.
      .Case([&](l1::SoftplusOp) {
        Value tail = math::Log1pOp::create(b, loc, exp(neg(abs(x[0]))));
        return add(select(cmp(P::OGT, x[0], c(0)), x[0], c(0)), tail);
      })
      .Case([&](l1::SoftsignOp) { return div(x[0], add(c(1), abs(x[0]))); })
      .Case([&](l1::EluOp elu) {
        return select(cmp(P::OGE, x[0], c(0)), x[0],
                      mul(c(param(elu.getAlphaAttr())), expm1(x[0])));
      })
      .Case([&](l1::CeluOp celu) {
        double alpha = param(celu.getAlphaAttr());
        Value negative = mul(c(alpha), expm1(mul(x[0], c(1.0 / alpha))));
        return add(select(cmp(P::OGT, x[0], c(0)), x[0], c(0)),
                   select(cmp(P::OLT, negative, c(0)), negative, c(0)));
      })
      .Case([&](l1::SeluOp selu) {
        Value inner = select(cmp(P::OGT, x[0], c(0)), x[0],
                             mul(c(param(selu.getAlphaAttr())), expm1(x[0])));
        return mul(c(param(selu.getGammaAttr())), inner);
      })
      .Case([&](l1::LeakyReluOp leaky) {
        return select(cmp(P::OGE, x[0], c(0)), x[0],
                      mul(c(param(leaky.getAlphaAttr())), x[0]));
      })
      .Case([&](l1::ThresholdedReluOp relu) {
        return select(cmp(P::OGT, x[0], c(param(relu.getAlphaAttr()))), x[0],
                      c(0));
      })
      .Case([&](l1::ShrinkOp shrink) {
        double lambd = param(shrink.getLambdAttr());
        Value bias = c(param(shrink.getBiasAttr()));
        Value above =
            select(cmp(P::OGT, x[0], c(lambd)),
                   arith::SubFOp::create(b, loc, x[0], bias), c(0));
        return select(cmp(P::OLT, x[0], c(-lambd)), add(x[0], bias), above);
      })
      .Case([&](l1::SignOp) {
        return select(cmp(P::OGT, x[0], c(0)), c(1),
                      select(cmp(P::OLT, x[0], c(0)), c(-1), c(0)));
      })
      .Case([&](l1::PReluOp) {
        return select(cmp(P::OLT, x[0], c(0)), mul(x[0], x[1]), x[0]);
      })
      .Default([](Operation *) -> Value {
        llvm_unreachable("isScalarizable and scalarize disagree");
      });
}

struct FuseElementwise
    : cuvil::impl::CuvilFuseElementwiseBase<FuseElementwise> {
  void runOnOperation() override {
    Block &body = getOperation().getBody().front();
    llvm::DenseMap<Operation *, int64_t> position;
    int64_t index = 0;
    for (Operation &op : body)
      position[&op] = index++;

    // Roots from the last op backwards, so that a root is never a producer
    // of an earlier group.
    llvm::DenseSet<Operation *> grouped;
    SmallVector<SmallVector<Operation *>> groups;
    for (Operation &op : llvm::reverse(body)) {
      if (grouped.contains(&op) || !isFusable(&op))
        continue;
      SmallVector<Operation *> group = growGroup(&op, position, grouped);
      if (group.size() >= 2)
        groups.push_back(std::move(group));
    }
    for (SmallVector<Operation *> &group : groups)
      fuse(group);
  }

  /// The group rooted at `root`, in program order. Candidates are visited
  /// latest first: every user of a candidate comes after it, so whether all
  /// of them are in the group is known when it is visited.
  SmallVector<Operation *>
  growGroup(Operation *root,
            const llvm::DenseMap<Operation *, int64_t> &position,
            llvm::DenseSet<Operation *> &grouped) {
    Type type = root->getResult(0).getType();
    llvm::SmallPtrSet<Operation *, 8> members = {root};
    std::map<int64_t, Operation *> candidates; // by position
    auto addOperands = [&](Operation *op) {
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && def->getBlock() == root->getBlock())
          candidates[position.lookup(def)] = def;
    };
    addOperands(root);
    while (!candidates.empty()) {
      auto last = std::prev(candidates.end());
      Operation *candidate = last->second;
      candidates.erase(last);
      if (grouped.contains(candidate) || !isFusable(candidate) ||
          candidate->getResult(0).getType() != type ||
          !llvm::all_of(candidate->getUsers(), [&](Operation *user) {
            return members.contains(user);
          }))
        continue;
      members.insert(candidate);
      addOperands(candidate);
    }
    SmallVector<Operation *> group(members.begin(), members.end());
    llvm::sort(group, [&](Operation *a, Operation *b) {
      return position.lookup(a) < position.lookup(b);
    });
    if (group.size() >= 2)
      grouped.insert(group.begin(), group.end());
    return group;
  }

  void fuse(ArrayRef<Operation *> group) {
    // Operands from outside the group are the map's inputs, in first-use
    // order; splat constants are scalars in the region instead.
    SmallVector<Value> inputs = cuvil::externalOperands(
        group, [](Value operand) { return cuvil::getSplatFloat(operand).has_value(); });
    if (inputs.empty())
      return; // Constants only: left to constant folding.

    Operation *root = group.back();
    OpBuilder builder(root);
    Location loc = cuvil::fusedLocation(builder, group);
    Type resultType = root->getResult(0).getType();
    auto map = l1::MapReduceOp::create(builder, loc, resultType, inputs,
                                       ArrayRef<int64_t>{}, TypedAttr(), false);
    Block *block = new Block();
    map.getMap().push_back(block);
    IRMapping mapping;
    for (Value input : inputs)
      mapping.map(input,
                  block->addArgument(
                      cast<RankedTensorType>(input.getType()).getElementType(),
                      input.getLoc()));
    builder.setInsertionPointToStart(block);
    for (Operation *op : group) {
      SmallVector<Value> scalars;
      for (Value operand : op->getOperands()) {
        if (Value mapped = mapping.lookupOrNull(operand)) {
          scalars.push_back(mapped);
          continue;
        }
        Type element =
            cast<RankedTensorType>(operand.getType()).getElementType();
        scalars.push_back(arith::ConstantOp::create(
            builder, op->getLoc(),
            FloatAttr::get(element, *cuvil::getSplatFloat(operand))));
      }
      mapping.map(op->getResult(0),
                  scalarize(builder, op->getLoc(), op, scalars));
    }
    l1::YieldOp::create(builder, loc, mapping.lookup(root->getResult(0)));

    root->getResult(0).replaceAllUsesWith(map.getResult());
    llvm::SetVector<Operation *> constants;
    for (Operation *op : group)
      for (Value operand : op->getOperands())
        if (cuvil::getSplatFloat(operand))
          constants.insert(operand.getDefiningOp());
    for (Operation *op : llvm::reverse(group)) {
      if (op != root)
        cuvil::addStatistic(
            getOperation(), *this, bytesSaved, "bytes-saved",
            cuvil::staticTensorBytes(op->getResult(0).getType()));
      op->erase();
    }
    // Splat constants now inlined as scalars, unless still used elsewhere.
    for (Operation *constant : constants)
      if (constant->use_empty())
        constant->erase();
    cuvil::addStatistic(getOperation(), *this, numMaps, "maps");
    cuvil::addStatistic(getOperation(), *this, numOpsFused, "ops-fused",
                        group.size());
  }
};

} // namespace
