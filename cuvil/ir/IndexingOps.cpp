//===- IndexingOps.cpp - level1 gathers and scatters of elements ----------===//
//
// Shapes and checks of cuvil.gather_elements, cuvil.scatter_elements and
// cuvil.top_k (IndexingOps.td).
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Inference.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace cuvil::l1;
using namespace cuvil::l1::inference;

namespace {

/// Checks `data` against the `indices` of an element gather or scatter on
/// `axis`: same rank (at least 1), i32 or i64 indices, and outside `axis` no
/// static index dimension larger than data's. Returns the normalized axis.
FailureOr<int64_t> checkElementIndices(StringRef name,
                                       std::optional<Location> loc,
                                       Value dataValue, Value indicesValue,
                                       int64_t axis) {
  FailureOr<RankedTensorType> data = getTensorType(dataValue, loc, name, "data");
  FailureOr<RankedTensorType> indices =
      getTensorType(indicesValue, loc, name, "indices");
  if (failed(data) || failed(indices))
    return failure();
  Type index = indices->getElementType();
  if (!index.isSignlessInteger(32) && !index.isSignlessInteger(64))
    return inferError(loc, name, "expects i32 or i64 indices, got ",
                      formatType(*indices));
  int64_t rank = data->getRank();
  if (rank == 0 || indices->getRank() != rank)
    return inferError(loc, name, "expects data and indices of one rank >= 1, "
                      "got ", formatType(*data), " and ", formatType(*indices));
  FailureOr<int64_t> normalized = normalizeAxis(axis, rank, loc, name);
  if (failed(normalized))
    return failure();
  for (int64_t d = 0; d < rank; ++d) {
    int64_t have = data->getDimSize(d), want = indices->getDimSize(d);
    if (d != *normalized && !ShapedType::isDynamic(have) &&
        !ShapedType::isDynamic(want) && want > have)
      return inferError(loc, name, "indices ", formatType(*indices),
                        " are larger than data ", formatType(*data),
                        " in dimension ", d, " (not the axis)");
  }
  return normalized;
}

} // namespace

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

LogicalResult ScatterElementsOp::verify() {
  StringRef reduction = getReduction();
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
    return emitOpError("has reduction '")
           << reduction << "'; expected none, add, mul, max or min";
  if (reduction != "none" && getType().getElementType().isInteger(1))
    return emitOpError("cannot reduce booleans with '") << reduction << "'";
  return success();
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
