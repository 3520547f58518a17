//===- ConvertGridSample.cpp - ONNX GridSample as gathers and weights ------===//
//
// GridSample (torch.nn.functional.grid_sample, spatial transformers, flow
// warping) of X [N, C, H, W] at grid [N, Ho, Wo, 2] of (x, y) in [-1, 1].
// X is viewed as [N, H * W, C]; every tap of the interpolation is one
// cuvil.gather_nd (batch_dims 1) of the C values at a pixel, weighted per
// output point, so each output point reads whole channel rows:
//   bilinear  4 taps, weights from the fractional parts;
//   nearest   1 tap at the coordinates rounded half to even;
//   bicubic   16 taps, cubic convolution with A = -0.75.
// Coordinates are unnormalized by align_corners, then the padding mode
// applies: zeros (a tap outside reads 0), border (clamped), reflection
// (mirrored at the edges, then clamped), exactly as PyTorch's CPU kernel
// orders these steps (for bicubic, padding applies to each tap's position).
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

#include <array>

namespace cuvil::onnx_import {

class GridSampleLowering {
public:
  GridSampleLowering(Importer &importer, Location loc, Type element,
                     int64_t height, int64_t width, bool alignCorners,
                     StringRef padding)
      : im(importer), loc(loc), element(element), height(height),
        width(width), alignCorners(alignCorners), padding(padding) {}

  /// The interpolated [N, P, C] of `pixels` ([N, H * W, C]) at x, y
  /// ([N, P, 1] each, normalized).
  Value sample(StringRef mode, Value pixels, Value gx, Value gy) {
    source = pixels;
    Value x = unnormalize(gx, width), y = unnormalize(gy, height);
    if (mode == "nearest")
      return tap(op<l1::RoundOp>(pad(x, width)), op<l1::RoundOp>(pad(y, height)));
    if (mode == "bicubic")
      return bicubic(x, y);
    return bilinear(pad(x, width), pad(y, height));
  }

  bool failedAny() const { return failedOp; }

private:
  /// Creates a level1 op unless an earlier one failed (its operands may be
  /// null then); remembers a failure, whose diagnostic is already out.
  template <typename OpTy, typename... Args> Value op(Args &&...args) {
    if (failedOp)
      return {};
    FailureOr<Value> r = im.create<OpTy>(loc, std::forward<Args>(args)...);
    if (failed(r)) {
      failedOp = true;
      return {};
    }
    return *r;
  }
  Value c(double v) { return im.scalarConstant(loc, element, v); }
  Value add(Value a, Value b) { return op<l1::AddOp>(a, b); }
  Value sub(Value a, Value b) { return op<l1::SubOp>(a, b); }
  Value mul(Value a, Value b) { return op<l1::MulOp>(a, b); }
  Value clamp(Value v, int64_t size) {
    return op<l1::ClipOp>(v, im.builder.getF64FloatAttr(0),
                          im.builder.getF64FloatAttr(size - 1));
  }

  Value unnormalize(Value g, int64_t size) {
    Value shifted = add(g, c(1));
    if (alignCorners)
      return mul(shifted, c((size - 1) / 2.0));
    return mul(sub(mul(shifted, c(size)), c(1)), c(0.5));
  }

  /// Mirrors v into [low, high] = [twiceLow / 2, twiceHigh / 2].
  Value reflect(Value v, double twiceLow, double twiceHigh) {
    if (twiceLow == twiceHigh)
      return mul(v, c(0));
    double low = twiceLow / 2, span = (twiceHigh - twiceLow) / 2;
    Value distance = op<l1::AbsOp>(sub(v, c(low)));
    Value flips = op<l1::FloorOp>(op<l1::DivOp>(distance, c(span)));
    Value extra = sub(distance, mul(flips, c(span)));
    Value half = op<l1::FloorOp>(mul(flips, c(0.5)));
    Value even = op<l1::EqualOp>(sub(flips, mul(half, c(2))), c(0));
    return op<l1::WhereOp>(even, add(extra, c(low)),
                           add(sub(c(span), extra), c(low)));
  }

  /// The padding mode's coordinates (zeros leaves them; taps outside read
  /// zero).
  Value pad(Value v, int64_t size) {
    if (padding == "border")
      return clamp(v, size);
    if (padding == "reflection")
      return clamp(alignCorners ? reflect(v, 0, 2.0 * (size - 1))
                                : reflect(v, -1, 2.0 * size - 1),
                   size);
    return v;
  }

  /// The [N, P, C] values at integral coordinates x, y; zero outside.
  Value tap(Value x, Value y) {
    Value inside = op<l1::AndOp>(
        op<l1::AndOp>(op<l1::GreaterEqualOp>(x, c(0)),
                      op<l1::LessEqualOp>(x, c(width - 1))),
        op<l1::AndOp>(op<l1::GreaterEqualOp>(y, c(0)),
                      op<l1::LessEqualOp>(y, c(height - 1))));
    Value flat = add(mul(clamp(y, height), c(width)), clamp(x, width));
    if (failedOp)
      return {};
    auto type = cast<RankedTensorType>(flat.getType());
    Value index = l1::CastOp::create(im.builder, loc,
                                     type.clone(im.builder.getI64Type()), flat);
    Value picked = op<l1::GatherNDOp>(source, index, im.builder.getI64IntegerAttr(1));
    return op<l1::WhereOp>(inside, picked, c(0));
  }

  Value bilinear(Value x, Value y) {
    Value x0 = op<l1::FloorOp>(x), y0 = op<l1::FloorOp>(y);
    Value x1 = add(x0, c(1)), y1 = add(y0, c(1));
    Value east = sub(x, x0), west = sub(x1, x);
    Value south = sub(y, y0), north = sub(y1, y);
    Value sum = mul(tap(x0, y0), mul(west, north));
    sum = add(sum, mul(tap(x1, y0), mul(east, north)));
    sum = add(sum, mul(tap(x0, y1), mul(west, south)));
    return add(sum, mul(tap(x1, y1), mul(east, south)));
  }

  /// The cubic convolution weights of the four taps around t in [0, 1).
  std::array<Value, 4> cubicWeights(Value t) {
    constexpr double a = -0.75;
    // |d| <= 1: ((a + 2) d - (a + 3)) d^2 + 1; 1 < |d| < 2:
    // ((a d - 5a) d + 8a) d - 4a.
    auto near = [&](Value d) {
      return add(mul(sub(mul(d, c(a + 2)), c(a + 3)), mul(d, d)), c(1));
    };
    auto far = [&](Value d) {
      return sub(mul(add(mul(sub(mul(d, c(a)), c(5 * a)), d), c(8 * a)), d),
                 c(4 * a));
    };
    Value one = c(1);
    return {far(add(t, one)), near(t), near(sub(one, t)),
            far(sub(c(2), t))};
  }

  Value bicubic(Value x, Value y) {
    Value x0 = op<l1::FloorOp>(x), y0 = op<l1::FloorOp>(y);
    std::array<Value, 4> wx = cubicWeights(sub(x, x0)),
                         wy = cubicWeights(sub(y, y0));
    Value sum;
    for (int j = 0; j < 4; ++j) {
      Value row, ty = pad(add(y0, c(j - 1)), height);
      for (int i = 0; i < 4; ++i) {
        Value term = mul(tap(pad(add(x0, c(i - 1)), width), ty), wx[i]);
        row = i == 0 ? term : add(row, term);
      }
      Value weighted = mul(row, wy[j]);
      sum = j == 0 ? weighted : add(sum, weighted);
    }
    return sum;
  }

  Importer &im;
  Location loc;
  Type element;
  int64_t height, width;
  bool alignCorners;
  std::string padding;
  Value source;
  bool failedOp = false;
};

LogicalResult Importer::convertGridSample(const onnx::NodeProto &node,
                                          Location loc) {
  FailureOr<Value> x = getValue(node, 0), grid = getValue(node, 1);
  if (failed(x) || failed(grid))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  auto gridType = cast<RankedTensorType>(grid->getType());
  std::string mode = attrString(node, "mode", "bilinear");
  std::string padding = attrString(node, "padding_mode", "zeros");
  // Opset 20 renamed the modes.
  mode = mode == "linear" ? "bilinear" : mode == "cubic" ? "bicubic" : mode;
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return emitError(loc) << "GridSample mode must be 'bilinear', 'nearest' or "
                          << "'bicubic', got '" << mode << "'";
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return emitError(loc) << "GridSample padding_mode must be 'zeros', "
                          << "'border' or 'reflection', got '" << padding << "'";
  if (type.getRank() != 4 || !isa<FloatType>(type.getElementType()) ||
      llvm::any_of(type.getShape().drop_front(),
                   [](int64_t d) { return ShapedType::isDynamic(d); }))
    return emitError(loc) << "GridSample expects a float input [N, C, H, W] "
                          << "with static C, H and W (2-D sampling), got "
                          << type;
  if (gridType.getRank() != 4 || gridType.getDimSize(3) != 2 ||
      gridType.getElementType() != type.getElementType() ||
      gridType.isDynamicDim(1) || gridType.isDynamicDim(2) ||
      (!type.isDynamicDim(0) && !gridType.isDynamicDim(0) &&
       gridType.getDimSize(0) != type.getDimSize(0)))
    return emitError(loc) << "GridSample expects a grid [N, Ho, Wo, 2] of "
                          << type.getElementType() << " for input " << type
                          << ", got " << gridType;
  int64_t channels = type.getDimSize(1), height = type.getDimSize(2),
          width = type.getDimSize(3);
  int64_t outH = gridType.getDimSize(1), outW = gridType.getDimSize(2);
  auto ints = [&](ArrayRef<int64_t> v) { return builder.getDenseI64ArrayAttr(v); };
  // X as [N, H * W, C]: a pixel's channels are one row for the gathers.
  FailureOr<Value> rows = create<l1::TransposeOp>(loc, *x, ints({0, 2, 3, 1}));
  rows = failed(rows) ? rows
                      : create<l1::ReshapeOp>(loc, *rows,
                                              ints({-1, height * width, channels}));
  auto coordinate = [&](int64_t k) -> FailureOr<Value> {
    FailureOr<Value> s = create<l1::SliceOp>(loc, *grid, ints({k}), ints({k + 1}),
                                             ints({3}), ints({1}));
    return failed(s) ? s
                     : create<l1::ReshapeOp>(loc, *s, ints({-1, outH * outW, 1}));
  };
  FailureOr<Value> gx = coordinate(0), gy = coordinate(1);
  if (failed(rows) || failed(gx) || failed(gy))
    return failure();
  GridSampleLowering lowering(*this, loc, type.getElementType(), height, width,
                              attrInt(node, "align_corners", 0) != 0, padding);
  Value sampled = lowering.sample(mode, *rows, *gx, *gy);
  if (lowering.failedAny())
    return failure();
  FailureOr<Value> channelsFirst =
      create<l1::TransposeOp>(loc, sampled, ints({0, 2, 1}));
  if (failed(channelsFirst))
    return failure();
  return defineResult(node, create<l1::ReshapeOp>(
                                loc, *channelsFirst,
                                ints({-1, channels, outH, outW})));
}

} // namespace cuvil::onnx_import
