//===- PlanConfig.h - the user's plan options in #cuvil.target --*- C++ -*-===//
//
// What the FPGA planner takes from the user (reuse factors, strategies,
// clock, utilization cap) travels in the module's #cuvil.target `config`,
// beside the device's budget, so that cuvil-fpga-plan-design reads it from
// the IR as every pass reads its hardware.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_TRANSFORMS_PLANCONFIG_H
#define CUVIL_TARGETS_FPGA_TRANSFORMS_PLANCONFIG_H

#include "cuvil/targets/fpga/plan/Plan.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace cuvil::fpga {

/// `options` as config entries: reuse_factor, strategy, max_utilization,
/// layer_reuse_factor and layer_strategy (by node name). The clock is the
/// budget's clock_ns, which the target sets.
llvm::SmallVector<mlir::NamedAttribute> planConfig(mlir::Builder &b,
                                                   const PlanOptions &options);

/// The options `config` holds; absent entries keep their defaults.
PlanOptions readPlanConfig(mlir::DictionaryAttr config);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_TRANSFORMS_PLANCONFIG_H
