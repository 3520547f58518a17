//===- ConvertShapes.cpp - shapes, data movement, constants ------------------===//
//
// Flatten, Reshape, Transpose, Concat, Split, Slice, Squeeze, Unsqueeze,
// Gather, Expand, Pad, Shape, Constant, ConstantOfShape.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

#include <numeric>
#include <optional>

namespace cuvil::onnx_import {
namespace {

/// A known integer tensor rearranged at import time: output element at
/// `index` takes input element source(index). Shape subgraphs need it: the
/// reversal and transpose torch.onnx writes a Pad's pads with.
std::optional<HostTensor>
rearrangeHost(const HostTensor *host, ArrayRef<int64_t> shape,
              llvm::function_ref<int64_t(ArrayRef<int64_t>)> source) {
  if (!host || host->isFloat() || host->hasUnknown())
    return std::nullopt;
  HostTensor result;
  result.elementType = host->elementType;
  result.shape.assign(shape.begin(), shape.end());
  int64_t count = std::accumulate(shape.begin(), shape.end(), int64_t{1},
                                  std::multiplies<int64_t>());
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    result.ints.push_back(host->ints[source(index)]);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return result;
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

} // namespace

LogicalResult Importer::convertFlatten(const onnx::NodeProto &node,
                                       Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> r = create<l1::FlattenOp>(
      loc, *x, builder.getI64IntegerAttr(attrInt(node, "axis", 1)));
  return defineResult(node, r);
}

LogicalResult Importer::convertReshape(const onnx::NodeProto &node,
                                       Location loc) {
  SmallVector<int64_t> shape;
  if (opset < 5) {
    shape = attrInts(node, "shape").value_or(SmallVector<int64_t>{});
  } else {
    FailureOr<SmallVector<int64_t>> s = requireInts(node, 1, "target shape");
    if (failed(s))
      return failure();
    shape = *s;
  }
  // Input dims: of the host tensor if known (shape vectors are reshaped
  // too), else of the level1 value.
  const HostTensor *host = getHost(node, 0);
  SmallVector<int64_t> inputShape;
  if (host) {
    inputShape = host->shape;
  } else {
    FailureOr<RankedTensorType> type = getType(node, 0);
    if (failed(type))
      return failure();
    inputShape.assign(type->getShape().begin(), type->getShape().end());
  }
  bool allowZero = attrInt(node, "allowzero", 0);
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d == 0 && !allowZero) {
      // 0 copies the input dimension.
      if (i >= inputShape.size())
        return emitError(loc)
               << "Reshape shape " << shapeString(shape) << " copies dim " << i
               << " of a rank-" << inputShape.size() << " input";
      d = ShapedType::isDynamic(inputShape[i]) ? kUnknown : inputShape[i];
    }
  }
  // With one run-time symbol N (the dynamic batch), a target like [N, -1]
  // is resolved: the input has c * N elements, so -1 is c / (product of the
  // static entries), and N's entry becomes level1's inferred -1.
  int64_t numUnknown = llvm::count(shape, kUnknown);
  int64_t numInferred = llvm::count(shape, int64_t{-1});
  int64_t inputDynamic = 0, inputStatic = 1;
  for (int64_t d : inputShape) {
    if (ShapedType::isDynamic(d) || d == kUnknown)
      ++inputDynamic;
    else
      inputStatic *= d;
  }
  if (numUnknown == 1 && numInferred == 1 && inputDynamic == 1 &&
      dynamicSymbols.size() <= 1) {
    int64_t targetStatic = 1;
    for (int64_t d : shape)
      if (d != kUnknown && d != -1)
        targetStatic *= d;
    if (targetStatic == 0 || inputStatic % targetStatic != 0)
      return emitError(loc)
             << "Reshape cannot reshape " << shapeString(inputShape) << " to "
             << shapeString(shape);
    for (int64_t &d : shape)
      if (d == -1)
        d = inputStatic / targetStatic;
    numInferred = 0;
  }
  if (numUnknown + numInferred > 1)
    return emitError(loc) << "Reshape target shape " << shapeString(shape)
                          << " has more than one dimension unknown at compile "
                             "time; fix the input shapes with --input-shape";
  for (int64_t &d : shape)
    if (d == kUnknown)
      d = -1;
  if (host) {
    HostTensor result = *host;
    int64_t known = 1;
    for (int64_t d : shape)
      if (d != -1)
        known *= d;
    for (int64_t &d : shape)
      if (d == -1 && known)
        d = result.numElements() / known;
    if (std::accumulate(shape.begin(), shape.end(), int64_t{1},
                        std::multiplies<int64_t>()) != result.numElements())
      return emitError(loc) << "Reshape of " << result.numElements()
                            << " elements to " << shapeString(shape);
    result.shape = shape;
    defineHost(node, 0, std::move(result));
    return success();
  }
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> r =
      create<l1::ReshapeOp>(loc, *x, builder.getDenseI64ArrayAttr(shape));
  return defineResult(node, r);
}

LogicalResult Importer::convertTranspose(const onnx::NodeProto &node,
                                         Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
  SmallVector<int64_t> perm;
  if (auto p = attrInts(node, "perm"))
    perm = *p;
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  // Folded only for a true permutation; the op's verifier reports others.
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  bool permutation = static_cast<int64_t>(perm.size()) == rank;
  for (int64_t i = 0; permutation && i < rank; ++i)
    permutation = sorted[i] == i;
  if (const HostTensor *host = getHost(node, 0);
      host && permutation &&
      static_cast<int64_t>(host->shape.size()) == rank) {
    SmallVector<int64_t> shape, strides = stridesOf(host->shape);
    for (int64_t d : perm)
      shape.push_back(host->shape[d]);
    if (std::optional<HostTensor> result =
            rearrangeHost(host, shape, [&](ArrayRef<int64_t> index) {
              int64_t at = 0;
              for (size_t d = 0; d < perm.size(); ++d)
                at += index[d] * strides[perm[d]];
              return at;
            })) {
      defineHost(node, 0, std::move(*result));
      return success();
    }
  }
  FailureOr<Value> r =
      create<l1::TransposeOp>(loc, *x, builder.getDenseI64ArrayAttr(perm));
  return defineResult(node, r);
}

LogicalResult Importer::convertConcat(const onnx::NodeProto &node,
                                      Location loc) {
  int64_t axis = attrInt(node, "axis", 0);
  // Shape vectors concatenate at import time.
  SmallVector<const HostTensor *> hosts;
  for (int i = 0; i < node.input_size(); ++i)
    hosts.push_back(getHost(node, i));
  if (!hosts.empty() && llvm::all_of(hosts, [](const HostTensor *h) {
        return h && !h->isFloat() && h->shape.size() == 1;
      })) {
    HostTensor result;
    result.elementType = hosts.front()->elementType;
    for (const HostTensor *h : hosts)
      llvm::append_range(result.ints, h->ints);
    result.shape = {static_cast<int64_t>(result.ints.size())};
    defineHost(node, 0, std::move(result));
    return success();
  }
  SmallVector<Value> inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    FailureOr<Value> v = getValue(node, i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  FailureOr<Value> r = create<l1::ConcatOp>(loc, ValueRange(inputs),
                                            builder.getI64IntegerAttr(axis));
  return defineResult(node, r);
}

LogicalResult Importer::convertSplit(const onnx::NodeProto &node,
                                     Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t axis = attrInt(node, "axis", 0);
  int64_t rank = type.getRank();
  if (axis < -rank || axis >= rank)
    return emitError(loc) << "Split axis " << axis
                          << " is out of range for rank " << rank;
  int64_t dim = type.getDimSize(axis < 0 ? axis + rank : axis);
  SmallVector<int64_t> sizes;
  if (opset >= 13 && hasInput(node, 1)) {
    FailureOr<SmallVector<int64_t>> s = requireInts(node, 1, "split sizes");
    if (failed(s))
      return failure();
    sizes = *s;
  } else if (auto s = attrInts(node, "split")) {
    sizes = *s;
  } else {
    int64_t parts = attr(node, "num_outputs") ? attrInt(node, "num_outputs", 1)
                                              : node.output_size();
    if (ShapedType::isDynamic(dim) || parts < 1)
      return emitError(loc)
             << "Split into equal parts needs a static dimension";
    int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i)
      sizes.push_back(std::min(chunk, dim - i * chunk));
  }
  if (static_cast<int>(sizes.size()) != node.output_size())
    return emitError(loc) << "Split makes " << sizes.size()
                          << " pieces but has " << node.output_size()
                          << " outputs";
  FailureOr<Operation *> op = createTyped<l1::SplitOp>(
      loc, sizes.size(), *x, builder.getI64IntegerAttr(axis),
      builder.getDenseI64ArrayAttr(sizes));
  if (failed(op))
    return failure();
  for (auto [i, result] : llvm::enumerate((*op)->getResults()))
    define(node, i, result);
  return success();
}

LogicalResult Importer::convertSlice(const onnx::NodeProto &node,
                                     Location loc) {
  // A slice of batch-sized zeros (one layer's default state) is zeros.
  if (ValueEntry *in = hasInput(node, 0) ? lookup(node.input(0)) : nullptr;
      in && in->batchZeros) {
    if (node.output_size() > 0 && !node.output(0).empty()) {
      ValueEntry entry;
      entry.batchZeros = in->batchZeros;
      values[node.output(0)] = std::move(entry);
    }
    return success();
  }
  if (opset >= 10 && hasInput(node, 1) && !getHost(node, 1))
    return convertRuntimeSlice(node, loc);
  SmallVector<int64_t> starts, ends, axes, steps;
  if (opset < 10) {
    starts = attrInts(node, "starts").value_or(SmallVector<int64_t>{});
    ends = attrInts(node, "ends").value_or(SmallVector<int64_t>{});
    axes = attrInts(node, "axes").value_or(SmallVector<int64_t>{});
  } else {
    FailureOr<SmallVector<int64_t>> s = requireInts(node, 1, "starts");
    if (failed(s))
      return failure();
    FailureOr<SmallVector<int64_t>> e = requireInts(node, 2, "ends");
    if (failed(e))
      return failure();
    starts = *s;
    ends = *e;
    for (auto [i, out] :
         {std::pair<int, SmallVector<int64_t> *>{3, &axes}, {4, &steps}}) {
      if (!hasInput(node, i))
        continue;
      FailureOr<SmallVector<int64_t>> v =
          requireInts(node, i, i == 3 ? "axes" : "steps");
      if (failed(v))
        return failure();
      *out = *v;
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (llvm::is_contained(starts, kUnknown) ||
      llvm::is_contained(ends, kUnknown))
    return emitError(loc) << "Slice bounds depend on a dimension known only at "
                             "run time";
  // Slicing a known shape vector (e.g. shape[2:]) stays known.
  const HostTensor *host = getHost(node, 0);
  if (host && !host->isFloat() && host->shape.size() == 1 && axes.size() == 1 &&
      (axes[0] == 0 || axes[0] == -1) && steps[0] == 1) {
    int64_t n = host->numElements();
    int64_t s = starts[0] < 0 ? starts[0] + n : starts[0];
    int64_t e = ends[0] < 0 ? ends[0] + n : ends[0];
    s = std::clamp<int64_t>(s, 0, n);
    e = std::clamp<int64_t>(e, 0, n);
    HostTensor result;
    result.elementType = host->elementType;
    for (int64_t i = s; i < e; ++i)
      result.ints.push_back(host->ints[i]);
    result.shape = {static_cast<int64_t>(result.ints.size())};
    defineHost(node, 0, std::move(result));
    return success();
  }
  // Any other slice of a known integer tensor (any rank and steps) too;
  // bounds of unequal lengths are left to the op's verifier.
  if (host && !host->hasUnknown() && !host->isFloat() &&
      ends.size() == starts.size() && axes.size() == starts.size() &&
      steps.size() == starts.size()) {
    int64_t rank = static_cast<int64_t>(host->shape.size());
    SmallVector<int64_t> first(rank, 0), step(rank, 1),
        shape(host->shape.begin(), host->shape.end());
    bool valid = true;
    for (size_t i = 0; i < axes.size() && valid; ++i) {
      int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
      valid = axis >= 0 && axis < rank && steps[i] != 0;
      if (!valid)
        break;
      int64_t n = host->shape[axis], st = steps[i];
      int64_t b = starts[i] < 0 ? starts[i] + n : starts[i];
      int64_t e = ends[i] < 0 ? ends[i] + n : ends[i];
      // ONNX clamps to [0, n] going forward and [-1, n - 1] going back.
      b = st > 0 ? std::clamp<int64_t>(b, 0, n) : std::clamp<int64_t>(b, -1, n - 1);
      e = st > 0 ? std::clamp<int64_t>(e, 0, n) : std::clamp<int64_t>(e, -1, n - 1);
      int64_t count = st > 0 ? (e - b + st - 1) / st : (b - e - st - 1) / -st;
      first[axis] = b, step[axis] = st, shape[axis] = std::max<int64_t>(count, 0);
    }
    SmallVector<int64_t> strides = stridesOf(host->shape);
    if (valid)
      if (std::optional<HostTensor> result =
              rearrangeHost(host, shape, [&](ArrayRef<int64_t> index) {
                int64_t at = 0;
                for (int64_t d = 0; d < rank; ++d)
                  at += (first[d] + index[d] * step[d]) * strides[d];
                return at;
              })) {
        defineHost(node, 0, std::move(*result));
        return success();
      }
  }
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> r = create<l1::SliceOp>(
      loc, *x, builder.getDenseI64ArrayAttr(starts),
      builder.getDenseI64ArrayAttr(ends), builder.getDenseI64ArrayAttr(axes),
      builder.getDenseI64ArrayAttr(steps));
  return defineResult(node, r);
}

LogicalResult Importer::convertSqueeze(const onnx::NodeProto &node,
                                       Location loc) {
  FailureOr<RankedTensorType> type = getType(node, 0);
  if (failed(type))
    return failure();
  SmallVector<int64_t> axes;
  if (opset >= 13 && hasInput(node, 1)) {
    FailureOr<SmallVector<int64_t>> a = requireInts(node, 1, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else if (auto a = attrInts(node, "axes")) {
    axes = *a;
  } else {
    for (int64_t i = 0; i < type->getRank(); ++i)
      if (type->getDimSize(i) == 1)
        axes.push_back(i);
  }
  if (const HostTensor *host = getHost(node, 0)) {
    HostTensor result = *host;
    result.shape.clear();
    for (int64_t i = 0; i < static_cast<int64_t>(host->shape.size()); ++i)
      if (!llvm::is_contained(axes, i) &&
          !llvm::is_contained(axes,
                              i - static_cast<int64_t>(host->shape.size())))
        result.shape.push_back(host->shape[i]);
    defineHost(node, 0, std::move(result));
    return success();
  }
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> r =
      create<l1::SqueezeOp>(loc, *x, builder.getDenseI64ArrayAttr(axes));
  return defineResult(node, r);
}

LogicalResult Importer::convertUnsqueeze(const onnx::NodeProto &node,
                                         Location loc) {
  SmallVector<int64_t> axes;
  if (opset >= 13) {
    FailureOr<SmallVector<int64_t>> a = requireInts(node, 1, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else {
    axes = attrInts(node, "axes").value_or(SmallVector<int64_t>{});
  }
  if (const HostTensor *host = getHost(node, 0)) {
    int64_t rank = host->shape.size() + axes.size();
    HostTensor result = *host;
    result.shape.clear();
    size_t next = 0;
    for (int64_t i = 0; i < rank; ++i) {
      if (llvm::is_contained(axes, i) || llvm::is_contained(axes, i - rank))
        result.shape.push_back(1);
      else if (next < host->shape.size())
        result.shape.push_back(host->shape[next++]);
    }
    defineHost(node, 0, std::move(result));
    return success();
  }
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> r =
      create<l1::UnsqueezeOp>(loc, *x, builder.getDenseI64ArrayAttr(axes));
  return defineResult(node, r);
}

LogicalResult Importer::convertGather(const onnx::NodeProto &node,
                                      Location loc) {
  int64_t axis = attrInt(node, "axis", 0);
  const HostTensor *data = getHost(node, 0);
  const HostTensor *indices = getHost(node, 1);
  // Gathering from a known shape vector (shape[0]) stays known.
  if (data && indices && !data->isFloat() && data->shape.size() == 1 &&
      axis == 0 && !indices->isFloat() && indices->shape.size() <= 1) {
    HostTensor result;
    result.elementType = data->elementType;
    result.shape = indices->shape;
    int64_t n = data->numElements();
    for (int64_t i : indices->ints) {
      if (i < -n || i >= n)
        return emitError(loc) << "Gather index " << i << " is out of range for "
                              << n << " elements";
      result.ints.push_back(data->ints[i < 0 ? i + n : i]);
    }
    defineHost(node, 0, std::move(result));
    return success();
  }
  FailureOr<Value> x = getValue(node, 0), idx = getValue(node, 1);
  if (failed(x) || failed(idx))
    return failure();
  FailureOr<Value> r =
      create<l1::GatherOp>(loc, *x, *idx, builder.getI64IntegerAttr(axis));
  return defineResult(node, r);
}

LogicalResult Importer::convertExpand(const onnx::NodeProto &node,
                                      Location loc) {
  FailureOr<SmallVector<int64_t>> shape = requireInts(node, 1, "target shape");
  if (failed(shape))
    return failure();
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  if (llvm::is_contained(*shape, kUnknown))
    return emitError(loc)
           << "Expand to a shape that depends on the dynamic batch is not "
              "supported yet; compile with a static batch (--input-shape)";
  FailureOr<Value> r =
      create<l1::ExpandOp>(loc, *x, builder.getDenseI64ArrayAttr(*shape));
  return defineResult(node, r);
}

LogicalResult Importer::convertPad(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  SmallVector<int64_t> pads;
  double value = 0;
  if (opset < 11) {
    pads = attrInts(node, "pads").value_or(SmallVector<int64_t>{});
    value = attrFloat(node, "value", 0);
  } else {
    FailureOr<SmallVector<int64_t>> p = requireInts(node, 1, "pads");
    if (failed(p))
      return failure();
    pads = *p;
    if (hasInput(node, 2)) {
      FailureOr<HostTensor> v = requireHost(node, 2, "constant value");
      if (failed(v))
        return failure();
      if (v->numElements() != 1)
        return emitError(loc) << "Pad expects a scalar constant value";
      value = v->at(0);
    }
    if (hasInput(node, 3))
      return emitError(loc) << "Pad with an 'axes' input is not supported";
  }
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return emitError(loc)
           << "Pad with negative pads (cropping) is not supported";
  FailureOr<Value> r = create<l1::PadOp>(
      loc, *x, builder.getDenseI64ArrayAttr(pads),
      builder.getStringAttr(attrString(node, "mode", "constant")),
      builder.getF64FloatAttr(value));
  return defineResult(node, r);
}

LogicalResult Importer::convertShape(const onnx::NodeProto &node,
                                     Location loc) {
  FailureOr<RankedTensorType> type = getType(node, 0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  int64_t start = attrInt(node, "start", 0), end = attrInt(node, "end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  HostTensor host;
  host.elementType = builder.getI64Type();
  for (int64_t i = start; i < end; ++i)
    host.ints.push_back(ShapedType::isDynamic(type->getDimSize(i))
                            ? kUnknown
                            : type->getDimSize(i));
  host.shape = {static_cast<int64_t>(host.ints.size())};
  defineHost(node, 0, std::move(host));
  return success();
}

LogicalResult Importer::convertConstant(const onnx::NodeProto &node,
                                        Location loc) {
  if (node.attribute_size() != 1)
    return emitError(loc) << "Constant needs exactly one value attribute";
  const onnx::AttributeProto &a = node.attribute(0);
  HostTensor host;
  if (a.name() == "value") {
    std::string bytes;
    FailureOr<HostTensor> decoded = decodeTensor(a.t(), /*full=*/true, bytes);
    if (failed(decoded))
      return failure();
    if (decoded->numElements() == 0 && !decoded->shape.empty() &&
        llvm::all_of(decoded->shape, [](int64_t d) { return d != 0; })) {
      // Too large to keep on the host: treat as an initializer.
      ValueEntry entry;
      entry.initializer = &a.t();
      entry.type = RankedTensorType::get(decoded->shape, decoded->elementType);
      values[node.output(0)] = entry;
      return success();
    }
    host = std::move(*decoded);
  } else if (a.name() == "value_float") {
    host = {builder.getF32Type(), {}, {}, {a.f()}};
  } else if (a.name() == "value_floats") {
    host = {builder.getF32Type(),
            {a.floats_size()},
            {},
            SmallVector<double>(a.floats().begin(), a.floats().end())};
  } else if (a.name() == "value_int") {
    host = {builder.getI64Type(), {}, {a.i()}, {}};
  } else if (a.name() == "value_ints") {
    host = {builder.getI64Type(),
            {a.ints_size()},
            SmallVector<int64_t>(a.ints().begin(), a.ints().end()),
            {}};
  } else {
    return emitError(loc) << "Constant with '" << a.name()
                          << "' is not supported";
  }
  defineHost(node, 0, std::move(host));
  return success();
}

LogicalResult Importer::convertConstantOfShape(const onnx::NodeProto &node,
                                               Location loc) {
  FailureOr<SmallVector<int64_t>> shape = requireInts(node, 0, "shape");
  if (failed(shape))
    return failure();
  HostTensor fill{builder.getF32Type(), {1}, {}, {0.0}};
  if (const onnx::AttributeProto *a = attr(node, "value")) {
    std::string bytes;
    FailureOr<HostTensor> v = decodeTensor(a->t(), /*full=*/true, bytes);
    if (failed(v))
      return failure();
    if (v->numElements() != 1)
      return emitError(loc) << "ConstantOfShape value must have one element";
    fill = std::move(*v);
  }
  if (llvm::is_contained(*shape, kUnknown)) {
    std::string error =
        "ConstantOfShape needs a shape known at compile time, but " +
        shapeString(*shape) +
        " depends on the dynamic batch; compile with a static batch";
    if (fill.at(0) != 0)
      return emitError(loc) << error;
    // Zeros: a recurrent layer's default initial state (batchZeros).
    if (node.output_size() > 0 && !node.output(0).empty()) {
      ValueEntry entry;
      entry.batchZeros = std::make_pair(loc, error);
      values[node.output(0)] = std::move(entry);
    }
    return success();
  }
  int64_t count = 1;
  for (int64_t d : *shape) {
    if (d < 0 || (d && count > kMaxHostElements / d))
      return emitError(loc) << "ConstantOfShape shape " << shapeString(*shape)
                            << " is negative or too large";
    count *= d;
  }
  HostTensor host;
  host.elementType = fill.elementType;
  host.shape = *shape;
  if (fill.isFloat())
    host.floats.assign(count, fill.floats[0]);
  else
    host.ints.assign(count, fill.ints[0]);
  defineHost(node, 0, std::move(host));
  return success();
}


} // namespace cuvil::onnx_import
