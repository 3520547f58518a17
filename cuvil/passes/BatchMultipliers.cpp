#include "cuvil/passes/BatchMultipliers.h"

#include "cuvil/ir/CuvilOps.h"

using namespace mlir;
namespace l1 = cuvil::l1;

namespace cuvil {

LogicalResult BatchMultipliers::compute(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return func.emitOpError("argument #")
             << arg.getArgNumber() << " is not a ranked tensor";
    if (type.getNumDynamicDims() == 0)
      continue;
    if (type.getNumDynamicDims() > 1 || !type.isDynamicDim(0))
      return func.emitOpError("argument #")
             << arg.getArgNumber() << " of type " << type
             << " has a dynamic dimension other than the batch (dimension 0)";
    multipliers[arg] = 1;
  }
  // Pre-order, so that a fused group is sized as one op (its body's block
  // arguments are not values of the function).
  WalkResult walk =
      func.walk<WalkOrder::PreOrder>([&](Operation *op) -> WalkResult {
        if (op == func.getOperation())
          return WalkResult::advance();
        for (Value result : op->getResults()) {
          auto type = dyn_cast<RankedTensorType>(result.getType());
          if (!type || type.getNumDynamicDims() == 0)
            continue;
          if (type.getNumDynamicDims() > 1)
            return op->emitOpError("result ")
                   << type
                   << " has more than one dynamic dimension; only the "
                      "batch may be dynamic";
          // The operand with a dynamic dimension this result derives from
          // (a roi_align's regions, not its images).
          Value source;
          for (Value operand : op->getOperands())
            if (multipliers.count(operand)) {
              source = operand;
              break;
            }
          if (auto roi = dyn_cast<l1::RoiAlignOp>(op))
            source = multipliers.count(roi.getRois()) ? roi.getRois()
                                                      : roi.getBatchIndices();
          if (!source)
            return op->emitOpError("result ")
                   << type << " is dynamic but no operand is";
          int64_t k = multipliers[source];
          if (isa<l1::ReshapeOp, l1::FlattenOp>(op)) {
            // Element counts agree: P_in * k_in == P_out * k_out.
            auto sourceType = cast<RankedTensorType>(source.getType());
            int64_t numerator = staticProduct(sourceType) * k;
            int64_t denominator = staticProduct(type);
            if (denominator == 0 || numerator % denominator != 0)
              return op->emitOpError("cannot size ")
                     << type
                     << " at run time: it is not a whole multiple of "
                        "the batch";
            k = numerator / denominator;
          } else if (auto concat = dyn_cast<l1::ConcatOp>(op)) {
            int64_t axis = static_cast<int64_t>(concat.getAxis());
            if (axis < 0)
              axis += type.getRank();
            if (type.isDynamicDim(axis))
              return op->emitOpError("concatenation along the dynamic batch is "
                                     "not supported");
          } else if (auto split = dyn_cast<l1::SplitOp>(op)) {
            int64_t axis = static_cast<int64_t>(split.getAxis());
            if (axis < 0)
              axis += type.getRank();
            if (type.isDynamicDim(axis))
              return op->emitOpError(
                  "splitting the dynamic batch is not supported");
          }
          multipliers[result] = k;
        }
        return isa<l1::FusedGroupOp>(op) ? WalkResult::skip()
                                         : WalkResult::advance();
      });
  return failure(walk.wasInterrupted());
}

} // namespace cuvil
