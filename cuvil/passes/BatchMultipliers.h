//===- BatchMultipliers.h - dynamic sizes in batch multiples -*- C++ -*-===//
//
// Only the batch is dynamic in a Cuvil model, but an intermediate's dynamic
// dimension may be a multiple of it (a [B, S, E] tensor reshaped to
// [B * S, E]). Lowering sizes buffers by these multipliers, and calibration
// reads intermediates by them.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PASSES_BATCHMULTIPLIERS_H
#define CUVIL_PASSES_BATCHMULTIPLIERS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

namespace cuvil {

/// The batch multiplier k of each value's one dynamic dimension: its run-time
/// size is k * batch.
class BatchMultipliers {
public:
  /// Fails (with a diagnostic) on a shape Cuvil cannot size at run time.
  mlir::LogicalResult compute(mlir::func::FuncOp func);
  /// k for a value with a dynamic dimension (0 for any other).
  int64_t get(mlir::Value value) const { return multipliers.lookup(value); }

  /// The product of the static dimensions of `type`.
  static int64_t staticProduct(mlir::RankedTensorType type) {
    int64_t product = 1;
    for (int64_t d : type.getShape())
      if (!mlir::ShapedType::isDynamic(d))
        product *= d;
    return product;
  }

private:
  /// Sizes the values of cuvil.if and cuvil.loop (their block arguments and
  /// results from their operands and yields).
  mlir::LogicalResult controlFlow(mlir::Operation *op);

  llvm::DenseMap<mlir::Value, int64_t> multipliers;
};

} // namespace cuvil

#endif // CUVIL_PASSES_BATCHMULTIPLIERS_H
