//===- ShapeOps.cpp - level1 shape manipulation and fusion targets -------===//
//
// Inference and verifiers of the reshape family, concat / split, slice,
// pad, gather, expand, and of the fusion targets' regions.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Inference.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace cuvil::l1;
using namespace cuvil::l1::inference;

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> type =
      getTensorType(adaptor.getInput(), loc, name, "input");
  if (failed(type))
    return failure();
  SmallVector<int64_t> shape(adaptor.getShape());
  std::optional<size_t> inferredIndex;
  int64_t knownProduct = 1;
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (dim == -1) {
      if (inferredIndex)
        return inferError(loc, name, "expects at most one -1 in shape ",
                          formatList(adaptor.getShape()));
      inferredIndex = i;
      continue;
    }
    if (dim < 1)
      return inferError(loc, name, "expects shape entries >= 1 or -1, got ",
                        dim);
    knownProduct *= dim;
  }
  int64_t inputElements = product(type->getShape());
  if (!ShapedType::isDynamic(inputElements)) {
    if (inferredIndex) {
      if (inputElements % knownProduct != 0)
        return inferError(loc, name, "cannot reshape ", formatType(*type), " (",
                          inputElements, " elements) to ",
                          formatList(adaptor.getShape()));
      shape[*inferredIndex] = inputElements / knownProduct;
    } else if (inputElements != knownProduct) {
      return inferError(loc, name, "cannot reshape ", formatType(*type), " (",
                        inputElements, " elements) to ",
                        formatList(adaptor.getShape()), " (", knownProduct,
                        " elements)");
    }
  } else if (inferredIndex) {
    shape[*inferredIndex] = kDynamic;
  }
  types.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) -> reshape(x): only the final shape matters.
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    if (getType().hasStaticShape())
      return dense.reshape(cast<ShapedType>(getType()));
  return {};
}

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> type =
      getTensorType(adaptor.getInput(), loc, name, "input");
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  int64_t axis = adaptor.getAxis();
  // Flatten's axis ranges over [-rank, rank] (rank itself is allowed).
  if (axis < -rank || axis > rank)
    return inferError(loc, name, "axis ", axis, " is out of range for rank ",
                      rank, " (expected in [", -rank, ", ", rank, "])");
  if (axis < 0)
    axis += rank;
  ArrayRef<int64_t> shape = type->getShape();
  types.push_back(RankedTensorType::get(
      {product(shape.take_front(axis)), product(shape.drop_front(axis))},
      type->getElementType()));
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> type =
      getTensorType(adaptor.getInput(), loc, name, "input");
  if (failed(type))
    return failure();
  ArrayRef<int64_t> perm = adaptor.getPerm();
  int64_t rank = type->getRank();
  SmallVector<bool> seen(rank, false);
  bool valid = static_cast<int64_t>(perm.size()) == rank;
  for (int64_t p : perm) {
    if (!valid || p < 0 || p >= rank || seen[p]) {
      valid = false;
      break;
    }
    seen[p] = true;
  }
  if (!valid)
    return inferError(loc, name, "perm ", formatList(perm),
                      " is not a permutation of the ", rank,
                      " input dimensions");
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type->getDimSize(p));
  types.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  bool identity = llvm::all_of(llvm::enumerate(perm), [](auto it) {
    return static_cast<int64_t>(it.index()) == it.value();
  });
  if (identity)
    return getInput();
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getInput()))
    return splat.resizeSplat(cast<ShapedType>(getType()));
  return {};
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  if (adaptor.getInputs().empty())
    return inferError(loc, name, "expects at least one input");
  SmallVector<RankedTensorType> inputTypes;
  for (Value input : adaptor.getInputs()) {
    FailureOr<RankedTensorType> type =
        getTensorType(input, loc, name, "inputs");
    if (failed(type))
      return failure();
    inputTypes.push_back(*type);
  }
  if (failed(checkSameElementType(inputTypes, loc, name)))
    return failure();
  int64_t rank = inputTypes.front().getRank();
  FailureOr<int64_t> axis = normalizeAxis(adaptor.getAxis(), rank, loc, name);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(inputTypes.front().getShape());
  shape[*axis] = 0;
  for (RankedTensorType type : inputTypes) {
    if (type.getRank() != rank)
      return inferError(loc, name, "expects inputs of one rank, got ",
                        formatType(inputTypes.front()), " and ",
                        formatType(type));
    for (int64_t d = 0; d < rank; ++d) {
      int64_t size = type.getDimSize(d);
      if (d == *axis) {
        shape[d] =
            ShapedType::isDynamic(shape[d]) || ShapedType::isDynamic(size)
                ? kDynamic
                : shape[d] + size;
        continue;
      }
      if (ShapedType::isDynamic(shape[d])) {
        shape[d] = size;
      } else if (!ShapedType::isDynamic(size) && size != shape[d]) {
        return inferError(loc, name, "inputs differ in dimension ", d,
                          " (not the concatenation axis ", *axis,
                          "): ", formatType(inputTypes.front()), " vs ",
                          formatType(type));
      }
    }
  }
  types.push_back(
      RankedTensorType::get(shape, inputTypes.front().getElementType()));
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  return {};
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *,
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
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  if (sizes.empty())
    return inferError(loc, name, "expects at least one piece in 'sizes'");
  if (failed(checkAttrList(sizes, sizes.size(), 1, "sizes", loc, name)))
    return failure();
  int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  int64_t dim = type->getDimSize(*axis);
  if (!ShapedType::isDynamic(dim) && dim != total)
    return inferError(loc, name, "sizes add up to ", total, " but dimension ",
                      *axis, " of ", formatType(*type), " is ", dim);
  for (int64_t size : sizes) {
    SmallVector<int64_t> shape(type->getShape());
    shape[*axis] = size;
    types.push_back(RankedTensorType::get(shape, type->getElementType()));
  }
  return success();
}

/// Length of a slice along a dimension of static size `dim` (ONNX clamping).
static int64_t sliceLength(int64_t dim, int64_t start, int64_t end,
                           int64_t step) {
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return end > start ? (end - start + step - 1) / step : 0;
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return start > end ? (start - end + (-step) - 1) / (-step) : 0;
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> type =
      getTensorType(adaptor.getInput(), loc, name, "input");
  if (failed(type))
    return failure();
  ArrayRef<int64_t> starts = adaptor.getStarts(), ends = adaptor.getEnds(),
                    steps = adaptor.getSteps();
  size_t count = adaptor.getAxes().size();
  if (starts.size() != count || ends.size() != count || steps.size() != count)
    return inferError(loc, name,
                      "expects starts, ends, axes and steps of one "
                      "length, got ",
                      starts.size(), ", ", ends.size(), ", ", count, " and ",
                      steps.size());
  FailureOr<SmallVector<int64_t>> axes =
      normalizeAxes(adaptor.getAxes(), type->getRank(), loc, name);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> shape(type->getShape());
  for (size_t i = 0; i < count; ++i) {
    if (steps[i] == 0)
      return inferError(loc, name, "expects non-zero steps");
    int64_t dim = shape[(*axes)[i]];
    if (!ShapedType::isDynamic(dim))
      shape[(*axes)[i]] = sliceLength(dim, starts[i], ends[i], steps[i]);
  }
  types.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> type =
      getTensorType(adaptor.getInput(), loc, name, "input");
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  ArrayRef<int64_t> pads = adaptor.getPads();
  if (failed(checkAttrList(pads, 2 * rank, 0, "pads", loc, name)))
    return failure();
  StringRef mode = adaptor.getMode();
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return inferError(loc, name,
                      "expects mode \"constant\", \"reflect\" or "
                      "\"edge\", got \"",
                      mode, "\"");
  SmallVector<int64_t> shape(type->getShape());
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = shape[d];
    if (ShapedType::isDynamic(dim))
      continue;
    if (mode == "reflect" && (pads[d] >= dim || pads[rank + d] >= dim))
      return inferError(loc, name, "reflect padding of dimension ", d,
                        " must be smaller than its size ", dim);
    if (mode == "edge" && dim == 0 && (pads[d] || pads[rank + d]))
      return inferError(loc, name, "cannot edge-pad empty dimension ", d);
    shape[d] = dim + pads[d] + pads[rank + d];
  }
  types.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> dataType =
      getTensorType(adaptor.getData(), loc, name, "data");
  FailureOr<RankedTensorType> indicesType =
      getTensorType(adaptor.getIndices(), loc, name, "indices");
  if (failed(dataType) || failed(indicesType))
    return failure();
  if (!indicesType->getElementType().isSignlessInteger(32) &&
      !indicesType->getElementType().isSignlessInteger(64))
    return inferError(loc, name, "expects i32 or i64 indices, got ",
                      formatType(*indicesType));
  if (dataType->getRank() == 0)
    return inferError(loc, name, "expects data of rank >= 1");
  FailureOr<int64_t> axis =
      normalizeAxis(adaptor.getAxis(), dataType->getRank(), loc, name);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(dataType->getShape().take_front(*axis));
  llvm::append_range(shape, indicesType->getShape());
  llvm::append_range(shape, dataType->getShape().drop_front(*axis + 1));
  types.push_back(RankedTensorType::get(shape, dataType->getElementType()));
  return success();
}

LogicalResult SqueezeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> type =
      getTensorType(adaptor.getInput(), loc, name, "input");
  if (failed(type))
    return failure();
  FailureOr<SmallVector<int64_t>> axes =
      normalizeAxes(adaptor.getAxes(), type->getRank(), loc, name);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> shape;
  for (auto [i, dim] : llvm::enumerate(type->getShape())) {
    if (!llvm::is_contained(*axes, static_cast<int64_t>(i))) {
      shape.push_back(dim);
      continue;
    }
    if (!ShapedType::isDynamic(dim) && dim != 1)
      return inferError(loc, name, "cannot squeeze dimension ", i, " of ",
                        formatType(*type), ": its size is ", dim, ", not 1");
  }
  types.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult UnsqueezeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> type =
      getTensorType(adaptor.getInput(), loc, name, "input");
  if (failed(type))
    return failure();
  int64_t rank = type->getRank() + adaptor.getAxes().size();
  FailureOr<SmallVector<int64_t>> axes =
      normalizeAxes(adaptor.getAxes(), rank, loc, name);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> shape;
  ArrayRef<int64_t> inShape = type->getShape();
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(*axes, d)) {
      shape.push_back(1);
    } else {
      shape.push_back(inShape.front());
      inShape = inShape.drop_front();
    }
  }
  types.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult ExpandOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> type =
      getTensorType(adaptor.getInput(), loc, name, "input");
  if (failed(type))
    return failure();
  if (failed(checkAttrList(adaptor.getShape(), adaptor.getShape().size(), 1,
                           "shape", loc, name)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      broadcast(type->getShape(), adaptor.getShape(), loc, name);
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, type->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Fusion targets
//===----------------------------------------------------------------------===//

/// Checks that `region`'s block takes `argTypes` and yields `yieldTypes`.
static LogicalResult verifyRegionSignature(Operation *op, Region &region,
                                           StringRef regionName,
                                           TypeRange argTypes,
                                           TypeRange yieldTypes) {
  Block &block = region.front();
  if (block.getArgumentTypes() != argTypes)
    return op->emitOpError("expects the ")
           << regionName << " region to take (" << formatTypes(argTypes)
           << "), got (" << formatTypes(block.getArgumentTypes()) << ")";
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return op->emitOpError("expects the ")
           << regionName << " region to end with cuvil.yield";
  if (yield.getValues().getTypes() != yieldTypes)
    return op->emitOpError("expects the ")
           << regionName << " region to yield (" << formatTypes(yieldTypes)
           << "), got (" << formatTypes(yield.getValues().getTypes()) << ")";
  return success();
}

LogicalResult MapReduceOp::verifyRegions() {
  StringRef name = getOperationName();
  SmallVector<Type> scalarTypes;
  SmallVector<int64_t> shape;
  for (Value input : getInputs()) {
    auto type = cast<RankedTensorType>(input.getType());
    scalarTypes.push_back(type.getElementType());
    FailureOr<SmallVector<int64_t>> merged =
        broadcast(shape, type.getShape(), getLoc(), name);
    if (failed(merged))
      return failure();
    shape = std::move(*merged);
  }
  if (getInputs().empty())
    return emitOpError("expects at least one input");
  Type resultElement = cast<RankedTensorType>(getType()).getElementType();
  if (failed(verifyRegionSignature(*this, getMap(), "map", scalarTypes,
                                   {resultElement})))
    return failure();

  ArrayRef<int64_t> reductionDims = getReductionDims();
  if (reductionDims.empty()) {
    if (!getReduce().empty() || getInit() || getKeepdims())
      return emitOpError("without reduction_dims is a pure map: it takes no "
                         "reduce region, init or keepdims");
  } else {
    if (getReduce().empty())
      return emitOpError("with reduction_dims needs a reduce region");
    if (!getInit() || getInit()->getType() != resultElement)
      return emitOpError("with reduction_dims needs an init value of type ")
             << resultElement;
    if (failed(verifyRegionSignature(*this, getReduce(), "reduce",
                                     {resultElement, resultElement},
                                     {resultElement})))
      return failure();
  }
  FailureOr<SmallVector<int64_t>> dims =
      normalizeAxes(reductionDims, shape.size(), getLoc(), name);
  if (failed(dims))
    return failure();
  SmallVector<int64_t> expected;
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (!llvm::is_contained(*dims, static_cast<int64_t>(i)))
      expected.push_back(dim);
    else if (getKeepdims())
      expected.push_back(1);
  }
  auto resultType = cast<RankedTensorType>(getType());
  if (resultType.getRank() != static_cast<int64_t>(expected.size()) ||
      failed(verifyCompatibleShape(resultType.getShape(), expected)))
    return emitOpError("result ")
           << formatType(resultType) << " does not match the iteration shape "
           << formatShape(shape) << " reduced over "
           << formatList(reductionDims) << " (expected "
           << formatShape(expected) << ")";
  return success();
}

LogicalResult FusedGroupOp::verifyRegions() {
  return verifyRegionSignature(*this, getBody(), "body", getInputs().getTypes(),
                               getResultTypes());
}

