//===- VerilogDense.cpp - dense and ReLU layers as Verilog ----------------===//

#include "cuvil/targets/fpga/rtl/VerilogModules.h"
#include "cuvil/targets/fpga/rtl/VerilogText.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

namespace cuvil::fpga::rtl {

namespace {

int bitsFor(int64_t n) { return std::max(1, log2Ceil(n + 1)); }

/// Output j's adder tree as the schedule places it (the products are set):
/// an adder with a zero operand is a wire; the tree's value as the
/// accumulator reads it, or nullopt when every product is zero.
std::optional<std::string> adderTree(ScheduledValues &values,
                                     const RtlLayer &rtl, int64_t j,
                                     std::string *decls) {
  int aw = rtl.plan->accum.width;
  int accOp = static_cast<int>(rtl.datapath.operations.size()) - 1;
  for (int op = static_cast<int>(rtl.products); op < accOp; ++op) {
    std::vector<int> live;
    for (int in : values.operands(op))
      if (!values.isZero(in))
        live.push_back(in);
    if (live.empty()) {
      values.setZero(op);
    } else if (live.size() == 1) {
      int ready = values.ready(live[0]);
      values.set(op, values.at(live[0], ready), aw, ready);
    } else {
      // Kept: a tree of two-input adders, each on its carry chain, as
      // scheduled (merged, Yosys would build one multi-operand adder of
      // LUTs, larger and unlike what the schedule timed).
      int start = values.start(op);
      std::string name = absl::StrCat("s", j, "_", op);
      std::string left = values.at(live[0], start);
      std::string right = values.at(live[1], start);
      absl::StrAppend(decls, "  (* keep *) wire signed [", aw - 1, ":0] ",
                      name, ";\n  assign ", name, " = ", left, " + ", right,
                      ";\n");
      values.set(op, name, aw, start);
    }
  }
  int root = values.operands(accOp).front();
  if (values.isZero(root))
    return std::nullopt;
  return values.at(root, values.start(accOp));
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

} // namespace

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
    ScheduledValues values(rtl.datapath, rtl.schedule, &dDecls, &dRegs);
    for (int64_t q = 0; q < rtl.products; ++q) {
      std::string expr;
      int pw = sxw + sww;
      if (r == 1) {
        int64_t w = rtl.weights[q * nOut + j];
        ProductKind kind = rtl.kinds[q * nOut + j];
        if (kind == ProductKind::Zero) {
          values.setZero(static_cast<int>(q));
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
      values.set(static_cast<int>(q), term, aw);
    }
    std::optional<std::string> sum = adderTree(values, rtl, j, &dDecls);
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


} // namespace cuvil::fpga::rtl
