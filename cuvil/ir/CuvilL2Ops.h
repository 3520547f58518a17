//===- CuvilL2Ops.h - level2 ops --------------------------------*- C++ -*-===//

#ifndef CUVIL_IR_CUVILL2OPS_H
#define CUVIL_IR_CUVILL2OPS_H

#include "cuvil/ir/CuvilL2Dialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "cuvil/ir/CuvilL2Ops.h.inc"

#endif // CUVIL_IR_CUVILL2OPS_H
