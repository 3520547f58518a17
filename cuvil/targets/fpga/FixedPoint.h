//===- FixedPoint.h - an FPGA design's types, chosen at level1 --*- C++ -*-===//
//
// The FPGA target's level1 step (TargetBackend::finishLevel1): the user's
// precision becomes cuvil-fpga-assign-fixed-point's types on the level1
// ops. For --precision=auto, the ranges it sizes integer bits from come
// first: a copy of the module is lowered, read as the chain of layers the
// design will be, and evaluated in float on the calibration samples; each
// layer's range goes back to the level1 op it came from (`cuvil.abs_max`).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_FIXEDPOINT_H
#define CUVIL_TARGETS_FPGA_FIXEDPOINT_H

#include "cuvil/targets/Target.h"
#include "cuvil/targets/fpga/FpgaSettings.h"
#include "cuvil/targets/fpga/model/Network.h"

#include "absl/status/statusor.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace cuvil::fpga {

/// Assigns the level1 `module`'s fixed-point types as `settings` ask.
absl::Status assignFixedPoint(mlir::ModuleOp module,
                              const FpgaSettings &settings,
                              const PipelineRunner &run);

/// The samples of a calibration .npz: the array named after the model's
/// input (or its only array), float32 or float64, samples along dimension 0.
absl::StatusOr<std::vector<std::vector<double>>>
readCalibration(const std::string &path, const Network &network);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_FIXEDPOINT_H
