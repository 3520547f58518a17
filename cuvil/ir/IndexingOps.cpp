//===- IndexingOps.cpp - level1 gathers and scatters of elements ----------===//
//
// Shapes and checks of cuvil.gather_elements, cuvil.scatter_elements,
// cuvil.gather_nd, cuvil.scatter_nd, cuvil.top_k and cuvil.roi_align
// (IndexingOps.td).
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Inference.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace cuvil::l1;
using namespace cuvil::l1::inference;

namespace {

/// The tensor types of `data` and its `indices`, which must be i32 or i64.
FailureOr<std::pair<RankedTensorType, RankedTensorType>>
getIndexedTypes(StringRef name, std::optional<Location> loc, Value dataValue,
                Value indicesValue) {
  FailureOr<RankedTensorType> data = getTensorType(dataValue, loc, name, "data");
  FailureOr<RankedTensorType> indices =
      getTensorType(indicesValue, loc, name, "indices");
  if (failed(data) || failed(indices))
    return failure();
  Type index = indices->getElementType();
  if (!index.isSignlessInteger(32) && !index.isSignlessInteger(64))
    return inferError(loc, name, "expects i32 or i64 indices, got ",
                      formatType(*indices));
  return std::make_pair(*data, *indices);
}

/// Checks `data` against the `indices` of an element gather or scatter on
/// `axis`: same rank (at least 1), i32 or i64 indices, and outside `axis` no
/// static index dimension larger than data's. Returns the normalized axis.
FailureOr<int64_t> checkElementIndices(StringRef name,
                                       std::optional<Location> loc,
                                       Value dataValue, Value indicesValue,
                                       int64_t axis) {
  FailureOr<std::pair<RankedTensorType, RankedTensorType>> types =
      getIndexedTypes(name, loc, dataValue, indicesValue);
  if (failed(types))
    return failure();
  auto [data, indices] = *types;
  int64_t rank = data.getRank();
  if (rank == 0 || indices.getRank() != rank)
    return inferError(loc, name, "expects data and indices of one rank >= 1, "
                      "got ", formatType(data), " and ", formatType(indices));
  FailureOr<int64_t> normalized = normalizeAxis(axis, rank, loc, name);
  if (failed(normalized))
    return failure();
  for (int64_t d = 0; d < rank; ++d) {
    int64_t have = data.getDimSize(d), want = indices.getDimSize(d);
    if (d != *normalized && !ShapedType::isDynamic(have) &&
        !ShapedType::isDynamic(want) && want > have)
      return inferError(loc, name, "indices ", formatType(indices),
                        " are larger than data ", formatType(data),
                        " in dimension ", d, " (not the axis)");
  }
  return normalized;
}

/// The tuple length m of an N-D gather or scatter of `data` by `indices`
/// after `batchDims` shared dimensions: i32 or i64 indices of rank >= 1
/// whose static last dimension is in [1, rank(data) - batchDims], and the
/// batch dimensions equal where both are static.
FailureOr<int64_t> checkTupleIndices(StringRef name,
                                     std::optional<Location> loc,
                                     Value dataValue, Value indicesValue,
                                     int64_t batchDims) {
  FailureOr<std::pair<RankedTensorType, RankedTensorType>> types =
      getIndexedTypes(name, loc, dataValue, indicesValue);
  if (failed(types))
    return failure();
  auto [data, indices] = *types;
  int64_t rank = data.getRank(), q = indices.getRank();
  if (batchDims < 0 || batchDims >= std::min(rank, q))
    return inferError(loc, name, "has batch_dims ", batchDims,
                      ", expected in [0, ", std::min(rank, q), ") for ",
                      formatType(data), " and ", formatType(indices));
  int64_t m = q == 0 ? ShapedType::kDynamic : indices.getDimSize(q - 1);
  if (ShapedType::isDynamic(m) || m < 1 || m > rank - batchDims)
    return inferError(loc, name, "expects indices whose last dimension is a "
                      "static tuple length in [1, ", rank - batchDims,
                      "], got ", formatType(indices));
  for (int64_t d = 0; d < batchDims; ++d) {
    int64_t have = data.getDimSize(d), want = indices.getDimSize(d);
    if (!ShapedType::isDynamic(have) && !ShapedType::isDynamic(want) &&
        have != want)
      return inferError(loc, name, "expects indices ", formatType(indices),
                        " to share batch dimension ", d, " of ",
                        formatType(data));
  }
  return m;
}

} // namespace

LogicalResult GatherNDOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  int64_t batchDims = adaptor.getBatchDims();
  FailureOr<int64_t> m =
      checkTupleIndices(getOperationName(), loc, adaptor.getData(),
                        adaptor.getIndices(), batchDims);
  if (failed(m))
    return failure();
  auto data = cast<RankedTensorType>(adaptor.getData().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, data.getShape().drop_front(batchDims + *m));
  types.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

LogicalResult ScatterNDOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<int64_t> m = checkTupleIndices(name, loc, adaptor.getData(),
                                           adaptor.getIndices(), 0);
  FailureOr<RankedTensorType> updates =
      getTensorType(adaptor.getUpdates(), loc, name, "updates");
  if (failed(m) || failed(updates))
    return failure();
  auto data = cast<RankedTensorType>(adaptor.getData().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  if (updates->getElementType() != data.getElementType())
    return inferError(loc, name, "expects updates of data's element type, got ",
                      formatType(*updates), " for ", formatType(data));
  SmallVector<int64_t> want(indices.getShape().drop_back());
  llvm::append_range(want, data.getShape().drop_front(*m));
  if (failed(verifyCompatibleShape(updates->getShape(), want)))
    return inferError(loc, name, "expects updates of shape ",
                      formatShape(want), ", got ", formatType(*updates));
  types.push_back(data);
  return success();
}

LogicalResult GatherElementsOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  if (failed(checkElementIndices(getOperationName(), loc, adaptor.getData(),
                                 adaptor.getIndices(), adaptor.getAxis())))
    return failure();
  auto data = cast<RankedTensorType>(adaptor.getData().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  types.push_back(
      RankedTensorType::get(indices.getShape(), data.getElementType()));
  return success();
}

LogicalResult ScatterElementsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  if (failed(checkElementIndices(name, loc, adaptor.getData(),
                                 adaptor.getIndices(), adaptor.getAxis())))
    return failure();
  FailureOr<RankedTensorType> updates =
      getTensorType(adaptor.getUpdates(), loc, name, "updates");
  if (failed(updates))
    return failure();
  auto data = cast<RankedTensorType>(adaptor.getData().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  if (updates->getElementType() != data.getElementType())
    return inferError(loc, name, "expects updates of data's element type, got ",
                      formatType(*updates), " for ", formatType(data));
  if (failed(verifyCompatibleShape(updates->getShape(), indices.getShape())))
    return inferError(loc, name, "expects updates of indices' shape, got ",
                      formatType(*updates), " and ", formatType(indices));
  types.push_back(data);
  return success();
}

/// A scatter's reduction: one of ONNX's, and none on booleans.
static LogicalResult verifyReduction(Operation *op, StringRef reduction,
                                     Type element) {
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
    return op->emitOpError("has reduction '")
           << reduction << "'; expected none, add, mul, max or min";
  if (reduction != "none" && element.isInteger(1))
    return op->emitOpError("cannot reduce booleans with '") << reduction << "'";
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  return verifyReduction(*this, getReduction(), getType().getElementType());
}

LogicalResult ScatterNDOp::verify() {
  return verifyReduction(*this, getReduction(), getType().getElementType());
}

LogicalResult TopKOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> input =
      getTensorType(adaptor.getInput(), loc, name, "input");
  if (failed(input))
    return failure();
  if (input->getElementType().isInteger(1))
    return inferError(loc, name, "cannot rank booleans, got ",
                      formatType(*input));
  if (input->getRank() == 0)
    return inferError(loc, name, "expects an input of rank >= 1, got ",
                      formatType(*input));
  FailureOr<int64_t> axis =
      normalizeAxis(adaptor.getAxis(), input->getRank(), loc, name);
  if (failed(axis))
    return failure();
  int64_t k = adaptor.getK(), dim = input->getDimSize(*axis);
  if (k < 1)
    return inferError(loc, name, "expects k >= 1, got ", k);
  if (!ShapedType::isDynamic(dim) && k > dim)
    return inferError(loc, name, "k = ", k, " exceeds dimension ", *axis,
                      " of ", formatType(*input));
  SmallVector<int64_t> shape(input->getShape());
  shape[*axis] = k;
  types.push_back(RankedTensorType::get(shape, input->getElementType()));
  types.push_back(RankedTensorType::get(shape, IntegerType::get(context, 64)));
  return success();
}

LogicalResult RoiAlignOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  FailureOr<RankedTensorType> input =
      getTensorType(adaptor.getInput(), loc, name, "input");
  FailureOr<RankedTensorType> rois =
      getTensorType(adaptor.getRois(), loc, name, "rois");
  FailureOr<RankedTensorType> indices =
      getTensorType(adaptor.getBatchIndices(), loc, name, "batch_indices");
  if (failed(input) || failed(rois) || failed(indices))
    return failure();
  if (input->getRank() != 4 || input->getDimSize(2) == 0 ||
      input->getDimSize(3) == 0)
    return inferError(loc, name, "expects an NCHW input of at least 1 x 1 "
                      "pixels, got ", formatType(*input));
  if (rois->getRank() != 2 || rois->getDimSize(1) != 4 ||
      rois->getElementType() != input->getElementType())
    return inferError(loc, name, "expects rois [R, 4] of the input's element "
                      "type, got ", formatType(*rois));
  int64_t regions = rois->getDimSize(0),
          listed = indices->getRank() == 1 ? indices->getDimSize(0) : 0;
  if (indices->getRank() != 1 ||
      (!ShapedType::isDynamic(regions) && !ShapedType::isDynamic(listed) &&
       regions != listed))
    return inferError(loc, name, "expects one batch index per region (",
                      formatType(*rois), "), got ", formatType(*indices));
  // I64Attr getters are unsigned: read the attributes as signed.
  int64_t height = adaptor.getOutputHeightAttr().getInt(),
          width = adaptor.getOutputWidthAttr().getInt(),
          ratio = adaptor.getSamplingRatioAttr().getInt();
  // A fixed grid of sampling_ratio^2 points per bin is all visited.
  constexpr int64_t kMaxSamplingRatio = 1024;
  if (height < 1 || width < 1 || ratio < 0 || ratio > kMaxSamplingRatio)
    return inferError(loc, name, "expects an output of at least 1 x 1 and a "
                      "sampling_ratio in [0, ", kMaxSamplingRatio, "], got ",
                      height, " x ", width, " and ", ratio);
  double scale = adaptor.getSpatialScale().convertToDouble();
  if (!(scale > 0) || !std::isfinite(scale))
    return inferError(loc, name, "expects a positive, finite spatial_scale, "
                      "got ", scale);
  if (ShapedType::isDynamic(regions))
    regions = listed;
  types.push_back(RankedTensorType::get(
      {regions, input->getDimSize(1), height, width}, input->getElementType()));
  return success();
}
