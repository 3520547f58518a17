//===- Report.cpp - what the plan decided, for people and tools ----------===//
//
// Key names follow what hls4ml and FINN users read in their reports:
// ReuseFactor, Strategy, Precision, BestLatency / WorstLatency, IntervalMin
// / IntervalMax, LUT / FF / DSP / BRAM_18K / URAM and their Available*
// budgets, TargetClockPeriod / EstimatedClockPeriod.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/fpga/emit/HlsProject.h"

#include "cuvil/support/SourceEscape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <regex>

namespace cuvil::fpga {

namespace {

/// As hls4ml writes it in its reports.
const char *hls4mlStrategy(Strategy strategy) {
  return strategy == Strategy::Latency ? "Latency" : "Resource";
}

std::string quantTypeText(const FixedType &type, mlir::MLIRContext *context) {
  if (!context)
    return "";
  mlir::quant::UniformQuantizedType quant = type.toQuantType(context);
  if (!quant)
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  quant.print(os);
  return text;
}

llvm::json::Object precision(const FixedType &type, mlir::MLIRContext *context) {
  llvm::json::Object object{{"type", type.str()},
                            {"width", type.width},
                            {"integer", type.integer},
                            {"signed", type.isSigned},
                            {"rounding", roundingName(type.rounding)},
                            {"overflow", overflowName(type.overflow)}};
  std::string quant = quantTypeText(type, context);
  if (!quant.empty())
    object["quant_type"] = quant;
  return object;
}

/// llvm::json writes doubles with 17 digits (0.80000000000000004); a
/// person reads the report: each such value of one of our keys (a line
/// `"Key": number` of the pretty-printed text; model text is never a key
/// and cannot span lines) in its shortest form of up to 6 digits.
std::string shortestNumbers(const std::string &json) {
  static const std::regex kLine(
      R"(^(\s*"[A-Za-z_]+": )(-?[0-9]+\.[0-9]{12,}(e[-+]?[0-9]+)?)(,?)$)");
  std::string out;
  for (absl::string_view piece : absl::StrSplit(json, '\n')) {
    std::string line(piece);
    std::smatch match;
    if (std::regex_match(line, match, kLine))
      line = absl::StrCat(match[1].str(),
                          absl::StrFormat("%.6g", std::stod(match[2].str())),
                          match[4].str());
    absl::StrAppend(&out, line, "\n");
  }
  out.pop_back(); // the split's last piece follows the text's final newline
  return out;
}

} // namespace

llvm::json::Object reportObject(const DesignPlan &design,
                                const ProjectOptions &options) {
  const Device &device = design.device;
  llvm::json::Array layers;
  for (const LayerPlan &plan : design.layers) {
    llvm::json::Object precisions{
        {"input", precision(plan.input, options.context)},
        {"result", precision(plan.result, options.context)}};
    llvm::json::Object layer{
        {"name", plan.id},
        {"node", jsonText(plan.layer->node)},
        {"location", jsonText(plan.layer->location)},
        {"class_name", layerKindName(plan.layer->kind)},
        {"n_in", plan.layer->nIn},
        {"n_out", plan.layer->nOut},
        {"II", plan.ii},
        {"Latency", plan.latency},
        {"slack_ns", plan.slackNs}};
    if (plan.layer->windowed()) {
      const Window &w = plan.layer->window;
      layer["in_shape"] = llvm::json::Array{w.channels, w.height, w.width};
      layer["out_shape"] =
          llvm::json::Array{w.outChannels, w.outHeight, w.outWidth};
      layer["kernel"] = llvm::json::Array{w.kernelH, w.kernelW};
      layer["stride"] = llvm::json::Array{w.strideH, w.strideW};
      layer["padding"] = llvm::json::Array{w.padTop, w.padLeft};
    }
    if (plan.layer->hasWeights()) {
      precisions["weight"] = precision(plan.weight, options.context);
      precisions["bias"] = precision(plan.bias, options.context);
      precisions["accum"] = precision(plan.accum, options.context);
      layer["ReuseFactor"] = plan.reuse;
      layer["Strategy"] = hls4mlStrategy(plan.strategy);
      layer["multipliers"] = plan.multipliers;
      layer["multiplier_impl"] = plan.lutMultipliers ? "LUT" : "DSP";
      layer["adder_levels"] = plan.chainedAdders;
      layer["activation"] = plan.layer->relu ? "relu" : "linear";
    }
    if (plan.layer->kind == LayerKind::Relu)
      layer["activation"] = "relu";
    if (const std::optional<SoftmaxTables> &t = plan.softmax) {
      precisions["exp_table"] = precision(t->expType, options.context);
      precisions["inv_table"] = precision(t->invType, options.context);
      precisions["sum"] = precision(t->sumType, options.context);
      layer["table_size"] = t->entries;
      layer["inv_table_size"] = 1 << t->invBits;
    }
    if (!plan.memory.empty())
      layer["memory"] = plan.memory;
    layer["Precision"] = std::move(precisions);
    putResources(layer, plan.resources, device);
    layers.push_back(std::move(layer));
  }
  llvm::json::Object synthesis{{"BestLatency", design.latency},
                               {"WorstLatency", design.latency},
                               {"IntervalMin", design.ii},
                               {"IntervalMax", design.ii},
                               {"LatencyNs", design.latency * design.clockNs}};
  putResources(synthesis, design.total, device);
  synthesis["AvailableLUT"] = device.logicLuts();
  synthesis["AvailableFF"] = device.ff;
  synthesis["AvailableDSP"] = device.dsp;
  synthesis[absl::StrCat("Available", device.memoryBlockName())] =
      device.memoryBlocks();
  if (device.isIntel())
    synthesis["AvailableALM"] = device.alm;
  else
    synthesis["AvailableURAM"] = device.uram;
  llvm::json::Array decisions;
  for (const std::string &decision : design.decisions)
    decisions.push_back(jsonText(decision));
  llvm::json::Object root{
      {"cuvil_version", jsonText(options.compilerVersion)},
      {"model", jsonText(options.modelHash)},
      {"project", options.project},
      {"device",
       llvm::json::Object{{"name", device.name},
                          {"part", device.part},
                          {"family", device.family},
                          {"vendor", device.vendor},
                          {"flow", device.flow}}},
      {"clock",
       llvm::json::Object{{"TargetClockPeriod", design.clockNs},
                          {"EstimatedClockPeriod",
                           design.clockNs - design.slackNs},
                          {"Slack", design.slackNs}}},
      {"MaxUtilization", design.maxUtilization},
      {"CSynthesisReport", std::move(synthesis)},
      {"layers", std::move(layers)},
      {"decisions", std::move(decisions)},
      {"estimates",
       "Cuvil's estimates, by the formulas in docs/fpga.md; no vendor tool "
       "ran. Vitis HLS's csynth report and Vivado's are the measurements."}};
  return root;
}

void putResources(llvm::json::Object &object, const Resources &r,
                  const Device &device) {
  object["LUT"] = r.lut;
  object["FF"] = r.ff;
  object["DSP"] = r.dsp;
  object[device.memoryBlockName()] = r.bram18k;
  if (device.isIntel())
    object["ALM"] = (r.lut + 1) / 2;
  else
    object["URAM"] = r.uram;
}

std::string formatReport(llvm::json::Object root) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return shortestNumbers(text);
}

std::string reportJson(const DesignPlan &design, const ProjectOptions &options) {
  return formatReport(reportObject(design, options));
}

std::string reportText(const DesignPlan &design) {
  const Device &device = design.device;
  std::string text = absl::StrFormat(
      "Cuvil FPGA design for %s (%s), clock %g ns (estimated %.2f ns, slack "
      "%.2f ns)\nLatency %d cycles (%g ns), interval (II) %d cycles.\n"
      "Estimates (docs/fpga.md), not synthesis results.\n\n",
      device.part, device.family, design.clockNs,
      design.clockNs - design.slackNs, design.slackNs, design.latency,
      design.latency * design.clockNs, design.ii);
  absl::StrAppendFormat(&text, "%-8s %-11s %-22s %-28s %6s %-9s %4s %7s %8s %8s %6s %5s %-6s\n",
                        "layer", "class", "node", "precision (result)", "reuse",
                        "strategy", "II", "latency", "LUT", "FF", "DSP",
                        device.isIntel() ? "M20K" : "BRAM", "memory");
  for (const LayerPlan &plan : design.layers) {
    bool dense = plan.layer->hasWeights();
    std::string node = printableText(plan.layer->node);
    if (node.size() > 22)
      node = node.substr(0, 19) + "...";
    absl::StrAppendFormat(
        &text, "%-8s %-11s %-22s %-28s %6s %-9s %4d %7d %8d %8d %6d %5d %-6s\n",
        plan.id, layerKindName(plan.layer->kind), node, plan.result.str(),
        dense ? absl::StrCat(plan.reuse) : "-",
        dense ? hls4mlStrategy(plan.strategy) : "-", plan.ii, plan.latency,
        plan.resources.lut, plan.resources.ff, plan.resources.dsp,
        plan.resources.bram18k, plan.memory.empty() ? "-" : plan.memory);
  }
  auto row = [&](const char *name, int64_t used, int64_t available) {
    absl::StrAppendFormat(&text, "  %-9s %9d of %9d  %5.1f%%%s\n", name, used,
                          available,
                          available ? 100.0 * used / available : 0.0,
                          used > design.maxUtilization * available
                              ? "  (over the cap)"
                              : "");
  };
  absl::StrAppendFormat(&text, "\nTotal against %s (cap %.0f%% of each):\n",
                        device.name, 100 * design.maxUtilization);
  row(device.isIntel() ? "LUT (ALMx2)" : "LUT", design.total.lut,
      device.logicLuts());
  row("FF", design.total.ff, device.ff);
  row("DSP", design.total.dsp, device.dsp);
  row(device.memoryBlockName(), design.total.bram18k, device.memoryBlocks());
  if (!device.isIntel())
    row("URAM", design.total.uram, device.uram);
  if (!design.decisions.empty()) {
    text += "\nDecisions:\n";
    for (const std::string &decision : design.decisions)
      absl::StrAppend(&text, "  - ", printableText(decision), "\n");
  }
  return text;
}

} // namespace cuvil::fpga
