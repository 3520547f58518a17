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

/// The module `layer.plan->id`, and in `core` the module `<id>_core` it
/// instantiates ("" when it has none); `romFile` is the path its weight ROM
/// is read from (a folded layer), as the simulators and synthesis see it.
/// Adds what they declare, as Yosys maps it, to `tally`.
std::string layerModule(const RtlLayer &layer, const std::string &romFile,
                        Resources &tally, std::string &core);
/// "rtl/layerN_weights.hex": where a folded layer's ROM is read from.
std::string weightRomFile(const RtlLayer &layer);

/// The ROM's contents (one word of hex per line, iteration k on line k) of
/// a folded dense layer or convolution.
std::string weightRomHex(const RtlLayer &layer);

/// Bits of one sample's value on a stream of `type`.
inline int streamWidth(const FixedType &type) { return type.width; }

namespace rtl {
struct ModulePorts;
/// The modules of each kind of layer (layerModule picks them).
std::string denseModule(const RtlLayer &layer, const ModulePorts &ports,
                        const std::string &romFile, Resources &tally);
std::string reluModule(const RtlLayer &layer, Resources &tally);
/// A convolution's or pooling's window generator, in front of its
/// `<id>_core` (VerilogWindow.cpp).
std::string windowModule(const RtlLayer &layer, Resources &tally);
/// A pooling's per-pixel max tree (`<id>_core`).
std::string poolCoreModule(const RtlLayer &layer, Resources &tally);
/// `cuvil_add`, the adder module of the dense datapaths' trees
/// (rtl/cuvil_add.v).
std::string cuvilAddModule();
/// A dense layer fed pixels: a gather of the sample's pixels in front of
/// its `<id>_core`.
std::string gatherModule(const RtlLayer &layer, Resources &tally);
std::string softmaxModule(const RtlLayer &layer, Resources &tally);
/// Where a softmax's exp (`exp`) or reciprocal table is read from.
std::string softmaxTableFile(const RtlLayer &layer, bool exp);
} // namespace rtl

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_RTL_VERILOGMODULES_H
