//===- CuvilDialect.h - level1 dialect --------------------------*- C++ -*-===//

#ifndef CUVIL_IR_CUVILDIALECT_H
#define CUVIL_IR_CUVILDIALECT_H

#include "mlir/IR/Dialect.h"

#include "cuvil/ir/CuvilDialect.h.inc"

#endif // CUVIL_IR_CUVILDIALECT_H
