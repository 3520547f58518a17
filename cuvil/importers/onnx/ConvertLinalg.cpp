//===- ConvertLinalg.cpp - products, convolutions, norms, pooling ---------===//
//
// MatMul, Gemm, Conv, ConvTranspose, BatchNormalization, pooling (their
// shared window attributes). Softmax and the reductions are in
// ConvertReductions.cpp.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

namespace cuvil::onnx_import {

LogicalResult Importer::convertMatMul(const onnx::NodeProto &node,
                                      Location loc) {
  FailureOr<Value> a = getValue(node, 0), b = getValue(node, 1);
  if (failed(a) || failed(b))
    return failure();
  FailureOr<Value> r = create<l1::MatmulOp>(loc, *a, *b, TypeAttr());
  return defineResult(node, r);
}

LogicalResult Importer::convertGemm(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> a = getValue(node, 0), b = getValue(node, 1);
  if (failed(a) || failed(b))
    return failure();
  Value c;
  if (hasInput(node, 2)) {
    FailureOr<Value> cv = getValue(node, 2);
    if (failed(cv))
      return failure();
    c = *cv;
  }
  FailureOr<Value> r = create<l1::GemmOp>(
      loc, *a, *b, c,
      attrInt(node, "transA", 0) ? builder.getUnitAttr() : UnitAttr(),
      attrInt(node, "transB", 0) ? builder.getUnitAttr() : UnitAttr(),
      builder.getF64FloatAttr(attrFloat(node, "alpha", 1.0)),
      builder.getF64FloatAttr(attrFloat(node, "beta", 1.0)), TypeAttr());
  return defineResult(node, r);
}

std::pair<int64_t, int64_t> autoPad(StringRef mode, int64_t in,
                                           int64_t kernel, int64_t stride,
                                           int64_t dilation) {
  if (mode != "SAME_UPPER" && mode != "SAME_LOWER")
    return {0, 0};
  int64_t out = (in + stride - 1) / stride;
  int64_t total = std::max<int64_t>(0, (out - 1) * stride +
                                           (kernel - 1) * dilation + 1 - in);
  int64_t small = total / 2, large = total - small;
  return mode == "SAME_UPPER" ? std::make_pair(small, large)
                              : std::make_pair(large, small);
}

/// Spatial attributes shared by Conv and pooling, in level1's order.
struct WindowAttrs {
  SmallVector<int64_t> kernel, strides, padding, dilations;
};

static FailureOr<WindowAttrs> windowAttrs(
    const onnx::NodeProto &node, Location loc, RankedTensorType input,
    ArrayRef<int64_t> kernel, std::optional<SmallVector<int64_t>> strides,
    std::optional<SmallVector<int64_t>> pads,
    std::optional<SmallVector<int64_t>> dilations, StringRef autoPadMode) {
  WindowAttrs w;
  if (input.getRank() != 4)
    return emitError(loc) << node.op_type()
                          << " is supported in 1-D and 2-D only (NCW or NCHW "
                          << "input), got " << input;
  if (kernel.size() != 2)
    return emitError(loc) << node.op_type() << " expects a 2-D kernel, got "
                          << kernel.size() << " dims";
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides = strides.value_or(SmallVector<int64_t>{1, 1});
  w.dilations = dilations.value_or(SmallVector<int64_t>{1, 1});
  if (w.strides.size() != 2 || w.dilations.size() != 2)
    return emitError(loc) << node.op_type()
                          << " expects 2 strides and 2 dilations";
  // Checked before auto_pad divides by them.
  for (int i = 0; i < 2; ++i)
    if (w.strides[i] < 1 || w.dilations[i] < 1 || w.kernel[i] < 1)
      return emitError(loc)
             << node.op_type() << " needs kernel sizes, strides and dilations "
             << "of at least 1, got kernel " << w.kernel[i] << ", stride "
             << w.strides[i] << ", dilation " << w.dilations[i];
  if (autoPadMode == "NOTSET" || autoPadMode.empty()) {
    w.padding = pads.value_or(SmallVector<int64_t>{0, 0, 0, 0});
    if (w.padding.size() != 4)
      return emitError(loc)
             << node.op_type() << " expects 4 pads, got " << w.padding.size();
    return w;
  }
  if (autoPadMode != "VALID" && autoPadMode != "SAME_UPPER" &&
      autoPadMode != "SAME_LOWER")
    return emitError(loc) << node.op_type() << " has unknown auto_pad '"
                          << autoPadMode << "'";
  w.padding.assign(4, 0);
  for (int i = 0; i < 2; ++i) {
    int64_t in = input.getDimSize(2 + i);
    if (ShapedType::isDynamic(in) && autoPadMode != "VALID")
      return emitError(loc) << node.op_type()
                            << " with auto_pad SAME needs static spatial dims";
    auto [begin, end] =
        autoPad(autoPadMode, in, w.kernel[i], w.strides[i], w.dilations[i]);
    w.padding[i] = begin;
    w.padding[2 + i] = end;
  }
  return w;
}

/// A 1-D attribute list as its 2-D one over an image of height 1: a
/// leading `fill` (kernel, strides, dilations: 1), or for pads [b, e] the
/// four [0, b, 0, e]. Lists of other lengths stay, for windowAttrs to refuse.
static std::optional<SmallVector<int64_t>>
liftTo2d(std::optional<SmallVector<int64_t>> values, bool pads = false) {
  if (!values)
    return values;
  if (pads)
    return values->size() == 2
               ? SmallVector<int64_t>{0, (*values)[0], 0, (*values)[1]}
               : values;
  return values->size() == 1 ? SmallVector<int64_t>{1, (*values)[0]} : values;
}

/// A 1-D window op's attributes and input (NCW) lifted to 2-D (NC1W);
/// `oneD` says whether it was 1-D, for the caller to squeeze the result.
struct WindowInputs {
  Value x;
  SmallVector<int64_t> kernel;
  std::optional<SmallVector<int64_t>> strides, pads, dilations;
  bool oneD = false;
};

FailureOr<WindowInputs> Importer::windowInputs(const onnx::NodeProto &node,
                                               Location loc, Value x,
                                               SmallVector<int64_t> kernel) {
  WindowInputs in{x, std::move(kernel), attrInts(node, "strides"),
                  attrInts(node, "pads"), attrInts(node, "dilations")};
  if (cast<RankedTensorType>(x.getType()).getRank() != 3)
    return in;
  FailureOr<Value> lifted =
      create<l1::UnsqueezeOp>(loc, x, builder.getDenseI64ArrayAttr({2}));
  if (failed(lifted))
    return failure();
  in.x = *lifted;
  in.kernel = *liftTo2d(in.kernel);
  in.strides = liftTo2d(in.strides);
  in.pads = liftTo2d(in.pads, /*pads=*/true);
  in.dilations = liftTo2d(in.dilations);
  in.oneD = true;
  return in;
}

/// The 1-D result of a lifted window op (NC1W -> NCW).
FailureOr<Value> Importer::windowResult(Location loc, const WindowInputs &in,
                                        FailureOr<Value> result) {
  if (failed(result) || !in.oneD)
    return result;
  return create<l1::SqueezeOp>(loc, *result, builder.getDenseI64ArrayAttr({2}));
}

LogicalResult Importer::convertConv(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> x = getValue(node, 0), w = getValue(node, 1);
  if (failed(x) || failed(w))
    return failure();
  Value bias;
  if (hasInput(node, 2)) {
    FailureOr<Value> b = getValue(node, 2);
    if (failed(b))
      return failure();
    bias = *b;
  }
  if (cast<RankedTensorType>(x->getType()).getRank() == 5)
    return defineResult(node, conv3d(node, loc, *x, *w, bias));
  return defineResult(node, buildConv(node, loc, *x, *w, bias));
}

LogicalResult Importer::transposedPads(
    const onnx::NodeProto &node, Location loc, ArrayRef<int64_t> sizes,
    ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
    ArrayRef<int64_t> dilations, std::optional<SmallVector<int64_t>> shape,
    SmallVectorImpl<int64_t> &outPad, SmallVectorImpl<int64_t> &pads) {
  // An output shape (given, or the input's times the stride for auto_pad
  // SAME) fixes the padding: the total split between the ends.
  size_t rank = sizes.size();
  // Bounded so that the sizes below cannot overflow.
  constexpr int64_t kMax = int64_t(1) << 30;
  auto in = [&](ArrayRef<int64_t> values, int64_t lo) {
    return llvm::all_of(values, [&](int64_t v) { return v >= lo && v < kMax; });
  };
  if (!in(kernel, 1) || !in(strides, 1) || !in(dilations, 1) ||
      !in(outPad, 0) || (shape && !in(*shape, 0)) ||
      llvm::any_of(sizes, [&](int64_t v) { return v >= kMax; }))
    return emitError(loc) << "ConvTranspose needs kernel sizes, strides and "
                          << "dilations in [1, 2^30), output paddings and "
                          << "output_shape in [0, 2^30), and spatial sizes "
                          << "under 2^30";
  std::string autoPadMode = attrString(node, "auto_pad", "NOTSET");
  bool same = autoPadMode == "SAME_UPPER" || autoPadMode == "SAME_LOWER";
  if (shape && shape->size() > rank)
    shape = SmallVector<int64_t>(shape->end() - rank, shape->end());
  if (shape && shape->size() != rank)
    return emitError(loc) << "ConvTranspose expects an output_shape of "
                          << rank << " spatial sizes";
  if (!shape && !same) {
    if (autoPadMode != "NOTSET" && autoPadMode != "VALID")
      return emitError(loc) << "ConvTranspose has unknown auto_pad '"
                            << autoPadMode << "'";
    return success();
  }
  for (size_t i = 0; i < rank; ++i) {
    int64_t size = sizes[i];
    if (ShapedType::isDynamic(size))
      return emitError(loc) << "ConvTranspose with an output shape needs "
                            << "static spatial dimensions";
    int64_t target = shape ? (*shape)[i] : size * strides[i];
    int64_t total = strides[i] * (size - 1) + outPad[i] +
                    (kernel[i] - 1) * dilations[i] + 1 - target;
    if (total < 0) {
      // Larger than the transposed convolution gives: zeros at the end,
      // as output_padding adds them.
      outPad[i] += -total;
      total = 0;
    }
    bool upper = autoPadMode == "SAME_UPPER";
    pads[i] = upper ? total / 2 : total - total / 2;
    pads[rank + i] = total - pads[i];
  }
  return success();
}

LogicalResult Importer::convertConvTranspose(const onnx::NodeProto &node,
                                             Location loc) {
  FailureOr<Value> x = getValue(node, 0), w = getValue(node, 1);
  if (failed(x) || failed(w))
    return failure();
  Value bias;
  if (hasInput(node, 2)) {
    FailureOr<Value> b = getValue(node, 2);
    if (failed(b))
      return failure();
    bias = *b;
  }
  auto wType = cast<RankedTensorType>(w->getType());
  if (cast<RankedTensorType>(x->getType()).getRank() == 5)
    return defineResult(node, convTranspose3d(node, loc, *x, *w, bias));
  if (wType.getRank() < 3 || wType.getRank() > 4)
    return emitError(loc) << "ConvTranspose is supported in 1-D, 2-D and 3-D "
                          << "only, got a weight " << wType;
  SmallVector<int64_t> kernel =
      attrInts(node, "kernel_shape")
          .value_or(SmallVector<int64_t>(wType.getShape().drop_front(2)));
  FailureOr<WindowInputs> in = windowInputs(node, loc, *x, kernel);
  if (failed(in))
    return failure();
  std::optional<SmallVector<int64_t>> extra = attrInts(node, "output_padding"),
                                      shape = attrInts(node, "output_shape");
  if (in->oneD) {
    FailureOr<Value> lifted =
        create<l1::UnsqueezeOp>(loc, *w, builder.getDenseI64ArrayAttr({2}));
    if (failed(lifted))
      return failure();
    w = lifted;
    if (extra && extra->size() == 1)
      extra = SmallVector<int64_t>{0, extra->front()};
    if (shape && shape->size() == 1)
      shape = SmallVector<int64_t>{1, shape->front()};
  }
  auto xType = cast<RankedTensorType>(in->x.getType());
  if (xType.getRank() != 4 || in->kernel.size() != 2)
    return emitError(loc) << "ConvTranspose is supported in 1-D, 2-D and 3-D "
                          << "only (NCW, NCHW or NCDHW input), got " << xType;
  SmallVector<int64_t> strides =
                           in->strides.value_or(SmallVector<int64_t>{1, 1}),
                       dilations =
                           in->dilations.value_or(SmallVector<int64_t>{1, 1}),
                       outPad = extra.value_or(SmallVector<int64_t>{0, 0}),
                       pads =
                           in->pads.value_or(SmallVector<int64_t>{0, 0, 0, 0});
  if (strides.size() != 2 || dilations.size() != 2 || outPad.size() != 2 ||
      pads.size() != 4)
    return emitError(loc) << "ConvTranspose expects one stride, dilation and "
                          << "output padding per spatial dimension";
  if (failed(transposedPads(node, loc, xType.getShape().drop_front(2),
                            in->kernel, strides, dilations, shape, outPad,
                            pads)))
    return failure();
  FailureOr<Value> r = create<l1::ConvTranspose2dOp>(
      loc, in->x, *w, bias, builder.getDenseI64ArrayAttr(strides),
      builder.getDenseI64ArrayAttr(pads),
      builder.getDenseI64ArrayAttr(dilations),
      builder.getDenseI64ArrayAttr(outPad),
      builder.getI64IntegerAttr(attrInt(node, "group", 1)));
  return defineResult(node, windowResult(loc, *in, r));
}

FailureOr<Value> Importer::buildConv(const onnx::NodeProto &node, Location loc,
                                     Value x, Value w, Value bias) {
  auto wType = cast<RankedTensorType>(w.getType());
  if (wType.getRank() < 3)
    return emitError(loc) << node.op_type()
                          << " expects a weight of rank >= 3, got " << wType;
  SmallVector<int64_t> kernel =
      attrInts(node, "kernel_shape")
          .value_or(SmallVector<int64_t>(wType.getShape().drop_front(2)));
  FailureOr<WindowInputs> in = windowInputs(node, loc, x, kernel);
  if (failed(in))
    return failure();
  if (in->oneD) {
    // Conv1d: an OIW weight as OI1W.
    FailureOr<Value> lifted =
        create<l1::UnsqueezeOp>(loc, w, builder.getDenseI64ArrayAttr({2}));
    if (failed(lifted))
      return failure();
    w = *lifted;
  }
  FailureOr<WindowAttrs> win =
      windowAttrs(node, loc, cast<RankedTensorType>(in->x.getType()),
                  in->kernel, in->strides, in->pads, in->dilations,
                  attrString(node, "auto_pad", "NOTSET"));
  if (failed(win))
    return failure();
  return windowResult(
      loc, *in,
      create<l1::Conv2dOp>(
          loc, in->x, w, bias, builder.getDenseI64ArrayAttr(win->strides),
          builder.getDenseI64ArrayAttr(win->padding),
          builder.getDenseI64ArrayAttr(win->dilations),
          builder.getI64IntegerAttr(attrInt(node, "group", 1)), TypeAttr()));
}

LogicalResult Importer::convertBatchNorm(const onnx::NodeProto &node,
                                         Location loc) {
  if (attrInt(node, "training_mode", 0))
    return convertBatchNormTraining(node, loc);
  SmallVector<Value> operands;
  for (int i = 0; i < 5; ++i) {
    FailureOr<Value> v = getValue(node, i);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  FailureOr<Value> r = create<l1::BatchNormOp>(
      loc, operands[0], operands[1], operands[2], operands[3], operands[4],
      builder.getF64FloatAttr(attrFloat(node, "epsilon", 1e-5)));
  return defineResult(node, r);
}

// Training mode normalizes by the batch's own statistics (population
// variance over every axis but the channels) and also returns the running
// statistics moved toward them by `momentum`, as ONNX specifies.
LogicalResult Importer::convertBatchNormTraining(const onnx::NodeProto &node,
                                                 Location loc) {
  SmallVector<Value> in;
  for (int i = 0; i < 5; ++i) {
    FailureOr<Value> v = getValue(node, i);
    if (failed(v))
      return failure();
    in.push_back(*v);
  }
  auto type = cast<RankedTensorType>(in[0].getType());
  int64_t rank = type.getRank();
  if (rank < 2 || !isa<FloatType>(type.getElementType()))
    return emitError(loc) << "BatchNormalization expects a float input [N, C, "
                          << "...], got " << type;
  Type element = type.getElementType();
  SmallVector<int64_t> axes{0};
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  auto axesAttr = builder.getDenseI64ArrayAttr(axes);
  // [C] parameters broadcast as [C, 1, ...] against [N, C, ...].
  auto perChannel = [&](Value v) -> FailureOr<Value> {
    if (rank == 2)
      return v;
    SmallVector<int64_t> trailing;
    for (int64_t d = 1; d < rank - 1; ++d)
      trailing.push_back(d);
    return create<l1::UnsqueezeOp>(loc, v, builder.getDenseI64ArrayAttr(trailing));
  };
  FailureOr<Value> mean =
      create<l1::ReduceMeanOp>(loc, in[0], axesAttr, builder.getUnitAttr());
  FailureOr<Value> centered =
      failed(mean) ? mean : create<l1::SubOp>(loc, in[0], *mean);
  FailureOr<Value> squares =
      failed(centered) ? centered : create<l1::MulOp>(loc, *centered, *centered);
  FailureOr<Value> variance =
      failed(squares) ? squares
                      : create<l1::ReduceMeanOp>(loc, *squares, axesAttr,
                                                 builder.getUnitAttr());
  FailureOr<Value> deviation =
      failed(variance)
          ? variance
          : create<l1::AddOp>(loc, *variance,
                              scalarConstant(loc, element,
                                             attrFloat(node, "epsilon", 1e-5)));
  deviation = failed(deviation) ? deviation : create<l1::SqrtOp>(loc, *deviation);
  FailureOr<Value> scale = perChannel(in[1]), bias = perChannel(in[2]);
  if (failed(deviation) || failed(scale) || failed(bias))
    return failure();
  FailureOr<Value> y = create<l1::DivOp>(loc, *centered, *deviation);
  y = failed(y) ? y : create<l1::MulOp>(loc, *y, *scale);
  y = failed(y) ? y : create<l1::AddOp>(loc, *y, *bias);
  if (failed(y))
    return failure();
  define(node, 0, *y);
  double momentum = attrFloat(node, "momentum", 0.9);
  // running = given * momentum + batch * (1 - momentum), as [C].
  auto running = [&](int output, Value given, Value batch) -> LogicalResult {
    if (node.output_size() <= output || node.output(output).empty())
      return success();
    FailureOr<Value> flat =
        create<l1::SqueezeOp>(loc, batch, builder.getDenseI64ArrayAttr(axes));
    FailureOr<Value> kept =
        create<l1::MulOp>(loc, given, scalarConstant(loc, element, momentum));
    FailureOr<Value> moved =
        failed(flat) ? flat
                     : create<l1::MulOp>(loc, *flat,
                                         scalarConstant(loc, element, 1 - momentum));
    if (failed(kept) || failed(moved))
      return failure();
    FailureOr<Value> sum = create<l1::AddOp>(loc, *kept, *moved);
    if (failed(sum))
      return failure();
    define(node, output, *sum);
    return success();
  };
  if (failed(running(1, in[3], *mean)) || failed(running(2, in[4], *variance)))
    return failure();
  return success();
}

/// One 2-D pooling op of the kind `node` names.
FailureOr<Value> Importer::pool2d(const onnx::NodeProto &node, Location loc,
                                  Value x, ArrayRef<int64_t> kernel,
                                  ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> padding,
                                  ArrayRef<int64_t> dilations) {
  UnitAttr ceil =
      attrInt(node, "ceil_mode", 0) ? builder.getUnitAttr() : UnitAttr();
  if (node.op_type() == "MaxPool")
    return create<l1::MaxPool2dOp>(loc, x, builder.getDenseI64ArrayAttr(kernel),
                                   builder.getDenseI64ArrayAttr(strides),
                                   builder.getDenseI64ArrayAttr(padding),
                                   builder.getDenseI64ArrayAttr(dilations), ceil);
  return create<l1::AvgPool2dOp>(
      loc, x, builder.getDenseI64ArrayAttr(kernel),
      builder.getDenseI64ArrayAttr(strides),
      builder.getDenseI64ArrayAttr(padding),
      builder.getDenseI64ArrayAttr(dilations), ceil,
      attrInt(node, "count_include_pad", 0) ? builder.getUnitAttr()
                                            : UnitAttr());
}

FailureOr<Value> Importer::poolUpTo2d(const onnx::NodeProto &node, Location loc,
                                      Value x, ArrayRef<int64_t> kernel,
                                      Value *indices) {
  FailureOr<WindowInputs> in =
      windowInputs(node, loc, x, SmallVector<int64_t>(kernel));
  if (failed(in))
    return failure();
  FailureOr<WindowAttrs> win =
      windowAttrs(node, loc, cast<RankedTensorType>(in->x.getType()),
                  in->kernel, in->strides, in->pads, in->dilations,
                  attrString(node, "auto_pad", "NOTSET"));
  if (failed(win))
    return failure();
  if (indices) {
    FailureOr<Value> where = windowResult(
        loc, *in,
        create<l1::MaxPool2dIndicesOp>(
            loc, in->x, builder.getDenseI64ArrayAttr(win->kernel),
            builder.getDenseI64ArrayAttr(win->strides),
            builder.getDenseI64ArrayAttr(win->padding),
            builder.getDenseI64ArrayAttr(win->dilations),
            attrInt(node, "ceil_mode", 0) ? builder.getUnitAttr() : UnitAttr(),
            attrInt(node, "storage_order", 0) ? builder.getUnitAttr()
                                              : UnitAttr()));
    if (failed(where))
      return failure();
    *indices = *where;
  }
  return windowResult(loc, *in,
                      pool2d(node, loc, in->x, win->kernel, win->strides,
                             win->padding, win->dilations));
}

LogicalResult Importer::convertPool(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  std::optional<SmallVector<int64_t>> kernel = attrInts(node, "kernel_shape");
  if (!kernel)
    return emitError(loc) << node.op_type() << " needs kernel_shape";
  // MaxPool of 8-bit integers (opset 12) runs on their exact float32 values.
  auto xType = cast<RankedTensorType>(x->getType());
  Type integers = xType.getElementType();
  if (node.op_type() == "MaxPool" && integers.isInteger(8))
    x = l1::CastOp::create(builder, loc, xType.clone(builder.getF32Type()), *x)
            .getResult();
  else
    integers = {};
  // MaxPool's Indices: where each maximum is in the flattened input
  // (storage_order 1: its spatial dimensions column-major).
  bool wantsIndices = node.op_type() == "MaxPool" && node.output_size() > 1 &&
                      !node.output(1).empty();
  if (wantsIndices && xType.getRank() == 5)
    return emitError(loc) << "MaxPool's Indices output of a 3-D pool is not "
                             "supported (1-D and 2-D pools give it)";
  Value indices;
  FailureOr<Value> r = xType.getRank() == 5
                           ? pool3d(node, loc, *x, *kernel)
                           : poolUpTo2d(node, loc, *x, *kernel,
                                        wantsIndices ? &indices : nullptr);
  if (succeeded(r) && indices)
    define(node, 1, indices);
  if (succeeded(r) && integers)
    r = l1::CastOp::create(
            builder, loc,
            cast<RankedTensorType>(r->getType()).clone(integers), *r)
            .getResult();
  return defineResult(node, r);
}

LogicalResult Importer::convertGlobalPool(const onnx::NodeProto &node,
                                          Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> r = node.op_type() == "GlobalAveragePool"
                           ? create<l1::GlobalAvgPoolOp>(loc, *x)
                           : create<l1::GlobalMaxPoolOp>(loc, *x);
  return defineResult(node, r);
}

} // namespace cuvil::onnx_import
