//===- ElementwiseOps.cpp - level1 elementwise ops' inference -------------===//
//
// Types of the elementwise family (ElementwiseOps.td): numpy broadcasting
// for binary ops, the input's type for unary ones, i1 for comparisons,
// logic and classification; plus their folders and verifiers.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Inference.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace cuvil::l1;
using namespace cuvil::l1::inference;

static LogicalResult inferBinary(StringRef opName, std::optional<Location> loc,
                                 Value lhs, Value rhs, bool isComparison,
                                 SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> lhsType = getTensorType(lhs, loc, opName, "lhs");
  FailureOr<RankedTensorType> rhsType = getTensorType(rhs, loc, opName, "rhs");
  if (failed(lhsType) || failed(rhsType) ||
      failed(checkSameElementType({*lhsType, *rhsType}, loc, opName)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      broadcast(lhsType->getShape(), rhsType->getShape(), loc, opName);
  if (failed(shape))
    return failure();
  Type elementType = isComparison ? IntegerType::get(lhs.getContext(), 1)
                                  : lhsType->getElementType();
  types.push_back(RankedTensorType::get(*shape, elementType));
  return success();
}

#define CUVIL_BINARY_INFERENCE(OP, IS_COMPARISON)                              \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &types) {                                          \
    return inferBinary(getOperationName(), loc, adaptor.getLhs(),              \
                       adaptor.getRhs(), IS_COMPARISON, types);                \
  }
CUVIL_BINARY_INFERENCE(AddOp, false)
CUVIL_BINARY_INFERENCE(SubOp, false)
CUVIL_BINARY_INFERENCE(MulOp, false)
CUVIL_BINARY_INFERENCE(DivOp, false)
CUVIL_BINARY_INFERENCE(PowOp, false)
CUVIL_BINARY_INFERENCE(MaxOp, false)
CUVIL_BINARY_INFERENCE(MinOp, false)
CUVIL_BINARY_INFERENCE(EqualOp, true)
CUVIL_BINARY_INFERENCE(LessOp, true)
CUVIL_BINARY_INFERENCE(LessEqualOp, true)
CUVIL_BINARY_INFERENCE(GreaterOp, true)
CUVIL_BINARY_INFERENCE(GreaterEqualOp, true)
CUVIL_BINARY_INFERENCE(AndOp, true)
CUVIL_BINARY_INFERENCE(OrOp, true)
CUVIL_BINARY_INFERENCE(XorOp, true)
CUVIL_BINARY_INFERENCE(ModOp, false)
CUVIL_BINARY_INFERENCE(BitShiftOp, false)
#undef CUVIL_BINARY_INFERENCE

LogicalResult PReluOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  if (failed(inferBinary(name, loc, adaptor.getInput(), adaptor.getSlope(),
                         false, types)))
    return failure();
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (cast<RankedTensorType>(types[0]).getShape() != input.getShape())
    return inferError(loc, name, "expects a slope that broadcasts to the "
                      "input's shape ", formatShape(input.getShape()),
                      ", got ", formatType(adaptor.getSlope().getType()));
  return success();
}

/// True if `attr` is a splat of `value` (integer or float).
static bool isSplatOf(Attribute attr, double value) {
  auto splat = dyn_cast_if_present<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  Type elementType = splat.getElementType();
  if (isa<FloatType>(elementType))
    return splat.getSplatValue<APFloat>().convertToDouble() == value;
  if (elementType.isInteger(1))
    return false;
  if (isa<IntegerType>(elementType))
    return splat.getSplatValue<APInt>().getSExtValue() ==
           static_cast<int64_t>(value);
  return false;
}

/// x op identity -> x, when that does not change the result type.
static OpFoldResult foldIdentity(Value lhs, Value rhs, Attribute lhsAttr,
                                 Attribute rhsAttr, Type resultType,
                                 double identity) {
  if (isSplatOf(rhsAttr, identity) && lhs.getType() == resultType)
    return lhs;
  if (isSplatOf(lhsAttr, identity) && rhs.getType() == resultType)
    return rhs;
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldIdentity(getLhs(), getRhs(), adaptor.getLhs(), adaptor.getRhs(),
                      getType(), 0.0);
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldIdentity(getLhs(), getRhs(), adaptor.getLhs(), adaptor.getRhs(),
                      getType(), 1.0);
}

LogicalResult PowOp::canonicalize(PowOp op, PatternRewriter &rewriter) {
  // A float x squared by a splat constant 2 that does not broadcast x:
  // one multiply instead of a call to pow per element.
  Attribute exponent;
  if (!isa<FloatType>(getElementTypeOrSelf(op.getType())) ||
      op.getLhs().getType() != op.getType() ||
      !matchPattern(op.getRhs(), m_Constant(&exponent)) ||
      !isSplatOf(exponent, 2.0))
    return failure();
  rewriter.replaceOpWithNewOp<MulOp>(op, op.getLhs(), op.getLhs());
  return success();
}

LogicalResult WhereOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> condType =
      getTensorType(adaptor.getCondition(), loc, name, "condition");
  FailureOr<RankedTensorType> trueType =
      getTensorType(adaptor.getTrueValue(), loc, name, "true value");
  FailureOr<RankedTensorType> falseType =
      getTensorType(adaptor.getFalseValue(), loc, name, "false value");
  if (failed(condType) || failed(trueType) || failed(falseType) ||
      failed(checkSameElementType({*trueType, *falseType}, loc, name)))
    return failure();
  if (!condType->getElementType().isInteger(1))
    return inferError(loc, name, "expects an i1 condition, got ",
                      formatType(*condType));
  FailureOr<SmallVector<int64_t>> shape =
      broadcast(condType->getShape(), trueType->getShape(), loc, name);
  if (failed(shape))
    return failure();
  shape = broadcast(*shape, falseType->getShape(), loc, name);
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, trueType->getElementType()));
  return success();
}

static LogicalResult inferUnary(StringRef opName, std::optional<Location> loc,
                                Value input, bool floatOnly,
                                SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> type = getTensorType(input, loc, opName, "input");
  if (failed(type))
    return failure();
  if (floatOnly && !isa<FloatType>(type->getElementType()))
    return inferError(loc, opName, "expects a floating-point tensor, got ",
                      formatType(*type));
  types.push_back(*type);
  return success();
}

#define CUVIL_UNARY_INFERENCE(OP)                                              \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &types) {                                          \
    return inferUnary(getOperationName(), loc, adaptor.getInput(), kFloatOnly, \
                      types);                                                  \
  }
CUVIL_UNARY_INFERENCE(ReluOp)
CUVIL_UNARY_INFERENCE(ClipOp)
CUVIL_UNARY_INFERENCE(SigmoidOp)
CUVIL_UNARY_INFERENCE(TanhOp)
CUVIL_UNARY_INFERENCE(GeluOp)
CUVIL_UNARY_INFERENCE(SiluOp)
CUVIL_UNARY_INFERENCE(HardSwishOp)
CUVIL_UNARY_INFERENCE(HardSigmoidOp)
CUVIL_UNARY_INFERENCE(ExpOp)
CUVIL_UNARY_INFERENCE(LogOp)
CUVIL_UNARY_INFERENCE(SqrtOp)
CUVIL_UNARY_INFERENCE(RsqrtOp)
CUVIL_UNARY_INFERENCE(ReciprocalOp)
CUVIL_UNARY_INFERENCE(ErfOp)
CUVIL_UNARY_INFERENCE(NegOp)
CUVIL_UNARY_INFERENCE(AbsOp)
CUVIL_UNARY_INFERENCE(SinOp)
CUVIL_UNARY_INFERENCE(CosOp)
CUVIL_UNARY_INFERENCE(TanOp)
CUVIL_UNARY_INFERENCE(AsinOp)
CUVIL_UNARY_INFERENCE(AcosOp)
CUVIL_UNARY_INFERENCE(AtanOp)
CUVIL_UNARY_INFERENCE(SinhOp)
CUVIL_UNARY_INFERENCE(CoshOp)
CUVIL_UNARY_INFERENCE(AsinhOp)
CUVIL_UNARY_INFERENCE(AcoshOp)
CUVIL_UNARY_INFERENCE(AtanhOp)
CUVIL_UNARY_INFERENCE(CeilOp)
CUVIL_UNARY_INFERENCE(FloorOp)
CUVIL_UNARY_INFERENCE(RoundOp)
CUVIL_UNARY_INFERENCE(SoftplusOp)
CUVIL_UNARY_INFERENCE(SoftsignOp)
CUVIL_UNARY_INFERENCE(EluOp)
CUVIL_UNARY_INFERENCE(CeluOp)
CUVIL_UNARY_INFERENCE(SeluOp)
CUVIL_UNARY_INFERENCE(LeakyReluOp)
CUVIL_UNARY_INFERENCE(ThresholdedReluOp)
CUVIL_UNARY_INFERENCE(ShrinkOp)
CUVIL_UNARY_INFERENCE(SignOp)
CUVIL_UNARY_INFERENCE(NotOp)
#undef CUVIL_UNARY_INFERENCE

/// is_nan, is_inf: an i1 of the input's shape.
#define CUVIL_CLASSIFY_INFERENCE(OP)                                           \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,      \
      SmallVectorImpl<Type> &types) {                                          \
    SmallVector<Type> same;                                                    \
    if (failed(inferUnary(getOperationName(), loc, adaptor.getInput(), true,   \
                          same)))                                              \
      return failure();                                                        \
    types.push_back(cast<RankedTensorType>(same[0]).clone(                     \
        IntegerType::get(context, 1)));                                        \
    return success();                                                          \
  }
CUVIL_CLASSIFY_INFERENCE(IsNanOp)
CUVIL_CLASSIFY_INFERENCE(IsInfOp)
#undef CUVIL_CLASSIFY_INFERENCE

LogicalResult CeluOp::verify() {
  if (getAlpha().isZero())
    return emitOpError("expects a non-zero alpha (it divides x)");
  return success();
}

LogicalResult ShrinkOp::verify() {
  if (getLambd().isNegative())
    return emitOpError("expects lambd >= 0, got ")
           << getLambd().convertToDouble();
  return success();
}

LogicalResult ModOp::verify() {
  if (isa<FloatType>(getElementTypeOrSelf(getType())) && !getFmod())
    return emitOpError("on floats needs fmod (the remainder with the "
                       "dividend's sign), as ONNX Mod does");
  return success();
}

LogicalResult BitShiftOp::verify() {
  if (!getElementTypeOrSelf(getType()).isUnsignedInteger())
    return emitOpError("shifts unsigned integers, got ") << getType();
  return success();
}

LogicalResult ClipOp::verify() {
  FloatAttr min = getMinAttr(), max = getMaxAttr();
  if (min && max && min.getValueAsDouble() > max.getValueAsDouble())
    return emitOpError("expects min <= max, got min = ")
           << min.getValueAsDouble() << " and max = " << max.getValueAsDouble();
  return success();
}

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("expects approximate = \"none\" or \"tanh\", got \"")
           << getApproximate() << "\"";
  return success();
}

LogicalResult CastOp::verify() {
  auto inType = cast<RankedTensorType>(getInput().getType());
  auto outType = cast<RankedTensorType>(getType());
  if (failed(verifyCompatibleShape(inType.getShape(), outType.getShape())) ||
      inType.getRank() != outType.getRank())
    return emitOpError("changes the shape from ")
           << formatShape(inType.getShape()) << " to "
           << formatShape(outType.getShape())
           << "; a cast only converts elements";
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

