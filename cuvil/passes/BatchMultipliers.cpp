#include "cuvil/passes/BatchMultipliers.h"

#include "cuvil/ir/CuvilOps.h"

using namespace mlir;
namespace l1 = cuvil::l1;

namespace cuvil {

LogicalResult BatchMultipliers::controlFlow(Operation *op) {
  // A loop's carried values are its inits' sizes, in the body and after.
  if (auto loop = dyn_cast<l1::LoopOp>(op)) {
    for (auto [init, arg, result] :
         llvm::zip(loop.getInits(), loop.getCarried(), loop.getResults()))
      if (int64_t k = multipliers.lookup(init)) {
        multipliers[arg] = k;
        multipliers[result] = k;
      }
    return success();
  }
  // An if's results are its branches' (the then branch's yield comes first);
  // a loop's scan outputs stack the rows it yields.
  auto parent = dyn_cast<l1::IfOp>(op->getParentOp());
  auto loop = dyn_cast<l1::LoopOp>(op->getParentOp());
  if (!isa<l1::YieldOp>(op) || (!parent && !loop))
    return success();
  for (auto [i, value] : llvm::enumerate(op->getOperands())) {
    Value target = parent ? parent.getResult(i)
                   : i == 0 ? Value()
                            : loop.getResult(i - 1);
    if (!target)
      continue;
    int64_t k = multipliers.lookup(value);
    if (!k)
      continue;
    auto [it, inserted] = multipliers.try_emplace(target, k);
    if (!inserted && it->second != k)
      return op->emitOpError("yields value #")
             << i << " with " << k << " x batch rows where "
             << it->second << " x batch were expected; a value's run-time "
                              "size must not depend on the branch or "
                              "iteration";
  }
  return success();
}

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
        if (isa<l1::IfOp, l1::LoopOp, l1::YieldOp>(op))
          return failed(controlFlow(op)) ? WalkResult::interrupt()
                                         : WalkResult::advance();
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
