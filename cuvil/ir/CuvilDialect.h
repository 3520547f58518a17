//===- CuvilDialect.h - level1 dialect --------------------------*- C++ -*-===//

#ifndef CUVIL_IR_CUVILDIALECT_H
#define CUVIL_IR_CUVILDIALECT_H

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/IR/Dialect.h"

#include "cuvil/ir/CuvilDialect.h.inc"

#endif // CUVIL_IR_CUVILDIALECT_H
