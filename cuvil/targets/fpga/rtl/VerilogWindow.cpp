//===- VerilogWindow.cpp - streaming convolutions and poolings ------------===//
//
// Convolutions and poolings stream pixels: each transfer is one pixel's
// channels, in raster order. A window generator sweeps the image (padding
// included) a step per cycle: it shifts the step's pixel (a zero in the
// padding) into one shift register holding kernelH - 1 rows and kernelW
// pixels, whose fixed taps are the window (line buffers without
// addressing; synthesis maps the runs between taps to shift-register
// LUTs). Where a window is an output pixel's, it is held for the core,
// `<id>_core`: the layer's dense datapath for a convolution (one transfer
// in, its output channels out), a max tree for a pooling. The sweep waits
// while a window waits; a step inside the image waits for its pixel.
//
// A dense layer after them gathers a sample's pixels into its vector
// (channel-major, as Flatten orders it) before its datapath.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/fpga/rtl/VerilogModules.h"
#include "cuvil/targets/fpga/rtl/VerilogText.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <set>

namespace cuvil::fpga::rtl {

namespace {

int bitsFor(int64_t n) { return std::max(1, log2Ceil(n)); }

std::string literal(int64_t value, int width) {
  return absl::StrCat(width, "'d", value);
}

/// The core's instance: its stream in from the generator's (or gather's)
/// `valid`/`ready`/`last` and `data`, out on the module's m_t*.
std::string coreInstance(const RtlLayer &rtl, const std::string &data,
                         const std::string &valid, const std::string &ready,
                         const std::string &last) {
  const std::string &id = rtl.plan->id;
  return absl::StrCat(
      "  ", id, "_core u_core (\n      .clk(clk), .rst(rst),\n",
      "      .s_tdata(", data, "), .s_tvalid(", valid, "), .s_tready(", ready,
      "), .s_tlast(", last, "),\n",
      "      .m_tdata(m_tdata), .m_tvalid(m_tvalid), .m_tready(m_tready), "
      ".m_tlast(m_tlast));\n");
}

/// A sweep counter's next value: `name` counts 0..n-1 and wraps.
std::string wrapIncrement(const std::string &name, int64_t n, int bits) {
  return absl::StrCat(name, " == ", literal(n - 1, bits), " ? ",
                      literal(0, bits), " : ", name, " + ", literal(1, bits));
}

/// Conditions, "1'b1" when there are none.
std::string allOf(const std::vector<std::string> &terms) {
  return terms.empty() ? "1'b1" : absl::StrJoin(terms, " && ");
}

/// What the shift register costs as Yosys maps it: a tap (or the first
/// position) is a register; a run of two or more untapped positions
/// before a tap is a shift-register LUT per 32, ending in the tap.
void countShiftRegister(const Sweep &sweep, int64_t bits, Resources &tally) {
  const Window &w = sweep.w;
  std::set<int64_t> taps = {0};
  for (int64_t kh = 0; kh < w.kernelH; ++kh)
    for (int64_t kw = 0; kw < w.kernelW; ++kw)
      taps.insert(kh * sweep.cols + kw);
  int64_t previous = -1;
  for (int64_t tap : taps) {
    int64_t run = tap - previous - 1;
    if (run >= 2)
      tally.lut += bits * ((run + 1 + 31) / 32); // the run and the tap
    else
      tally.ff += bits * (run + 1);
    previous = tap;
  }
}

} // namespace

std::string windowModule(const RtlLayer &rtl, Resources &tally) {
  const LayerPlan &plan = *rtl.plan;
  const Layer &layer = *plan.layer;
  const Window &w = layer.window;
  Sweep sweep(w);
  bool conv = layer.kind == LayerKind::Conv2d;
  int xw = streamWidth(plan.input);
  int64_t pw = w.channels * xw, depth = sweep.depth();
  int rb = bitsFor(sweep.rows), cb = bitsFor(sweep.cols);
  int64_t lastRow = w.kernelH - 1 + (w.outHeight - 1) * w.strideH;
  int64_t lastCol = w.kernelW - 1 + (w.outWidth - 1) * w.strideW;
  std::vector<std::string> params = {
      absl::StrCat("localparam CHANNELS = ", w.channels, ";"),
      absl::StrCat("localparam HEIGHT = ", w.height, ", WIDTH = ", w.width,
                   ";"),
      absl::StrCat("localparam KERNEL_H = ", w.kernelH, ", KERNEL_W = ",
                   w.kernelW, ";"),
      absl::StrCat("localparam STRIDE_H = ", w.strideH, ", STRIDE_W = ",
                   w.strideW, ";"),
      absl::StrCat("localparam PAD_TOP = ", w.padTop, ", PAD_LEFT = ",
                   w.padLeft, ";"),
      absl::StrCat("localparam SWEEP_ROWS = ", sweep.rows, ", SWEEP_COLS = ",
                   sweep.cols, ";  // steps of an image, padding included"),
      absl::StrCat("localparam DEPTH = ", depth,
                   ";  // pixels held: KERNEL_H - 1 rows and KERNEL_W"),
      streamParams(rtl)};
  std::string summary = absl::StrFormat(
      "%dx%d %s, stride %dx%d, %d -> %d channels: a window generator, then "
      "%s per output pixel (%s_core)",
      w.kernelH, w.kernelW, conv ? "convolution" : "max pooling", w.strideH,
      w.strideW, w.channels, conv ? w.outChannels : w.channels,
      conv ? "the dense datapath" : "a max tree", plan.id);
  std::string out = moduleHeader(rtl, layerPorts(rtl), summary, params);

  std::vector<std::string> inside, window, rowNext, colNext;
  if (w.padTop > 0)
    inside.push_back(absl::StrCat("r >= ", literal(w.padTop, rb)));
  if (w.padTop + w.height < sweep.rows)
    inside.push_back(absl::StrCat("r < ", literal(w.padTop + w.height, rb)));
  if (w.padLeft > 0)
    inside.push_back(absl::StrCat("c >= ", literal(w.padLeft, cb)));
  if (w.padLeft + w.width < sweep.cols)
    inside.push_back(absl::StrCat("c < ", literal(w.padLeft + w.width, cb)));
  if (w.kernelH > 1)
    window.push_back(absl::StrCat("r >= ", literal(w.kernelH - 1, rb)));
  if (lastRow < sweep.rows - 1)
    window.push_back(absl::StrCat("r <= ", literal(lastRow, rb)));
  if (w.kernelW > 1)
    window.push_back(absl::StrCat("c >= ", literal(w.kernelW - 1, cb)));
  if (lastCol < sweep.cols - 1)
    window.push_back(absl::StrCat("c <= ", literal(lastCol, cb)));

  std::string decls = absl::StrCat(
      "  reg [", rb - 1, ":0] r;  // the step's row in the sweep\n",
      "  reg [", cb - 1, ":0] c;  // and column\n",
      "  reg pend;       // the last step's window waits for the core\n",
      "  reg pend_last;  // it is the image's last output pixel\n",
      "  wire core_ready;\n",
      "  wire free = !pend || core_ready;\n",
      "  wire in_image = ", allOf(inside), ";  // else padding: a zero\n",
      "  assign s_tready = free && in_image;\n",
      "  wire step = free && (!in_image || s_tvalid);\n",
      "  /* verilator lint_off UNUSEDSIGNAL */\n",
      "  wire unused_tlast = s_tlast;  // the sweep counts the pixels\n",
      "  /* verilator lint_on UNUSEDSIGNAL */\n");
  std::string counters = absl::StrCat(
      "        c <= ", wrapIncrement("c", sweep.cols, cb), ";\n",
      "        if (c == ", literal(sweep.cols - 1, cb), ") r <= ",
      wrapIncrement("r", sweep.rows, rb), ";\n");
  std::string resets = "      r <= 0;\n      c <= 0;\n      pend <= 1'b0;\n";
  int64_t phaseBits = 0;
  // The strides' phases: (r - KERNEL_H + 1) mod STRIDE_H, (c - ...) mod
  // STRIDE_W, counted instead of divided.
  auto phase = [&](const char *name, const char *counter, int64_t stride,
                   int64_t kernel, int64_t n, int bits, bool row) {
    if (stride == 1)
      return;
    int pb = bitsFor(stride);
    phaseBits += pb;
    absl::StrAppend(&decls, "  reg [", pb - 1, ":0] ", name, ";  // ",
                    counter, "'s phase in the stride\n");
    window.push_back(absl::StrCat(name, " == ", literal(0, pb)));
    std::string restart = absl::StrCat(counter, " == ", literal(n - 1, bits));
    if (kernel > 1)
      absl::StrAppend(&restart, " || ", counter, " < ",
                      literal(kernel - 1, bits));
    std::string next = absl::StrCat(name, " <= (", restart, ") ? ",
                                    literal(0, pb), " : ",
                                    wrapIncrement(name, stride, pb), ";\n");
    absl::StrAppend(&counters, row ? absl::StrCat("        if (c == ",
                                                  literal(sweep.cols - 1, cb),
                                                  ") ", next)
                                   : absl::StrCat("        ", next));
    absl::StrAppend(&resets, "      ", name, " <= 0;\n");
  };
  phase("rp", "r", w.strideH, w.kernelH, sweep.rows, rb, true);
  phase("cp", "c", w.strideW, w.kernelW, sweep.cols, cb, false);
  absl::StrAppend(
      &decls, "  wire at_window = ", allOf(window), ";\n",
      "  wire at_last = r == ", literal(lastRow, rb), " && c == ",
      literal(lastCol, cb), ";\n", "  reg [", depth * pw - 1,
      ":0] sr;  // pixel d steps back at [d*", pw, " +: ", pw, "]\n");

  std::string pixel = absl::StrCat("(in_image ? s_tdata : ", pw, "'d0)");
  std::string shift =
      depth == 1 ? pixel
                 : absl::StrCat("{sr[", (depth - 1) * pw - 1, ":0], ", pixel,
                                "}");
  std::string regs = absl::StrCat(
      "  always @(posedge clk) if (step) sr <= ", shift, ";\n",
      "  always @(posedge clk) if (step) pend_last <= at_last;\n",
      "  always @(posedge clk)\n    if (rst) begin\n", resets,
      "    end else if (step) begin\n        pend <= at_window;\n", counters,
      "    end else if (core_ready) begin\n        pend <= 1'b0;\n    end\n");

  // The window: patch element (ch * KERNEL_H + kh) * KERNEL_W + kw.
  int64_t patch = w.channels * w.taps();
  absl::StrAppend(&decls, "  wire [", patch * xw - 1, ":0] window;\n");
  std::string taps;
  for (int64_t ch = 0; ch < w.channels; ++ch)
    for (int64_t kh = 0; kh < w.kernelH; ++kh)
      for (int64_t kw = 0; kw < w.kernelW; ++kw) {
        int64_t i = (ch * w.kernelH + kh) * w.kernelW + kw;
        int64_t back = (w.kernelH - 1 - kh) * sweep.cols + (w.kernelW - 1 - kw);
        absl::StrAppend(&taps, "  assign window[", i * xw, " +: ", xw,
                        "] = sr[", back * pw + ch * xw, " +: ", xw, "];\n");
      }

  countShiftRegister(sweep, pw, tally);
  tally.lut += pw; // the padding's zero
  tally.ff += rb + cb + phaseBits + 2;
  tally.lut += 2 * (rb + cb + phaseBits) + 4;
  absl::StrAppend(&out, decls, "\n", regs, taps,
                  coreInstance(rtl, "window", "pend", "core_ready",
                               "pend_last"),
                  "endmodule\n");
  return out;
}

std::string poolCoreModule(const RtlLayer &rtl, Resources &tally) {
  const LayerPlan &plan = *rtl.plan;
  const Window &w = plan.layer->window;
  int xw = streamWidth(plan.input), yw = streamWidth(plan.result);
  int sxw = signedWidth(plan.input);
  int64_t taps = w.taps();
  std::vector<std::string> params = {
      absl::StrCat("localparam CHANNELS = ", w.channels, ";"),
      absl::StrCat("localparam TAPS = ", taps, ";  // a channel's window"),
      absl::StrCat("localparam X_W = ", xw, ";  // ", plan.input.str()),
      absl::StrCat("localparam Y_W = ", yw, ";  // ", plan.result.str())};
  std::string out = moduleHeader(
      rtl, corePorts(rtl, w.channels * taps, w.channels),
      "each channel's maximum over its window: a tree of comparisons, one "
      "register",
      params);
  out += quantizeFunction("quantize", sxw, plan.input.fraction(), plan.result,
                          false, false);
  std::string decls = absl::StrCat(
      "  reg out_valid, out_last;\n  reg [", w.channels * yw - 1, ":0] y;\n",
      "  wire en = !out_valid || m_tready;\n", "  assign s_tready = en;\n");
  std::string body = "    out_last <= s_tlast;\n";
  for (int64_t ch = 0; ch < w.channels; ++ch) {
    std::vector<std::string> level;
    for (int64_t t = 0; t < taps; ++t) {
      std::string name = absl::StrCat("x", ch, "_", t);
      absl::StrAppend(
          &decls, "  wire signed [", sxw - 1, ":0] ", name, " = ",
          asSigned(absl::StrCat("s_tdata[", (ch * taps + t) * xw, " +: ", xw,
                                "]"),
                   plan.input),
          ";\n");
      level.push_back(name);
    }
    for (int round = 0; level.size() > 1; ++round) {
      std::vector<std::string> next;
      for (size_t i = 0; i + 1 < level.size(); i += 2) {
        std::string name = absl::StrCat("m", ch, "_", round, "_", i / 2);
        absl::StrAppend(&decls, "  wire signed [", sxw - 1, ":0] ", name,
                        " = ", level[i], " > ", level[i + 1], " ? ", level[i],
                        " : ", level[i + 1], ";\n");
        next.push_back(name);
        // A comparison on the carry chain, a multiplexer per bit.
        tally.lut += sxw + sxw;
      }
      if (level.size() % 2)
        next.push_back(level.back());
      level = std::move(next);
    }
    absl::StrAppend(&body, "    y[", ch * yw, " +: ", yw, "] <= quantize(",
                    level.front(), ");\n");
    tally.lut += quantizeLuts(sxw, plan.input.fraction(), plan.result, false);
  }
  tally.ff += w.channels * yw + 2;
  absl::StrAppend(&out, decls,
                  "  always @(posedge clk)\n    if (rst) out_valid <= 0;\n",
                  "    else if (en) out_valid <= s_tvalid;\n", clocked(body),
                  "  assign m_tdata = y;\n  assign m_tvalid = out_valid;\n",
                  "  assign m_tlast = out_last;\nendmodule\n");
  return out;
}

std::string gatherModule(const RtlLayer &rtl, Resources &tally) {
  const LayerPlan &plan = *rtl.plan;
  int xw = streamWidth(plan.input);
  int64_t pixels = rtl.in.transfers, channels = rtl.in.values;
  int64_t pw = channels * xw, n = pixels * channels;
  int pb = bitsFor(pixels);
  std::vector<std::string> params = {
      absl::StrCat("localparam PIXELS = ", pixels, ";  // transfers a sample"),
      absl::StrCat("localparam CHANNELS = ", channels, ";"),
      streamParams(rtl)};
  std::string out = moduleHeader(
      rtl, layerPorts(rtl),
      absl::StrFormat("gathers a sample's %d pixels into the %d-value vector "
                      "(channel-major, as Flatten orders it) of %s_core",
                      pixels, n, plan.id),
      params);
  std::string shift =
      pixels == 1 ? "s_tdata"
                  : absl::StrCat("{s_tdata, img[", pixels * pw - 1, ":", pw,
                                 "]}");
  absl::StrAppend(
      &out, "  reg [", pixels * pw - 1,
      ":0] img;  // pixel p at [p*", pw, " +: ", pw, "] once full\n",
      "  reg [", pb - 1, ":0] count;\n  reg full, full_last;\n",
      "  wire core_ready;\n", "  assign s_tready = !full || core_ready;\n",
      "  wire take = s_tvalid && s_tready;\n",
      "  wire at_last = count == ", literal(pixels - 1, pb), ";\n",
      "  always @(posedge clk) if (take) img <= ", shift, ";\n",
      "  always @(posedge clk) if (take && at_last) full_last <= s_tlast;\n",
      "  always @(posedge clk)\n    if (rst) begin\n",
      "      count <= 0;\n      full <= 1'b0;\n    end else begin\n",
      "      if (full && core_ready) full <= 1'b0;\n",
      "      if (take) begin\n        count <= at_last ? ", literal(0, pb),
      " : count + ", literal(1, pb), ";\n",
      "        if (at_last) full <= 1'b1;\n      end\n    end\n",
      "  wire [", n * xw - 1, ":0] vector;\n");
  for (int64_t ch = 0; ch < channels; ++ch)
    for (int64_t p = 0; p < pixels; ++p)
      absl::StrAppend(&out, "  assign vector[", (ch * pixels + p) * xw, " +: ",
                      xw, "] = img[", p * pw + ch * xw, " +: ", xw, "];\n");
  tally.ff += pixels * pw + pb + 2;
  tally.lut += 2 * pb + 2;
  absl::StrAppend(&out,
                  coreInstance(rtl, "vector", "full", "core_ready",
                               "full_last"),
                  "endmodule\n");
  return out;
}

} // namespace cuvil::fpga::rtl
