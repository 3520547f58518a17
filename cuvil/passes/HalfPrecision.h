//===- HalfPrecision.h - what the half-precision passes share ---*- C++ -*-===//
//
// bfloat16 and float16 as precision options (cuvil-convert-products-to-bf16,
// -f16) pick the same products (LinearLayers.h: linear layers and
// convolutions by constant weights), warn alike about the ones that stay
// float32, and store weights rounded once to the half type.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PASSES_HALFPRECISION_H
#define CUVIL_PASSES_HALFPRECISION_H

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/LinearLayers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cuvil {

/// `values` as `half` (bf16 or f16) bytes, each rounded to nearest even.
std::string toHalfBytes(const std::vector<float> &values, mlir::FloatType half);

/// Why `conv` has no `half` form (the kernels compute ungrouped
/// convolutions by constant static float32 weights; `staticImage`: and a
/// static image), or nullopt if it has.
std::optional<std::string> whyNotHalfConv(l1::Conv2dOp conv,
                                          mlir::FloatType half,
                                          bool staticImage);

/// A product's operands in `half`: `activation` cast to it, and `weights`
/// ([shape] float32) stored in it as a new constant.
struct HalfOperands {
  mlir::Value activation, weights;
};
HalfOperands castToHalf(mlir::OpBuilder &builder, mlir::Location loc,
                        mlir::Value activation, const std::vector<float> &weights,
                        llvm::ArrayRef<int64_t> shape, mlir::FloatType half);

/// Calls `convert` on each product of `func` (matmul, gemm, conv2d) that
/// `keepFp32` does not name and `whyNot` finds no reason against (nullopt);
/// the others get a warning saying why they stay float32. Fails as soon as
/// `convert` does.
mlir::LogicalResult convertProducts(
    mlir::func::FuncOp func, llvm::ArrayRef<std::string> keepFp32,
    const std::function<std::optional<std::string>(mlir::Operation *)> &whyNot,
    const std::function<mlir::LogicalResult(mlir::Operation *)> &convert);

} // namespace cuvil

#endif // CUVIL_PASSES_HALFPRECISION_H
