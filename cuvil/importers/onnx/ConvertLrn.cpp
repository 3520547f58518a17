//===- ConvertLrn.cpp - ONNX LRN as a sum of shifted squares ---------------===//
//
// Local response normalization (AlexNet's, torch.nn.LocalResponseNorm):
//   y = x / (bias + alpha / size * S)^beta,
// S at channel c the sum of x^2 over channels
// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] that exist. The
// squares are zero-padded along C and S is the sum of `size` slices of C
// channels each, shifted by one: size additions per element (a 1x1
// convolution with a banded weight would do C), which element-wise fusion
// runs as one loop.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

namespace cuvil::onnx_import {

LogicalResult Importer::convertLrn(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t size = attrInt(node, "size", 0), rank = type.getRank();
  if (size < 1)
    return emitError(loc) << "LRN needs a positive size, got " << size;
  if (!isa<FloatType>(type.getElementType()))
    return emitError(loc) << "LRN expects floating-point input, got " << type;
  if (rank < 3 || type.isDynamicDim(1))
    return emitError(loc) << "LRN expects an input [N, C, ...] of rank >= 3 "
                          << "with static channels, got " << type;
  int64_t channels = type.getDimSize(1);
  Type element = type.getElementType();
  FailureOr<Value> squares = create<l1::MulOp>(loc, *x, *x);
  if (failed(squares))
    return failure();
  SmallVector<int64_t> pads(2 * rank, 0);
  pads[1] = (size - 1) / 2;
  pads[rank + 1] = size - 1 - pads[1];
  FailureOr<Value> padded = create<l1::PadOp>(
      loc, *squares, builder.getDenseI64ArrayAttr(pads),
      builder.getStringAttr("constant"), builder.getF64FloatAttr(0.0));
  FailureOr<Value> sum = failure();
  for (int64_t shift = 0; shift < size && succeeded(padded); ++shift) {
    FailureOr<Value> window = create<l1::SliceOp>(
        loc, *padded, builder.getDenseI64ArrayAttr({shift}),
        builder.getDenseI64ArrayAttr({shift + channels}),
        builder.getDenseI64ArrayAttr({1}), builder.getDenseI64ArrayAttr({1}));
    if (failed(window))
      return failure();
    sum = shift == 0 ? window : create<l1::AddOp>(loc, *sum, *window);
    if (failed(sum))
      return failure();
  }
  if (failed(sum))
    return failure();
  double alpha = attrFloat(node, "alpha", 1e-4), beta = attrFloat(node, "beta", 0.75),
         bias = attrFloat(node, "bias", 1.0);
  FailureOr<Value> scaled = create<l1::MulOp>(
      loc, *sum, scalarConstant(loc, element, alpha / static_cast<double>(size)));
  FailureOr<Value> base = failed(scaled) ? scaled
                                         : create<l1::AddOp>(
                                               loc, *scaled,
                                               scalarConstant(loc, element, bias));
  FailureOr<Value> denominator =
      failed(base) ? base
                   : create<l1::PowOp>(loc, *base,
                                       scalarConstant(loc, element, beta));
  if (failed(denominator))
    return failure();
  return defineResult(node, create<l1::DivOp>(loc, *x, *denominator));
}

} // namespace cuvil::onnx_import
