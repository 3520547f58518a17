//===- ConvertIndexing.cpp - ONNX GatherElements and ScatterElements ------===//
//
// Element-wise gathers and scatters (torch.gather, Tensor.scatter_) onto
// cuvil.gather_elements and cuvil.scatter_elements (IndexingOps.td), whose
// inference checks shapes and dtypes.
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

} // namespace cuvil::onnx_import
