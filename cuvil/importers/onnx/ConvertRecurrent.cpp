//===- ConvertRecurrent.cpp - ONNX RNN, GRU and LSTM ----------------------===//
//
// A recurrent node becomes the product of its input with W for every step
// and direction at once (cuvil.matmul on [T, B, I] @ [I, D*G*H]: one large
// GEMM, as oneDNN's RNN primitive does), then cuvil.rnn / gru / lstm, the
// recurrence over that product with R transposed per direction (folded on
// constant weights by cuvil-prepack-weights). layout = 1 (batch first) is
// transposed to and from ONNX's default layout around them.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

namespace cuvil::onnx_import {

namespace {

/// Gate blocks of each recurrent op (RecurrentOps.td).
int64_t gatesOf(StringRef opType) {
  return opType == "LSTM" ? 4 : opType == "GRU" ? 3 : 1;
}

} // namespace

LogicalResult Importer::convertRecurrent(const onnx::NodeProto &node,
                                         Location loc) {
  StringRef opType = node.op_type();
  int64_t gates = gatesOf(opType);
  bool lstm = opType == "LSTM";
  FailureOr<Value> x = getValue(node, 0), w = getValue(node, 1),
                   r = getValue(node, 2);
  if (failed(x) || failed(w) || failed(r))
    return failure();
  // Absent inputs, and PyTorch's batch-sized zero states (batchZeros),
  // are zeros.
  auto optional = [&](int input, Value &value) -> LogicalResult {
    if (!hasInput(node, input))
      return success();
    if (ValueEntry *entry = lookup(node.input(input)); entry && entry->batchZeros)
      return success();
    FailureOr<Value> v = getValue(node, input);
    if (failed(v))
      return failure();
    value = *v;
    return success();
  };
  Value bias, lens, initialH, initialC, peepholes;
  if (failed(optional(3, bias)) || failed(optional(4, lens)) ||
      failed(optional(5, initialH)) ||
      (lstm && (failed(optional(6, initialC)) || failed(optional(7, peepholes)))))
    return failure();

  auto wType = cast<RankedTensorType>(w->getType()),
       rType = cast<RankedTensorType>(r->getType());
  if (wType.getRank() != 3 || !wType.hasStaticShape() ||
      rType.getRank() != 3 || !rType.hasStaticShape())
    return emitError(loc) << opType << " expects static 3-D weights W "
                          << "[directions, " << gates << " x hidden, input] "
                          << "and R [directions, " << gates
                          << " x hidden, hidden], got " << wType << " and "
                          << rType;
  int64_t directions = wType.getDimSize(0), hidden = rType.getDimSize(2),
          inputSize = wType.getDimSize(2);
  int64_t hiddenAttr = attrInt(node, "hidden_size", hidden);
  if (hiddenAttr != hidden || rType.getDimSize(1) != gates * hidden ||
      wType.getDimSize(1) != gates * hidden)
    return emitError(loc) << opType << " has hidden_size " << hiddenAttr
                          << " but weights W " << wType << " and R " << rType
                          << " (expected [directions, " << gates
                          << " x hidden_size, ...])";
  std::string direction = attrString(node, "direction", "forward");
  if ((direction == "bidirectional") != (directions == 2))
    return emitError(loc) << opType << " with direction '" << direction
                          << "' expects weights for "
                          << (direction == "bidirectional" ? 2 : 1)
                          << " direction(s), got " << directions;

  // Batch-first (layout 1) tensors in ONNX's default order.
  int64_t layout = attrInt(node, "layout", 0);
  if (layout != 0 && layout != 1)
    return emitError(loc) << opType << " has unknown layout " << layout;
  auto transpose = [&](Value v, ArrayRef<int64_t> perm) -> FailureOr<Value> {
    return create<l1::TransposeOp>(loc, v, builder.getDenseI64ArrayAttr(perm));
  };
  auto toDefaultLayout = [&](Value &v) -> LogicalResult {
    if (!v || layout == 0)
      return success();
    FailureOr<Value> t = transpose(v, {1, 0, 2});
    if (failed(t))
      return failure();
    v = *t;
    return success();
  };
  Value input = *x;
  if (failed(toDefaultLayout(input)) || failed(toDefaultLayout(initialH)) ||
      failed(toDefaultLayout(initialC)))
    return failure();
  auto inType = cast<RankedTensorType>(input.getType());
  if (inType.getRank() != 3 || inType.getDimSize(2) != inputSize)
    return emitError(loc) << opType << " expects an input of "
                          << "[steps, batch, " << inputSize << "] (layout "
                          << layout << " as given), got " << x->getType();

  // input_gates = X @ W^T for all directions: W [D, G*H, I] as [I, D*G*H].
  FailureOr<Value> wFlat = create<l1::ReshapeOp>(
      loc, *w, builder.getDenseI64ArrayAttr({directions * gates * hidden,
                                             inputSize}));
  if (failed(wFlat))
    return failure();
  FailureOr<Value> wT = transpose(*wFlat, {1, 0});
  if (failed(wT))
    return failure();
  FailureOr<Value> inputGates = create<l1::MatmulOp>(loc, input, *wT, TypeAttr());
  FailureOr<Value> rT = transpose(*r, {0, 2, 1});
  if (failed(inputGates) || failed(rT))
    return failure();

  ArrayAttr activations;
  if (auto names = attrStrings(node, "activations"))
    activations = builder.getStrArrayAttr(
        SmallVector<StringRef>(names->begin(), names->end()));
  SmallVector<double> alphas, betas;
  if (const onnx::AttributeProto *a = attr(node, "activation_alpha"))
    alphas.assign(a->floats().begin(), a->floats().end());
  if (const onnx::AttributeProto *b = attr(node, "activation_beta"))
    betas.assign(b->floats().begin(), b->floats().end());
  FloatAttr clip;
  if (attr(node, "clip"))
    clip = f64Attr(node, "clip", 0);
  IntegerAttr hiddenSize = builder.getI64IntegerAttr(hidden);
  StringAttr directionAttr = builder.getStringAttr(direction);
  auto alphaAttr = builder.getDenseF64ArrayAttr(alphas),
       betaAttr = builder.getDenseF64ArrayAttr(betas);

  FailureOr<Operation *> op = failure();
  if (lstm)
    op = createTyped<l1::LstmOp>(
        loc, 3, *inputGates, *rT, bias, lens, initialH, initialC, peepholes,
        hiddenSize, directionAttr, activations, alphaAttr, betaAttr, clip,
        builder.getBoolAttr(attrInt(node, "input_forget", 0) != 0));
  else if (gates == 3)
    op = createTyped<l1::GruOp>(
        loc, 2, *inputGates, *rT, bias, lens, initialH, hiddenSize,
        directionAttr, activations, alphaAttr, betaAttr, clip,
        builder.getBoolAttr(attrInt(node, "linear_before_reset", 0) != 0));
  else
    op = createTyped<l1::RnnOp>(loc, 2, *inputGates, *rT, bias, lens,
                                initialH, hiddenSize, directionAttr,
                                activations, alphaAttr, betaAttr, clip);
  if (failed(op) || failed(verify(*op)))
    return failure();

  // Y [T, D, B, H] (batch first: [B, T, D, H]); Y_h, Y_c [D, B, H] ([B, D, H]).
  for (unsigned i = 0; i < (*op)->getNumResults(); ++i) {
    Value result = (*op)->getResult(i);
    if (layout == 1) {
      FailureOr<Value> t = i == 0 ? transpose(result, {2, 0, 1, 3})
                                  : transpose(result, {1, 0, 2});
      if (failed(t))
        return failure();
      result = *t;
    }
    define(node, i, result);
  }
  return success();
}

} // namespace cuvil::onnx_import
