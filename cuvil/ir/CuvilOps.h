//===- CuvilOps.h - level1 ops ----------------------------------*- C++ -*-===//

#ifndef CUVIL_IR_CUVILOPS_H
#define CUVIL_IR_CUVILOPS_H

#include "cuvil/ir/CuvilAttrs.h"
#include "cuvil/ir/CuvilDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace cuvil::l1 {
/// Marks ops whose every output element is a function of the input
/// elements at the same index under numpy broadcasting (ElementwiseOps.td):
/// analyses treat them alike without listing them.
template <typename ConcreteType>
class BroadcastElementwise
    : public mlir::OpTrait::TraitBase<ConcreteType, BroadcastElementwise> {};
} // namespace cuvil::l1

#define GET_OP_CLASSES
#include "cuvil/ir/CuvilOps.h.inc"

#endif // CUVIL_IR_CUVILOPS_H
