//===- Interpreter.h - a design's outputs, computed exactly -----*- C++ -*-===//
//
// The reference the generated HLS C++ is checked against: the planned
// design evaluated with exact integer arithmetic on stored integers (each
// assignment quantized and fitted by FixedType's own rules), written apart
// from the emitter and from hls/cuvil_fixed.h, so that the testbench's
// expected outputs do not come from the code under test.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_PLAN_INTERPRETER_H
#define CUVIL_TARGETS_FPGA_PLAN_INTERPRETER_H

#include "cuvil/targets/fpga/plan/Plan.h"

#include <cstdint>
#include <vector>

namespace cuvil::fpga {

/// The design's output for one sample (design.layers' input count of
/// values, converted to the input type), as stored integers of the output
/// type.
std::vector<int64_t> interpretDesign(const DesignPlan &design,
                                     const std::vector<double> &sample);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_PLAN_INTERPRETER_H
