//===- SampleSeparability.cpp - do a function's samples run apart? -------===//

#include "cuvil/passes/SampleSeparability.h"

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Quantization.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
namespace l1 = cuvil::l1;

namespace cuvil {
namespace {

enum class Batch { None, Leading, Elsewhere };

/// Where a value's batch is: nowhere (static), dimension 0, or somewhere
/// the analysis cannot follow.
Batch batchOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return Batch::None;
  for (int64_t d = 1; d < tensor.getRank(); ++d)
    if (tensor.isDynamicDim(d))
      return Batch::Elsewhere;
  if (tensor.getRank() == 0 || !tensor.isDynamicDim(0))
    return Batch::None;
  // A scale per index of dimension 0 would be a scale per sample.
  if (auto perAxis =
          dyn_cast<quant::UniformQuantizedPerAxisType>(tensor.getElementType()))
    if (perAxis.getQuantizedDimension() == 0)
      return Batch::Elsewhere;
  return Batch::Leading;
}

bool batched(Value value) { return batchOf(value.getType()) == Batch::Leading; }

int64_t rankOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getRank();
}

/// Elements of one sample of a batched value (its dimensions after 0).
double sampleElements(Value value) {
  double elements = 1;
  auto type = cast<RankedTensorType>(value.getType());
  for (int64_t d : type.getShape().drop_front())
    elements *= static_cast<double>(d);
  return elements;
}

double tensorBytes(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  Type element = l1::storageElementType(type.getElementType());
  int64_t bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
  return static_cast<double>(type.getNumElements()) *
         static_cast<double>((bits + 7) / 8);
}

int64_t normalized(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

bool touchesAxisZero(ArrayRef<int64_t> axes, int64_t rank) {
  return llvm::any_of(axes,
                      [&](int64_t a) { return normalized(a, rank) == 0; });
}

bool isElementwise(Operation *op) {
  return op->hasTrait<l1::BroadcastElementwise>() ||
         isa<l1::QuantizeOp, l1::DequantizeOp, l1::RequantizeOp,
             l1::StorageCastOp>(op);
}

/// Ops whose first operand is an image or rows of samples and whose other
/// operands (weights, statistics, tables) must not depend on the batch.
bool readsSamplesOfFirstOperand(Operation *op) {
  return isa<l1::Conv2dOp, l1::QuantizedConv2dOp, l1::MaxPool2dOp,
             l1::AvgPool2dOp, l1::GlobalAvgPoolOp, l1::GlobalMaxPoolOp,
             l1::AdaptiveAvgPool2dOp, l1::BatchNormOp, l1::LayerNormOp,
             l1::TreeEnsembleOp>(op);
}

class Analyzer {
public:
  explicit Analyzer(SampleSeparability &result) : result(result) {}

  bool inputs(func::FuncOp func) {
    bool any = false;
    for (BlockArgument arg : func.getArguments()) {
      Batch batch = batchOf(arg.getType());
      if (batch == Batch::Elsewhere)
        return fail(nullptr, "an input has a dynamic dimension other than "
                             "the batch (dimension 0)");
      if (batch == Batch::Leading)
        rows[arg] = 1;
      any |= batch == Batch::Leading;
    }
    if (!any)
      return fail(nullptr, "no input has a dynamic batch (dimension 0)");
    return true;
  }

  /// Each output must be one row per sample: the artifact advances its
  /// pointer by one row's bytes per sample.
  bool outputs(func::FuncOp func) {
    for (Value value : func.getBody().back().getTerminator()->getOperands()) {
      if (batchOf(value.getType()) != Batch::Leading)
        return fail(nullptr, "an output does not have the batch as its "
                             "dimension 0");
      if (rows.lookup(value) != 1)
        return fail(nullptr, "an output has several rows per sample");
    }
    return true;
  }

  bool visit(Operation *op) {
    if (isa<l1::ConstantOp, func::ReturnOp>(op))
      return true;
    // Its condition may read several samples.
    if (isa<l1::IfOp, l1::LoopOp>(op))
      return fail(op, "it is control flow, whose condition may depend on "
                      "several samples");
    bool anyIn = false;
    for (Value operand : op->getOperands()) {
      if (batchOf(operand.getType()) == Batch::Elsewhere)
        return fail(op, "an operand has a dynamic dimension other than the "
                        "batch (dimension 0)");
      anyIn |= batched(operand);
    }
    for (Value r : op->getResults()) {
      Batch batch = batchOf(r.getType());
      if (batch == Batch::Elsewhere)
        return fail(op, "its result has a dynamic dimension other than the "
                        "batch (dimension 0)");
      if (anyIn != (batch == Batch::Leading) && !isa<l1::ExpandOp>(op))
        return fail(op, anyIn ? "its result does not keep the batch in "
                                "dimension 0"
                              : "its result has a batch its operands do not");
    }
    if (!anyIn && !isa<l1::ExpandOp>(op))
      return true; // Computed from batch-independent values only.
    return visitBatched(op) && assignRows(op);
  }

private:
  /// Rows per sample of each batched result: dimension 0 is batch * rows,
  /// the same for every operand that carries the batch; a reshape regroups
  /// one sample's elements, which must fill whole rows.
  bool assignRows(Operation *op) {
    int64_t k = 0;
    for (Value operand : op->getOperands()) {
      if (!batched(operand))
        continue;
      int64_t r = rows.lookup(operand);
      if (k != 0 && r != k)
        return fail(op, "its operands hold different numbers of rows per "
                        "sample");
      k = r;
    }
    if (isa<l1::ReshapeOp, l1::FlattenOp>(op)) {
      double perSample =
          static_cast<double>(k) * sampleElements(op->getOperand(0));
      double perRow = sampleElements(op->getResult(0));
      double quotient = perRow > 0 ? perSample / perRow : 0;
      if (quotient < 1 || quotient != std::floor(quotient))
        return fail(op, "it puts several samples' elements in one row");
      k = static_cast<int64_t>(quotient);
    }
    for (Value r : op->getResults())
      if (batched(r))
        rows[r] = k;
    return true;
  }

  bool fail(Operation *op, const char *why) {
    result.culprit = op;
    result.reason = why;
    return false;
  }

  bool visitBatched(Operation *op) {
    if (isElementwise(op))
      return elementwise(op);
    if (readsSamplesOfFirstOperand(op))
      return firstOperandOnly(op);
    if (auto m = dyn_cast<l1::MatmulOp>(op))
      return matmul(op, m.getLhs(), m.getRhs());
    if (auto m = dyn_cast<l1::QuantizedMatmulOp>(op))
      return matmul(op, m.getLhs(), m.getRhs());
    if (auto gemm = dyn_cast<l1::GemmOp>(op))
      return this->gemm(gemm);
    if (auto s = dyn_cast<l1::SoftmaxOp>(op))
      return axisNotZero(op, s.getAxis(), rankOf(s.getInput()));
    if (auto s = dyn_cast<l1::LogSoftmaxOp>(op))
      return axisNotZero(op, s.getAxis(), rankOf(s.getInput()));
    if (isa<l1::ReduceSumOp, l1::ReduceMeanOp, l1::ReduceMaxOp,
            l1::ReduceMinOp>(op)) {
      auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
      return touchesAxisZero(axes, rankOf(op->getOperand(0)))
                 ? fail(op, "it reduces over the batch (dimension 0)")
                 : true;
    }
    if (isa<l1::ReshapeOp, l1::FlattenOp>(op))
      return true; // Dimension 0 stays the batch (checked above); each
                   // sample's elements stay one contiguous run, in whole
                   // rows (assignRows).
    if (auto t = dyn_cast<l1::TransposeOp>(op))
      return t.getPerm()[0] == 0 ? true
                                 : fail(op, "it moves the batch dimension");
    if (auto c = dyn_cast<l1::ConcatOp>(op)) {
      if (!llvm::all_of(c.getInputs(), batched))
        return fail(op, "it joins batched and batch-independent tensors");
      return axisNotZero(op, c.getAxis(), rankOf(c.getResult()));
    }
    if (auto s = dyn_cast<l1::SplitOp>(op))
      return axisNotZero(op, s.getAxis(), rankOf(s.getInput()));
    if (auto s = dyn_cast<l1::SliceOp>(op))
      return touchesAxisZero(s.getAxes(), rankOf(s.getInput()))
                 ? fail(op, "it slices the batch (dimension 0)")
                 : true;
    if (auto p = dyn_cast<l1::PadOp>(op)) {
      ArrayRef<int64_t> pads = p.getPads();
      int64_t rank = rankOf(p.getInput());
      bool padsBatch = pads.size() == static_cast<size_t>(2 * rank) &&
                       (pads[0] != 0 || pads[rank] != 0);
      return padsBatch ? fail(op, "it pads the batch (dimension 0)") : true;
    }
    if (auto s = dyn_cast<l1::SqueezeOp>(op))
      return touchesAxisZero(s.getAxes(), rankOf(s.getInput()))
                 ? fail(op, "it squeezes the batch (dimension 0)")
                 : true;
    if (auto u = dyn_cast<l1::UnsqueezeOp>(op))
      return touchesAxisZero(u.getAxes(), rankOf(u.getResult()))
                 ? fail(op, "it inserts a dimension before the batch")
                 : true;
    if (auto g = dyn_cast<l1::GatherOp>(op))
      return gather(g);
    if (auto e = dyn_cast<l1::ExpandOp>(op))
      return expand(e);
    return fail(op, "the analysis has no rule for this op");
  }

  /// A batched operand broadcast into a result of higher rank would move
  /// the batch; a batch-independent one of the result's rank must have 1
  /// in dimension 0 (numpy broadcasting against the batch).
  bool elementwise(Operation *op) {
    int64_t rank = rankOf(op->getResult(0));
    for (Value operand : op->getOperands()) {
      if (batched(operand) && rankOf(operand) != rank)
        return fail(op, "it broadcasts a batched operand to a higher rank");
      if (!batched(operand) && rankOf(operand) == rank &&
          cast<RankedTensorType>(operand.getType()).getDimSize(0) != 1)
        return fail(op, "a batch-independent operand has a dimension 0 "
                        "other than 1");
    }
    return true;
  }

  bool firstOperandOnly(Operation *op) {
    if (!batched(op->getOperand(0)))
      return fail(op, "its batch comes from an operand other than its input");
    // Every chunk reads these again: a tree ensemble's tables are weights
    // with no multiply-adds to amortize them.
    for (Value operand : op->getOperands().drop_front()) {
      if (batched(operand))
        return fail(op, "its weights or parameters depend on the batch");
      result.weightBytes += tensorBytes(operand);
    }
    if (isa<l1::Conv2dOp, l1::QuantizedConv2dOp>(op)) {
      // Each output element sums C/G * KH * KW products.
      double taps = sampleElements(op->getOperand(1));
      result.macsPerSample += sampleElements(op->getResult(0)) * taps;
    }
    if (auto norm = dyn_cast<l1::LayerNormOp>(op))
      return axisNotZero(op, norm.getAxis(), rankOf(norm.getInput()));
    return true;
  }

  bool matmul(Operation *op, Value lhs, Value rhs) {
    int64_t rank = rankOf(op->getResult(0));
    if (!batched(lhs) || rankOf(lhs) < 2 || rankOf(lhs) != rank)
      return fail(op, "its batch is not the rows or the leading batch "
                      "dimension of its left operand");
    double k = static_cast<double>(
        cast<RankedTensorType>(lhs.getType()).getShape().back());
    result.macsPerSample += sampleElements(op->getResult(0)) * k;
    if (batched(rhs))
      return rankOf(rhs) == rank && rank >= 3
                 ? true
                 : fail(op, "it contracts over the batch");
    if (rankOf(rhs) == rank && rank >= 3 &&
        cast<RankedTensorType>(rhs.getType()).getDimSize(0) != 1)
      return fail(op, "a batch-independent operand has a dimension 0 other "
                      "than 1");
    result.weightBytes += tensorBytes(rhs);
    return true;
  }

  bool gemm(l1::GemmOp op) {
    if (!batched(op.getA()) || op.getTransA())
      return fail(op, "its batch is not the rows of its left operand");
    if (batched(op.getB()))
      return fail(op, "its weights depend on the batch");
    Value c = op.getC();
    if (c && !batched(c) && rankOf(c) == 2 &&
        cast<RankedTensorType>(c.getType()).getDimSize(0) != 1)
      return fail(op, "its bias has rows other than the batch's");
    double k = static_cast<double>(
        cast<RankedTensorType>(op.getA().getType()).getDimSize(1));
    result.macsPerSample += sampleElements(op.getResult()) * k;
    result.weightBytes += tensorBytes(op.getB());
    return true;
  }

  bool gather(l1::GatherOp op) {
    int64_t axis = normalized(op.getAxis(), rankOf(op.getData()));
    if (batched(op.getData()) && !batched(op.getIndices()) && axis != 0)
      return true; // Per-sample selection along another axis.
    if (!batched(op.getData()) && batched(op.getIndices()) && axis == 0)
      return true; // An embedding table read by each sample's indices.
    return fail(op, "it gathers across the batch");
  }

  /// A batched tensor expanded along other dimensions. A batch-independent
  /// one expanded to the batch would give it rows per sample the analysis
  /// cannot know, so it is refused.
  bool expand(l1::ExpandOp op) {
    Value input = op.getInput();
    if (!batched(op.getResult()))
      return batched(input) ? fail(op, "it drops the batch") : true;
    if (!batched(input))
      return fail(op, "it expands a batch-independent tensor to the batch");
    return rankOf(input) == rankOf(op.getResult())
               ? true
               : fail(op, "it moves the batch to another dimension");
  }

  bool axisNotZero(Operation *op, int64_t axis, int64_t rank) {
    return normalized(axis, rank) == 0
               ? fail(op, "it works along the batch (dimension 0)")
               : true;
  }

  SampleSeparability &result;
  llvm::DenseMap<Value, int64_t> rows;
};

} // namespace

SampleSeparability analyzeSamples(func::FuncOp func) {
  SampleSeparability result;
  Analyzer analyzer(result);
  if (!analyzer.inputs(func))
    return result;
  WalkResult walk = func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == func.getOperation())
      return WalkResult::advance();
    return analyzer.visit(op) ? WalkResult::skip() : WalkResult::interrupt();
  });
  result.separable = !walk.wasInterrupted() && analyzer.outputs(func);
  return result;
}

} // namespace cuvil
