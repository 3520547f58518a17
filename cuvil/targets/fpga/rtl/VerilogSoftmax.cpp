//===- VerilogSoftmax.cpp - a softmax layer as Verilog --------------------===//
//
// The softmax's datapath (RtlPlan.cpp builds and schedules it) written out
// operation by operation: the exp and reciprocal tables are ROMs in block
// RAM read through their registered ports (each exp copy serves two
// outputs), every other value is a wire or the registers the schedule puts
// between it and its readers.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/fpga/rtl/VerilogModules.h"
#include "cuvil/targets/fpga/rtl/VerilogText.h"

#include "absl/strings/str_cat.h"

#include <algorithm>

namespace cuvil::fpga::rtl {

namespace {

/// A function `name(v)`: min(floor(v * 2^shift), limit) of a non-negative
/// v (signed, `inWidth` bits), as a table index of `outWidth` bits.
std::string indexFunction(const std::string &name, int inWidth, int shift,
                          int64_t limit, int outWidth) {
  // Wide enough for the shifted value and for `limit` as a signed literal.
  int tw = std::max(inWidth + std::max(0, shift), log2Ceil(limit + 1) + 1);
  std::string out = absl::StrCat(
      "  // min(floor(v * 2^", shift, "), ", limit, ") of v >= 0\n",
      "  function [", outWidth - 1, ":0] ", name, ";\n", "    input signed [",
      inWidth - 1, ":0] v;\n", "    reg signed [", tw - 1, ":0] t;\n",
      "    begin\n");
  absl::StrAppend(&out, "      t = ", signExtend("v", inWidth, tw), ";\n");
  if (shift > 0)
    absl::StrAppend(&out, "      t = t <<< ", shift, ";\n");
  else if (shift < 0)
    absl::StrAppend(&out, "      t = t >>> ", -shift, ";\n");
  absl::StrAppend(&out, "      if (t > ", signedLiteral(limit, tw), ") t = ",
                  signedLiteral(limit, tw), ";\n      ", name, " = t[",
                  outWidth - 1, ":0];\n    end\n  endfunction\n\n");
  return out;
}

} // namespace

std::string softmaxTableFile(const RtlLayer &layer, bool exp) {
  return absl::StrCat("rtl/", layer.plan->id, exp ? "_exp.hex" : "_inv.hex");
}

std::string softmaxModule(const RtlLayer &rtl, Resources &tally) {
  const LayerPlan &plan = *rtl.plan;
  const SoftmaxTables &t = *plan.softmax;
  int64_t n = plan.layer->nIn;
  int xw = streamWidth(plan.input), yw = streamWidth(plan.result);
  int sxw = softmaxWidth(rtl, SoftmaxNode::Input);
  int dw = softmaxWidth(rtl, SoftmaxNode::Subtract);
  int ew = softmaxWidth(rtl, SoftmaxNode::Exp);
  int sw = softmaxWidth(rtl, SoftmaxNode::Add);
  int iw = softmaxWidth(rtl, SoftmaxNode::Inverse);
  int pw = softmaxWidth(rtl, SoftmaxNode::Multiply);
  int eb = log2Ceil(t.entries), ib = t.invBits;
  int fe = t.expType.fraction();
  std::vector<std::string> params = {
      absl::StrCat("localparam N = ", n, ";  // values in a sample"),
      absl::StrCat("localparam X_W = ", xw, ";  // ", plan.input.str()),
      absl::StrCat("localparam Y_W = ", yw, ";  // ", plan.result.str()),
      absl::StrCat("localparam EXP_ENTRIES = ", t.entries, ";  // exp(-k / ",
                   1 << t.indexFraction, ") in ", t.expType.str()),
      absl::StrCat("localparam INV_ENTRIES = ", 1 << t.invBits,
                   ";  // 1 / ((j + 0.5) * 2^", t.sumLog2 - t.invBits, ") in ",
                   t.invType.str()),
      absl::StrCat("localparam EXP_COPIES = ", rtl.expCopies,
                   ";  // each read by two outputs"),
      streamParams(rtl)};
  std::string out = moduleHeader(
      rtl, layerPorts(rtl), "y_i = exp_table[m - x_i] * inv_table[sum of them] (docs/fpga.md)",
      params);
  out += quantizeFunction("quantize", pw, fe + t.invType.fraction(),
                          plan.result, false, false);
  out += indexFunction("exp_index", dw, t.indexFraction - plan.input.fraction(),
                       t.entries - 1, eb);
  out += indexFunction("inv_index", sw, t.invBits - t.sumLog2 - fe,
                       (1 << t.invBits) - 1, ib);

  std::string decls, regs;
  absl::StrAppend(&decls, "  reg out_valid, out_last;\n",
                  "  wire en = !out_valid || m_tready;\n",
                  "  assign s_tready = en;\n",
                  "  wire issue = s_tvalid && en;\n");
  for (int64_t c = 0; c < rtl.expCopies; ++c)
    absl::StrAppend(&decls, "  (* rom_style = \"block\" *)\n  reg [",
                    t.expType.width - 1, ":0] exp_rom", c, " [0:",
                    t.entries - 1, "];\n  initial $readmemh(\"",
                    softmaxTableFile(rtl, true), "\", exp_rom", c, ");\n");
  tally.bram18k +=
      rtl.expCopies * romBlocks(*rtl.device, t.expType.width, t.entries) +
      romBlocks(*rtl.device, t.invType.width, 1 << ib);
  absl::StrAppend(&decls, "  (* rom_style = \"block\" *)\n  reg [",
                  t.invType.width - 1, ":0] inv_rom [0:", (1 << ib) - 1,
                  "];\n  initial $readmemh(\"", softmaxTableFile(rtl, false),
                  "\", inv_rom);\n");

  ScheduledValues values(rtl.datapath, rtl.schedule, &decls, &regs);
  int outStart = 0;
  for (size_t op = 0; op < rtl.nodes.size(); ++op)
    if (rtl.nodes[op] == SoftmaxNode::Output)
      outStart = std::max(outStart, values.start(op));
  int64_t input = 0, exp = 0, mul = 0, output = 0;
  std::string outData;
  for (size_t k = 0; k < rtl.nodes.size(); ++k) {
    int op = static_cast<int>(k);
    int start = values.start(op);
    std::vector<int> in = values.operands(op);
    auto operand = [&](int i, int width) {
      return signExtend(values.at(in[i], start), values.width(in[i]), width);
    };
    switch (rtl.nodes[k]) {
    case SoftmaxNode::Input: {
      std::string name = absl::StrCat("x", input);
      absl::StrAppend(&decls, "  wire signed [", sxw - 1, ":0] ", name, " = ",
                      asSigned(absl::StrCat("s_tdata[", input * xw, " +: ",
                                            xw, "]"),
                               plan.input),
                      ";\n");
      values.set(op, name, sxw, 0);
      ++input;
      break;
    }
    case SoftmaxNode::Max: {
      std::string name = absl::StrCat("m", op), a = operand(0, sxw),
                  b = operand(1, sxw);
      absl::StrAppend(&decls, "  wire signed [", sxw - 1, ":0] ", name, " = ",
                      a, " > ", b, " ? ", a, " : ", b, ";\n");
      values.set(op, name, sxw, start);
      tally.lut += sxw + sxw / 2; // the comparison, the multiplexer
      break;
    }
    case SoftmaxNode::Subtract: {
      std::string name = absl::StrCat("d", op);
      absl::StrAppend(&decls, "  wire signed [", dw - 1, ":0] ", name, " = ",
                      operand(0, dw), " - ", operand(1, dw), ";\n");
      values.set(op, name, dw, start);
      tally.lut += dw;
      break;
    }
    case SoftmaxNode::Exp: {
      std::string name = absl::StrCat("e", exp);
      absl::StrAppend(&decls, "  reg signed [", ew - 1, ":0] ", name, ";\n");
      absl::StrAppend(&regs, "    ", name, " <= $signed({1'b0, exp_rom",
                      exp / 2, "[exp_index(", values.at(in[0], start),
                      ")]});\n");
      values.set(op, name, ew, values.finish(op));
      tally.lut += dw / 2; // the index's clamp (the read register is the RAM's)
      ++exp;
      break;
    }
    case SoftmaxNode::Add: {
      std::string name = absl::StrCat("s", op);
      absl::StrAppend(&decls, "  (* keep *) wire signed [", sw - 1, ":0] ",
                      name, ";\n  assign ", name, " = ", operand(0, sw), " + ",
                      operand(1, sw), ";\n");
      values.set(op, name, sw, start);
      tally.lut += sw;
      break;
    }
    case SoftmaxNode::Inverse: {
      absl::StrAppend(&decls, "  reg signed [", iw - 1, ":0] inv;\n");
      absl::StrAppend(&regs, "    inv <= $signed({1'b0, inv_rom[inv_index(",
                      operand(0, sw), ")]});\n");
      values.set(op, "inv", iw, values.finish(op));
      tally.lut += sw / 2;
      break;
    }
    case SoftmaxNode::Multiply: {
      int stages = rtl.datapath.operations[op].latency;
      std::string name = absl::StrCat("p", mul);
      for (int s = 1; s <= stages; ++s) {
        absl::StrAppend(&decls, "  reg signed [", pw - 1, ":0] ", name, "_",
                        s, ";\n");
        absl::StrAppend(&regs, "    ", name, "_", s, " <= ",
                        s == 1 ? absl::StrCat(operand(0, pw), " * ",
                                              operand(1, pw))
                               : absl::StrCat(name, "_", s - 1),
                        ";\n");
      }
      values.set(op, absl::StrCat(name, "_", stages), pw, values.finish(op));
      tally.dsp += dspBlocks(*rtl.device, ew, iw);
      // Only the bits the quantizer reads live on (rounding reads one below
      // the result's last); a chain of three or more is a shift register.
      int shift = fe + t.invType.fraction() - plan.result.fraction();
      int64_t live = pw - std::max(0, shift - 1);
      if (stages >= 3)
        tally.lut += live * ((stages + 31) / 32);
      else
        tally.ff += live * stages;
      ++mul;
      break;
    }
    case SoftmaxNode::Output: {
      std::string name = absl::StrCat("y", output);
      absl::StrAppend(&decls, "  reg [", yw - 1, ":0] ", name, ";\n");
      absl::StrAppend(&regs, "    ", name, " <= quantize(",
                      values.at(in[0], outStart), ");\n");
      absl::StrAppend(&outData, "  assign m_tdata[", output * yw, " +: ", yw,
                      "] = ", name, ";\n");
      tally.ff += yw;
      tally.lut += quantizeLuts(pw, fe + t.invType.fraction(), plan.result,
                                false);
      ++output;
      break;
    }
    }
  }
  values.countRegisters(tally);
  tally.ff += 2 + 2 * outStart;
  std::string flags = flagPipe("valid", "issue", outStart, /*reset=*/true) +
                      flagPipe("tlast", "s_tlast", outStart, false);
  absl::StrAppend(
      &out, decls, "\n", flags, clocked(regs),
      "  always @(posedge clk)\n    if (rst) out_valid <= 0;\n",
      "    else if (en) out_valid <= ", flagAt("valid", "issue", outStart),
      ";\n  always @(posedge clk) if (en) out_last <= ",
      flagAt("tlast", "s_tlast", outStart), ";\n", outData,
      "  assign m_tvalid = out_valid;\n  assign m_tlast = out_last;\n",
      "endmodule\n");
  return out;
}

} // namespace cuvil::fpga::rtl
