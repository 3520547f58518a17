//===- StreamTiming.h - a design's handshakes, cycle by cycle ---*- C++ -*-===//
//
// A Verilog design's timing is static, but once convolutions stream pixels
// it is no longer a sum of layer latencies: a window generator steps over
// its padding without input and waits while its core is busy, and a layer
// freezes while its output is not taken, so each layer's progress depends
// on its neighbours'. This models the control of every module (valid
// flags, counters, and the readiness they give), not its data, cycle by
// cycle as the RTL writes it, and runs a stream of samples through at full
// rate (input always valid, output always ready): the testbench's first
// phase, whose timing the testbench then holds the RTL to, sample by
// sample.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_RTL_STREAMTIMING_H
#define CUVIL_TARGETS_FPGA_RTL_STREAMTIMING_H

#include "cuvil/targets/fpga/rtl/RtlPlan.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <vector>

namespace cuvil::fpga {

struct StreamTimes {
  /// Per sample: the cycle of its last output handshake, counted from the
  /// first input handshake of the stream.
  std::vector<int64_t> done;
};

/// Runs `samples` samples through `rtl`'s control at full rate. The
/// testbench drives its first input the cycle after reset; so does this.
/// Internal when the stream does not drain (a bug in the model or the
/// plan, never a user's error).
absl::StatusOr<StreamTimes> streamTiming(const RtlDesign &rtl, int64_t samples);
/// The same for a chain of some of its layers.
absl::StatusOr<StreamTimes>
streamTiming(const std::vector<const RtlLayer *> &layers, int64_t samples);

/// The latency (sample 0's first input to its last output) and II (the
/// steady gap between samples) of each layer on its own and of the whole
/// design, written into `rtl`.
absl::Status timeDesign(RtlDesign &rtl);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_RTL_STREAMTIMING_H
