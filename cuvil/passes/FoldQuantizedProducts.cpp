//===- FoldQuantizedProducts.cpp - QDQ products into integer ones ---------===//
//
// matmul(dequantize(a), dequantize(w)) -> quantized_matmul(a, w): the
// dequantizes fold into their consumer, so the product runs on the
// quantized values (exact integer sums, one scale per output column). What
// cuvil.quantized_matmul cannot take (asymmetric or 16-bit weights, a
// dynamic K) stays a float32 product of the dequantized values, which is
// what the graph means, with a warning.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Quantization.h"
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

struct FoldQuantizedProducts
    : cuvil::impl::CuvilFoldQuantizedProductsBase<FoldQuantizedProducts> {
  void runOnOperation() override {
    SmallVector<l1::MatmulOp> products;
    getOperation().walk([&](l1::MatmulOp op) { products.push_back(op); });
    for (l1::MatmulOp op : products)
      if (succeeded(fold(op)))
        cuvil::addStatistic(getOperation(), *this, numFolded, "folded");
  }

  LogicalResult fold(l1::MatmulOp op) {
    auto lhs = op.getLhs().getDefiningOp<l1::DequantizeOp>();
    auto rhs = op.getRhs().getDefiningOp<l1::DequantizeOp>();
    if (!lhs || !rhs)
      return failure();
    auto a = cast<RankedTensorType>(lhs.getInput().getType());
    auto w = cast<RankedTensorType>(rhs.getInput().getType());
    std::optional<std::string> why = l1::quantizedMatmulMismatch(a, w);
    // Targets pack integer weights once, at compile time.
    auto stored = rhs.getInput().getDefiningOp<l1::StorageCastOp>();
    if (!why && (!stored || !stored.getInput().getDefiningOp<l1::ConstantOp>()))
      why = "its weights are computed at run time";
    if (why) {
      op.emitWarning("runs in float32 on dequantized values: an integer "
                     "product needs ")
          << "8-bit activations per tensor and symmetric int8 weights "
             "[K, N] per tensor or per column, but "
          << *why;
      return failure();
    }
    OpBuilder builder(op);
    auto product = l1::QuantizedMatmulOp::create(
        builder, op.getLoc(), lhs.getInput(), rhs.getInput());
    if (product.getType() != op.getType()) {
      product.erase();
      return failure();
    }
    op.replaceAllUsesWith(product.getResult());
    op.erase();
    // The dequantizes are erased by the canonicalizer when unused.
    return success();
  }
};

} // namespace
