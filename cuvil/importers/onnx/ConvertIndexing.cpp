//===- ConvertIndexing.cpp - ONNX gathers, scatters and TopK ---------------===//
//
// Element-wise gathers and scatters (torch.gather, Tensor.scatter_) onto
// cuvil.gather_elements and cuvil.scatter_elements, GatherND and ScatterND
// onto cuvil.gather_nd and cuvil.scatter_nd, and TopK onto cuvil.top_k
// (IndexingOps.td), whose inference checks shapes and dtypes.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

namespace cuvil::onnx_import {

LogicalResult Importer::convertGatherElements(const onnx::NodeProto &node,
                                              Location loc) {
  FailureOr<Value> data = getValue(node, 0), indices = getValue(node, 1);
  if (failed(data) || failed(indices))
    return failure();
  return defineResult(node, create<l1::GatherElementsOp>(
                                loc, *data, *indices,
                                builder.getI64IntegerAttr(
                                    attrInt(node, "axis", 0))));
}

/// ScatterElements, and Scatter (its name in opsets 9 and 10).
LogicalResult Importer::convertScatterElements(const onnx::NodeProto &node,
                                               Location loc) {
  FailureOr<Value> data = getValue(node, 0), indices = getValue(node, 1),
                   updates = getValue(node, 2);
  if (failed(data) || failed(indices) || failed(updates))
    return failure();
  std::string reduction = attrString(node, "reduction", "none");
  return defineResult(node, create<l1::ScatterElementsOp>(
                                loc, *data, *indices, *updates,
                                builder.getI64IntegerAttr(
                                    attrInt(node, "axis", 0)),
                                builder.getStringAttr(reduction)));
}

LogicalResult Importer::convertGatherND(const onnx::NodeProto &node,
                                        Location loc) {
  FailureOr<Value> data = getValue(node, 0), indices = getValue(node, 1);
  if (failed(data) || failed(indices))
    return failure();
  return defineResult(node, create<l1::GatherNDOp>(
                                loc, *data, *indices,
                                builder.getI64IntegerAttr(
                                    attrInt(node, "batch_dims", 0))));
}

LogicalResult Importer::convertScatterND(const onnx::NodeProto &node,
                                         Location loc) {
  FailureOr<Value> data = getValue(node, 0), indices = getValue(node, 1),
                   updates = getValue(node, 2);
  if (failed(data) || failed(indices) || failed(updates))
    return failure();
  return defineResult(
      node, create<l1::ScatterNDOp>(
                loc, *data, *indices, *updates,
                builder.getStringAttr(attrString(node, "reduction", "none"))));
}

/// TopK: k is an attribute before opset 10 and a constant input from then
/// on (a k computed at run time would make the result's shape dynamic).
LogicalResult Importer::convertTopK(const onnx::NodeProto &node,
                                    Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  int64_t k = attrInt(node, "k", -1);
  if (opset >= 10) {
    FailureOr<SmallVector<int64_t>> ks = requireInts(node, 1, "k");
    if (failed(ks))
      return failure();
    if (ks->size() != 1)
      return emitError(loc) << "TopK expects one k, got " << ks->size()
                            << " values";
    k = ks->front();
  }
  FailureOr<Operation *> op = createTyped<l1::TopKOp>(
      loc, 2, *x, builder.getI64IntegerAttr(k),
      builder.getI64IntegerAttr(attrInt(node, "axis", -1)),
      builder.getBoolAttr(attrInt(node, "largest", 1) != 0),
      builder.getBoolAttr(attrInt(node, "sorted", 1) != 0));
  if (failed(op))
    return failure();
  define(node, 0, (*op)->getResult(0));
  define(node, 1, (*op)->getResult(1));
  return success();
}

} // namespace cuvil::onnx_import
