//===- RecurrentOps.cpp - level1 recurrent layers' inference --------------===//
//
// Shapes and checks of cuvil.rnn, cuvil.gru and cuvil.lstm
// (RecurrentOps.td), and their activation lists resolved against ONNX's
// defaults (shared with the targets that compute them).
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Inference.h"

using namespace mlir;
using namespace cuvil::l1;
using namespace cuvil::l1::inference;

namespace {

/// An ONNX activation function a recurrent op may name.
struct ActivationInfo {
  const char *name;
  bool takesAlpha, takesBeta;
  double alpha, beta;
};

constexpr ActivationInfo kActivations[] = {
    {"Sigmoid", false, false, 0, 0},   {"Tanh", false, false, 0, 0},
    {"Relu", false, false, 0, 0},      {"HardSigmoid", true, true, 0.2, 0.5},
    {"LeakyRelu", true, false, 0.01, 0}, {"ThresholdedRelu", true, false, 1, 0},
    {"ScaledTanh", true, true, 1, 1},  {"Affine", true, true, 1, 0},
    {"Elu", true, false, 1, 0},        {"Softsign", false, false, 0, 0},
    {"Softplus", false, false, 0, 0},
};

const ActivationInfo *findActivation(StringRef name) {
  for (const ActivationInfo &info : kActivations)
    if (name.equals_insensitive(info.name))
      return &info;
  return nullptr;
}

SmallVector<StringRef> defaultActivations(StringRef kind) {
  if (kind == "rnn")
    return {"Tanh"};
  if (kind == "gru")
    return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

/// The operands and attributes all three ops share, as inference sees them.
struct RecurrentShape {
  Value inputGates, recurrence, bias, sequenceLens, initialH;
  /// LSTM only.
  Value initialC, peepholes;
  int64_t hiddenSize;
  StringRef direction;
};

/// Checks that `value` (if present) is a tensor of `shape` ("?" matching
/// any size, a dynamic size matching any) of `element`, or fails.
LogicalResult checkOperand(Value value, ArrayRef<int64_t> shape,
                           Type element, StringRef what,
                           std::optional<Location> loc, StringRef name) {
  if (!value)
    return success();
  auto type = dyn_cast<RankedTensorType>(value.getType());
  bool fits = type && type.getRank() == static_cast<int64_t>(shape.size()) &&
              (!element || type.getElementType() == element);
  for (int64_t d = 0; fits && d < static_cast<int64_t>(shape.size()); ++d)
    fits = ShapedType::isDynamic(shape[d]) ||
           ShapedType::isDynamic(type.getDimSize(d)) ||
           type.getDimSize(d) == shape[d];
  if (fits)
    return success();
  return inferError(loc, name, "expects ", what, " of shape ",
                    formatShape(shape),
                    element ? " and element type " + formatType(element) : "",
                    ", got ", formatType(value.getType()));
}

LogicalResult inferRecurrent(StringRef name, int64_t gates,
                             std::optional<Location> loc,
                             const RecurrentShape &op,
                             SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> x =
      getTensorType(op.inputGates, loc, name, "input_gates");
  if (failed(x))
    return failure();
  if (op.direction != "forward" && op.direction != "reverse" &&
      op.direction != "bidirectional")
    return inferError(loc, name, "direction must be forward, reverse or "
                      "bidirectional, got '", op.direction, "'");
  int64_t d = op.direction == "bidirectional" ? 2 : 1, h = op.hiddenSize;
  if (h < 1)
    return inferError(loc, name, "expects hidden_size >= 1, got ", h);
  if (x->getRank() != 3)
    return inferError(loc, name, "expects input_gates [steps, batch, ",
                      d * gates, " x hidden_size], got ", formatType(*x));
  Type element = x->getElementType();
  int64_t steps = x->getDimSize(0), batch = x->getDimSize(1);
  if (failed(checkOperand(op.inputGates, {steps, batch, d * gates * h},
                          element, "input_gates", loc, name)) ||
      failed(checkOperand(op.recurrence, {d, h, gates * h}, element,
                          "recurrence", loc, name)) ||
      failed(checkOperand(op.bias, {d, 2 * gates * h}, element, "bias", loc,
                          name)) ||
      failed(checkOperand(op.sequenceLens, {batch},
                          IntegerType::get(x->getContext(), 32),
                          "sequence_lens", loc, name)) ||
      failed(checkOperand(op.initialH, {d, batch, h}, element, "initial_h",
                          loc, name)) ||
      failed(checkOperand(op.initialC, {d, batch, h}, element, "initial_c",
                          loc, name)) ||
      failed(checkOperand(op.peepholes, {d, 3 * h}, element, "peepholes", loc,
                          name)))
    return failure();
  if (!cast<RankedTensorType>(op.recurrence.getType()).hasStaticShape())
    return inferError(loc, name, "expects a static recurrence weight");
  types.push_back(RankedTensorType::get({steps, d, batch, h}, element));
  types.push_back(RankedTensorType::get({d, batch, h}, element));
  return success();
}

/// The verifier's part: the activation list and clip.
template <typename OpTy>
LogicalResult verifyRecurrent(OpTy op, StringRef kind) {
  std::string error;
  if (failed(resolveRecurrentActivations(
          kind, op.getActivationsAttr(), op.getActivationAlpha(),
          op.getActivationBeta(), op.getNumDirections(), error)))
    return op.emitOpError(error);
  if (FloatAttr clip = op.getClipAttr(); clip && !(clip.getValueAsDouble() > 0))
    return op.emitOpError("expects a clip threshold > 0, got ")
           << clip.getValueAsDouble();
  return success();
}

} // namespace

FailureOr<SmallVector<RecurrentActivation>>
cuvil::l1::resolveRecurrentActivations(StringRef kind, ArrayAttr names,
                                       ArrayRef<double> alphas,
                                       ArrayRef<double> betas,
                                       int64_t directions,
                                       std::string &error) {
  SmallVector<StringRef> given;
  if (names)
    for (Attribute name : names)
      given.push_back(cast<StringAttr>(name).getValue());
  else
    given = defaultActivations(kind);
  size_t perDirection = defaultActivations(kind).size();
  if (given.size() == perDirection && directions == 2)
    given.append(SmallVector<StringRef>(given));
  if (given.size() != perDirection * directions) {
    error = (Twine("expects ") + Twine(perDirection * directions) +
             " activations (" + Twine(perDirection) + " per direction), got " +
             Twine(given.size()))
                .str();
    return failure();
  }
  SmallVector<RecurrentActivation> resolved;
  for (StringRef name : given) {
    const ActivationInfo *info = findActivation(name);
    if (!info) {
      error = ("has unknown activation '" + name +
               "' (expected Sigmoid, Tanh, Relu, HardSigmoid, LeakyRelu, "
               "ThresholdedRelu, ScaledTanh, Affine, Elu, Softsign or "
               "Softplus)")
                  .str();
      return failure();
    }
    RecurrentActivation activation{info->name, info->alpha, info->beta};
    if (info->takesAlpha && !alphas.empty()) {
      activation.alpha = alphas.front();
      alphas = alphas.drop_front();
    }
    if (info->takesBeta && !betas.empty()) {
      activation.beta = betas.front();
      betas = betas.drop_front();
    }
    resolved.push_back(activation);
  }
  if (!alphas.empty() || !betas.empty()) {
    error = "has more activation_alpha or activation_beta values than its "
            "activations take";
    return failure();
  }
  return resolved;
}

namespace {
/// The operands every recurrent op has, from its adaptor (LSTM adds its
/// cell state and peepholes).
template <typename AdaptorT>
RecurrentShape recurrentShape(AdaptorT adaptor, Value initialC = {},
                              Value peepholes = {}) {
  return {adaptor.getInputGates(),   adaptor.getRecurrence(),
          adaptor.getBias(),         adaptor.getSequenceLens(),
          adaptor.getInitialH(),     initialC,
          peepholes,                 adaptor.getHiddenSizeAttr().getInt(),
          adaptor.getDirection()};
}
} // namespace

LogicalResult RnnOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferRecurrent(getOperationName(), kGates, loc,
                        recurrentShape(adaptor), types);
}

LogicalResult GruOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferRecurrent(getOperationName(), kGates, loc,
                        recurrentShape(adaptor), types);
}

LogicalResult LstmOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  RecurrentShape shape = recurrentShape(adaptor, adaptor.getInitialC(),
                                        adaptor.getPeepholes());
  if (failed(inferRecurrent(getOperationName(), kGates, loc, shape, types)))
    return failure();
  types.push_back(types.back()); // Y_c, as Y_h
  return success();
}

LogicalResult RnnOp::verify() { return verifyRecurrent(*this, "rnn"); }
LogicalResult GruOp::verify() { return verifyRecurrent(*this, "gru"); }
LogicalResult LstmOp::verify() { return verifyRecurrent(*this, "lstm"); }
