//===- VerilogDense.cpp - dense and ReLU layers as Verilog ----------------===//

#include "cuvil/targets/fpga/rtl/VerilogModules.h"
#include "cuvil/targets/fpga/rtl/VerilogText.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

namespace cuvil::fpga::rtl {

namespace {

int bitsFor(int64_t n) { return std::max(1, log2Ceil(n + 1)); }

/// Output j's adder tree as the schedule places it (its products set under
/// keys j * ops + op): an adder with a zero operand is a wire. Each adder
/// is a `cuvil_add` instance (cuvilAddModule) as wide as its operands
/// need, one bit more than the wider (at most the accumulator's width: the
/// sums are exact in it). Returns the tree's value as the accumulator
/// reads it and its width, or nullopt when every product is zero.
std::optional<std::pair<std::string, int>>
adderTree(ScheduledValues &values, const RtlLayer &rtl, int64_t j,
          std::string *decls, Resources &tally) {
  int aw = rtl.plan->accum.width;
  int ops = static_cast<int>(rtl.datapath.operations.size());
  int accOp = ops - 1;
  auto key = [&](int op) { return j * ops + op; };
  for (int op = static_cast<int>(rtl.products); op < accOp; ++op) {
    std::vector<int64_t> live;
    for (int in : values.operands(op))
      if (!values.isZero(key(in)))
        live.push_back(key(in));
    if (live.empty()) {
      values.setZero(key(op));
    } else if (live.size() == 1) {
      int ready = values.ready(live[0]);
      values.set(key(op), values.at(live[0], ready), values.width(live[0]),
                 ready);
    } else {
      // Kept as scheduled: a two-input adder on its carry chain. Inside a
      // module of its own, because Yosys 0.23's alumacc merges a chain of
      // adders into one multi-operand adder (carry-save LUTs) even where
      // the intermediate sums are kept, building them twice.
      int start = values.start(op);
      int wa = values.width(live[0]), wb = values.width(live[1]);
      int width = std::min(aw, std::max(wa, wb) + 1);
      std::string name = absl::StrCat("s", j, "_", op);
      absl::StrAppend(decls, "  wire signed [", width - 1, ":0] ", name,
                      ";\n  cuvil_add #(", wa, ", ", wb, ", ", width, ") u_",
                      name, " (", values.at(live[0], start), ", ",
                      values.at(live[1], start), ", ", name, ");\n");
      values.set(key(op), name, width, start);
      tally.lut += width - 1; // the top bit's LUT holds the carry's last
                              // stage with the sign
    }
  }
  int64_t root = key(values.operands(accOp).front());
  if (values.isZero(root))
    return std::nullopt;
  return std::make_pair(values.at(root, values.start(accOp)),
                        values.width(root));
}

/// The product of `x` (a signed value already `width` bits wide) and the
/// constant `w`, built as its kind says.
std::string constantProduct(const std::string &x, int64_t w, ProductKind kind,
                            int width) {
  if (kind == ProductKind::Shift) {
    int k = log2Ceil(std::llabs(w));
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

/// LUTs of the shift-and-add product by `w` of `pw` bits: each term after
/// the first adds the bits above its shift; Yosys 0.23 builds the sum as
/// one multi-operand adder, about two thirds of a LUT per such bit.
int64_t shiftAddLuts(int64_t w, int pw) {
  int64_t bits = 0;
  bool first = true;
  uint64_t v = std::llabs(w);
  for (int bit = 0; v; ++bit, v >>= 1) {
    if (!(v & 1))
      continue;
    v = (v & 2) ? v + 1 : v - 1;
    if (!first)
      bits += pw - bit;
    first = false;
  }
  return (2 * bits + 2) / 3;
}

/// The registers of the products built from logic, as synthesis merges
/// them: bit b of x * w depends only on x and w modulo 2^(b+1), so the
/// products of one input whose weights agree modulo 2^(b+1) share bit b's
/// register (their logic is the same), and bits below w's trailing zeros
/// are constant.
int64_t lutProductRegisters(
    const std::map<std::pair<int64_t, int64_t>, std::pair<std::string, int>>
        &shared,
    int sxw, bool lutMultipliers) {
  std::map<int64_t, std::vector<int64_t>> byInput;
  for (const auto &[key, value] : shared) {
    uint64_t magnitude = std::llabs(key.second);
    bool shift = (magnitude & (magnitude - 1)) == 0;
    if (shift || lutMultipliers)
      byInput[key.first].push_back(key.second);
  }
  int64_t bits = 0;
  for (const auto &[q, weights] : byInput) {
    int top = 0;
    for (int64_t w : weights)
      top = std::max(top, sxw + signedBits(w));
    for (int b = 0; b < top; ++b) {
      std::set<uint64_t> residues;
      uint64_t mask = b >= 63 ? ~uint64_t{0} : (uint64_t{2} << b) - 1;
      for (int64_t w : weights)
        if (b < sxw + signedBits(w) &&
            b >= __builtin_ctzll(static_cast<uint64_t>(w)))
          residues.insert(static_cast<uint64_t>(w) & mask);
      bits += static_cast<int64_t>(residues.size());
    }
  }
  return bits;
}

} // namespace

std::string cuvilAddModule() {
  return "`timescale 1ns / 1ps\n"
         "// cuvil_add: s = a + b, the operands sign-extended to WS bits. One\n"
         "// adder of a dense layer's tree; a module of its own so that\n"
         "// synthesis keeps the tree's adders as the schedule placed them.\n"
         "module cuvil_add #(\n"
         "    parameter WA = 8,\n    parameter WB = 8,\n"
         "    parameter WS = 9\n) (\n"
         "    input  wire signed [WA-1:0] a,\n"
         "    input  wire signed [WB-1:0] b,\n"
         "    output wire signed [WS-1:0] s\n);\n"
         "  /* verilator lint_off WIDTH */\n"
         "  assign s = a + b;  // signed: both extended to WS\n"
         "  /* verilator lint_on WIDTH */\n"
         "endmodule\n";
}

std::string denseModule(const RtlLayer &rtl, const ModulePorts &ports,
                        const std::string &romFile, Resources &tally) {
  const LayerPlan &plan = *rtl.plan;
  const Layer &layer = *plan.layer;
  int64_t nIn = layer.productsIn(), nOut = layer.productsOut();
  int64_t r = plan.reuse;
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
      absl::StrCat("localparam N_IN = ", nIn, ";   // values in a transfer"),
      absl::StrCat("localparam N_OUT = ", nOut, ";  // results of a transfer"),
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
      ports.name == plan.id ? streamParams(rtl)
                            : std::string("// one transfer in, one out")};
  std::string summary = absl::StrFormat(
      "%d -> %d, reuse factor %d: %s", nIn, nOut, r,
      r == 1 ? (rtl.lutMultipliers
                    ? "constant weights, products from LUTs (shift and add)"
                    : "constant weights, products in DSP blocks")
             : absl::StrCat("weights from a ROM in ", plan.memory,
                            ", one word a cycle"));
  std::string out = moduleHeader(rtl, ports, summary, params);
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
    int cw = bitsFor(r), kb = std::max(1, log2Ceil(r));
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
        "  reg [", (nIn - p) * xw - 1,
        ":0] held;  // the sample's chunks after the first\n",
        "  reg [", p * xw - 1, ":0] chunk;  // iteration k's inputs\n");
    // A multiplexer of the held chunks by k (shifting them instead, Yosys
    // 0.23 builds several times the logic).
    std::string select = absl::StrCat("  always @(*)\n    case (k)\n",
                                      "      ", kb, "'d0: chunk = s_tdata[",
                                      p * xw - 1, ":0];\n");
    for (int64_t c = 1; c < r; ++c)
      absl::StrAppend(&select, "      ", kb, "'d", c, ": chunk = held[",
                      (c - 1) * p * xw, " +: ", p * xw, "];\n");
    if ((int64_t{1} << kb) > r)
      absl::StrAppend(&select, "      default: chunk = ", p * xw, "'d0;\n");
    absl::StrAppend(&select, "    endcase\n");
    absl::StrAppend(&regs, "  always @(posedge clk)\n    if (rst) left <= 0;\n",
                    "    else if (en) left <= start ? ", cw, "'d", r - 1,
                    " : busy ? left - ", cw, "'d1 : left;\n");
    absl::StrAppend(&regs, select);
    absl::StrAppend(&regs, clocked(absl::StrCat(
                               "    if (start) held <= s_tdata[", nIn * xw - 1,
                               ":", p * xw, "];\n",
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
    int64_t romWidth = p * nOut * ww;
    if (plan.memory == "bram") {
      tally.bram18k += romBlocks(*rtl.device, romWidth, r); // wq inside
    } else {
      // A bit equal in every word is a constant (no LUT, no register);
      // bits whose columns (their values by k) are equal share one LUT and
      // one register.
      std::set<std::vector<bool>> columns;
      for (int64_t bit = 0; bit < romWidth; ++bit) {
        int64_t slot = bit / ww, q = slot / nOut, j = slot % nOut;
        std::vector<bool> column;
        for (int64_t k = 0; k < r; ++k)
          column.push_back(
              (static_cast<uint64_t>(rtl.weights[(k * p + q) * nOut + j]) >>
               (bit % ww)) & 1);
        if (std::count(column.begin(), column.end(), column[0]) != r)
          columns.insert(column);
      }
      tally.lut += static_cast<int64_t>(columns.size()) * ((r + 63) / 64);
      tally.ff += static_cast<int64_t>(columns.size());
    }
    // The held chunks, their multiplexer (a LUT6 selects among four), the
    // iteration counters.
    tally.ff += (nIn - p) * xw + 2 * cw;
    tally.lut += p * xw * ((r + 3) / 4) + 2 * cw;
  }

  // Inputs whose weights all quantize to zero: no product reads them.
  if (r == 1) {
    std::vector<std::string> unread;
    for (int64_t q = 0; q < nIn; ++q) {
      bool used = false;
      for (int64_t j = 0; j < nOut && !used; ++j)
        used = rtl.kinds[q * nOut + j] != ProductKind::Zero;
      if (!used)
        unread.push_back(absl::StrCat("s_tdata[", q * xw, " +: ", xw, "]"));
    }
    if (!unread.empty())
      absl::StrAppend(&decls, "  /* verilator lint_off UNUSEDSIGNAL */\n",
                      "  wire [", unread.size() * xw - 1,
                      ":0] unread = {", absl::StrJoin(unread, ", "),
                      "};  // every weight of these is zero\n",
                      "  /* verilator lint_on UNUSEDSIGNAL */\n");
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
    tally.ff += sxw;
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
  ScheduledValues values(rtl.datapath, rtl.schedule, &decls, &pipe);
  int ops = static_cast<int>(rtl.datapath.operations.size());
  int stages = aRegs ? mulLat - 1 : mulLat;
  // A product's register pipeline; its value as the adders read it (in the
  // accumulator's units) and that value's width.
  // `zeros`: low bits known zero (a constant's trailing zeros), which
  // synthesis keeps no register for; -1: counted by lutProductRegisters.
  auto product = [&](const std::string &name, const std::string &expr,
                     int pw, int zeros) {
    for (int s = 1; s <= stages; ++s) {
      std::string reg = absl::StrCat(name, "_", s);
      absl::StrAppend(&decls, "  reg signed [", pw - 1, ":0] ", reg, ";\n");
      absl::StrAppend(&pipe, "    ", reg, " <= ",
                      s == 1 ? expr : absl::StrCat(name, "_", s - 1), ";\n");
    }
    if (zeros >= 0)
      tally.ff += static_cast<int64_t>(pw - zeros) * stages;
    std::string last = absl::StrCat(name, "_", stages);
    if (!align)
      return std::make_pair(last, pw);
    std::string term = absl::StrCat(name, "_t");
    absl::StrAppend(&decls, "  wire signed [", pw + align - 1, ":0] ", term,
                    " = ", signExtend(last, pw, pw + align), " <<< ", align,
                    ";\n");
    return std::make_pair(term, pw + align);
  };
  // Reuse factor 1: one product per input and distinct weight, shared by
  // the outputs whose weights are equal.
  std::map<std::pair<int64_t, int64_t>, std::pair<std::string, int>> shared;
  for (int64_t j = 0; j < nOut; ++j) {
    for (int64_t q = 0; q < rtl.products; ++q) {
      int64_t key = j * ops + q;
      int ready = values.finish(static_cast<int>(q));
      if (r == 1) {
        int64_t w = rtl.weights[q * nOut + j];
        ProductKind kind = rtl.kinds[q * nOut + j];
        if (kind == ProductKind::Zero) {
          values.setZero(key);
          continue;
        }
        auto [it, fresh] = shared.try_emplace({q, w});
        if (fresh) {
          int pw = kind == ProductKind::Shift
                       ? sxw + log2Ceil(std::llabs(w)) + 1 // +-(x << k)
                       : sxw + signedBits(w);
          it->second = product(
              absl::StrCat("p", q, "_", shared.size()),
              constantProduct(wideOperand(q, pw), w, kind, pw), pw,
              kind == ProductKind::Dsp
                  ? __builtin_ctzll(static_cast<uint64_t>(w))
                  : -1);
          if (kind == ProductKind::Dsp)
            tally.dsp += dspBlocks(*rtl.device, sxw, signedBits(w));
          else if (kind == ProductKind::Lut)
            tally.lut += shiftAddLuts(w, pw);
          else if (w < 0)
            tally.lut += pw; // the negation
        }
        values.set(key, it->second.first, it->second.second, ready);
      } else {
        int pw = sxw + sww;
        std::string wname = absl::StrCat("w", j, "_", q);
        absl::StrAppend(&decls, "  wire signed [", sww - 1, ":0] ", wname,
                        " = ",
                        asSigned(absl::StrCat("wq[", (q * nOut + j) * ww,
                                              " +: ", ww, "]"),
                                 plan.weight),
                        ";\n");
        auto [term, width] =
            product(absl::StrCat("p", j, "_", q),
                    absl::StrCat(wideOperand(q, pw), " * ",
                                 signExtend(wname, sww, pw)),
                    pw, 0);
        tally.dsp += dspBlocks(*rtl.device, sxw, sww);
        values.set(key, term, width, ready);
      }
    }
    std::optional<std::pair<std::string, int>> sum =
        adderTree(values, rtl, j, &decls, tally);
    int64_t bias = static_cast<int64_t>(rtl.bias[j]) << (fa - fb);
    std::string biasLit = signedLiteral(bias, aw);
    std::string sumAw = sum ? signExtend(sum->first, sum->second, aw) : "";
    std::string acc = absl::StrCat("acc", j);
    tally.lut += quantizeLuts(aw, fa, plan.result, layer.relu);
    if (r == 1) {
      // The accumulator register is the output register: the quantized sum.
      std::string total = !sum ? biasLit
                          : bias ? absl::StrCat(biasLit, " + ", sumAw)
                                 : sumAw;
      if (sum && bias) {
        // The bias's trailing zeros add nothing; under WRAP the bits above
        // the result's are never read.
        int top = std::min(aw, std::max(sum->second, signedBits(bias)) + 1);
        if (plan.result.overflow == Overflow::WRAP)
          top = std::min(top, fa - plan.result.fraction() + yw);
        tally.lut += std::max(
            0, top - __builtin_ctzll(static_cast<uint64_t>(bias)));
      }
      absl::StrAppend(&decls, "  reg [", yw - 1, ":0] y", j, ";\n");
      absl::StrAppend(&accRegs, "    y", j, " <= quantize(", total, ");\n");
      absl::StrAppend(&outData, "  assign m_tdata[", j * yw, " +: ", yw,
                      "] = y", j, ";\n");
      tally.ff += yw;
    } else {
      std::string firstAt = accStart ? absl::StrCat("first_d[", accStart, "]")
                                     : "first";
      std::string validAt = accStart ? absl::StrCat("valid_d[", accStart, "]")
                                     : "issue";
      absl::StrAppend(&decls, "  reg signed [", aw - 1, ":0] ", acc, ";\n");
      // The first iteration's sum starts from the bias, the others add to
      // the accumulator: two adders and a multiplexer after them (a
      // multiplexer in front of one adder, Yosys 0.23 builds several times
      // the logic).
      std::string fresh = !sum ? biasLit
                          : bias ? absl::StrCat(biasLit, " + ", sumAw)
                                 : sumAw;
      absl::StrAppend(&accRegs, "    if (", validAt, ") ", acc, " <= ",
                      firstAt, " ? ", fresh, " : ",
                      sum ? absl::StrCat(acc, " + ", sumAw) : acc, ";\n");
      if (sum && bias)
        tally.lut += aw;
      absl::StrAppend(&outData, "  assign m_tdata[", j * yw, " +: ", yw,
                      "] = quantize(", acc, ");\n");
      tally.ff += aw;
      tally.lut += aw;
    }
  }
  values.countRegisters(tally);
  tally.ff += lutProductRegisters(shared, sxw, rtl.lutMultipliers) * stages;
  if (!pipe.empty())
    regs += clocked(pipe);

  tally.ff += 2 + (r > 1 ? 4 : 2) * accStart; // out_valid, out_last, flags
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

std::string reluModule(const RtlLayer &rtl, Resources &tally) {
  const LayerPlan &plan = *rtl.plan;
  int xw = streamWidth(plan.input), yw = streamWidth(plan.result);
  int64_t n = rtl.in.values;
  std::vector<std::string> params = {
      absl::StrCat("localparam N = ", n, ";  // values in a transfer"),
      absl::StrCat("localparam X_W = ", xw, ";  // ", plan.input.str()),
      absl::StrCat("localparam Y_W = ", yw, ";  // ", plan.result.str()),
      streamParams(rtl)};
  std::string out =
      moduleHeader(rtl, layerPorts(rtl), "max(x, 0), one register", params);
  out += quantizeFunction("quantize", signedWidth(plan.input),
                          plan.input.fraction(), plan.result, true, false);
  absl::StrAppend(&out, "  reg out_valid, out_last;\n",
                  "  reg [", n * yw - 1, ":0] y;\n",
                  "  wire en = !out_valid || m_tready;\n",
                  "  assign s_tready = en;\n",
                  "  always @(posedge clk)\n    if (rst) out_valid <= 0;\n",
                  "    else if (en) out_valid <= s_tvalid;\n");
  std::string body = "    out_last <= s_tlast;\n";
  tally.ff += n * yw + 2;
  tally.lut += n * quantizeLuts(signedWidth(plan.input),
                                         plan.input.fraction(), plan.result,
                                         true);
  for (int64_t i = 0; i < n; ++i)
    absl::StrAppend(&body, "    y[", i * yw, " +: ", yw, "] <= quantize(",
                    asSigned(absl::StrCat("s_tdata[", i * xw, " +: ", xw, "]"),
                             plan.input),
                    ");\n");
  absl::StrAppend(&out, clocked(body), "  assign m_tdata = y;\n",
                  "  assign m_tvalid = out_valid;\n",
                  "  assign m_tlast = out_last;\n", "endmodule\n");
  return out;
}


} // namespace cuvil::fpga::rtl
