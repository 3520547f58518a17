//===- VerilogProject.h - a planned design as Verilog RTL -------*- C++ -*-===//
//
// The folder --emit=verilog writes: rtl/ (a module per layer, the top
// module chaining them on AXI4-Stream, the folded layers' weight ROMs as
// $readmemh files), tb/ (a self-checking testbench: seeded random bubbles
// and back-pressure, every output compared bit for bit with the
// interpreter's, every sample's completion held to the timing model's), the
// Makefile (Icarus Verilog, Verilator, Yosys for a Xilinx and an Intel
// proxy), README.md and report.json / report.txt.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_RTL_VERILOGPROJECT_H
#define CUVIL_TARGETS_FPGA_RTL_VERILOGPROJECT_H

#include "cuvil/targets/fpga/emit/HlsProject.h"
#include "cuvil/targets/fpga/rtl/RtlPlan.h"

#include "absl/status/statusor.h"

#include <vector>

namespace cuvil::fpga {

/// The folder's files, paths relative to it. Internal if the timing model
/// cannot run the samples (a bug, not a user's error).
absl::StatusOr<std::vector<ArtifactFile>>
writeVerilogProject(const RtlDesign &rtl, const ProjectOptions &options);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_RTL_VERILOGPROJECT_H
