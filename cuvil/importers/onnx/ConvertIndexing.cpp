//===- ConvertIndexing.cpp - ONNX gathers, scatters and TopK ---------------===//
//
// Element-wise gathers and scatters (torch.gather, Tensor.scatter_) onto
// cuvil.gather_elements and cuvil.scatter_elements, GatherND and ScatterND
// onto cuvil.gather_nd and cuvil.scatter_nd, and TopK onto cuvil.top_k
// (IndexingOps.td), whose inference checks shapes and dtypes.
// ReverseSequence is a gather along time of indices computed from the
// lengths, MaxUnpool a scatter of the values into zeros at MaxPool's
// flattened indices, Compress (of a constant condition) a gather. RoiAlign
// is one cuvil.roi_align.
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

/// y[.., t, ..] = x[.., len - 1 - t, ..] for t < len, the batch's length,
/// and x[.., t, ..] beyond it.
LogicalResult Importer::convertReverseSequence(const onnx::NodeProto &node,
                                               Location loc) {
  FailureOr<Value> x = getValue(node, 0), lens = getValue(node, 1);
  if (failed(x) || failed(lens))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  auto lensType = cast<RankedTensorType>(lens->getType());
  int64_t rank = type.getRank(), time = attrInt(node, "time_axis", 0),
          batch = attrInt(node, "batch_axis", 1);
  if (rank < 2 || !type.hasStaticShape() || type.getDimSize(0) > kMaxBuiltElements ||
      type.getDimSize(1) > kMaxBuiltElements)
    return emitError(loc) << "ReverseSequence expects a static input of rank "
                          << ">= 2 (time and batch of at most "
                          << kMaxBuiltElements << "), got " << type;
  if (!((time == 0 && batch == 1) || (time == 1 && batch == 0)))
    return emitError(loc) << "ReverseSequence axes are 0 and 1 (time_axis "
                          << time << ", batch_axis " << batch << ")";
  if (lensType.getRank() != 1 ||
      lensType.getDimSize(0) != type.getDimSize(batch) ||
      !lensType.getElementType().isSignlessInteger())
    return emitError(loc) << "ReverseSequence expects one integer length per "
                          << "batch entry (" << type.getDimSize(batch)
                          << "), got " << lensType;
  Type i64 = builder.getI64Type();
  Value length = *lens;
  if (lensType.getElementType() != i64)
    length = l1::CastOp::create(builder, loc, lensType.clone(i64), length);
  SmallVector<int64_t> others;
  for (int64_t d = 0; d < rank; ++d)
    if (d != batch)
      others.push_back(d);
  FailureOr<Value> perBatch = create<l1::UnsqueezeOp>(
      loc, length, builder.getDenseI64ArrayAttr(others));
  Value steps = l1::ConstantOp::create(
      builder, loc, iotaAlong(builder, rank, time, type.getDimSize(time)));
  FailureOr<Value> inside =
      failed(perBatch) ? perBatch : create<l1::LessOp>(loc, steps, *perBatch);
  FailureOr<Value> last =
      failed(perBatch) ? perBatch
                       : create<l1::SubOp>(loc, *perBatch,
                                           scalarConstant(loc, i64, 1));
  FailureOr<Value> mirrored =
      failed(last) ? last : create<l1::SubOp>(loc, *last, steps);
  if (failed(inside) || failed(mirrored))
    return failure();
  FailureOr<Value> index = create<l1::WhereOp>(loc, *inside, *mirrored, steps);
  FailureOr<Value> full =
      failed(index) ? index
                    : create<l1::ExpandOp>(
                          loc, *index,
                          builder.getDenseI64ArrayAttr(type.getShape()));
  if (failed(full))
    return failure();
  return defineResult(node, create<l1::GatherElementsOp>(
                                loc, *x, *full, builder.getI64IntegerAttr(time)));
}

/// Scatters x into zeros of the unpooled shape (each spatial dim (in - 1) *
/// stride + kernel - pads) at MaxPool's indices, which count over the whole
/// tensor; a larger output_shape (a constant) pads the result at the end.
LogicalResult Importer::convertMaxUnpool(const onnx::NodeProto &node,
                                         Location loc) {
  FailureOr<Value> x = getValue(node, 0), indices = getValue(node, 1);
  if (failed(x) || failed(indices))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank(), spatial = rank - 2;
  std::optional<SmallVector<int64_t>> kernel = attrInts(node, "kernel_shape");
  if (rank < 3 || !type.hasStaticShape())
    return emitError(loc) << "MaxUnpool expects a static input [N, C, d1, ...], "
                          << "got " << type;
  if (!kernel || static_cast<int64_t>(kernel->size()) != spatial)
    return emitError(loc) << "MaxUnpool needs kernel_shape, one size per "
                          << "spatial dim (" << spatial << ")";
  SmallVector<int64_t> strides =
      attrInts(node, "strides").value_or(SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> pads =
      attrInts(node, "pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
  // Bounded, so that the unpooled sizes below cannot overflow.
  auto within = [](ArrayRef<int64_t> v, int64_t low) {
    return llvm::all_of(v, [&](int64_t x) { return x >= low && x < (1 << 30); });
  };
  if (static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial || !within(*kernel, 1) ||
      !within(strides, 1) || !within(pads, 0))
    return emitError(loc) << "MaxUnpool expects " << spatial << " kernel sizes "
                          << "and strides in [1, 2^30) and " << 2 * spatial
                          << " pads in [0, 2^30)";
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t window = (*kernel)[d] - pads[d] - pads[d + spatial];
    if (llvm::MulOverflow(shape[d + 2] - 1, strides[d], shape[d + 2]) ||
        llvm::AddOverflow(shape[d + 2], window, shape[d + 2]))
      return emitError(loc) << "MaxUnpool of " << type << " overflows its "
                            << "output size";
  }
  SmallVector<int64_t> wanted = shape;
  if (hasInput(node, 2)) {
    FailureOr<SmallVector<int64_t>> given =
        requireInts(node, 2, "output_shape");
    if (failed(given))
      return failure();
    wanted = *given;
  }
  bool fits = static_cast<int64_t>(wanted.size()) == rank;
  for (int64_t d = 0; fits && d < rank; ++d)
    fits = shape[d] >= 1 && wanted[d] >= shape[d] && (d >= 2 || wanted[d] == shape[d]);
  if (!fits)
    return emitError(loc) << "MaxUnpool cannot unpool " << type << " to "
                          << shapeString(wanted) << " (unpooled, it is "
                          << shapeString(shape) << ")";
  int64_t total = 1;
  for (int64_t d : shape)
    if (llvm::MulOverflow(total, d, total))
      return emitError(loc) << "MaxUnpool's output " << shapeString(shape)
                            << " has more than 2^63 elements";
  auto flatType = RankedTensorType::get({total}, type.getElementType());
  Value zeros = l1::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(flatType, builder.getZeroAttr(type.getElementType())));
  auto flat = builder.getDenseI64ArrayAttr({-1});
  FailureOr<Value> values = create<l1::ReshapeOp>(loc, *x, flat);
  FailureOr<Value> at = create<l1::ReshapeOp>(loc, *indices, flat);
  if (failed(values) || failed(at))
    return failure();
  FailureOr<Value> scattered = create<l1::ScatterElementsOp>(
      loc, zeros, *at, *values, builder.getI64IntegerAttr(0),
      builder.getStringAttr("none"));
  FailureOr<Value> unpooled =
      failed(scattered) ? scattered
                        : create<l1::ReshapeOp>(
                              loc, *scattered, builder.getDenseI64ArrayAttr(shape));
  if (failed(unpooled) || wanted == shape)
    return defineResult(node, unpooled);
  // A larger output_shape: ONNX keeps the indices' positions in the
  // unpooled shape and pads with zeros after them.
  SmallVector<int64_t> after(2 * rank, 0);
  for (int64_t d = 0; d < rank; ++d)
    after[rank + d] = wanted[d] - shape[d];
  return defineResult(node, create<l1::PadOp>(
                                loc, *unpooled, builder.getDenseI64ArrayAttr(after),
                                builder.getStringAttr("constant"),
                                builder.getF64FloatAttr(0.0)));
}

/// Compress keeps the slices along `axis` (of the flattened input without
/// one) where the condition is true. Its output's shape depends on the
/// condition's values, so they must be known at compile time (a mask of
/// features, say); it is then a gather of the kept positions.
LogicalResult Importer::convertCompress(const onnx::NodeProto &node,
                                        Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  const HostTensor *condition = getHost(node, 1);
  if (!condition || condition->hasUnknown())
    return emitError(loc) << "Compress needs its condition at compile time: "
                          << "the output's shape depends on its values";
  auto type = cast<RankedTensorType>(x->getType());
  Value input = *x;
  int64_t axis = 0;
  if (const onnx::AttributeProto *given = attr(node, "axis")) {
    axis = given->i() < 0 ? given->i() + type.getRank() : given->i();
    if (axis < 0 || axis >= type.getRank())
      return emitError(loc) << "Compress axis " << given->i()
                            << " is out of range for " << type;
  } else {
    FailureOr<Value> flat =
        create<l1::ReshapeOp>(loc, *x, builder.getDenseI64ArrayAttr({-1}));
    if (failed(flat))
      return failure();
    input = *flat;
  }
  int64_t size = cast<RankedTensorType>(input.getType()).getDimSize(axis);
  if (ShapedType::isDynamic(size) || condition->numElements() > size)
    return emitError(loc) << "Compress has " << condition->numElements()
                          << " conditions for a dimension of "
                          << (ShapedType::isDynamic(size) ? std::string("?")
                                                          : std::to_string(size));
  SmallVector<int64_t> kept;
  for (int64_t i = 0; i < condition->numElements(); ++i)
    if (condition->at(i) != 0)
      kept.push_back(i);
  if (kept.empty())
    return emitError(loc) << "Compress keeps nothing: Cuvil's tensors have no "
                          << "empty dimensions";
  Value at = l1::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(
          RankedTensorType::get({static_cast<int64_t>(kept.size())},
                                builder.getI64Type()),
          ArrayRef<int64_t>(kept)));
  return defineResult(node, create<l1::GatherOp>(loc, input, at,
                                                 builder.getI64IntegerAttr(axis)));
}

/// RoiAlign as one cuvil.roi_align; half precision computes in float32.
LogicalResult Importer::convertRoiAlign(const onnx::NodeProto &node,
                                        Location loc) {
  FailureOr<Value> x = getValue(node, 0), rois = getValue(node, 1),
                   indices = getValue(node, 2);
  if (failed(x) || failed(rois) || failed(indices))
    return failure();
  std::string mode = attrString(node, "mode", "avg");
  std::string transform =
      attrString(node, "coordinate_transformation_mode",
                 opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (mode != "avg" && mode != "max")
    return emitError(loc) << "RoiAlign mode must be 'avg' or 'max', got '"
                          << mode << "'";
  if (transform != "half_pixel" && transform != "output_half_pixel")
    return emitError(loc) << "RoiAlign coordinate_transformation_mode must be "
                          << "'half_pixel' or 'output_half_pixel', got '"
                          << transform << "'";
  auto type = cast<RankedTensorType>(x->getType());
  Type element = type.getElementType();
  bool widen = isa<FloatType>(element) && element.getIntOrFloatBitWidth() < 32;
  auto toF32 = [&](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return l1::CastOp::create(builder, loc, t.clone(builder.getF32Type()), v)
        .getResult();
  };
  Value input = widen ? toF32(*x) : *x, boxes = *rois;
  if (widen && cast<RankedTensorType>(boxes.getType()).getElementType() ==
                   element)
    boxes = toF32(boxes);
  FailureOr<Value> r = create<l1::RoiAlignOp>(
      loc, input, boxes, *indices,
      builder.getI64IntegerAttr(attrInt(node, "output_height", 1)),
      builder.getI64IntegerAttr(attrInt(node, "output_width", 1)),
      builder.getI64IntegerAttr(attrInt(node, "sampling_ratio", 0)),
      f64Attr(node, "spatial_scale", 1.0),
      transform == "half_pixel" ? builder.getUnitAttr() : UnitAttr(),
      mode == "max" ? builder.getUnitAttr() : UnitAttr());
  if (succeeded(r) && widen)
    r = l1::CastOp::create(builder, loc,
                           cast<RankedTensorType>(r->getType()).clone(element),
                           *r)
            .getResult();
  return defineResult(node, r);
}

} // namespace cuvil::onnx_import
