//===- VerilogText.cpp - pieces every layer module is made of -------------===//

#include "cuvil/targets/fpga/rtl/VerilogText.h"

#include "cuvil/support/SourceEscape.h"
#include "cuvil/targets/fpga/rtl/VerilogModules.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include <algorithm>

namespace cuvil::fpga::rtl {

std::string signedLiteral(int64_t value, int width) {
  if (value < 0)
    return absl::StrCat("(-", width, "'sd", 0 - static_cast<uint64_t>(value),
                        ")");
  return absl::StrCat(width, "'sd", value);
}

int signedWidth(const FixedType &type) {
  return type.width + (type.isSigned ? 0 : 1);
}

int log2Ceil(int64_t v) {
  int k = 0;
  while ((int64_t{1} << k) < v)
    ++k;
  return k;
}

std::string asSigned(const std::string &raw, const FixedType &type) {
  return type.isSigned ? absl::StrCat("$signed(", raw, ")")
                       : absl::StrCat("$signed({1'b0, ", raw, "})");
}

int64_t dspBlocks(const Device &device, int a, int b) {
  int64_t wide = std::max(device.multiplierABits, device.multiplierBBits);
  int64_t narrow = std::min(device.multiplierABits, device.multiplierBBits);
  return ((std::max(a, b) + wide - 1) / wide) *
         ((std::min(a, b) + narrow - 1) / narrow);
}

int csdDigits(int64_t value) {
  int digits = 0;
  for (uint64_t v = value < 0 ? 0 - static_cast<uint64_t>(value) : value;
       v;) {
    if (v & 1) {
      ++digits;
      v = (v & 2) ? v + 1 : v - 1;
    }
    v >>= 1;
  }
  return digits;
}

int64_t romBlocks(const Device &device, int64_t width, int64_t depth) {
  int64_t best = -1;
  for (int64_t w = device.bramMaxWidth; w >= 1; w /= 2) {
    int64_t d = 1;
    while (2 * d * w <= device.bramBits)
      d *= 2;
    int64_t blocks = ((width + w - 1) / w) * ((depth + d - 1) / d);
    if (best < 0 || blocks < best)
      best = blocks;
  }
  return best;
}

int64_t quantizeLuts(int inWidth, int inFrac, const FixedType &result,
                     bool relu) {
  int shift = inFrac - result.fraction();
  int64_t luts = 0;
  int kept = inWidth - std::max(0, shift); // bits above the rounding point
  if (shift > 0 && result.rounding != Rounding::TRN)
    luts += kept;
  if (result.overflow != Overflow::WRAP)
    luts += result.width + std::max(0, kept - result.width) / 2;
  if (relu)
    luts += result.width / 2;
  return luts;
}

std::string hexDigits(const std::vector<bool> &bits) {
  std::string out;
  int64_t n = static_cast<int64_t>(bits.size());
  for (int64_t d = (n + 3) / 4 - 1; d >= 0; --d) {
    int nibble = 0;
    for (int b = 0; b < 4; ++b)
      if (d * 4 + b < n && bits[d * 4 + b])
        nibble |= 1 << b;
    out += "0123456789abcdef"[nibble];
  }
  return out;
}

std::string signExtend(const std::string &name, int from, int to) {
  if (to == from)
    return name;
  return absl::StrCat("$signed({{", to - from, "{", name, "[", from - 1,
                      "]}}, ", name, "})");
}

std::string quantizeFunction(const std::string &name, int inWidth, int inFrac,
                             const FixedType &result, bool reluBefore,
                             bool reluAfter) {
  int shift = inFrac - result.fraction();
  int tw = inWidth + 2 + std::max(0, -shift);
  tw = std::max(tw, result.width + 2);
  std::string out;
  absl::StrAppend(&out, "  // ", result.str(), " of v * 2^-", inFrac,
                  reluBefore ? ", after max(v, 0)" : "",
                  reluAfter ? ", then max(., 0)" : "", "\n");
  // t is wide enough for every mode; some leave its top bits unread.
  absl::StrAppend(&out, "  /* verilator lint_off UNUSEDSIGNAL */\n");
  absl::StrAppend(&out, "  function [", result.width - 1, ":0] ", name, ";\n",
                  "    input signed [", inWidth - 1, ":0] v;\n",
                  "    reg signed [", tw - 1, ":0] t;\n    begin\n",
                  "      t = {{", tw - inWidth, "{v[", inWidth - 1, "]}}, v};\n");
  auto lit = [&](int64_t v) { return signedLiteral(v, tw); };
  std::string zero = absl::StrCat(tw, "'sd0");
  if (reluBefore)
    absl::StrAppend(&out, "      if (t[", tw - 1, "]) t = ", zero, ";\n");
  if (shift > 0) {
    int64_t half = int64_t{1} << (shift - 1);
    int64_t mask = (int64_t{1} << shift) - 1;
    switch (result.rounding) {
    case Rounding::TRN:
      break;
    case Rounding::TRN_ZERO:
      absl::StrAppend(&out, "      if (t[", tw - 1, "]) t = t + ", lit(mask), ";\n");
      break;
    case Rounding::RND:
      absl::StrAppend(&out, "      t = t + ", lit(half), ";\n");
      break;
    case Rounding::RND_ZERO:
      absl::StrAppend(&out, "      if (t[", tw - 1, "]) t = t + ", lit(half),
                      "; else t = t + ", lit(half - 1), ";\n");
      break;
    case Rounding::RND_MIN_INF:
      absl::StrAppend(&out, "      t = t + ", lit(half - 1), ";\n");
      break;
    case Rounding::RND_INF:
      absl::StrAppend(&out, "      if (t[", tw - 1, "]) t = t + ", lit(half - 1),
                      "; else t = t + ", lit(half), ";\n");
      break;
    case Rounding::RND_CONV:
      absl::StrAppend(&out, "      if (t[", shift, "]) t = t + ", lit(half),
                      "; else t = t + ", lit(half - 1), ";\n");
      break;
    }
    absl::StrAppend(&out, "      t = t >>> ", shift, ";\n");
  } else if (shift < 0) {
    absl::StrAppend(&out, "      t = t <<< ", -shift, ";\n");
  }
  int64_t max = static_cast<int64_t>(result.maxRaw());
  int64_t min = static_cast<int64_t>(result.minRaw());
  switch (result.overflow) {
  case Overflow::WRAP:
    break;
  case Overflow::SAT_ZERO:
    absl::StrAppend(&out, "      if (t > ", lit(max), " || t < ", lit(min),
                    ") t = ", zero, ";\n");
    break;
  case Overflow::SAT_SYM:
    if (result.isSigned)
      min += 1;
    [[fallthrough]];
  case Overflow::SAT:
    absl::StrAppend(&out, "      if (t > ", lit(max), ") t = ", lit(max),
                    ";\n      else if (t < ", lit(min), ") t = ", lit(min),
                    ";\n");
    break;
  }
  if (reluAfter && result.isSigned)
    absl::StrAppend(&out, "      if (t[", result.width - 1, "]) t = ", zero, ";\n");
  absl::StrAppend(&out, "      ", name, " = t[", result.width - 1,
                  ":0];\n    end\n  endfunction\n"
                  "  /* verilator lint_on UNUSEDSIGNAL */\n\n");
  return out;
}

ModulePorts layerPorts(const RtlLayer &rtl) {
  const LayerPlan &plan = *rtl.plan;
  return {plan.id, rtl.in.values * streamWidth(plan.input),
          rtl.out.values * streamWidth(plan.result), rtl.latency, rtl.ii};
}

ModulePorts corePorts(const RtlLayer &rtl, int64_t in, int64_t out) {
  const LayerPlan &plan = *rtl.plan;
  return {plan.id + "_core", in * streamWidth(plan.input),
          out * streamWidth(plan.result), rtl.coreLatency, rtl.coreIi};
}

std::string moduleHeader(const RtlLayer &rtl, const ModulePorts &ports,
                         const std::string &summary,
                         const std::vector<std::string> &params) {
  const LayerPlan &plan = *rtl.plan;
  const Layer &layer = *plan.layer;
  std::string out;
  absl::StrAppend(&out, "`timescale 1ns / 1ps\n// ", ports.name, ": ",
                  layerKindName(layer.kind), " ",
                  cCommentText(layer.node.empty() ? layer.location : layer.node),
                  "\n// ", summary, "\n// Latency ", ports.latency,
                  " cycles (first handshake in to last result out), "
                  "initiation interval ",
                  ports.ii, ".\n");
  absl::StrAppend(&out, "module ", ports.name, " (\n");
  absl::StrAppend(
      &out, "    input  wire clk,\n    input  wire rst,\n",
      "    input  wire [", ports.inBits - 1, ":0] s_tdata,\n",
      "    input  wire s_tvalid,\n    output wire s_tready,\n",
      "    input  wire s_tlast,\n",
      "    output wire [", ports.outBits - 1, ":0] m_tdata,\n",
      "    output wire m_tvalid,\n    input  wire m_tready,\n",
      "    output wire m_tlast\n);\n");
  // The generator fixed these; they document the layer (the code below is
  // written out for them), so lint does not ask that they be used.
  absl::StrAppend(&out, "  /* verilator lint_off UNUSEDPARAM */\n");
  for (const std::string &param : params)
    absl::StrAppend(&out, "  ", param, "\n");
  absl::StrAppend(&out, "  /* verilator lint_on UNUSEDPARAM */\n\n");
  return out;
}

std::string clocked(const std::string &body) {
  return absl::StrCat("  always @(posedge clk) if (en) begin\n", body,
                      "  end\n");
}

std::string flagPipe(const std::string &name, const std::string &in, int depth,
                     bool reset) {
  if (depth == 0)
    return "";
  std::string shift = depth == 1
                          ? in
                          : absl::StrCat("{", name, "_d[", depth - 1, ":1], ",
                                         in, "}");
  std::string out = absl::StrCat("  reg [", depth, ":1] ", name, "_d;\n");
  if (reset)
    absl::StrAppend(&out, "  always @(posedge clk)\n    if (rst) ", name,
                    "_d <= 0;\n    else if (en) ", name, "_d <= ", shift,
                    ";\n");
  else
    absl::StrAppend(&out, "  always @(posedge clk) if (en) ", name, "_d <= ",
                    shift, ";\n");
  return out;
}

std::string flagAt(const std::string &name, const std::string &in, int cycle) {
  return cycle == 0 ? in : absl::StrCat(name, "_d[", cycle, "]");
}

std::string streamParams(const RtlLayer &rtl) {
  auto layout = [](const StreamShape &shape) {
    return shape.pixels
               ? absl::StrFormat("a pixel per transfer (%d channels, %d "
                                 "pixels, tlast on the last)",
                                 shape.values, shape.transfers)
               : std::string("a sample per transfer");
  };
  return absl::StrFormat(
      "// inputs %s, %s; results %s, %s; element i in bits [i*W +: W]",
      rtl.plan->input.str(), layout(rtl.in), rtl.plan->result.str(),
      layout(rtl.out));
}

void ScheduledValues::set(int64_t key, const std::string &name, int width,
                          int ready) {
  values_[key] = Value{name, width, ready};
}

std::vector<int> ScheduledValues::operands(int op) const {
  std::vector<int> in;
  for (const Dependence &d : graph_.dependences)
    if (d.to == op && d.distance == 0)
      in.push_back(d.from);
  return in;
}

std::string ScheduledValues::at(int64_t key, int cycle) {
  const Value &v = values_.at(key);
  std::string name = v.name;
  for (int c = v.ready; c < cycle; ++c) {
    std::string next = absl::StrCat(v.name, "_c", c + 1);
    if (!declared_.count(next)) {
      declared_[next] = true;
      absl::StrAppend(decls_, "  reg signed [", v.width - 1, ":0] ", next,
                      ";\n");
      absl::StrAppend(regs_, "    ", next, " <= ", name, ";\n");
    }
    name = next;
  }
  std::pair<int, int> &chain = chains_[v.name];
  chain.first = v.width;
  chain.second = std::max(chain.second, cycle - v.ready);
  return name;
}

void ScheduledValues::countRegisters(Resources &tally) const {
  for (const auto &[name, chain] : chains_) {
    auto [width, depth] = chain;
    if (depth >= 3)
      tally.lut += static_cast<int64_t>(width) * ((depth + 31) / 32);
    else
      tally.ff += static_cast<int64_t>(width) * depth;
  }
}

} // namespace cuvil::fpga::rtl
