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
/// `bits` bits (bit i = bits[i]) as hex digits, most significant first.
std::string hexDigits(const std::vector<bool> &bits);

/// A function `name(v)`: the stored integer of `result` for the value
/// v * 2^-inFrac (v signed, `inWidth` bits), rounded and fitted by the
/// result's modes; with `reluBefore` / `reluAfter`, max(., 0) first / last.
std::string quantizeFunction(const std::string &name, int inWidth, int inFrac,
                             const FixedType &result, bool reluBefore,
                             bool reluAfter);

/// "`timescale", the comment naming the model's layer, the module's ports
/// (clk, rst, s_t* in, m_t* out) and its documenting localparams.
std::string moduleHeader(const RtlLayer &rtl, const std::string &summary,
                         const std::vector<std::string> &params);
/// "// inputs T, results T; ...": the stream's layout, for the params.
std::string streamParams(const LayerPlan &plan);

/// `body` in a process clocked when the pipeline advances (`en`).
std::string clocked(const std::string &body);
/// `name_d[1..depth]`: the flag `in` of cycle 0 delayed 1..depth cycles.
std::string flagPipe(const std::string &name, const std::string &in, int depth,
                     bool reset);
/// The flag as seen in `cycle`: `in` in cycle 0, `name_d[cycle]` after.
std::string flagAt(const std::string &name, const std::string &in, int cycle);

/// The values of a scheduled graph as signals. Each value is ready in a
/// cycle (by default its operation's start plus latency); at(op, c) is the
/// value as an operation starting in cycle c reads it, through one
/// register (advancing with `en`) per cycle in between, each declared once.
class ScheduledValues {
public:
  ScheduledValues(const Graph &graph, const Schedule &schedule,
                  std::string *decls, std::string *regs)
      : graph_(graph), schedule_(schedule), decls_(decls), regs_(regs) {}

  /// `op`'s value is the signed signal `name` of `width` bits, ready where
  /// the schedule puts the operation's result (or in `ready`).
  void set(int op, const std::string &name, int width);
  void set(int op, const std::string &name, int width, int ready);
  /// `op`'s value is the constant 0 (a product by a zero weight).
  void setZero(int op) { zero_[op] = true; }
  bool isZero(int op) const { return zero_.count(op) != 0; }

  int start(int op) const { return schedule_.start[op]; }
  int ready(int op) const;
  int width(int op) const { return values_.at(op).width; }
  /// The same-iteration operands of `op`, in the graph's order.
  std::vector<int> operands(int op) const;
  /// `op`'s value as read in `cycle`.
  std::string at(int op, int cycle);

private:
  struct Value {
    std::string name;
    int width = 0, ready = 0;
  };
  const Graph &graph_;
  const Schedule &schedule_;
  std::string *decls_, *regs_;
  std::map<int, Value> values_;
  std::map<int, bool> zero_;
  std::map<std::string, bool> declared_;
};

} // namespace cuvil::fpga::rtl

#endif // CUVIL_TARGETS_FPGA_RTL_VERILOGTEXT_H
