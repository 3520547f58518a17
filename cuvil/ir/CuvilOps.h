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

#define GET_OP_CLASSES
#include "cuvil/ir/CuvilOps.h.inc"

#endif // CUVIL_IR_CUVILOPS_H
