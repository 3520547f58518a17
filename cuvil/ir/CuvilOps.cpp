//===- CuvilOps.cpp - level1 dialect and ops ------------------------------===//
//
// Shape and dtype inference for every level1 op. Inference is the single
// source of truth: the parser and builders call it to create result types,
// and the verifier (InferTypeOpInterface) checks results against it, so an
// inference failure is the diagnostic a user sees for a bad model. Each
// message starts with the op name, and the diagnostic carries the op's
// location (ONNX node name or Python file:line from the importer).
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Inference.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"

#include <numeric>

using namespace mlir;
using namespace cuvil::l1;

#include "cuvil/ir/CuvilDialect.cpp.inc"

void CuvilDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "cuvil/ir/CuvilOps.cpp.inc"
      >();
  registerAttributes();
}

Operation *CuvilDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}


using namespace cuvil::l1::inference;


//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  auto type = dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!type || !type.hasStaticShape())
    return inferError(loc, getOperationName(),
                      "expects a statically shaped tensor value, got ",
                      formatType(adaptor.getValue().getType()));
  types.push_back(type);
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Linear algebra and convolution
//===----------------------------------------------------------------------===//

/// The element type of a product of `operand` elements: `operand`, or
/// `accType`, a wider float summing the products of narrower floats.
static FailureOr<Type> productElementType(Type operand, TypeAttr accType,
                                          std::optional<Location> loc,
                                          StringRef name) {
  if (!accType)
    return operand;
  auto wide = dyn_cast<FloatType>(accType.getValue());
  auto narrow = dyn_cast<FloatType>(operand);
  if (!wide || !narrow || wide.getWidth() <= narrow.getWidth())
    return inferError(loc, name, "acc_type ", formatType(accType.getValue()),
                      " must be a float wider than the operands' ",
                      formatType(operand));
  return Type(wide);
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> lhsType =
      getTensorType(adaptor.getLhs(), loc, name, "lhs");
  FailureOr<RankedTensorType> rhsType =
      getTensorType(adaptor.getRhs(), loc, name, "rhs");
  if (failed(lhsType) || failed(rhsType) ||
      failed(checkSameElementType({*lhsType, *rhsType}, loc, name)))
    return failure();
  if (lhsType->getRank() == 0 || rhsType->getRank() == 0)
    return inferError(loc, name, "expects operands of rank >= 1, got ",
                      formatType(*lhsType), " and ", formatType(*rhsType));
  // numpy: a 1-D lhs is a row vector, a 1-D rhs a column vector, and the
  // added dimension is removed from the result.
  SmallVector<int64_t> lhs(lhsType->getShape()), rhs(rhsType->getShape());
  bool lhsVector = lhs.size() == 1, rhsVector = rhs.size() == 1;
  if (lhsVector)
    lhs.insert(lhs.begin(), 1);
  if (rhsVector)
    rhs.push_back(1);
  int64_t lhsK = lhs.back(), rhsK = rhs[rhs.size() - 2];
  if (!ShapedType::isDynamic(lhsK) && !ShapedType::isDynamic(rhsK) &&
      lhsK != rhsK)
    return inferError(loc, name, "contracting dimensions differ: lhs ",
                      formatType(*lhsType), " has ", lhsK, " columns but rhs ",
                      formatType(*rhsType), " has ", rhsK, " rows");
  FailureOr<SmallVector<int64_t>> shape =
      broadcast(ArrayRef<int64_t>(lhs).drop_back(2),
                ArrayRef<int64_t>(rhs).drop_back(2), loc, name);
  if (failed(shape))
    return failure();
  if (!lhsVector)
    shape->push_back(lhs[lhs.size() - 2]);
  if (!rhsVector)
    shape->push_back(rhs.back());
  FailureOr<Type> element = productElementType(
      lhsType->getElementType(), adaptor.getAccTypeAttr(), loc, name);
  if (failed(element))
    return failure();
  types.push_back(RankedTensorType::get(*shape, *element));
  return success();
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> aType =
      getTensorType(adaptor.getA(), loc, name, "A");
  FailureOr<RankedTensorType> bType =
      getTensorType(adaptor.getB(), loc, name, "B");
  if (failed(aType) || failed(bType) ||
      failed(checkSameElementType({*aType, *bType}, loc, name)))
    return failure();
  if (aType->getRank() != 2 || bType->getRank() != 2)
    return inferError(loc, name, "expects 2-D A and B, got ",
                      formatType(*aType), " and ", formatType(*bType));
  int64_t m = aType->getDimSize(adaptor.getTransA() ? 1 : 0);
  int64_t ka = aType->getDimSize(adaptor.getTransA() ? 0 : 1);
  int64_t kb = bType->getDimSize(adaptor.getTransB() ? 1 : 0);
  int64_t n = bType->getDimSize(adaptor.getTransB() ? 0 : 1);
  if (!ShapedType::isDynamic(ka) && !ShapedType::isDynamic(kb) && ka != kb)
    return inferError(
        loc, name, "contracting dimensions differ: A ", formatType(*aType),
        (adaptor.getTransA() ? " (transposed)" : ""), " has K = ", ka,
        " but B ", formatType(*bType),
        (adaptor.getTransB() ? " (transposed)" : ""), " has K = ", kb);
  SmallVector<int64_t> shape = {m, n};
  FailureOr<Type> element = productElementType(
      aType->getElementType(), adaptor.getAccTypeAttr(), loc, name);
  if (failed(element))
    return failure();
  if (Value c = adaptor.getC()) {
    FailureOr<RankedTensorType> cType = getTensorType(c, loc, name, "C");
    if (failed(cType))
      return failure();
    if (cType->getElementType() != *element)
      return inferError(loc, name, "expects C of the result's element type ",
                        formatType(*element), ", got ", formatType(*cType));
    FailureOr<SmallVector<int64_t>> merged =
        broadcast(shape, cType->getShape(), loc, name);
    if (failed(merged))
      return failure();
    if (merged->size() != 2 || failed(verifyCompatibleShape(*merged, shape)))
      return inferError(
          loc, name, "C of shape ", formatShape(cType->getShape()),
          " does not broadcast to the ", formatShape(shape), " product");
  }
  types.push_back(RankedTensorType::get(shape, *element));
  return success();
}

SmallVector<int64_t, 2> Conv2dOp::getStridesOrDefault() {
  return SmallVector<int64_t, 2>(withDefault(getStrides(), 2, 1));
}
SmallVector<int64_t, 4> Conv2dOp::getPaddingOrDefault() {
  return SmallVector<int64_t, 4>(withDefault(getPadding(), 4, 0));
}
SmallVector<int64_t, 2> Conv2dOp::getDilationsOrDefault() {
  return SmallVector<int64_t, 2>(withDefault(getDilations(), 2, 1));
}

LogicalResult inference::inferConv2dType(
    StringRef name, std::optional<Location> loc, RankedTensorType inType,
    RankedTensorType wType, std::optional<RankedTensorType> bType,
    ArrayRef<int64_t> stridesAttr, ArrayRef<int64_t> paddingAttr,
    ArrayRef<int64_t> dilationsAttr, int64_t groups, Type element,
    SmallVectorImpl<Type> &types) {
  if (inType.getRank() != 4)
    return inferError(loc, name, "expects a 4-D NCHW input, got ",
                      formatType(inType));
  if (wType.getRank() != 4)
    return inferError(loc, name, "expects a 4-D OIHW weight, got ",
                      formatType(wType));
  SmallVector<int64_t> strides = withDefault(stridesAttr, 2, 1);
  SmallVector<int64_t> padding = withDefault(paddingAttr, 4, 0);
  SmallVector<int64_t> dilations = withDefault(dilationsAttr, 2, 1);
  if (failed(checkAttrList(strides, 2, 1, "strides", loc, name)) ||
      failed(checkAttrList(padding, 4, 0, "padding", loc, name)) ||
      failed(checkAttrList(dilations, 2, 1, "dilations", loc, name)))
    return failure();
  if (groups < 1)
    return inferError(loc, name, "expects groups >= 1, got ", groups);
  int64_t inC = inType.getDimSize(1), outC = wType.getDimSize(0),
          wC = wType.getDimSize(1);
  if (!ShapedType::isDynamic(inC)) {
    if (inC % groups != 0)
      return inferError(loc, name, "input channels ", inC,
                        " are not divisible by groups = ", groups);
    if (!ShapedType::isDynamic(wC) && wC != inC / groups)
      return inferError(loc, name, "weight ", formatType(wType), " expects ",
                        wC * groups, " input channels (", wC, " per group x ",
                        groups, " groups) but the input ", formatType(inType),
                        " has ", inC);
  }
  if (!ShapedType::isDynamic(outC) && outC % groups != 0)
    return inferError(loc, name, "output channels ", outC,
                      " are not divisible by groups = ", groups);
  if (bType && (bType->getRank() != 1 ||
                failed(verifyCompatibleShape(bType->getShape(), {outC}))))
    return inferError(loc, name, "expects a bias of shape ",
                      formatShape({outC}), ", got ", formatType(*bType));
  SmallVector<int64_t> shape = {inType.getDimSize(0), outC};
  for (int i = 0; i < 2; ++i) {
    FailureOr<int64_t> size =
        windowOutputSize(inType.getDimSize(2 + i), wType.getDimSize(2 + i),
                         strides[i], padding[i], padding[2 + i], dilations[i],
                         /*ceilMode=*/false, loc, name);
    if (failed(size))
      return failure();
    shape.push_back(*size);
  }
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

LogicalResult ConvTranspose2dOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> in =
      getTensorType(adaptor.getInput(), loc, name, "input");
  FailureOr<RankedTensorType> w =
      getTensorType(adaptor.getWeight(), loc, name, "weight");
  if (failed(in) || failed(w) ||
      failed(checkSameElementType({*in, *w}, loc, name)))
    return failure();
  if (in->getRank() != 4 || w->getRank() != 4 || !w->hasStaticShape())
    return inferError(loc, name, "expects an NCHW input and a static 4-D "
                      "weight, got ", formatType(*in), " and ",
                      formatType(*w));
  int64_t groups = adaptor.getGroups(), channels = in->getDimSize(1);
  if (groups < 1 || ShapedType::isDynamic(channels) ||
      channels != w->getDimSize(0) || channels % groups != 0)
    return inferError(loc, name, "expects the input's ", channels,
                      " channels to equal the weight's first dimension ",
                      w->getDimSize(0), " and divide into ", groups,
                      " groups");
  SmallVector<int64_t> strides = withDefault(adaptor.getStrides(), 2, 1),
                       dilations = withDefault(adaptor.getDilations(), 2, 1),
                       padding = withDefault(adaptor.getPadding(), 4, 0),
                       extra = withDefault(adaptor.getOutputPadding(), 2, 0);
  if (strides.size() != 2 || dilations.size() != 2 || padding.size() != 4 ||
      extra.size() != 2)
    return inferError(loc, name, "expects 2 strides, 2 dilations, 4 pads and "
                      "2 output paddings");
  int64_t outChannels = w->getDimSize(1) * groups;
  if (Value bias = adaptor.getBias()) {
    auto b = dyn_cast<RankedTensorType>(bias.getType());
    if (!b || b.getRank() != 1 || b.getDimSize(0) != outChannels ||
        b.getElementType() != in->getElementType())
      return inferError(loc, name, "expects a bias of ", outChannels, " ",
                        formatType(in->getElementType()), " values, got ",
                        formatType(bias.getType()));
  }
  SmallVector<int64_t> shape = {in->getDimSize(0), outChannels};
  for (int i = 0; i < 2; ++i) {
    int64_t size = in->getDimSize(2 + i), k = w->getDimSize(2 + i);
    if (strides[i] < 1 || dilations[i] < 1 || padding[i] < 0 ||
        padding[2 + i] < 0 || extra[i] < 0 ||
        extra[i] >= std::max(strides[i], dilations[i]))
      return inferError(loc, name, "expects strides and dilations >= 1, pads "
                        ">= 0 and output padding below the stride or "
                        "dilation, got ", formatList(strides), ", ",
                        formatList(dilations), ", ", formatList(padding),
                        " and ", formatList(extra));
    if (ShapedType::isDynamic(size)) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t out = (size - 1) * strides[i] + (k - 1) * dilations[i] + 1 +
                  extra[i] - padding[i] - padding[2 + i];
    if (out < 1)
      return inferError(loc, name, "would give an output of size ", out,
                        " (padding exceeds the result)");
    shape.push_back(out);
  }
  types.push_back(RankedTensorType::get(shape, in->getElementType()));
  return success();
}

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> inType =
      getTensorType(adaptor.getInput(), loc, name, "input");
  FailureOr<RankedTensorType> wType =
      getTensorType(adaptor.getWeight(), loc, name, "weight");
  if (failed(inType) || failed(wType) ||
      failed(checkSameElementType({*inType, *wType}, loc, name)))
    return failure();
  FailureOr<Type> element = productElementType(
      inType->getElementType(), adaptor.getAccTypeAttr(), loc, name);
  if (failed(element))
    return failure();
  std::optional<RankedTensorType> bType;
  if (Value bias = adaptor.getBias()) {
    FailureOr<RankedTensorType> b = getTensorType(bias, loc, name, "bias");
    if (failed(b))
      return failure();
    // The bias is added to the sums: of their type.
    if (b->getElementType() != *element)
      return inferError(loc, name, "expects a bias of the result's element "
                        "type ", formatType(*element), ", got ",
                        formatType(*b));
    bType = *b;
  }
  return inferConv2dType(name, loc, *inType, *wType, bType,
                         adaptor.getStrides(), adaptor.getPadding(),
                         adaptor.getDilations(), adaptor.getGroups(), *element,
                         types);
}

//===----------------------------------------------------------------------===//
// Normalization, softmax, reductions
//===----------------------------------------------------------------------===//

static LogicalResult inferSoftmax(StringRef name, std::optional<Location> loc,
                                  Value input, int64_t axis,
                                  SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> type = getTensorType(input, loc, name, "input");
  if (failed(type) || failed(normalizeAxis(axis, type->getRank(), loc, name)))
    return failure();
  types.push_back(*type);
  return success();
}

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferSoftmax(getOperationName(), loc, adaptor.getInput(),
                      adaptor.getAxis(), types);
}

LogicalResult LogSoftmaxOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  return inferSoftmax(getOperationName(), loc, adaptor.getInput(),
                      adaptor.getAxis(), types);
}

static LogicalResult inferReduce(StringRef name, std::optional<Location> loc,
                                 Value input, ArrayRef<int64_t> axes,
                                 bool keepdims, bool floatOnly,
                                 SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> type = getTensorType(input, loc, name, "input");
  if (failed(type))
    return failure();
  if (floatOnly && !isa<FloatType>(type->getElementType()))
    return inferError(loc, name, "expects a floating-point tensor, got ",
                      formatType(*type));
  if (axes.empty())
    return inferError(loc, name, "expects at least one axis to reduce");
  FailureOr<SmallVector<int64_t>> normalized =
      normalizeAxes(axes, type->getRank(), loc, name);
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> shape;
  for (auto [i, dim] : llvm::enumerate(type->getShape())) {
    if (!llvm::is_contained(*normalized, static_cast<int64_t>(i)))
      shape.push_back(dim);
    else if (keepdims)
      shape.push_back(1);
  }
  types.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

#define CUVIL_REDUCE_INFERENCE(OP, FLOAT_ONLY)                                 \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &types) {                                          \
    return inferReduce(getOperationName(), loc, adaptor.getInput(),            \
                       adaptor.getAxes(), adaptor.getKeepdims(), FLOAT_ONLY,   \
                       types);                                                 \
  }
CUVIL_REDUCE_INFERENCE(ReduceSumOp, false)
CUVIL_REDUCE_INFERENCE(ReduceMeanOp, true)
CUVIL_REDUCE_INFERENCE(ReduceMaxOp, false)
CUVIL_REDUCE_INFERENCE(ReduceMinOp, false)
CUVIL_REDUCE_INFERENCE(ReduceProdOp, false)
#undef CUVIL_REDUCE_INFERENCE

LogicalResult CumSumOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> type =
      getTensorType(adaptor.getInput(), loc, name, "input");
  if (failed(type) ||
      failed(normalizeAxis(adaptor.getAxis(), type->getRank(), loc, name)))
    return failure();
  if (type->getElementType().isInteger(1))
    return inferError(loc, name, "expects numbers, got ", formatType(*type));
  types.push_back(*type);
  return success();
}

/// arg_max, arg_min: a reduction over one axis to i64 indices.
#define CUVIL_ARG_REDUCE_INFERENCE(OP)                                         \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,      \
      SmallVectorImpl<Type> &types) {                                          \
    int64_t axis = adaptor.getAxis();                                          \
    SmallVector<Type> reduced;                                                 \
    if (failed(inferReduce(getOperationName(), loc, adaptor.getInput(), axis,  \
                           adaptor.getKeepdims(), false, reduced)))            \
      return failure();                                                        \
    auto in = cast<RankedTensorType>(adaptor.getInput().getType());            \
    if (in.getDimSize(axis < 0 ? axis + in.getRank() : axis) == 0)             \
      return inferError(loc, getOperationName(),                               \
                        "has no index to give along an empty axis");           \
    types.push_back(cast<RankedTensorType>(reduced[0]).clone(                  \
        IntegerType::get(context, 64)));                                       \
    return success();                                                          \
  }
CUVIL_ARG_REDUCE_INFERENCE(ArgMaxOp)
CUVIL_ARG_REDUCE_INFERENCE(ArgMinOp)
#undef CUVIL_ARG_REDUCE_INFERENCE

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> type =
      getTensorType(adaptor.getInput(), loc, name, "input");
  if (failed(type))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(adaptor.getAxis(), type->getRank(), loc, name);
  if (failed(axis))
    return failure();
  if (adaptor.getEpsilon().convertToDouble() < 0)
    return inferError(loc, name, "expects epsilon >= 0");
  ArrayRef<int64_t> normalized = type->getShape().drop_front(*axis);
  for (auto [what, value] :
       {std::pair<StringRef, Value>{"scale", adaptor.getScale()},
        {"bias", adaptor.getBias()}}) {
    if (!value)
      continue;
    FailureOr<RankedTensorType> paramType =
        getTensorType(value, loc, name, what);
    if (failed(paramType) ||
        failed(checkSameElementType({*type, *paramType}, loc, name)))
      return failure();
    SmallVector<int64_t> merged;
    if (!OpTrait::util::getBroadcastedShape(normalized, paramType->getShape(),
                                            merged) ||
        merged.size() != normalized.size() ||
        failed(verifyCompatibleShape(merged, normalized)))
      return inferError(
          loc, name, what, " of shape ", formatShape(paramType->getShape()),
          " does not match the normalized shape ", formatShape(normalized));
  }
  types.push_back(*type);
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> type =
      getTensorType(adaptor.getInput(), loc, name, "input");
  if (failed(type))
    return failure();
  if (type->getRank() < 2)
    return inferError(loc, name,
                      "expects an input of rank >= 2 (N, C, ...), got ",
                      formatType(*type));
  if (adaptor.getEpsilon().convertToDouble() < 0)
    return inferError(loc, name, "expects epsilon >= 0");
  int64_t channels = type->getDimSize(1);
  std::pair<StringRef, Value> params[] = {{"scale", adaptor.getScale()},
                                          {"bias", adaptor.getBias()},
                                          {"mean", adaptor.getMean()},
                                          {"variance", adaptor.getVariance()}};
  for (auto [what, value] : params) {
    FailureOr<RankedTensorType> paramType =
        getTensorType(value, loc, name, what);
    if (failed(paramType) ||
        failed(checkSameElementType({*type, *paramType}, loc, name)))
      return failure();
    if (paramType->getRank() != 1 ||
        failed(verifyCompatibleShape(paramType->getShape(), {channels})))
      return inferError(loc, name, "expects ", what, " of shape ",
                        formatShape({channels}), " (one per channel), got ",
                        formatType(*paramType));
  }
  types.push_back(*type);
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

template <typename Adaptor>
static LogicalResult inferPool2d(StringRef name, std::optional<Location> loc,
                                 Adaptor adaptor, bool allowDilation,
                                 SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> type =
      getTensorType(adaptor.getInput(), loc, name, "input");
  if (failed(type))
    return failure();
  if (type->getRank() != 4)
    return inferError(loc, name, "expects a 4-D NCHW input, got ",
                      formatType(*type));
  SmallVector<int64_t> strides = withDefault(adaptor.getStrides(), 2, 1);
  SmallVector<int64_t> padding = withDefault(adaptor.getPadding(), 4, 0);
  SmallVector<int64_t> dilations = withDefault(adaptor.getDilations(), 2, 1);
  ArrayRef<int64_t> kernel = adaptor.getKernelShape();
  if (failed(checkAttrList(kernel, 2, 1, "kernel_shape", loc, name)) ||
      failed(checkAttrList(strides, 2, 1, "strides", loc, name)) ||
      failed(checkAttrList(padding, 4, 0, "padding", loc, name)) ||
      failed(checkAttrList(dilations, 2, 1, "dilations", loc, name)))
    return failure();
  if (!allowDilation &&
      llvm::any_of(dilations, [](int64_t d) { return d != 1; }))
    return inferError(loc, name, "does not support dilation");
  SmallVector<int64_t> shape(type->getShape().take_front(2));
  for (int i = 0; i < 2; ++i) {
    FailureOr<int64_t> size = windowOutputSize(
        type->getDimSize(2 + i), kernel[i], strides[i], padding[i],
        padding[2 + i], dilations[i], adaptor.getCeilMode(), loc, name);
    if (failed(size))
      return failure();
    shape.push_back(*size);
  }
  types.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferPool2d(getOperationName(), loc, adaptor, /*allowDilation=*/true,
                     types);
}

LogicalResult MaxPool2dIndicesOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(inferPool2d(getOperationName(), loc, adaptor,
                         /*allowDilation=*/true, types)))
    return failure();
  types.back() =
      cast<RankedTensorType>(types.back()).clone(IntegerType::get(context, 64));
  return success();
}

LogicalResult MaxPool2dOp::verify() {
  // Only a per-tensor type keeps one order on all stored integers.
  if (isa<quant::UniformQuantizedPerAxisType>(
          getElementTypeOrSelf(getInput().getType())))
    return emitOpError("pools quantized values of one scale only (per "
                       "tensor), got ")
           << getInput().getType();
  return success();
}

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferPool2d(getOperationName(), loc, adaptor, /*allowDilation=*/false,
                     types);
}

static LogicalResult inferGlobalPool(StringRef name,
                                     std::optional<Location> loc, Value input,
                                     SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> type = getTensorType(input, loc, name, "input");
  if (failed(type))
    return failure();
  if (type->getRank() < 3)
    return inferError(loc, name,
                      "expects an input of rank >= 3 (N, C, spatial...), got ",
                      formatType(*type));
  SmallVector<int64_t> shape(type->getShape().take_front(2));
  shape.append(type->getRank() - 2, 1);
  types.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult GlobalAvgPoolOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  return inferGlobalPool(getOperationName(), loc, adaptor.getInput(), types);
}

LogicalResult GlobalMaxPoolOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  return inferGlobalPool(getOperationName(), loc, adaptor.getInput(), types);
}

LogicalResult AdaptiveAvgPool2dOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> type =
      getTensorType(adaptor.getInput(), loc, name, "input");
  if (failed(type))
    return failure();
  if (type->getRank() != 4)
    return inferError(loc, name, "expects a 4-D NCHW input, got ",
                      formatType(*type));
  if (failed(checkAttrList(adaptor.getOutputSize(), 2, 1, "output_size", loc,
                           name)))
    return failure();
  SmallVector<int64_t> shape(type->getShape().take_front(2));
  llvm::append_range(shape, adaptor.getOutputSize());
  types.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

#define GET_OP_CLASSES
#include "cuvil/ir/CuvilOps.cpp.inc"
