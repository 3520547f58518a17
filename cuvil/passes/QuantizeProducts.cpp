//===- QuantizeProducts.cpp - calibrated linear layers to int8 QDQ --------===//
//
// Calibration sets `cuvil.activation_range` on the layers it observed; this
// pass writes each as the QDQ graph an int8 layer is (quantize the
// activation, dequantize it and the int8 weights, multiply or convolve),
// the same form an ONNX QDQ model imports to, so one fold
// (cuvil-fold-quantized-products) makes both integer ops.
//
// Activations are asymmetric uint8 per tensor: the integer kernels correct
// for the zero point with precomputed column sums, so the asymmetry is free
// and post-ReLU tensors get all 256 levels. Weights are symmetric int8 per
// output column (a convolution's: per output channel), in [-m, m] with m
// the target's `int8_weight_max` (127, or 64 where its int8 products
// would saturate on wider weights: #cuvil.target). With `power-of-two`
// (fixed point: MLU2xx's tensor unit scales a product by one power of two),
// both are symmetric int8 per tensor, each scale the smallest power of two
// that holds the tensor's largest magnitude.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilAttrs.h"
#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Quantization.h"
#include "cuvil/passes/ConstantUtil.h"
#include "cuvil/passes/LinearLayers.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <algorithm>
#include <cmath>

namespace cuvil {
#define GEN_PASS_DEF_CUVILQUANTIZEPRODUCTS
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

constexpr char kRangeAttr[] = "cuvil.activation_range";

struct QuantizedWeights {
  std::string bytes; // int8 [k][n]
  SmallVector<double> scales;
};

/// Symmetric per column: scale_j = max_k |w[k][j]| / m, q = round half to
/// even (w / scale_j), so |q| <= m. `powerOfTwo`: one scale for every
/// column, the power of two for the largest |w|.
QuantizedWeights quantizeWeights(const cuvil::LinearLayer &layer, int64_t m,
                                 bool powerOfTwo) {
  QuantizedWeights out;
  out.bytes.resize(layer.k * layer.n);
  const double limit = static_cast<double>(m);
  double tensorScale = 0;
  if (powerOfTwo) {
    float all = 0;
    for (float w : layer.weights)
      all = std::max(all, std::fabs(w));
    tensorScale = l1::powerOfTwoScale(all, limit);
  }
  for (int64_t j = 0; j < layer.n; ++j) {
    float amax = 0;
    for (int64_t i = 0; !powerOfTwo && i < layer.k; ++i)
      amax = std::max(amax, std::fabs(layer.weights[i * layer.n + j]));
    double scale = powerOfTwo ? tensorScale : l1::kernelScale(amax / limit);
    out.scales.push_back(scale);
    for (int64_t i = 0; i < layer.k; ++i) {
      double q = std::nearbyint(layer.weights[i * layer.n + j] / scale);
      out.bytes[i * layer.n + j] =
          static_cast<char>(static_cast<int8_t>(std::clamp(q, -limit, limit)));
    }
  }
  return out;
}

struct QuantizeProducts
    : cuvil::impl::CuvilQuantizeProductsBase<QuantizeProducts> {
  using CuvilQuantizeProductsBase::CuvilQuantizeProductsBase;

  void runOnOperation() override {
    SmallVector<Operation *> marked;
    getOperation().walk([&](Operation *op) {
      if (op->hasAttr(kRangeAttr))
        marked.push_back(op);
    });
    for (Operation *op : marked) {
      if (failed(quantize(op)))
        return signalPassFailure();
      cuvil::addStatistic(getOperation(), *this, numQuantized, "quantized");
    }
  }

  /// The largest int8 weight magnitude the target's kernels take exactly.
  static int64_t weightMax(Operation *op) {
    return cuvil::l1::TargetAttr::lookupOrDefault(op).getInt8WeightMax();
  }

  /// `value` through 8 bits over [lo, hi]: dequantize(quantize(value)).
  Value quantizedActivation(OpBuilder &builder, Location loc, Value value,
                            double lo, double hi) {
    auto type = cast<RankedTensorType>(value.getType());
    MLIRContext *context = builder.getContext();
    Value q = l1::QuantizeOp::create(
        builder, loc,
        type.clone(powerOfTwo ? l1::fixedPointActivationType(context, lo, hi)
                              : l1::activationType(context, lo, hi)),
        value);
    return l1::DequantizeOp::create(builder, loc, q);
  }

  /// The int8 weights' type: per tensor for powerOfTwo, else per `axis`.
  Type weightType(MLIRContext *context, const QuantizedWeights &w,
                  int32_t axis) {
    auto i8 = IntegerType::get(context, 8);
    if (powerOfTwo)
      return quant::UniformQuantizedType::get(quant::QuantizationFlags::Signed,
                                              i8, Float32Type::get(context),
                                              w.scales.front(), 0, -128, 127);
    return quant::UniformQuantizedPerAxisType::get(
        quant::QuantizationFlags::Signed, i8, Float32Type::get(context),
        w.scales, SmallVector<int64_t>(w.scales.size(), 0), axis, -128, 127);
  }

  /// A convolution in place: its input through uint8, its OIHW weights
  /// symmetric int8 per output channel (axis 0); bias and attributes stay.
  LogicalResult quantizeConv(l1::Conv2dOp conv, double lo, double hi) {
    auto type = cast<RankedTensorType>(conv.getWeight().getType());
    std::vector<float> values = *cuvil::getF32Constant(conv.getWeight());
    int64_t o = type.getDimSize(0), k = type.getNumElements() / o;
    // The weights as [K, O] columns, so one rule quantizes both kinds.
    cuvil::LinearLayer columns;
    columns.k = k;
    columns.n = o;
    columns.weights.resize(values.size());
    for (int64_t c = 0; c < o; ++c)
      for (int64_t i = 0; i < k; ++i)
        columns.weights[i * o + c] = values[c * k + i];
    QuantizedWeights q = quantizeWeights(columns, weightMax(conv), powerOfTwo);
    std::string oihw(q.bytes.size(), '\0');
    for (int64_t c = 0; c < o; ++c)
      for (int64_t i = 0; i < k; ++i)
        oihw[c * k + i] = q.bytes[i * o + c];
    MLIRContext *context = conv.getContext();
    Location loc = conv.getLoc();
    OpBuilder builder(conv);
    auto i8 = IntegerType::get(context, 8);
    Type wType = weightType(context, q, /*axis=*/0);
    Value stored = cuvil::createResourceConstant(builder, loc, type.clone(i8),
                                                 "qweights", oihw);
    Value weights = l1::DequantizeOp::create(
        builder, loc,
        l1::StorageCastOp::create(builder, loc, type.clone(wType), stored));
    conv.getInputMutable().assign(
        quantizedActivation(builder, loc, conv.getInput(), lo, hi));
    conv.getWeightMutable().assign(weights);
    conv->removeAttr(kRangeAttr);
    return success();
  }

  LogicalResult quantize(Operation *op) {
    auto range = dyn_cast<DenseF64ArrayAttr>(op->getAttr(kRangeAttr));
    if (!range || range.size() != 2 || !std::isfinite(range[0]) ||
        !std::isfinite(range[1]) || range[0] > range[1])
      return op->emitOpError(kRangeAttr)
             << " must be array<f64: lo, hi> with finite lo <= hi";
    if (!cuvil::isQuantizableKind(op))
      return op->emitOpError("has ")
             << kRangeAttr << " but is no matrix product or convolution";
    if (std::optional<std::string> why = cuvil::whyNotIntegerLinear(op))
      return op->emitOpError("cannot be quantized: ") << *why;

    if (auto conv = dyn_cast<l1::Conv2dOp>(op))
      return quantizeConv(conv, range[0], range[1]);
    cuvil::LinearLayer layer = cuvil::getLinearLayer(op);
    MLIRContext *context = op->getContext();
    Location loc = op->getLoc();
    OpBuilder builder(op);
    Value activation =
        quantizedActivation(builder, loc, layer.activation, range[0], range[1]);

    QuantizedWeights w = quantizeWeights(layer, weightMax(op), powerOfTwo);
    auto i8 = IntegerType::get(context, 8);
    auto storage = RankedTensorType::get({layer.k, layer.n}, i8);
    Type wType = weightType(context, w, /*axis=*/1);
    Value stored = cuvil::createResourceConstant(builder, loc, storage,
                                                 "qweights", w.bytes);
    Value weights = l1::DequantizeOp::create(
        builder, loc,
        l1::StorageCastOp::create(builder, loc, storage.clone(wType), stored));
    Value y = l1::MatmulOp::create(builder, loc, activation, weights, TypeAttr());
    if (layer.bias)
      y = l1::AddOp::create(builder, loc, y, layer.bias);
    if (y.getType() != op->getResult(0).getType())
      return op->emitOpError("quantized, gives ")
             << y.getType() << " instead of " << op->getResult(0).getType();
    op->getResult(0).replaceAllUsesWith(y);
    op->erase();
    return success();
  }
};

} // namespace
