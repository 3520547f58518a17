//===- ConvertLoss.cpp - ONNX NLL and softmax cross-entropy losses ---------===//
//
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, as models that
// score their own predictions carry them (an evaluation graph, a perplexity
// head). Both are a gather of one log-probability per target:
//   loss[n, d..] = -w[t] * logp[n, t, d..],  t = target[n, d..],
// with w the class weights (1 without) and 0 where t is ignore_index.
// 'mean' divides the sum by the sum of those weights, as ONNX specifies
// (so ignored entries count in neither). An ignored target is replaced by
// class 0 before the gather, so that an ignore_index outside [0, C) (-1,
// say) is never read as an index.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

namespace cuvil::onnx_import {

FailureOr<Value> Importer::negativeLogLikelihood(const onnx::NodeProto &node,
                                                 Location loc, Value logProb,
                                                 int targetInput,
                                                 int weightInput) {
  FailureOr<Value> target = getValue(node, targetInput);
  if (failed(target))
    return failure();
  auto x = cast<RankedTensorType>(logProb.getType());
  auto t = cast<RankedTensorType>(target->getType());
  const std::string &op = node.op_type();
  if (x.getRank() < 2)
    return emitError(loc) << op << " expects scores [N, C, d1, ...], got " << x;
  if (t.getRank() != x.getRank() - 1 || !t.getElementType().isSignlessInteger())
    return emitError(loc) << op << " expects integer targets [N, d1, ...] for "
                          << "scores " << x << ", got " << t;
  std::string reduction = attrString(node, "reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return emitError(loc) << op << " reduction must be 'none', 'sum' or "
                          << "'mean', got '" << reduction << "'";
  Type element = x.getElementType();
  Value safe = *target, kept;
  if (const onnx::AttributeProto *ignore = attr(node, "ignore_index")) {
    Value index = scalarConstant(loc, t.getElementType(),
                                 static_cast<double>(ignore->i()));
    FailureOr<Value> ignored = create<l1::EqualOp>(loc, *target, index);
    if (failed(ignored))
      return failure();
    FailureOr<Value> zeroed = create<l1::WhereOp>(
        loc, *ignored, scalarConstant(loc, t.getElementType(), 0), *target);
    FailureOr<Value> keep = create<l1::WhereOp>(
        loc, *ignored, scalarConstant(loc, element, 0),
        scalarConstant(loc, element, 1));
    if (failed(zeroed) || failed(keep))
      return failure();
    safe = *zeroed;
    kept = *keep;
  }
  Value weights = kept;
  if (hasInput(node, weightInput)) {
    FailureOr<Value> w = getValue(node, weightInput);
    if (failed(w))
      return failure();
    auto wType = cast<RankedTensorType>(w->getType());
    if (wType.getRank() != 1 || wType.getElementType() != element ||
        (!wType.isDynamicDim(0) && !x.isDynamicDim(1) &&
         wType.getDimSize(0) != x.getDimSize(1)))
      return emitError(loc)
             << op << " expects one weight per class, "
             << RankedTensorType::get({x.getDimSize(1)}, element) << ", got "
             << wType;
    FailureOr<Value> perTarget =
        create<l1::GatherOp>(loc, *w, safe, builder.getI64IntegerAttr(0));
    if (failed(perTarget))
      return failure();
    weights = *perTarget;
    if (kept) {
      FailureOr<Value> masked = create<l1::MulOp>(loc, weights, kept);
      if (failed(masked))
        return failure();
      weights = *masked;
    }
  }
  FailureOr<Value> column =
      create<l1::UnsqueezeOp>(loc, safe, builder.getDenseI64ArrayAttr({1}));
  FailureOr<Value> picked =
      failed(column) ? column
                     : create<l1::GatherElementsOp>(
                           loc, logProb, *column, builder.getI64IntegerAttr(1));
  FailureOr<Value> squeezed =
      failed(picked) ? picked
                     : create<l1::SqueezeOp>(loc, *picked,
                                             builder.getDenseI64ArrayAttr({1}));
  FailureOr<Value> loss =
      failed(squeezed) ? squeezed : create<l1::NegOp>(loc, *squeezed);
  if (succeeded(loss) && weights)
    loss = create<l1::MulOp>(loc, *loss, weights);
  if (failed(loss) || reduction == "none")
    return loss;
  SmallVector<int64_t> all(t.getRank());
  std::iota(all.begin(), all.end(), 0);
  auto axes = builder.getDenseI64ArrayAttr(all);
  if (reduction == "mean" && !weights)
    return create<l1::ReduceMeanOp>(loc, *loss, axes, UnitAttr());
  FailureOr<Value> sum = create<l1::ReduceSumOp>(loc, *loss, axes, UnitAttr());
  if (failed(sum) || reduction == "sum")
    return sum;
  FailureOr<Value> total =
      create<l1::ReduceSumOp>(loc, weights, axes, UnitAttr());
  if (failed(total))
    return failure();
  return create<l1::DivOp>(loc, *sum, *total);
}

LogicalResult Importer::convertNllLoss(const onnx::NodeProto &node,
                                       Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  return defineResult(node, negativeLogLikelihood(node, loc, *x, 1, 2));
}

LogicalResult Importer::convertSoftmaxCrossEntropy(const onnx::NodeProto &node,
                                                   Location loc) {
  FailureOr<Value> scores = getValue(node, 0);
  if (failed(scores))
    return failure();
  if (cast<RankedTensorType>(scores->getType()).getRank() < 2)
    return emitError(loc) << node.op_type() << " expects scores [N, C, d1, "
                          << "...], got " << scores->getType();
  FailureOr<Value> logProb = create<l1::LogSoftmaxOp>(
      loc, *scores, builder.getI64IntegerAttr(1));
  if (failed(logProb))
    return failure();
  if (node.output_size() > 1 && !node.output(1).empty())
    define(node, 1, *logProb);
  return defineResult(node, negativeLogLikelihood(node, loc, *logProb, 1, 2));
}

} // namespace cuvil::onnx_import
