//===- VerilogText.h - pieces every layer module is made of -----*- C++ -*-===//
//
// Shared by the layer modules: literals and sign extension written so that
// Verilator's -Wall finds every width explicit, the quantize function
// (FixedType's rounding and overflow modes as integer arithmetic), the
// module header with its AXI4-Stream ports, the pipeline's flag registers,
// and ScheduledValues, which turns a scheduled graph's values into signals
// with a register for every clock edge between producer and reader.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_RTL_VERILOGTEXT_H
#define CUVIL_TARGETS_FPGA_RTL_VERILOGTEXT_H

#include "cuvil/targets/fpga/rtl/RtlPlan.h"

#include <map>
#include <string>
#include <vector>

namespace cuvil::fpga::rtl {

/// `value` as a literal of `width` bits in a signed context ("(-8'sd5)").
std::string signedLiteral(int64_t value, int width);
/// The width of `type`'s values once signed (an unsigned type gains a zero
/// sign bit: the datapaths compute in signed arithmetic).
int signedWidth(const FixedType &type);
/// ceil(log2(v)), 0 for v <= 1.
int log2Ceil(int64_t v);
/// `raw`, a slice holding a value of `type`, as a signed expression.
std::string asSigned(const std::string &raw, const FixedType &type);
/// `name`, a signed value of `from` bits, sign-extended to `to` bits.
std::string signExtend(const std::string &name, int from, int to);
/// Multiplier blocks of `device` for an a x b-bit signed product (the
/// wider operand on the wider port).
int64_t dspBlocks(const Device &device, int a, int b);
/// Nonzero digits of the canonical signed-digit form of |value|: the terms
/// of its shift-and-add multiplier.
int csdDigits(int64_t value);
/// Block RAMs of `device` holding a ROM of `depth` words of `width` bits,
/// at the block's best aspect ratio (18 Kb as 16K x 1 ... 512 x 36).
int64_t romBlocks(const Device &device, int64_t width, int64_t depth);
/// LUTs of quantizeFunction's logic: the rounding adder, the saturation's
/// comparison and multiplexer, the ReLU's.
int64_t quantizeLuts(int inWidth, int inFrac, const FixedType &result,
                     bool relu);

/// `bits` bits (bit i = bits[i]) as hex digits, most significant first.
std::string hexDigits(const std::vector<bool> &bits);

/// A function `name(v)`: the stored integer of `result` for the value
/// v * 2^-inFrac (v signed, `inWidth` bits), rounded and fitted by the
/// result's modes; with `reluBefore` / `reluAfter`, max(., 0) first / last.
std::string quantizeFunction(const std::string &name, int inWidth, int inFrac,
                             const FixedType &result, bool reluBefore,
                             bool reluAfter);

/// A module's name, its streams' widths and timing (for its comment).
struct ModulePorts {
  std::string name;
  int64_t inBits = 0, outBits = 0;
  int latency = 1, ii = 1;
};
/// The layer's own module: its id, its streams.
ModulePorts layerPorts(const RtlLayer &rtl);
/// A convolution's or pooling's per-pixel datapath, or the dense datapath
/// behind a gather: `<id>_core`, `in` values in and `out` out a transfer.
ModulePorts corePorts(const RtlLayer &rtl, int64_t in, int64_t out);

/// "`timescale", the comment naming the model's layer, the module's ports
/// (clk, rst, s_t* in, m_t* out) and its documenting localparams.
std::string moduleHeader(const RtlLayer &rtl, const ModulePorts &ports,
                         const std::string &summary,
                         const std::vector<std::string> &params);
/// "// inputs T, results T; ...": the streams' layout, for the params.
std::string streamParams(const RtlLayer &rtl);

/// `body` in a process clocked when the pipeline advances (`en`).
std::string clocked(const std::string &body);
/// `name_d[1..depth]`: the flag `in` of cycle 0 delayed 1..depth cycles.
std::string flagPipe(const std::string &name, const std::string &in, int depth,
                     bool reset);
/// The flag as seen in `cycle`: `in` in cycle 0, `name_d[cycle]` after.
std::string flagAt(const std::string &name, const std::string &in, int cycle);

/// The values of a scheduled graph as signals, by key (an operation's
/// index, or one per output and operation when a module writes the graph
/// once per output). Each value is ready in some cycle; at(key, c) is the
/// value as an operation starting in cycle c reads it, through one
/// register (advancing with `en`) per cycle in between, each declared once
/// by name (values of the same name share their registers).
class ScheduledValues {
public:
  ScheduledValues(const Graph &graph, const Schedule &schedule,
                  std::string *decls, std::string *regs)
      : graph_(graph), schedule_(schedule), decls_(decls), regs_(regs) {}

  void set(int64_t key, const std::string &name, int width, int ready);
  /// The constant 0 (a product by a zero weight).
  void setZero(int64_t key) { zero_[key] = true; }
  bool isZero(int64_t key) const { return zero_.count(key) != 0; }
  int ready(int64_t key) const { return values_.at(key).ready; }
  int width(int64_t key) const { return values_.at(key).width; }
  std::string at(int64_t key, int cycle);

  /// The graph's operation `op`: its start, the cycle its result is ready,
  /// its same-iteration operands in the graph's order.
  int start(int op) const { return schedule_.start[op]; }
  int finish(int op) const {
    return schedule_.start[op] + graph_.operations[op].latency;
  }
  std::vector<int> operands(int op) const;

  /// Adds the registers the reads needed to `tally`, as Yosys maps them: a
  /// chain of three or more becomes shift-register LUTs (32 deep each).
  void countRegisters(Resources &tally) const;

private:
  struct Value {
    std::string name;
    int width = 0, ready = 0;
  };
  const Graph &graph_;
  const Schedule &schedule_;
  std::string *decls_, *regs_;
  std::map<int64_t, Value> values_;
  std::map<int64_t, bool> zero_;
  /// Per delayed value's name: its width and the longest delay read.
  std::map<std::string, std::pair<int, int>> chains_;
  std::map<std::string, bool> declared_;
};

} // namespace cuvil::fpga::rtl

#endif // CUVIL_TARGETS_FPGA_RTL_VERILOGTEXT_H
