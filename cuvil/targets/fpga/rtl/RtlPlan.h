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

/// How a layer's values cross its stream: a whole sample per transfer (a
/// vector), or a pixel per transfer (an image's channels, in raster order,
/// tlast on its last pixel) between convolutions and poolings.
struct StreamShape {
  int64_t values = 0;    // per transfer
  int64_t transfers = 1; // per sample
  bool pixels = false;
};

struct RtlLayer {
  const LayerPlan *plan = nullptr;
  const Device *device = nullptr;
  /// Its input and output streams. A dense layer fed pixels gathers them
  /// into its vector first (`<id>_gather`); a convolution's or pooling's
  /// window generator feeds its per-pixel datapath (`<id>_core`).
  StreamShape in, out;
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
  /// Cycles from a sample's first handshake on the layer's input to its
  /// last result on the output, and between samples, in the design's
  /// stream (StreamTiming.h measures them on its model).
  int latency = 1, ii = 1;
  /// The per-transfer datapath's own: the dense core of a convolution, the
  /// max tree of a pooling (a dense layer's are latency and ii).
  int coreLatency = 1, coreIi = 1;
  /// The layer's module (and its core's, "" without one), and its
  /// resources: what the modules declare, as Yosys maps them (docs/fpga.md,
  /// "RTL estimates").
  std::string verilog, coreVerilog;
  Resources estimate;
};

/// A window generator's sweep over one image, padding included, row by
/// row: step (r, c) takes input pixel (r - padTop, c - padLeft) when that
/// lies in the image and a zero otherwise, and shifts it into the window;
/// the window then ending at (r, c) is an output pixel's when it is
/// aligned to the strides. The sweep covers every input pixel and every
/// window, so it may be longer than the padded image the windows need.
struct Sweep {
  Window w;
  int64_t rows = 0, cols = 0;
  explicit Sweep(const Window &window);
  bool real(int64_t r, int64_t c) const {
    return r >= w.padTop && r < w.padTop + w.height && c >= w.padLeft &&
           c < w.padLeft + w.width;
  }
  /// The output pixel (oh, ow) whose window ends at (r, c), if any.
  bool window(int64_t r, int64_t c) const;
  bool lastWindow(int64_t r, int64_t c) const {
    return r == w.kernelH - 1 + (w.outHeight - 1) * w.strideH &&
           c == w.kernelW - 1 + (w.outWidth - 1) * w.strideW;
  }
  /// Pixels the window generator's shift register holds: kernelH - 1
  /// rows and kernelW pixels.
  int64_t depth() const { return (w.kernelH - 1) * cols + w.kernelW; }
};

struct RtlDesign {
  const DesignPlan *plan = nullptr;
  std::vector<RtlLayer> layers;
  /// From the first handshake of a sample on the input to the last of its
  /// results, and between samples in a steady stream.
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
