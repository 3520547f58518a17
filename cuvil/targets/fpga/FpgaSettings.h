//===- FpgaSettings.h - what the user asks of an FPGA design ----*- C++ -*-===//
//
// The FPGA target's options travel as TargetOptions::settings, by name:
//
//   precision            the model's fixed-point type (default ap_fixed<16,6>),
//                        or auto / auto<W> (sized from calibration)
//   precision:NODE       one layer's, by the model's node name
//   reuse_factor         every dense layer's (default 1; raised to fit)
//   reuse_factor:NODE    one layer's, kept as given
//   strategy             latency or resource (default: by reuse factor)
//   strategy:NODE        one layer's
//   clock_period         ns (default: the device's)
//   max_utilization      the share of each resource allowed (default 0.8)
//   project              the top function's and project's name (myproject)
//   test_vectors         samples in the testbench (default 16)
//   calibration          a .npz of representative inputs (auto precision;
//                        the testbench's vectors)
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_FPGASETTINGS_H
#define CUVIL_TARGETS_FPGA_FPGASETTINGS_H

#include "cuvil/targets/fpga/plan/Plan.h"

#include "absl/status/statusor.h"

#include <map>
#include <string>

namespace cuvil::fpga {

struct FpgaSettings {
  /// The types (cuvil-fpga-assign-fixed-point's options): the model's
  /// (default hls4ml's ap_fixed<16,6>) and, by node name, a layer's.
  Precision precision;
  std::map<std::string, FixedType> layerPrecision;
  PlanOptions plan;
  std::string project = "myproject";
  int testVectors = 16;
  /// The .npz of representative inputs, if given.
  std::string calibration;
};

/// Parses `settings`; errors name the setting and what it takes.
absl::StatusOr<FpgaSettings>
parseFpgaSettings(const std::map<std::string, std::string> &settings);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_FPGASETTINGS_H
