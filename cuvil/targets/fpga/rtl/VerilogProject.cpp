//===- VerilogProject.cpp - a planned design as Verilog RTL ---------------===//

#include "cuvil/targets/fpga/rtl/VerilogProject.h"

#include "cuvil/support/SourceEscape.h"
#include "cuvil/targets/fpga/plan/Interpreter.h"
#include "cuvil/targets/fpga/rtl/StreamTiming.h"
#include "cuvil/targets/fpga/rtl/VerilogModules.h"
#include "cuvil/targets/fpga/rtl/VerilogText.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

namespace cuvil::fpga {

namespace {

/// Stored integers of `type` packed as one stream word, element 0 lowest,
/// in hex.
std::string packHex(const std::vector<int64_t> &raws, const FixedType &type) {
  int w = type.width;
  std::vector<bool> bits;
  for (int64_t raw : raws)
    for (int b = 0; b < w; ++b)
      bits.push_back((static_cast<uint64_t>(raw) >> b) & 1);
  return rtl::hexDigits(bits) + "\n";
}

/// One stored integer of `width` bits a line.
std::string tableHex(const std::vector<int64_t> &values, int width) {
  std::string out;
  for (int64_t v : values)
    out += packHex({v}, FixedType{width, width, false});
  return out;
}

/// Bits of a transfer on the design's input and output.
int64_t inWidth(const RtlDesign &rtl) {
  const RtlLayer &first = rtl.layers.front();
  return first.in.values * first.plan->input.width;
}
int64_t outWidth(const RtlDesign &rtl) {
  const RtlLayer &last = rtl.layers.back();
  return last.out.values * last.plan->result.width;
}

/// A sample's values (channel-major for an image) as the transfers of
/// `shape`: the whole sample, or pixel by pixel.
std::vector<std::vector<int64_t>> transfersOf(const std::vector<int64_t> &values,
                                              const StreamShape &shape) {
  if (!shape.pixels)
    return {values};
  std::vector<std::vector<int64_t>> out(shape.transfers);
  for (int64_t p = 0; p < shape.transfers; ++p)
    for (int64_t c = 0; c < shape.values; ++c)
      out[p].push_back(values[c * shape.transfers + p]);
  return out;
}

std::string streamText(const StreamShape &shape) {
  return shape.pixels
             ? absl::StrCat("a pixel (", shape.values, " channels) per "
                            "transfer, ", shape.transfers, " a sample")
             : std::string("a sample per transfer");
}

std::string topModule(const RtlDesign &rtl, const ProjectOptions &options) {
  std::string out = absl::StrCat(
      "`timescale 1ns / 1ps\n// ", options.project, ": the design's top (Cuvil ",
      cCommentText(options.compilerVersion), ", model ",
      cCommentText(options.modelHash), ").\n",
      "// AXI4-Stream in and out, one sample per transfer. Latency ",
      rtl.latency, " cycles from a sample's input handshake to its output;\n",
      "// a new sample every ", rtl.ii,
      " cycles. rst is synchronous, active high.\n",
      "module ", options.project, " (\n",
      "    input  wire clk,\n    input  wire rst,\n",
      "    input  wire [", inWidth(rtl) - 1, ":0] s_axis_tdata,\n",
      "    input  wire s_axis_tvalid,\n    output wire s_axis_tready,\n",
      "    input  wire s_axis_tlast,\n",
      "    output wire [", outWidth(rtl) - 1, ":0] m_axis_tdata,\n",
      "    output wire m_axis_tvalid,\n    input  wire m_axis_tready,\n",
      "    output wire m_axis_tlast\n);\n");
  std::string prev = "s_axis";
  for (size_t i = 0; i < rtl.layers.size(); ++i) {
    const LayerPlan &plan = *rtl.layers[i].plan;
    bool lastLayer = i + 1 == rtl.layers.size();
    std::string next = lastLayer ? "m_axis" : plan.id;
    if (!lastLayer)
      absl::StrAppend(&out, "  wire [",
                      rtl.layers[i].out.values * plan.result.width - 1,
                      ":0] ", next, "_tdata;\n  wire ", next, "_tvalid, ",
                      next, "_tready, ", next, "_tlast;\n");
    absl::StrAppend(
        &out, "  ", plan.id, " u_", plan.id, " (\n",
        "      .clk(clk), .rst(rst),\n",
        "      .s_tdata(", prev, "_tdata), .s_tvalid(", prev,
        "_tvalid), .s_tready(", prev, "_tready), .s_tlast(", prev, "_tlast),\n",
        "      .m_tdata(", next, "_tdata), .m_tvalid(", next,
        "_tvalid), .m_tready(", next, "_tready), .m_tlast(", next,
        "_tlast));\n");
    prev = next;
  }
  return out + "endmodule\n";
}

std::string testbench(const RtlDesign &rtl, const ProjectOptions &options,
                      int64_t samples) {
  double half = rtl.plan->clockNs / 2;
  std::string p = options.project;
  int64_t inPer = rtl.layers.front().in.transfers;
  int64_t outPer = rtl.layers.back().out.transfers;
  return absl::StrCat(
      "`timescale 1ns / 1ps\n",
      "// The self-checking testbench of ", p,
      " (Verilog-2005; Icarus Verilog and Verilator).\n",
      "// Phase 0 streams every sample with no bubble and no back-pressure:\n",
      "// each sample's last output must come exactly when the timing model\n",
      "// says (tb_data/timing.hex, cycles from the first input handshake);\n",
      "// latency is the first sample's, the interval (II) the gaps between\n",
      "// samples. Phase 1 streams them again with random bubbles on\n",
      "// s_axis_tvalid and random back-pressure on m_axis_tready (+seed=N,\n",
      "// +bubble=PCT, +stall=PCT). Every output transfer is compared bit for\n",
      "// bit with tb_data/expected.hex; phase 0's go to build/outputs.hex too.\n",
      "// Prints one JSON line, then PASS or FAIL.\n",
      "// The checker keeps its counts with blocking assignments in its clocked\n",
      "// process, on purpose (a testbench, not hardware).\n",
      "/* verilator lint_off BLKSEQ */\n",
      "module ", p, "_tb;\n",
      "  localparam N = ", samples, ";\n",
      "  localparam IN_PER = ", inPer, ";   // input transfers a sample\n",
      "  localparam OUT_PER = ", outPer, ";  // output transfers a sample\n",
      "  localparam IN_W = ", inWidth(rtl), ";\n",
      "  localparam OUT_W = ", outWidth(rtl), ";\n",
      "  localparam LATENCY = ", rtl.latency, ";  // the timing model's\n",
      "  localparam II = ", rtl.ii, ";\n",
      "  localparam TIMEOUT = ", 40 * (rtl.latency + samples * rtl.ii) + 1000,
      ";  // cycles\n\n",
      "  reg clk = 1'b0;\n",
      absl::StrFormat("  always #%.3f clk = ~clk;\n", half),
      "  reg rst = 1'b1;\n",
      "  reg [IN_W-1:0] inputs [0:N*IN_PER-1];\n",
      "  reg [OUT_W-1:0] expected [0:N*OUT_PER-1];\n",
      "  reg [31:0] done_at [0:N-1];\n",
      "  reg [IN_W-1:0] s_tdata = 0;\n",
      "  reg s_tvalid = 1'b0, s_tlast = 1'b0, m_tready = 1'b0;\n",
      "  wire s_tready, m_tvalid, m_tlast;\n",
      "  wire [OUT_W-1:0] m_tdata;\n\n",
      "  ", p, " dut (\n",
      "      .clk(clk), .rst(rst),\n",
      "      .s_axis_tdata(s_tdata), .s_axis_tvalid(s_tvalid),\n",
      "      .s_axis_tready(s_tready), .s_axis_tlast(s_tlast),\n",
      "      .m_axis_tdata(m_tdata), .m_axis_tvalid(m_tvalid),\n",
      "      .m_axis_tready(m_tready), .m_axis_tlast(m_tlast));\n\n",
      "  integer seed, seed0, bubble, stall, phase, sent, received, cycle;\n",
      "  integer mismatches, late, first_in, prev_done, latency, sample;\n",
      "  integer ii_min, ii_max, gap, draw_valid, draw_ready, out_file;\n",
      "  reg done, passed, sample_end;\n\n",
      "  initial begin\n",
      "    $readmemh(\"tb_data/input.hex\", inputs);\n",
      "    $readmemh(\"tb_data/expected.hex\", expected);\n",
      "    $readmemh(\"tb_data/timing.hex\", done_at);\n",
      "    if (!$value$plusargs(\"seed=%d\", seed)) seed = 1;\n",
      "    seed0 = seed;\n",
      "    out_file = $fopen(\"build/outputs.hex\", \"w\");  // phase 0's outputs\n",
      "    if (!$value$plusargs(\"bubble=%d\", bubble)) bubble = 30;\n",
      "    if (!$value$plusargs(\"stall=%d\", stall)) stall = 30;\n",
      "    phase = 0; sent = 0; received = 0; cycle = 0; mismatches = 0;\n",
      "    late = 0; first_in = -1; prev_done = -1; latency = -1;\n",
      "    ii_min = -1; ii_max = -1; done = 1'b0;\n",
      "    repeat (4) @(posedge clk);\n",
      "    @(negedge clk) rst = 1'b0;  // away from the edge the design samples\n",
      "  end\n\n",
      "  // One process drives and checks: it reads the handshake signals as\n",
      "  // they were before the edge and drives with nonblocking assignments.\n",
      "  always @(posedge clk) if (!rst && !done) begin\n",
      "    cycle = cycle + 1;\n",
      "    if (s_tvalid && s_tready) begin\n",
      "      if (phase == 0 && sent == 0) first_in = cycle;\n",
      "      sent = sent + 1;\n",
      "    end\n",
      "    if (m_tvalid && m_tready) begin\n",
      "      sample_end = received % OUT_PER == OUT_PER - 1;\n",
      "      if (m_tdata !== expected[received] || m_tlast !== sample_end) begin\n",
      "        if (mismatches < 8)\n",
      "          $display(\"mismatch: phase %0d transfer %0d: got %h (tlast %b), expected %h\",\n",
      "                   phase, received, m_tdata, m_tlast,\n",
      "                   expected[received]);\n",
      "        mismatches = mismatches + 1;\n",
      "      end\n",
      "      if (phase == 0) begin\n",
      "        if (out_file != 0) $fdisplay(out_file, \"%h\", m_tdata);\n",
      "        if (sample_end) begin\n",
      "          sample = received / OUT_PER;\n",
      "          if (cycle - first_in != done_at[sample]) begin\n",
      "            if (late < 8)\n",
      "              $display(\"timing: sample %0d done %0d cycles after the first input, the model says %0d\",\n",
      "                       sample, cycle - first_in, done_at[sample]);\n",
      "            late = late + 1;\n",
      "          end\n",
      "          if (sample == 0) begin\n",
      "            latency = cycle - first_in;\n",
      "          end else begin\n",
      "            gap = cycle - prev_done;\n",
      "            if (ii_min < 0 || gap < ii_min) ii_min = gap;\n",
      "            if (gap > ii_max) ii_max = gap;\n",
      "          end\n",
      "          prev_done = cycle;\n",
      "        end\n",
      "      end\n",
      "      received = received + 1;\n",
      "    end\n",
      "    if (received == N * OUT_PER && phase == 0) begin\n",
      "      phase = 1; sent = 0; received = 0;\n",
      "    end else if (received == N * OUT_PER || cycle > TIMEOUT) begin\n",
      "      done = 1'b1;\n",
      "      if (N == 1) begin ii_min = II; ii_max = II; end\n",
      "      passed = received == N * OUT_PER && mismatches == 0 && late == 0 &&\n",
      "               latency == LATENCY;\n",
      "      $display(\"{\\\"pass\\\": %0s, \\\"latency_cycles\\\": %0d, \\\"ii\\\": %0d, \\\"ii_min\\\": %0d, \\\"expected_latency_cycles\\\": %0d, \\\"expected_ii\\\": %0d, \\\"mismatches\\\": %0d, \\\"timing_mismatches\\\": %0d, \\\"samples\\\": %0d, \\\"seed\\\": %0d, \\\"timeout\\\": %0s}\",\n",
      "               passed ? \"true\" : \"false\", latency, ii_max, ii_min, LATENCY,\n",
      "               II, mismatches, late, phase * N + received / OUT_PER, seed0,\n",
      "               received == N * OUT_PER ? \"false\" : \"true\");\n",
      "      $display(\"%s\", passed ? \"PASS\" : \"FAIL\");\n",
      "      if (out_file != 0) $fclose(out_file);\n",
      "      $finish;\n",
      "    end\n",
      "    // The next transfer: a held one stays until taken (AXI4-Stream).\n",
      "    draw_valid = {$random(seed)} % 100;\n",
      "    draw_ready = {$random(seed)} % 100;\n",
      "    if (!s_tvalid || s_tready) begin\n",
      "      if (sent < N * IN_PER && (phase == 0 || draw_valid >= bubble)) begin\n",
      "        s_tvalid <= 1'b1;\n",
      "        s_tdata <= inputs[sent];\n",
      "        s_tlast <= sent % IN_PER == IN_PER - 1;\n",
      "      end else begin\n",
      "        s_tvalid <= 1'b0;\n",
      "      end\n",
      "    end\n",
      "    m_tready <= phase == 0 || draw_ready >= stall;\n",
      "  end\n",
      "endmodule\n");
}

std::string makefile(const ProjectOptions &options,
                     const std::vector<std::string> &sources) {
  std::string p = options.project;
  std::string rtl;
  for (const std::string &s : sources)
    absl::StrAppend(&rtl, " ", s);
  return absl::StrCat(
      "# The RTL's tools, run from this folder (paths in the sources are\n",
      "# relative to it). SEED, BUBBLE and STALL (percent) steer the\n",
      "# testbench's random bubbles and back-pressure.\n",
      "RTL =", rtl, "\nTB = tb/", p, "_tb.v\n",
      "SEED ?= 1\nBUBBLE ?= 30\nSTALL ?= 30\n",
      "ARGS = +seed=$(SEED) +bubble=$(BUBBLE) +stall=$(STALL)\n\n",
      ".PHONY: sim sim-iverilog sim-verilator lint synth-xilinx synth-intel\n",
      "sim: sim-iverilog\n\n",
      "sim-iverilog:\n\tmkdir -p build\n",
      "\tiverilog -g2005 -Wall -s ", p, "_tb -o build/", p,
      "_tb.vvp $(RTL) $(TB)\n\tvvp -n build/", p, "_tb.vvp $(ARGS)\n\n",
      "sim-verilator:\n\tmkdir -p build\n",
      "\tverilator --binary --timing -Wall --top-module ", p,
      "_tb -Mdir build/verilator -o ", p, "_tb $(RTL) $(TB) > build/verilator.log\n",
      "\tbuild/verilator/", p, "_tb $(ARGS)\n\n",
      "lint:\n\tverilator --lint-only -Wall --top-module ", p, " $(RTL)\n\n",
      "synth-xilinx:\n\tmkdir -p build\n",
      "\tyosys -q -l build/yosys_xilinx.log -s yosys/synth_xilinx.ys\n\n",
      "synth-intel:\n\tmkdir -p build\n",
      "\tyosys -q -l build/yosys_intel.log -s yosys/synth_intel.ys\n");
}

std::string yosysScript(const ProjectOptions &options,
                        const std::vector<std::string> &sources, bool intel) {
  std::string read;
  for (const std::string &s : sources)
    absl::StrAppend(&read, "read_verilog ", s, "\n");
  std::string synth =
      intel ? absl::StrCat("synth_intel_alm -family cyclonev -noflatten -top ",
                           options.project)
            : absl::StrCat("synth_xilinx -family xcup -abc9 -top ",
                           options.project);
  return absl::StrCat(
      "# Out-of-context synthesis with Yosys 0.23, for ",
      intel ? "an Intel proxy (Cyclone V ALMs; Yosys has no Agilex flow)"
            : "a Xilinx UltraScale+ proxy (ZU9EG; approximately Versal)",
      ".\n# Run from the project folder: make synth-", intel ? "intel" : "xilinx",
      ".\n",
      intel ? "# -noflatten: flattened first, the adder trees' cuvil_add "
              "instances would be\n# merged into multi-operand adders of "
              "LUTs (synth_xilinx keeps them too).\n"
            : "# -abc9: Yosys 0.23's default ABC maps parts of wide adders "
              "outside their\n# carry chains (about 1.4x the LUTs); ABC9 "
              "does not. (It warns that it times\n# xcup as xc7: the cells "
              "it maps to are the same.)\n",
      read, synth,
      "\n# Flattened after synthesis (the cells are the same): Yosys 0.23's "
      "stat -json\n# writes a hierarchy deeper than one level as text into "
      "its JSON.\nflatten\ntee -q -o build/yosys_",
      intel ? "intel" : "xilinx", "_stat.json stat -json\n");
}

/// How a stream carries a sample: `transfers` of `values` each; a pixel
/// stream's transfer p holds value c * transfers + p of the sample.
llvm::json::Object streamJson(const StreamShape &shape) {
  return llvm::json::Object{{"pixels", shape.pixels},
                            {"transfers", shape.transfers},
                            {"values", shape.values}};
}

/// The HLS report's schema (hls4ml's keys; the layers' precisions), with
/// the RTL's schedule and estimates in place of the HLS ones and an "rtl"
/// section: what the testbench measures and what Yosys counts against.
std::string reportJson(const RtlDesign &rtl, const ProjectOptions &options) {
  const DesignPlan &design = *rtl.plan;
  const Device &device = design.device;
  llvm::json::Object root = reportObject(design, options);
  llvm::json::Array *layers = root.getArray("layers");
  for (size_t i = 0; i < rtl.layers.size(); ++i) {
    const RtlLayer &layer = rtl.layers[i];
    llvm::json::Object &object = *(*layers)[i].getAsObject();
    object["II"] = layer.ii;
    object["Latency"] = layer.latency;
    object.erase("slack_ns");
    object.erase("Strategy");
    object.erase("adder_levels");
    putResources(object, layer.estimate, device);
    if (!layer.plan->layer->hasWeights())
      continue;
    object["multipliers"] = layer.products * layer.plan->layer->productsOut();
    object["multiplier_stages"] = layer.mulLatency;
    object["multiplier_impl"] = layer.lutMultipliers ? "LUT" : "DSP";
    if (layer.plan->reuse == 1) {
      int64_t counts[4] = {0, 0, 0, 0};
      for (ProductKind kind : layer.kinds)
        ++counts[static_cast<int>(kind)];
      object["products"] = llvm::json::Object{{"zero", counts[0]},
                                              {"shift", counts[1]},
                                              {"lut", counts[2]},
                                              {"dsp", counts[3]}};
    }
  }
  // The clock the RTL's schedules leave slack under (layers without a
  // scheduled datapath, a ReLU's register, have a LUT level and more).
  double slack = design.clockNs - design.device.logicLevelNs;
  for (const RtlLayer &layer : rtl.layers)
    if (!layer.datapath.operations.empty() ||
        layer.plan->layer->kind == LayerKind::MaxPool2d) // its max tree
      slack = std::min(slack, layer.schedule.slackNs);
  llvm::json::Object &clock = *root.getObject("clock");
  clock["EstimatedClockPeriod"] = design.clockNs - slack;
  clock["Slack"] = slack;
  llvm::json::Object &synthesis = *root.getObject("CSynthesisReport");
  synthesis["BestLatency"] = rtl.latency;
  synthesis["WorstLatency"] = rtl.latency;
  synthesis["IntervalMin"] = rtl.ii;
  synthesis["IntervalMax"] = rtl.ii;
  synthesis["LatencyNs"] = rtl.latency * design.clockNs;
  putResources(synthesis, rtl.total, device);
  root["top"] = options.project;
  root["rtl"] = llvm::json::Object{
      {"fmax_mhz", 1000 / (design.clockNs - slack)},
      {"latency_cycles", rtl.latency},
      {"ii", rtl.ii},
      {"latency_ns", rtl.latency * design.clockNs},
      {"inferences_per_second", 1e9 / (rtl.ii * design.clockNs)},
      {"input_stream", streamJson(rtl.layers.front().in)},
      {"output_stream", streamJson(rtl.layers.back().out)}};
  root["estimates"] =
      "Cuvil's estimates of the RTL's resources, by the formulas in "
      "docs/fpga.md; make synth-xilinx and make synth-intel run Yosys, whose "
      "counts are the measurement. Latency and II are the schedule's: the "
      "testbench measures them.";
  return formatReport(std::move(root));
}

std::string reportText(const RtlDesign &rtl, const ProjectOptions &options) {
  const DesignPlan &design = *rtl.plan;
  std::string out = absl::StrFormat(
      "Cuvil Verilog design %s for %s, clock %.3g ns\n"
      "Latency %d cycles (%.4g ns), interval (II) %d cycles: %.4g "
      "inferences/s.\nEstimates (docs/fpga.md), not synthesis results: make "
      "synth-xilinx / synth-intel runs Yosys.\n\n",
      options.project, design.device.part, design.clockNs, rtl.latency,
      rtl.latency * design.clockNs, rtl.ii, 1e9 / (rtl.ii * design.clockNs));
  absl::StrAppend(&out, absl::StrFormat("%-8s %-12s %-24s %6s %4s %8s %9s %9s "
                                        "%6s %5s\n",
                                        "layer", "class", "node", "reuse",
                                        "II", "latency", "LUT", "FF", "DSP",
                                        "BRAM"));
  for (const RtlLayer &layer : rtl.layers) {
    const LayerPlan &plan = *layer.plan;
    absl::StrAppend(
        &out,
        absl::StrFormat("%-8s %-12s %-24s %6d %4d %8d %9d %9d %6d %5d\n",
                        plan.id, layerKindName(plan.layer->kind),
                        printableText(plan.layer->node).substr(0, 24),
                        plan.reuse, layer.ii, layer.latency, layer.estimate.lut,
                        layer.estimate.ff, layer.estimate.dsp,
                        layer.estimate.bram18k));
  }
  absl::StrAppend(&out, absl::StrFormat(
                            "%-8s %-12s %-24s %6s %4d %8d %9d %9d %6d %5d\n",
                            "total", "", "", "", rtl.ii, rtl.latency,
                            rtl.total.lut, rtl.total.ff, rtl.total.dsp,
                            rtl.total.bram18k));
  return out;
}

std::string readme(const RtlDesign &rtl, const ProjectOptions &options) {
  std::string p = options.project;
  return absl::StrCat(
      "# ", p, ": Verilog RTL by Cuvil\n\n",
      "Verilog-2005, one module per layer (`rtl/`), the top `", p,
      "` chaining them on AXI4-Stream (`s_axis_*` in: ",
      streamText(rtl.layers.front().in), "; `m_axis_*` out: ",
      streamText(rtl.layers.back().out),
      "; element i in bits `[i*W +: W]`, tlast on a sample's last "
      "transfer).\n"
      "Latency ", rtl.latency, " cycles, a new sample every ", rtl.ii,
      " cycles; `report.txt` lists each layer.\n\n",
      "- `make sim-iverilog`: the testbench under Icarus Verilog\n",
      "- `make sim-verilator`: the same under Verilator (`--binary --timing`)\n",
      "- `make lint`: Verilator's lint of the design, `-Wall`\n",
      "- `make synth-xilinx`, `make synth-intel`: Yosys out of context; "
      "statistics in `build/yosys_*_stat.json`\n\n",
      "The testbench prints one JSON line (`pass`, `latency_cycles`, `ii`, "
      "`mismatches`) and PASS or FAIL. `make sim SEED=7 BUBBLE=50 STALL=50` "
      "varies its bubbles and back-pressure.\n");
}

} // namespace

absl::StatusOr<std::vector<ArtifactFile>>
writeVerilogProject(const RtlDesign &rtl, const ProjectOptions &options) {
  const DesignPlan &design = *rtl.plan;
  int64_t samples = static_cast<int64_t>(options.samples.size());
  absl::StatusOr<StreamTimes> timing = streamTiming(rtl, samples);
  if (!timing.ok())
    return timing.status();
  std::vector<ArtifactFile> files;
  std::vector<std::string> sources;
  for (const RtlLayer &layer : rtl.layers) {
    const std::string &id = layer.plan->id;
    std::string rom = weightRomFile(layer);
    files.push_back({absl::StrCat("rtl/", id, ".v"), layer.verilog});
    sources.push_back(absl::StrCat("rtl/", id, ".v"));
    if (!layer.coreVerilog.empty()) {
      files.push_back({absl::StrCat("rtl/", id, "_core.v"), layer.coreVerilog});
      sources.push_back(absl::StrCat("rtl/", id, "_core.v"));
    }
    if (layer.plan->layer->hasWeights() && layer.plan->reuse > 1)
      files.push_back({rom, weightRomHex(layer)});
    if (const std::optional<SoftmaxTables> &t = layer.plan->softmax) {
      files.push_back({rtl::softmaxTableFile(layer, true),
                       tableHex(t->exp, t->expType.width)});
      files.push_back({rtl::softmaxTableFile(layer, false),
                       tableHex(t->inv, t->invType.width)});
    }
  }
  files.push_back({"rtl/cuvil_add.v", rtl::cuvilAddModule()});
  sources.push_back("rtl/cuvil_add.v");
  files.push_back({absl::StrCat("rtl/", options.project, ".v"),
                   topModule(rtl, options)});
  sources.push_back(absl::StrCat("rtl/", options.project, ".v"));
  std::string inputs, expected, done;
  for (const std::vector<double> &sample : options.samples) {
    std::vector<int64_t> raws;
    for (double v : sample)
      raws.push_back(design.input.fromDouble(v));
    for (const std::vector<int64_t> &transfer :
         transfersOf(raws, rtl.layers.front().in))
      inputs += packHex(transfer, design.input);
    for (const std::vector<int64_t> &transfer : transfersOf(
             interpretDesign(design, sample), rtl.layers.back().out))
      expected += packHex(transfer, design.output);
  }
  for (int64_t cycle : timing->done)
    done += absl::StrFormat("%x\n", cycle);
  files.push_back({absl::StrCat("tb/", options.project, "_tb.v"),
                   testbench(rtl, options, samples)});
  files.push_back({"tb_data/input.hex", inputs});
  files.push_back({"tb_data/expected.hex", expected});
  files.push_back({"tb_data/timing.hex", done});
  files.push_back({"Makefile", makefile(options, sources)});
  files.push_back({"yosys/synth_xilinx.ys", yosysScript(options, sources, false)});
  files.push_back({"yosys/synth_intel.ys", yosysScript(options, sources, true)});
  files.push_back({"README.md", readme(rtl, options)});
  files.push_back({"report.json", reportJson(rtl, options)});
  files.push_back({"report.txt", reportText(rtl, options)});
  return files;
}

} // namespace cuvil::fpga
