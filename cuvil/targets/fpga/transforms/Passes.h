//===- Passes.h - the FPGA target's passes ----------------------*- C++ -*-===//

#ifndef CUVIL_TARGETS_FPGA_TRANSFORMS_PASSES_H
#define CUVIL_TARGETS_FPGA_TRANSFORMS_PASSES_H

#include "cuvil/ir/CuvilL2Dialect.h"

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace cuvil::fpga {

/// The largest magnitude a layer's result (or an input) takes on the
/// calibration data: what auto precision sizes integer bits from.
inline constexpr llvm::StringLiteral kAbsMaxAttr = "cuvil.abs_max";

#define GEN_PASS_DECL
#include "cuvil/targets/fpga/transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cuvil/targets/fpga/transforms/Passes.h.inc"

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_TRANSFORMS_PASSES_H
