#include "cuvil/passes/FusionUtil.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace cuvil {

SmallVector<Value> externalOperands(ArrayRef<Operation *> ops,
                                    function_ref<bool(Value)> skip) {
  llvm::SmallPtrSet<Operation *, 8> members(ops.begin(), ops.end());
  SmallVector<Value> inputs;
  for (Operation *op : ops)
    for (Value operand : op->getOperands())
      if (!members.contains(operand.getDefiningOp()) &&
          !(skip && skip(operand)) && !llvm::is_contained(inputs, operand))
        inputs.push_back(operand);
  return inputs;
}

Location fusedLocation(OpBuilder &builder, ArrayRef<Operation *> ops) {
  SmallVector<Location> locs;
  for (Operation *op : ops)
    locs.push_back(op->getLoc());
  return builder.getFusedLoc(locs);
}

} // namespace cuvil
