//===- VerilogModules.cpp - one Verilog module per layer ------------------===//

#include "cuvil/targets/fpga/rtl/VerilogModules.h"

#include "cuvil/support/SourceEscape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

namespace cuvil::fpga {

std::string signedLiteral(int64_t value, int width) {
  if (value < 0)
    return absl::StrCat("(-", width, "'sd", 0 - static_cast<uint64_t>(value),
                        ")");
  return absl::StrCat(width, "'sd", value);
}

namespace {

int signedWidth(const FixedType &type) {
  return type.width + (type.isSigned ? 0 : 1);
}

int log2Exact(int64_t v) {
  int k = 0;
  while ((int64_t{1} << k) < v)
    ++k;
  return k;
}

int bitsFor(int64_t n) { return std::max(1, log2Exact(n + 1)); }

/// `raw` (a slice of a stream or ROM word holding a value of `type`) as a
/// signed Verilog expression.
std::string asSigned(const std::string &raw, const FixedType &type) {
  return type.isSigned ? absl::StrCat("$signed(", raw, ")")
                       : absl::StrCat("$signed({1'b0, ", raw, "})");
}

/// A function `name(v)`: the stored integer of `result` for the value
/// v * 2^-inFrac (v signed, `inWidth` bits), by the result's rounding and
/// overflow modes; with `reluBefore` / `reluAfter`, max(., 0) before or
/// after.
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
                  ":0];\n    end\n  endfunction\n\n");
  return out;
}

/// The module's header: a comment naming the model's layer, the visible
/// parameters and the AXI4-Stream ports.
std::string moduleHeader(const RtlLayer &rtl, const std::string &summary,
                         const std::vector<std::string> &params) {
  const LayerPlan &plan = *rtl.plan;
  const Layer &layer = *plan.layer;
  std::string out;
  absl::StrAppend(&out, "`timescale 1ns / 1ps\n// ", plan.id, ": ", layerKindName(layer.kind), " ",
                  cCommentText(layer.node.empty() ? layer.location : layer.node),
                  "\n// ", summary, "\n// Latency ", rtl.latency,
                  " cycles (handshake in to result out), initiation interval ",
                  rtl.ii, ".\n");
  absl::StrAppend(&out, "module ", plan.id, " (\n");
  int xw = streamWidth(plan.input), yw = streamWidth(plan.result);
  absl::StrAppend(
      &out, "    input  wire clk,\n    input  wire rst,\n",
      "    input  wire [", layer.nIn * xw - 1, ":0] s_tdata,\n",
      "    input  wire s_tvalid,\n    output wire s_tready,\n",
      "    input  wire s_tlast,\n",
      "    output wire [", layer.nOut * yw - 1, ":0] m_tdata,\n",
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

/// Registers advancing with the pipeline.
std::string clocked(const std::string &body) {
  return absl::StrCat("  always @(posedge clk) if (en) begin\n", body,
                      "  end\n");
}

/// A flag (valid, first, last, tlast) of the iteration issued in cycle 0,
/// delayed `depth` cycles: `name_d[1..depth]`.
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

/// Writes one output's datapath as the schedule places it: each value gets
/// registers for every cycle between where it is ready and where a reader
/// starts.
class Datapath {
public:
  Datapath(const RtlLayer &rtl, int64_t output, std::string *decls,
           std::string *regs)
      : rtl_(rtl), j_(output), decls_(decls), regs_(regs),
        aw_(rtl.plan->accum.width) {}

  /// Sets the value of multiplication `k` (a product register ready at the
  /// schedule's cycle, or none for a constant-zero product).
  void setProduct(int k, std::optional<std::string> reg) {
    values_[k] = reg ? Value{*reg, ready(k)} : Value{};
  }

  /// The tree's value at the accumulator's cycle; nullopt when every
  /// product is zero.
  std::optional<std::string> sumForAccumulator() {
    int acc = static_cast<int>(rtl_.datapath.operations.size()) - 1;
    int root = -1;
    for (const Dependence &d : rtl_.datapath.dependences)
      if (d.to == acc && d.distance == 0)
        root = d.from;
    Value v = value(root);
    if (v.name.empty())
      return std::nullopt;
    return delayed(v, rtl_.schedule.start[acc]);
  }

private:
  struct Value {
    std::string name; // empty: constant 0
    int ready = 0;
  };

  int ready(int op) const {
    return rtl_.schedule.start[op] + rtl_.datapath.operations[op].latency;
  }

  Value value(int op) {
    auto it = values_.find(op);
    if (it != values_.end())
      return it->second;
    std::vector<Value> in;
    for (const Dependence &d : rtl_.datapath.dependences)
      if (d.to == op && d.distance == 0)
        in.push_back(value(d.from));
    std::vector<Value> live;
    for (const Value &v : in)
      if (!v.name.empty())
        live.push_back(v);
    Value out;
    if (live.size() == 1) {
      out = live[0]; // x + 0: a wire, ready where x is
    } else if (live.size() == 2) {
      int start = rtl_.schedule.start[op];
      out.name = absl::StrCat("s", j_, "_", op);
      out.ready = start;
      // Kept: a tree of two-input adders, each on its carry chain, as
      // scheduled (merged, Yosys would build one multi-operand adder of
      // LUTs, larger and unlike what the schedule timed).
      std::string left = delayed(live[0], start);
      std::string right = delayed(live[1], start);
      absl::StrAppend(decls_, "  (* keep *) wire signed [", aw_ - 1, ":0] ",
                      out.name, ";\n  assign ", out.name, " = ", left, " + ",
                      right, ";\n");
    }
    values_[op] = out;
    return out;
  }

  /// `v` as a reader starting in `cycle` sees it.
  std::string delayed(const Value &v, int cycle) {
    std::string name = v.name;
    for (int c = v.ready; c < cycle; ++c) {
      std::string next = absl::StrCat(v.name, "_c", c + 1);
      if (!declared_.count(next)) {
        declared_.insert({next, true});
        absl::StrAppend(decls_, "  reg signed [", aw_ - 1, ":0] ", next,
                        ";\n");
        absl::StrAppend(regs_, "    ", next, " <= ", name, ";\n");
      }
      name = next;
    }
    return name;
  }

  const RtlLayer &rtl_;
  int64_t j_;
  std::string *decls_, *regs_;
  int aw_;
  std::map<int, Value> values_;
  std::map<std::string, bool> declared_;
};

/// `name` (a signed value of `from` bits) sign-extended to `to` bits.
std::string signExtend(const std::string &name, int from, int to) {
  if (to == from)
    return name;
  return absl::StrCat("$signed({{", to - from, "{", name, "[", from - 1,
                      "]}}, ", name, "})");
}

/// The product of `x` (a signed value already `width` bits wide) and the
/// constant `w`, built as its kind says.
std::string constantProduct(const std::string &x, int64_t w, ProductKind kind,
                            int width) {
  if (kind == ProductKind::Shift) {
    int k = log2Exact(std::llabs(w));
    std::string shifted = k ? absl::StrCat("(", x, " <<< ", k, ")") : x;
    return w < 0 ? absl::StrCat("-", shifted) : shifted;
  }
  if (kind == ProductKind::Dsp)
    return absl::StrCat(x, " * ", signedLiteral(w, width));
  // Canonical signed digits: a shift and an add or subtract per digit.
  std::string out;
  uint64_t v = std::llabs(w);
  for (int bit = 0; v; ++bit, v >>= 1) {
    if (!(v & 1))
      continue;
    bool minus = (v & 2) != 0;
    v = minus ? v + 1 : v - 1;
    bool negative = minus != (w < 0);
    std::string term = bit ? absl::StrCat("(", x, " <<< ", bit, ")") : x;
    if (out.empty())
      out = negative ? absl::StrCat("-", term) : term;
    else
      absl::StrAppend(&out, negative ? " - " : " + ", term);
  }
  return out;
}

std::string streamParams(const LayerPlan &plan) {
  return absl::StrFormat(
      "// inputs %s, results %s; one sample per transfer, element i in "
      "bits [i*W +: W]",
      plan.input.str(), plan.result.str());
}

std::string denseModule(const RtlLayer &rtl, const std::string &romFile) {
  const LayerPlan &plan = *rtl.plan;
  const Layer &layer = *plan.layer;
  int64_t nIn = layer.nIn, nOut = layer.nOut, r = plan.reuse;
  int xw = streamWidth(plan.input), sxw = signedWidth(plan.input);
  int ww = plan.weight.width, sww = signedWidth(plan.weight);
  int aw = plan.accum.width, yw = streamWidth(plan.result);
  int fx = plan.input.fraction(), fw = plan.weight.fraction();
  int fa = plan.accum.fraction(), fb = plan.bias.fraction();
  int align = fa - fx - fw;
  int mulLat = rtl.mulLatency;
  int accOp = static_cast<int>(rtl.datapath.operations.size()) - 1;
  int accStart = rtl.schedule.start[accOp];
  std::vector<std::string> params = {
      absl::StrCat("localparam N_IN = ", nIn, ";   // values in a sample"),
      absl::StrCat("localparam N_OUT = ", nOut, ";  // results of a sample"),
      absl::StrCat("localparam X_W = ", xw, ";    // ", plan.input.str()),
      absl::StrCat("localparam W_W = ", ww, ";    // weights ",
                   plan.weight.str()),
      absl::StrCat("localparam ACC_W = ", aw, ";  // exact sums ",
                   plan.accum.str()),
      absl::StrCat("localparam Y_W = ", yw, ";    // ", plan.result.str(),
                   layer.relu ? ", after ReLU" : ""),
      absl::StrCat("localparam REUSE_FACTOR = ", r,
                   ";  // products per multiplier, one a cycle"),
      absl::StrCat("localparam MULTIPLIERS = ", rtl.products * nOut,
                   ";  // ", rtl.products, " per output"),
      absl::StrCat("localparam MUL_STAGES = ", mulLat,
                   ";  // registers from operands to product"),
      streamParams(plan)};
  std::string summary = absl::StrFormat(
      "%d -> %d, reuse factor %d: %s", nIn, nOut, r,
      r == 1 ? (rtl.lutMultipliers
                    ? "constant weights, products from LUTs (shift and add)"
                    : "constant weights, products in DSP blocks")
             : absl::StrCat("weights from a ROM in ", plan.memory,
                            ", one word a cycle"));
  std::string out = moduleHeader(rtl, summary, params);
  out += quantizeFunction("quantize", aw, fa, plan.result, false, layer.relu);

  std::string decls, regs, flags;
  absl::StrAppend(&decls, "  reg out_valid, out_last;\n",
                  "  wire en = !out_valid || m_tready;\n");
  // Operands of iteration 0 (reuse 1: the sample), their signed views.
  std::vector<std::string> operand; // per product slot
  std::string issue, first, last, tlastIn;
  if (r == 1) {
    absl::StrAppend(&decls, "  assign s_tready = en;\n",
                    "  wire issue = s_tvalid && en;\n");
    issue = "issue";
    tlastIn = "s_tlast";
    for (int64_t i = 0; i < nIn; ++i)
      operand.push_back(asSigned(absl::StrCat("s_tdata[", i * xw, " +: ", xw, "]"),
                                 plan.input));
  } else {
    int64_t p = rtl.products;
    int cw = bitsFor(r), kb = std::max(1, log2Exact(r));
    absl::StrAppend(
        &decls, "  reg [", cw - 1, ":0] left;  // iterations left of the sample\n",
        "  wire busy = left != 0;\n", "  assign s_tready = en && !busy;\n",
        "  wire start = s_tvalid && s_tready;\n",
        "  wire issue = start || busy;\n",
        "  reg [", kb - 1, ":0] next_k;  // the next iteration's index\n",
        "  wire [", kb - 1, ":0] k = busy ? next_k : ", kb, "'d0;\n",
        "  wire first = start;\n",
        "  wire last = busy && left == ", cw, "'d1;\n",
        "  reg held_last;  // the sample's tlast, until its last iteration\n",
        "  reg [", (nIn - p) * xw - 1, ":0] rest;  // its next chunks\n",
        "  wire [", p * xw - 1, ":0] chunk = busy ? rest[", p * xw - 1,
        ":0] : s_tdata[", p * xw - 1, ":0];\n");
    absl::StrAppend(&regs, "  always @(posedge clk)\n    if (rst) left <= 0;\n",
                    "    else if (en) left <= start ? ", cw, "'d", r - 1,
                    " : busy ? left - ", cw, "'d1 : left;\n");
    std::string restNext =
        nIn - p > p ? absl::StrCat("{", p * xw, "'d0, rest[", (nIn - p) * xw - 1,
                                   ":", p * xw, "]}")
                    : absl::StrCat((nIn - p) * xw, "'d0");
    absl::StrAppend(&regs, clocked(absl::StrCat(
                               "    rest <= start ? s_tdata[", nIn * xw - 1,
                               ":", p * xw, "] : ", restNext, ";\n",
                               "    if (start) held_last <= s_tlast;\n",
                               "    next_k <= start ? ", kb, "'d1 : next_k + ",
                               kb, "'d1;\n")));
    issue = "issue";
    first = "first";
    last = "last";
    tlastIn = "held_last";
    for (int64_t q = 0; q < p; ++q)
      operand.push_back(
          asSigned(absl::StrCat("chunk[", q * xw, " +: ", xw, "]"), plan.input));
    // The weights: word k holds weight (k*P + q, j) at [(q*N_OUT + j)*W_W +: W_W].
    // Block RAM by attribute; a ROM for LUTs needs none (Vivado infers a
    // distributed ROM for a small one, Yosys maps it to logic: the same
    // LUTs; Yosys 0.23 refuses rom_style = "distributed" on a ROM).
    absl::StrAppend(&decls, plan.memory == "bram"
                                ? "  (* rom_style = \"block\" *)\n"
                                : "  // weights in LUTs (a distributed ROM)\n",
                    "  reg [",
                    p * nOut * ww - 1, ":0] rom [0:", r - 1, "];\n",
                    "  initial $readmemh(\"", romFile, "\", rom);\n",
                    "  reg [", p * nOut * ww - 1,
                    ":0] wq;  // the ROM's registered read: the B operands\n");
    absl::StrAppend(&regs, "  always @(posedge clk) if (en) wq <= rom[k];\n");
  }

  // Products: operand registers (stage 1, shared by every output), the
  // product register, the pipeline's remaining stages.
  std::string stage1;
  std::vector<std::string> a(operand.size());
  bool aRegs = mulLat >= 2;
  for (size_t q = 0; q < operand.size(); ++q) {
    a[q] = operand[q];
    if (!aRegs)
      continue;
    bool used = r > 1;
    for (int64_t j = 0; j < nOut && !used; ++j)
      used = rtl.kinds[q * nOut + j] != ProductKind::Zero;
    if (!used)
      continue;
    a[q] = absl::StrCat("a", q);
    absl::StrAppend(&decls, "  reg signed [", sxw - 1, ":0] a", q, ";\n");
    absl::StrAppend(&stage1, "    a", q, " <= ", operand[q], ";\n");
  }
  if (!stage1.empty())
    regs += clocked(stage1);

  // Operand q sign-extended to a product's width, declared once per width.
  std::map<std::pair<int64_t, int>, std::string> wide;
  auto wideOperand = [&](int64_t q, int width) {
    std::string &name = wide[{q, width}];
    if (name.empty()) {
      std::string x = absl::StrCat("x", q);
      if (!wide.count({q, 0})) {
        wide[{q, 0}] = x;
        absl::StrAppend(&decls, "  wire signed [", sxw - 1, ":0] ", x, " = ",
                        a[q], ";\n");
      }
      name = width == sxw ? x : absl::StrCat(x, "_w", width);
      if (width != sxw)
        absl::StrAppend(&decls, "  wire signed [", width - 1, ":0] ", name,
                        " = ", signExtend(x, sxw, width), ";\n");
    }
    return name;
  };

  std::string pipe, accRegs, outData;
  for (int64_t j = 0; j < nOut; ++j) {
    std::string dDecls, dRegs;
    Datapath path(rtl, j, &dDecls, &dRegs);
    for (int64_t q = 0; q < rtl.products; ++q) {
      std::string expr;
      int pw = sxw + sww;
      if (r == 1) {
        int64_t w = rtl.weights[q * nOut + j];
        ProductKind kind = rtl.kinds[q * nOut + j];
        if (kind == ProductKind::Zero) {
          path.setProduct(static_cast<int>(q), std::nullopt);
          continue;
        }
        pw = sxw + signedBits(w) + (kind == ProductKind::Shift ? 1 : 0);
        expr = constantProduct(wideOperand(q, pw), w, kind, pw);
      } else {
        std::string wname = absl::StrCat("w", j, "_", q);
        absl::StrAppend(&dDecls, "  wire signed [", sww - 1, ":0] ", wname,
                        " = ",
                        asSigned(absl::StrCat("wq[", (q * nOut + j) * ww,
                                              " +: ", ww, "]"),
                                 plan.weight),
                        ";\n");
        expr = absl::StrCat(wideOperand(q, pw), " * ",
                            signExtend(wname, sww, pw));
      }
      std::string name = absl::StrCat("p", j, "_", q);
      int stages = aRegs ? mulLat - 1 : mulLat;
      for (int s = 1; s <= stages; ++s) {
        std::string reg = absl::StrCat(name, "_", s);
        absl::StrAppend(&dDecls, "  reg signed [", pw - 1, ":0] ", reg, ";\n");
        absl::StrAppend(&dRegs, "    ", reg, " <= ",
                        s == 1 ? expr : absl::StrCat(name, "_", s - 1), ";\n");
      }
      // The product in the accumulator's units, as the adders read it.
      std::string term = absl::StrCat("t", j, "_", q);
      std::string product = signExtend(absl::StrCat(name, "_", stages), pw, aw);
      absl::StrAppend(&dDecls, "  wire signed [", aw - 1, ":0] ", term, " = ",
                      align ? absl::StrCat(product, " <<< ", align) : product,
                      ";\n");
      path.setProduct(static_cast<int>(q), term);
    }
    std::optional<std::string> sum = path.sumForAccumulator();
    int64_t bias = static_cast<int64_t>(rtl.bias[j]) << (fa - fb);
    std::string biasLit = signedLiteral(bias, aw);
    std::string acc = absl::StrCat("acc", j);
    if (r > 1)
      absl::StrAppend(&dDecls, "  reg signed [", aw - 1, ":0] ", acc, ";\n");
    std::string total = sum ? absl::StrCat(biasLit, " + ", *sum) : biasLit;
    if (r == 1) {
      // The accumulator register is the output register: the quantized sum.
      absl::StrAppend(&dDecls, "  reg [", yw - 1, ":0] y", j, ";\n");
      absl::StrAppend(&accRegs, "    y", j, " <= quantize(", total, ");\n");
      absl::StrAppend(&outData, "  assign m_tdata[", j * yw, " +: ", yw,
                      "] = y", j, ";\n");
    } else {
      std::string firstAt = accStart ? absl::StrCat("first_d[", accStart, "]")
                                     : "first";
      std::string validAt = accStart ? absl::StrCat("valid_d[", accStart, "]")
                                     : "issue";
      absl::StrAppend(&accRegs, "    if (", validAt, ") ", acc, " <= (",
                      firstAt, " ? ", biasLit, " : ", acc, ")",
                      sum ? absl::StrCat(" + ", *sum) : "", ";\n");
      absl::StrAppend(&outData, "  assign m_tdata[", j * yw, " +: ", yw,
                      "] = quantize(", acc, ");\n");
    }
    decls += dDecls;
    if (!dRegs.empty())
      pipe += dRegs;
  }
  if (!pipe.empty())
    regs += clocked(pipe);

  // The iteration's flags, carried to the accumulator's cycle.
  flags += flagPipe("valid", issue, accStart, /*reset=*/true);
  flags += flagPipe("tlast", tlastIn, accStart, false);
  if (r > 1) {
    flags += flagPipe("first", first, accStart, false);
    flags += flagPipe("last", last, accStart, false);
  }
  std::string validAt = flagAt("valid", issue, accStart);
  std::string lastAt = r == 1 ? validAt : flagAt("last", last, accStart);
  std::string tlastAt = flagAt("tlast", tlastIn, accStart);
  std::string outRegs = absl::StrCat(
      "  always @(posedge clk)\n    if (rst) out_valid <= 0;\n",
      "    else if (en) out_valid <= ", validAt,
      r == 1 ? "" : absl::StrCat(" && ", lastAt), ";\n",
      "  always @(posedge clk) if (en) out_last <= ", tlastAt, ";\n");
  absl::StrAppend(&outRegs, clocked(accRegs));

  absl::StrAppend(&out, decls, "\n", flags, regs, outRegs, outData,
                  "  assign m_tvalid = out_valid;\n",
                  "  assign m_tlast = out_last;\n", "endmodule\n");
  return out;
}

std::string reluModule(const RtlLayer &rtl) {
  const LayerPlan &plan = *rtl.plan;
  const Layer &layer = *plan.layer;
  int xw = streamWidth(plan.input), yw = streamWidth(plan.result);
  std::vector<std::string> params = {
      absl::StrCat("localparam N = ", layer.nIn, ";  // values in a sample"),
      absl::StrCat("localparam X_W = ", xw, ";  // ", plan.input.str()),
      absl::StrCat("localparam Y_W = ", yw, ";  // ", plan.result.str()),
      streamParams(plan)};
  std::string out = moduleHeader(rtl, "max(x, 0), one register", params);
  out += quantizeFunction("quantize", signedWidth(plan.input),
                          plan.input.fraction(), plan.result, true, false);
  absl::StrAppend(&out, "  reg out_valid, out_last;\n",
                  "  reg [", layer.nOut * yw - 1, ":0] y;\n",
                  "  wire en = !out_valid || m_tready;\n",
                  "  assign s_tready = en;\n",
                  "  always @(posedge clk)\n    if (rst) out_valid <= 0;\n",
                  "    else if (en) out_valid <= s_tvalid;\n");
  std::string body = "    out_last <= s_tlast;\n";
  for (int64_t i = 0; i < layer.nIn; ++i)
    absl::StrAppend(&body, "    y[", i * yw, " +: ", yw, "] <= quantize(",
                    asSigned(absl::StrCat("s_tdata[", i * xw, " +: ", xw, "]"),
                             plan.input),
                    ");\n");
  absl::StrAppend(&out, clocked(body), "  assign m_tdata = y;\n",
                  "  assign m_tvalid = out_valid;\n",
                  "  assign m_tlast = out_last;\n", "endmodule\n");
  return out;
}

} // namespace

std::string layerModule(const RtlLayer &layer, const std::string &romFile) {
  return layer.plan->layer->kind == LayerKind::Dense
             ? denseModule(layer, romFile)
             : reluModule(layer);
}

std::string weightRomHex(const RtlLayer &rtl) {
  const LayerPlan &plan = *rtl.plan;
  int64_t nOut = plan.layer->nOut, p = rtl.products;
  int ww = plan.weight.width;
  int64_t bits = p * nOut * ww;
  std::string out;
  for (int64_t k = 0; k < plan.reuse; ++k) {
    std::vector<bool> word(bits, false);
    for (int64_t q = 0; q < p; ++q)
      for (int64_t j = 0; j < nOut; ++j) {
        uint64_t w = static_cast<uint64_t>(rtl.weights[(k * p + q) * nOut + j]);
        for (int b = 0; b < ww; ++b)
          word[(q * nOut + j) * ww + b] = (w >> b) & 1;
      }
    for (int64_t d = (bits + 3) / 4 - 1; d >= 0; --d) {
      int nibble = 0;
      for (int b = 0; b < 4; ++b)
        if (d * 4 + b < bits && word[d * 4 + b])
          nibble |= 1 << b;
      out += "0123456789abcdef"[nibble];
    }
    out += "\n";
  }
  return out;
}

} // namespace cuvil::fpga
