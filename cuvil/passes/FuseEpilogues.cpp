//===- FuseEpilogues.cpp - conv/gemm + residual add + activation ----------===//
//
// Forms `cuvil.fused_group kind = "epilogue"` groups: a producer (conv2d,
// or a linear layer's gemm, matmul or int8 quantized_matmul) followed by
// the elementwise ops the x86 kernels apply to each block of output they
// have just computed. Only single-use chains are fused, in the
// kernel's order (residual add, then activation), so the group computes
// exactly what the ops did. An int8 convolution's chain may end with the
// quantize of the next int8 layer's input: the group then yields 8-bit
// values (a conv + requantize + relu is one kernel). With
// `quantized-residuals`, its residual may be the dequantize of an 8-bit
// tensor, which joins the group: the kernel reads the bytes.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/FusionUtil.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace cuvil {
#define GEN_PASS_DEF_CUVILFUSEEPILOGUES
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

/// The only user of `value`, if it has exactly one use.
Operation *soleUser(Value value) {
  return value.hasOneUse() ? *value.getUsers().begin() : nullptr;
}

struct FuseEpilogues : cuvil::impl::CuvilFuseEpiloguesBase<FuseEpilogues> {
  using Base::Base;

  void runOnOperation() override {
    static constexpr llvm::StringLiteral kKnown[] = {
        "relu", "clip", "hardswish", "hardsigmoid", "sigmoid", "silu"};
    allowed.assign(activations.begin(), activations.end());
    if (allowed.empty())
      allowed = {"relu", "clip"};
    for (const std::string &name : allowed)
      if (!llvm::is_contained(kKnown, name)) {
        getOperation().emitError()
            << "cuvil-fuse-epilogues: unknown activation '" << name
            << "' (known: relu, clip, hardswish, hardsigmoid, sigmoid, silu)";
        return signalPassFailure();
      }
    SmallVector<Operation *> producers;
    getOperation().walk([&](Operation *op) {
      if (!op->getParentOfType<l1::FusedGroupOp>() &&
          (isa<l1::Conv2dOp, l1::QuantizedConv2dOp>(op) || isFusableGemm(op) ||
           isFusableMatmul(op)))
        producers.push_back(op);
    });
    for (Operation *producer : producers)
      fuse(producer);
  }

  /// A gemm the matrix-product kernel can finish in its epilogue: unscaled
  /// (alpha = beta = 1), 2-D, f32, its bias (if any) one value per column.
  static bool isFusableGemm(Operation *op) {
    auto gemm = dyn_cast<l1::GemmOp>(op);
    if (!gemm || gemm.getAlpha().convertToDouble() != 1.0 ||
        gemm.getBeta().convertToDouble() != 1.0)
      return false;
    auto type = cast<RankedTensorType>(gemm.getType());
    if (type.getRank() != 2 || !type.getElementType().isF32())
      return false;
    if (Value c = gemm.getC()) {
      auto bias = cast<RankedTensorType>(c.getType());
      int64_t n = type.getDimSize(1);
      bool perColumn =
          bias.hasStaticShape() && !ShapedType::isDynamic(n) &&
          bias.getNumElements() == n &&
          (bias.getRank() == 1 || (bias.getRank() == 2 && bias.getDimSize(0) == 1));
      if (!perColumn)
        return false;
    }
    return true;
  }

  /// A matrix product the kernel runs as one call (weights [K, N], inputs
  /// of rank 2 or 3), f32 with a static N: PyTorch's form of a linear layer
  /// on 3-D inputs, whose bias then comes as a broadcast add.
  /// An int8 product (cuvil.quantized_matmul) is a matmul of this shape
  /// too: its kernel finishes each row in float32 the same way.
  static bool isFusableMatmul(Operation *op) {
    if (!isa<l1::MatmulOp, l1::QuantizedMatmulOp>(op))
      return false;
    auto a = cast<RankedTensorType>(op->getOperand(0).getType());
    auto b = cast<RankedTensorType>(op->getOperand(1).getType());
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    return b.getRank() == 2 && (a.getRank() == 2 || a.getRank() == 3) &&
           type.getElementType().isF32() && !type.isDynamicDim(type.getRank() - 1);
  }

  /// `value` is one value per column of `result` (a bias [N]).
  static bool isColumnBias(Value value, Value result) {
    auto bias = dyn_cast<RankedTensorType>(value.getType());
    auto type = cast<RankedTensorType>(result.getType());
    return bias && bias.getRank() == 1 && bias.hasStaticShape() &&
           bias.getDimSize(0) == type.getDimSize(type.getRank() - 1) &&
           bias.getElementType() == type.getElementType();
  }

  /// The epilogue chain after `producer`: [bias add] (matmuls only), [add],
  /// [activation].
  SmallVector<Operation *> findChain(Operation *producer) {
    SmallVector<Operation *> chain = {producer};
    Value current = producer->getResult(0);
    Operation *user = soleUser(current);
    if (auto add = dyn_cast_or_null<l1::AddOp>(user);
        add && isa<l1::MatmulOp, l1::QuantizedMatmulOp>(producer)) {
      Value other = add.getLhs() == current ? add.getRhs() : add.getLhs();
      if (other != current && isColumnBias(other, current) &&
          add.getType() == current.getType()) {
        chain.push_back(add);
        current = add.getResult();
        user = soleUser(current);
      }
    }
    if (auto add = dyn_cast_or_null<l1::AddOp>(user)) {
      Value other = add.getLhs() == current ? add.getRhs() : add.getLhs();
      // Same type: an elementwise residual, no broadcasting.
      if (other != current && other.getType() == current.getType() &&
          add.getType() == current.getType()) {
        if (auto bytes = quantizedResidual(producer, other))
          chain.insert(chain.begin() + 1, bytes);
        chain.push_back(add);
        current = add.getResult();
        user = soleUser(current);
      }
    }
    if (user && isActivation(user, producer) &&
        user->getResult(0).getType() == current.getType()) {
      chain.push_back(user);
      current = user->getResult(0);
      user = soleUser(current);
    }
    if (requantize &&
        isa<l1::QuantizedConv2dOp, l1::QuantizedMatmulOp>(producer) &&
        isRequantization(user))
      chain.push_back(user);
    return chain;
  }

  /// The dequantize of 8 bits per tensor that `residual` is, when
  /// `producer` is an int8 convolution that may read it as bytes; else null.
  l1::DequantizeOp quantizedResidual(Operation *producer,
                                     Value residual) const {
    auto dequantize = residual.getDefiningOp<l1::DequantizeOp>();
    if (!quantizedResiduals || !dequantize ||
        !isa<l1::QuantizedConv2dOp>(producer))
      return {};
    auto type = dyn_cast<quant::UniformQuantizedType>(
        cast<RankedTensorType>(dequantize.getInput().getType())
            .getElementType());
    if (!type || type.getStorageTypeIntegralWidth() != 8)
      return {};
    return dequantize;
  }

  /// `op` is an activation the target's kernels apply after `producer`:
  /// one of `activations`, and only relu or clip after an int8 product
  /// (its kernels' epilogue).
  bool isActivation(Operation *op, Operation *producer) const {
    if (!isa<l1::ReluOp, l1::ClipOp, l1::HardSwishOp, l1::HardSigmoidOp,
             l1::SigmoidOp, l1::SiluOp>(op) ||
        !llvm::is_contained(allowed, op->getName().stripDialect()))
      return false;
    return isa<l1::ReluOp, l1::ClipOp>(op) ||
           !isa<l1::QuantizedConv2dOp, l1::QuantizedMatmulOp>(producer);
  }

  /// A quantize to 8 bits per tensor: the int8 convolutions and linear
  /// layers write the next layer's input directly (no float32 tensor
  /// between two int8 layers).
  static bool isRequantization(Operation *op) {
    auto quantize = dyn_cast_or_null<l1::QuantizeOp>(op);
    if (!quantize)
      return false;
    auto type = dyn_cast<quant::UniformQuantizedType>(
        cast<RankedTensorType>(quantize.getType()).getElementType());
    return type && type.getStorageTypeIntegralWidth() == 8;
  }

  /// `activations`, or the default.
  SmallVector<std::string> allowed;

  void fuse(Operation *producer) {
    SmallVector<Operation *> chain = findChain(producer);
    if (chain.size() < 2)
      return;
    // Operands from outside the chain become the group's inputs, in order:
    // the producer's, then the residual.
    SmallVector<Value> inputs = cuvil::externalOperands(chain);

    Operation *last = chain.back();
    OpBuilder builder(last);
    Location loc = cuvil::fusedLocation(builder, chain);
    auto group =
        l1::FusedGroupOp::create(builder, loc, last->getResultTypes(), inputs,
                                 builder.getStringAttr("epilogue"));
    Block *body = new Block();
    group.getBody().push_back(body);
    IRMapping mapping;
    for (Value input : inputs)
      mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
    builder.setInsertionPointToStart(body);
    for (Operation *op : chain)
      builder.clone(*op, mapping);
    l1::YieldOp::create(builder, loc, mapping.lookup(last->getResult(0)));

    last->getResult(0).replaceAllUsesWith(group.getResult(0));
    for (Operation *op : llvm::reverse(chain)) {
      // A dequantized residual may have other users (its group has a copy).
      if (isa<l1::DequantizeOp>(op) && !op->use_empty())
        continue;
      if (op != last)
        cuvil::addStatistic(
            getOperation(), *this, bytesSaved, "bytes-saved",
            cuvil::staticTensorBytes(op->getResult(0).getType()));
      op->erase();
    }
    cuvil::addStatistic(getOperation(), *this, numGroups, "groups");
    cuvil::addStatistic(getOperation(), *this, numOpsFused, "ops-fused",
                        chain.size() - 1);
  }
};

} // namespace
