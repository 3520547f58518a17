//===- Registration.h - dialects every Cuvil tool loads ---------*- C++ -*-===//

#ifndef CUVIL_IR_REGISTRATION_H
#define CUVIL_IR_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace cuvil {

/// Adds the cuvil dialects and the upstream dialects Cuvil's IR mixes with
/// (func, arith, math, tensor, memref, scf, linalg, vector, bufferization).
void registerCuvilDialects(mlir::DialectRegistry &registry);

} // namespace cuvil

#endif // CUVIL_IR_REGISTRATION_H
