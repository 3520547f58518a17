//===- RtlPlan.h - a design's layers as Verilog pipelines -------*- C++ -*-===//
//
// The Verilog emitter's decisions, from the design plan: each dense layer's
// datapath (its products, adder tree and accumulator for one output) is
// scheduled by the FPGA scheduler, and the emitter writes that schedule as
// registers: a value crosses a clock edge exactly where the schedule's
// cycles say. The layer's latency and initiation interval follow from the
// schedule alone, so a simulation must measure them exactly.
//
// The RTL differs from the HLS estimate where a designer writing RTL would:
//  - a product by a constant weight (reuse factor 1) is dropped when the
//    weight quantizes to 0, is a shift when it is a power of two, is built
//    from LUTs (shifts and adds) when the operands are narrow, and is a DSP
//    multiplication otherwise;
//  - a folded layer reads one word of weights a cycle from a ROM with a
//    registered output (the multiplier's B register), so its products
//    always take the device's multiplier pipeline (at least 2 stages).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_RTL_RTLPLAN_H
#define CUVIL_TARGETS_FPGA_RTL_RTLPLAN_H

#include "cuvil/targets/fpga/plan/Plan.h"

#include "absl/status/statusor.h"

#include <vector>

namespace cuvil::fpga {

/// How one product by a constant weight is built.
enum class ProductKind { Zero, Shift, Lut, Dsp };

/// What an operation of a softmax's datapath computes (docs/fpga.md gives
/// the arithmetic): the inputs, a tree of max, m - x_i, the exp table's
/// registered read, a tree of adders summing the e_i, the reciprocal
/// table's read, e_i * inv in a DSP, the quantized output register.
enum class SoftmaxNode { Input, Max, Subtract, Exp, Add, Inverse, Multiply, Output };

struct RtlLayer {
  const LayerPlan *plan = nullptr;
  const Device *device = nullptr;
  /// Dense: products per output per iteration (nIn / reuse), the
  /// multiplier pipeline's stages, the datapath and its schedule.
  int64_t products = 0;
  int mulLatency = 1;
  bool lutMultipliers = false;
  Graph datapath;
  Schedule schedule;
  /// Dense at reuse factor 1: kinds[i * nOut + j] of input i's product
  /// into output j; the weights' stored integers, in the layer's order.
  std::vector<ProductKind> kinds;
  std::vector<int64_t> weights, bias;
  /// Softmax: the kind of each operation of `datapath`, and the exp
  /// table's copies (each read by two ports).
  std::vector<SoftmaxNode> nodes;
  int64_t expCopies = 0;
  /// Cycles from a sample's handshake on the layer's input to its result
  /// on the output, and between accepted samples.
  int latency = 1, ii = 1;
  /// The layer's module, and its resources: what the module declares, as
  /// Yosys maps it (docs/fpga.md, "RTL estimates").
  std::string verilog;
  Resources estimate;
};

struct RtlDesign {
  const DesignPlan *plan = nullptr;
  std::vector<RtlLayer> layers;
  int latency = 0, ii = 1;
  Resources total;
};

/// Plans the Verilog of `design` (whose layers it points into: keep it
/// alive). Unimplemented for layers the emitter does not build (naming the
/// layer and what to do), ResourceExhausted when the RTL's estimate does
/// not fit the device's caps.
absl::StatusOr<RtlDesign> planRtl(const DesignPlan &design);

/// The signed width of a softmax operation's value.
int softmaxWidth(const RtlLayer &layer, SoftmaxNode node);

/// Bits of the two's complement of `value` without redundant sign bits.
int signedBits(int64_t value);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_RTL_RTLPLAN_H
