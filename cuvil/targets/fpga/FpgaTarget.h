//===- FpgaTarget.h - FPGAs through high-level synthesis --------*- C++ -*-===//

#ifndef CUVIL_TARGETS_FPGA_FPGATARGET_H
#define CUVIL_TARGETS_FPGA_FPGATARGET_H

#include "cuvil/targets/Target.h"

namespace cuvil::fpga {

/// Adds the `fpga` target: --device picks the part (cuvilc
/// --list-devices), TargetOptions::settings carry precision, reuse factors,
/// strategy, clock and caps (FpgaSettings.h), --emit=hls writes the project
/// folder.
void registerFpgaTarget(TargetRegistry &registry);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_FPGATARGET_H
