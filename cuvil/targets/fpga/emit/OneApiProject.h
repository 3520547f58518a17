//===- OneApiProject.h - the oneAPI flavour of a project --------*- C++ -*-===//
//
// Intel parts take a oneAPI (SYCL HLS) project: the same layer functions,
// with oneAPI's loop attributes instead of Vitis pragmas, called from a
// SYCL kernel, built by CMake with icpx. The testbench and `make csim` run
// the same sources under g++ (which ignores oneAPI's attributes).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_EMIT_ONEAPIPROJECT_H
#define CUVIL_TARGETS_FPGA_EMIT_ONEAPIPROJECT_H

#include "cuvil/targets/fpga/emit/HlsProject.h"

#include <string>

namespace cuvil::fpga {

/// The firmware source with each Vitis pragma as oneAPI says it: a
/// loop's `#pragma HLS UNROLL` as `#pragma unroll` before the loop, its
/// `PIPELINE II=N` as `[[intel::initiation_interval(N)]]`, a local array's
/// complete partition as `[[intel::fpga_register]]`; the rest (interfaces,
/// dataflow, storage binding) is the kernel's or the compiler's in oneAPI,
/// and goes. (The input is the emitter's own text, one pragma per line
/// after the statement it applies to.)
std::string toOneApiSource(const std::string &vitis);

/// src/main.cpp: the SYCL host program running the top function as a
/// single-task kernel on tb_data's vectors.
std::string oneApiMain(const DesignPlan &design, const ProjectOptions &options);

/// CMakeLists.txt: fpga_emu, report and fpga targets with icpx.
std::string oneApiCMake(const DesignPlan &design, const ProjectOptions &options);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_EMIT_ONEAPIPROJECT_H
