//===- PlanTesting.h - networks typed for the planner's tests ---*- C++ -*-===//

#ifndef CUVIL_TARGETS_FPGA_PLAN_PLANTESTING_H
#define CUVIL_TARGETS_FPGA_PLAN_PLANTESTING_H

#include "cuvil/targets/fpga/plan/Plan.h"

namespace cuvil::fpga {

/// Plans `network` (which the plan then points into) with every tensor not
/// typed yet in `type`: what cuvil-fpga-assign-fixed-point assigns at
/// level1 for --precision=TYPE (hls4ml's default ap_fixed<16,6>).
inline absl::StatusOr<DesignPlan>
planAt(Network &network, const Device &device, const PlanOptions &options,
       FixedType type = FixedType{16, 6, true, Rounding::TRN, Overflow::WRAP}) {
  network.input = network.input.value_or(type);
  for (Layer &layer : network.layers) {
    layer.resultType = layer.resultType.value_or(type);
    if (layer.hasWeights()) {
      layer.weightType = layer.weightType.value_or(type);
      layer.biasType = layer.biasType.value_or(type);
    }
  }
  return planDesign(network, device, options);
}

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_PLAN_PLANTESTING_H
