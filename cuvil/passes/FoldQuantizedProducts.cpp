//===- FoldQuantizedProducts.cpp - QDQ products into integer ones ---------===//
//
// matmul(dequantize(a), dequantize(w)) -> quantized_matmul(a, w): the
// dequantizes fold into their consumer, so the product runs on the
// quantized values (exact integer sums, one scale per output column). A
// gemm of dequantized operands (nn.Linear in a QDQ model: weights [N, K]
// per output channel, trans_b, a bias) folds too: its weights are
// transposed at compile time, its bias added after. What
// cuvil.quantized_matmul cannot take (asymmetric or 16-bit weights, a
// dynamic K) stays a float32 product of the dequantized values, which is
// what the graph means, with a warning.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Quantization.h"
#include "cuvil/passes/ConstantUtil.h"
#include "cuvil/support/ElementsBytes.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace cuvil {
#define GEN_PASS_DEF_CUVILFOLDQUANTIZEDPRODUCTS
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

/// int8 weights [N, K] (trans_b) as [K, N]: the constant transposed and
/// its per-channel axis moved from 0 to 1. Null if they are not a constant
/// this pass can read.
Value transposedWeights(OpBuilder &builder, Location loc,
                        l1::StorageCastOp stored) {
  auto constant = stored.getInput().getDefiningOp<l1::ConstantOp>();
  auto type = cast<RankedTensorType>(stored.getType());
  if (!constant || type.getRank() != 2 || !type.hasStaticShape())
    return {};
  absl::StatusOr<std::string> bytes = cuvil::getElementsBytes(constant.getValue());
  int64_t n = type.getDimSize(0), k = type.getDimSize(1);
  if (!bytes.ok() || bytes->size() != static_cast<size_t>(n * k))
    return {};
  std::string transposed(bytes->size(), '\0');
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j)
      transposed[j * n + i] = (*bytes)[i * k + j];
  Type element = type.getElementType();
  if (auto perAxis = dyn_cast<quant::UniformQuantizedPerAxisType>(element)) {
    if (perAxis.getQuantizedDimension() != 0)
      return {};
    element = quant::UniformQuantizedPerAxisType::get(
        perAxis.getFlags(), perAxis.getStorageType(),
        perAxis.getExpressedType(), perAxis.getScales(),
        perAxis.getZeroPoints(), 1, perAxis.getStorageTypeMin(),
        perAxis.getStorageTypeMax());
  }
  auto storage = cast<RankedTensorType>(stored.getInput().getType());
  Value weights = cuvil::createResourceConstant(
      builder, loc, RankedTensorType::get({k, n}, storage.getElementType()),
      "qweights_t", transposed);
  return l1::StorageCastOp::create(builder, loc,
                                   RankedTensorType::get({k, n}, element),
                                   weights);
}

struct FoldQuantizedProducts
    : cuvil::impl::CuvilFoldQuantizedProductsBase<FoldQuantizedProducts> {
  void runOnOperation() override {
    SmallVector<Operation *> products;
    getOperation().walk([&](Operation *op) {
      if (isa<l1::MatmulOp, l1::GemmOp, l1::Conv2dOp>(op))
        products.push_back(op);
    });
    for (Operation *op : products) {
      auto conv = dyn_cast<l1::Conv2dOp>(op);
      if (succeeded(conv ? foldConv(conv) : fold(op)))
        cuvil::addStatistic(getOperation(), *this, numFolded, "folded");
    }
  }

  /// conv2d(dequantize(x), dequantize(w), bias) -> quantized_conv2d.
  LogicalResult foldConv(l1::Conv2dOp conv) {
    auto input = conv.getInput().getDefiningOp<l1::DequantizeOp>();
    auto weight = conv.getWeight().getDefiningOp<l1::DequantizeOp>();
    if (!input || !weight)
      return failure();
    auto stored = weight.getInput().getDefiningOp<l1::StorageCastOp>();
    std::optional<std::string> why = l1::quantizedConv2dMismatch(
        cast<RankedTensorType>(input.getInput().getType()),
        cast<RankedTensorType>(weight.getInput().getType()), conv.getGroups());
    if (!why && (!stored || !stored.getInput().getDefiningOp<l1::ConstantOp>()))
      why = "its weights are computed at run time";
    if (why) {
      conv.emitWarning("runs in float32 on dequantized values: an integer "
                       "convolution needs ")
          << "8-bit input per tensor and symmetric int8 weights per tensor "
             "or per output channel, but "
          << *why;
      return failure();
    }
    OpBuilder builder(conv);
    auto product = l1::QuantizedConv2dOp::create(
        builder, conv.getLoc(), input.getInput(), weight.getInput(),
        conv.getBias(), conv.getStridesAttr(), conv.getPaddingAttr(),
        conv.getDilationsAttr(), conv.getGroupsAttr());
    if (product.getType() != conv.getType()) {
      product.erase();
      return failure();
    }
    conv.replaceAllUsesWith(product.getResult());
    conv.erase();
    return success();
  }

  /// Why the gemm `op` has no integer form beyond its operands', if so.
  static std::optional<std::string> gemmMismatch(l1::GemmOp gemm) {
    if (gemm.getTransA())
      return std::string("its activation is transposed (trans_a)");
    if (gemm.getAlpha().convertToDouble() != 1.0 ||
        (gemm.getC() && gemm.getBeta().convertToDouble() != 1.0))
      return std::string("it scales the product or the bias (alpha, beta)");
    return std::nullopt;
  }

  LogicalResult fold(Operation *op) {
    auto lhs = op->getOperand(0).getDefiningOp<l1::DequantizeOp>();
    auto rhs = op->getOperand(1).getDefiningOp<l1::DequantizeOp>();
    if (!lhs || !rhs)
      return failure();
    auto gemm = dyn_cast<l1::GemmOp>(op);
    auto stored = rhs.getInput().getDefiningOp<l1::StorageCastOp>();
    bool constantWeights =
        stored && stored.getInput().getDefiningOp<l1::ConstantOp>();
    std::optional<std::string> why = gemm ? gemmMismatch(gemm) : std::nullopt;
    // Targets pack integer weights once, at compile time.
    if (!why && !constantWeights)
      why = "its weights are computed at run time";
    OpBuilder builder(op);
    Value weights = rhs.getInput();
    if (!why && gemm && gemm.getTransB()) {
      weights = transposedWeights(builder, op->getLoc(), stored);
      if (!weights)
        why = "its transposed weights are not int8 per tensor or per output "
              "channel (axis 0)";
    }
    if (!why)
      why = l1::quantizedMatmulMismatch(
          cast<RankedTensorType>(lhs.getInput().getType()),
          cast<RankedTensorType>(weights.getType()));
    if (why) {
      op->emitWarning("runs in float32 on dequantized values: an integer "
                      "product needs ")
          << "8-bit activations per tensor and symmetric int8 weights "
             "[K, N] per tensor or per column, but "
          << *why;
      return failure();
    }
    Value product = l1::QuantizedMatmulOp::create(builder, op->getLoc(),
                                                  lhs.getInput(), weights);
    if (gemm && gemm.getC())
      product = l1::AddOp::create(builder, op->getLoc(), product, gemm.getC());
    if (product.getType() != op->getResult(0).getType()) {
      product.getDefiningOp()->erase();
      return failure();
    }
    op->getResult(0).replaceAllUsesWith(product);
    op->erase();
    // The dequantizes are erased by the canonicalizer when unused.
    return success();
  }
};

} // namespace
