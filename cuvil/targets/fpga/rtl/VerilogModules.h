//===- VerilogModules.h - one Verilog module per layer ----------*- C++ -*-===//
//
// Verilog-2005 for one planned layer: AXI4-Stream ports (one sample per
// transfer: s_tdata in, m_tdata out, tvalid / tready / tlast), a pipeline
// that advances while its output is empty or taken (a stalled output
// freezes the layer, so nothing is lost under back-pressure), and the
// datapath as the layer's schedule places it (RtlPlan.h). Fixed-point
// results are rounded and fitted by the result type's modes, written out
// as integer arithmetic (FixedType's semantics, bit for bit).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_RTL_VERILOGMODULES_H
#define CUVIL_TARGETS_FPGA_RTL_VERILOGMODULES_H

#include "cuvil/targets/fpga/rtl/RtlPlan.h"

#include <string>

namespace cuvil::fpga {

/// The module `layer.plan->id`; `romFile` is the path its weight ROM is
/// read from (a folded dense layer), as the simulators and synthesis see it.
/// Adds what it declares, as Yosys maps it, to `tally`.
std::string layerModule(const RtlLayer &layer, const std::string &romFile,
                        Resources &tally);
/// "rtl/layerN_weights.hex": where a folded dense layer's ROM is read from.
std::string weightRomFile(const RtlLayer &layer);

/// The ROM's contents (one word of hex per line, iteration k on line k) of
/// a folded dense layer.
std::string weightRomHex(const RtlLayer &layer);

/// Bits of one sample's value on a stream of `type`.
inline int streamWidth(const FixedType &type) { return type.width; }

namespace rtl {
/// The modules of each kind of layer (layerModule picks one).
std::string denseModule(const RtlLayer &layer, const std::string &romFile,
                        Resources &tally);
std::string reluModule(const RtlLayer &layer, Resources &tally);
std::string softmaxModule(const RtlLayer &layer, Resources &tally);
/// Where a softmax's exp (`exp`) or reciprocal table is read from.
std::string softmaxTableFile(const RtlLayer &layer, bool exp);
} // namespace rtl

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_RTL_VERILOGMODULES_H
