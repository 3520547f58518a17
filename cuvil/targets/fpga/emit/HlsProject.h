//===- HlsProject.h - a planned design as an HLS project folder -*- C++ -*-===//
//
// Writes what a hardware engineer takes to Vitis HLS: firmware (one
// function per layer with the pragmas the plan decided, the types, the
// weights, Cuvil's fixed-point header), a testbench with input and
// expected-output vectors (the interpreter's), build_prj.tcl (csim,
// csynth, cosim, export), vivado_synth.tcl (out-of-context synthesis), a
// Makefile for C simulation with the host compiler, a README, and the
// report (report.json, report.txt).
//
// Only identifiers the compiler makes (layer1, input_t, the project name,
// checked) appear in code; the model's own names appear in comments,
// escaped (cuvil/support/SourceEscape.h).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_EMIT_HLSPROJECT_H
#define CUVIL_TARGETS_FPGA_EMIT_HLSPROJECT_H

#include "cuvil/targets/Target.h"
#include "cuvil/targets/fpga/plan/Plan.h"

#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace cuvil::fpga {

struct ProjectOptions {
  /// The top function's and the project's name (an identifier).
  std::string project = "myproject";
  std::string modelHash;
  std::string compilerVersion;
  /// Test vectors for the testbench, one sample each.
  std::vector<std::vector<double>> samples;
  /// Where the report's !quant.uniform types are built (the module's).
  mlir::MLIRContext *context = nullptr;
};

/// The project's files, paths relative to its folder.
std::vector<ArtifactFile> writeHlsProject(const DesignPlan &design,
                                          const ProjectOptions &options);

/// The report as JSON (hls4ml / FINN key names) and as text.
std::string reportJson(const DesignPlan &design, const ProjectOptions &options);
/// The report's JSON object, for a folder that adds to it (the Verilog's),
/// a layer's or a total's resources in it, and the object as report.json.
llvm::json::Object reportObject(const DesignPlan &design,
                                const ProjectOptions &options);
void putResources(llvm::json::Object &object, const Resources &r,
                  const Device &device);
std::string formatReport(llvm::json::Object root);
std::string reportText(const DesignPlan &design);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_EMIT_HLSPROJECT_H
