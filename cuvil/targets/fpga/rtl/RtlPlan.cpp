//===- RtlPlan.cpp - a design's layers as Verilog pipelines ---------------===//

#include "cuvil/targets/fpga/rtl/RtlPlan.h"

#include "cuvil/support/StatusMacros.h"
#include "cuvil/targets/fpga/rtl/StreamTiming.h"
#include "cuvil/targets/fpga/rtl/VerilogModules.h"
#include "cuvil/targets/fpga/rtl/VerilogText.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

namespace cuvil::fpga {

Sweep::Sweep(const Window &window) : w(window) {
  rows = std::max(w.padTop + w.height,
                  w.kernelH + (w.outHeight - 1) * w.strideH);
  cols = std::max(w.padLeft + w.width,
                  w.kernelW + (w.outWidth - 1) * w.strideW);
}

bool Sweep::window(int64_t r, int64_t c) const {
  int64_t dr = r - (w.kernelH - 1), dc = c - (w.kernelW - 1);
  return dr >= 0 && dc >= 0 && dr % w.strideH == 0 && dc % w.strideW == 0 &&
         dr / w.strideH < w.outHeight && dc / w.strideW < w.outWidth;
}

int signedBits(int64_t value) {
  int bits = 1;
  while (value < -(int64_t{1} << (bits - 1)) ||
         value >= (int64_t{1} << (bits - 1)))
    ++bits;
  return bits;
}

int softmaxWidth(const RtlLayer &layer, SoftmaxNode node) {
  const LayerPlan &plan = *layer.plan;
  const SoftmaxTables &t = *plan.softmax;
  int xw = plan.input.width + (plan.input.isSigned ? 0 : 1);
  int ew = t.expType.width + 1, iw = t.invType.width + 1;
  int sumBits = rtl::log2Ceil(plan.layer->nIn); // a sum of n exps
  switch (node) {
  case SoftmaxNode::Input:
  case SoftmaxNode::Max:
    return xw;
  case SoftmaxNode::Subtract:
    return xw + 1;
  case SoftmaxNode::Exp:
    return ew;
  case SoftmaxNode::Add:
    return ew + sumBits;
  case SoftmaxNode::Inverse:
    return iw;
  case SoftmaxNode::Multiply:
    return ew + iw;
  case SoftmaxNode::Output:
    return plan.result.width;
  }
  return 0;
}

namespace {

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

ProductKind productKind(int64_t weight, bool lut) {
  if (weight == 0)
    return ProductKind::Zero;
  if (isPowerOfTwo(std::llabs(weight)))
    return ProductKind::Shift;
  return lut ? ProductKind::Lut : ProductKind::Dsp;
}

/// Schedules the layer's datapath: a list schedule, or (`pipelined`, a
/// folded layer's loop) a modulo schedule at II 1; errors name the layer.
absl::Status schedule(RtlLayer &rtl, double clockNs, bool pipelined) {
  absl::StatusOr<Schedule> s =
      pipelined ? moduloSchedule(rtl.datapath, clockNs, /*maxIi=*/1)
                : listSchedule(rtl.datapath, clockNs);
  if (!s.ok())
    return absl::Status(s.status().code(),
                        absl::StrCat("Verilog: scheduling layer ",
                                     describeLayer(*rtl.plan), ": ",
                                     s.status().message()));
  rtl.schedule = *s;
  return absl::OkStatus();
}

absl::Status planDense(RtlLayer &rtl, const Device &device, double clockNs) {
  const LayerPlan &plan = *rtl.plan;
  const Layer &layer = *plan.layer;
  auto refuse = [&](const std::string &why) {
    return absl::UnimplementedError(absl::StrCat(
        "Verilog: layer ", describeLayer(plan), ": ", why));
  };
  if (plan.reuse > layer.productsIn())
    return refuse(absl::StrCat(
        "reuse factor ", plan.reuse, " exceeds its ", layer.productsIn(),
        " inputs; the Verilog emitter folds a layer at most once per input "
        "(set --layer-reuse-factor for it, at most ", layer.productsIn(),
        ", or raise --max-utilization)"));
  rtl.products = layer.productsIn() / plan.reuse;
  DenseMultiplier mul;
  for (double w : layer.weights)
    rtl.weights.push_back(plan.weight.fromDouble(w));
  if (plan.reuse == 1) {
    rtl.lutMultipliers = plan.lutMultipliers;
    rtl.mulLatency = rtl.lutMultipliers ? 1 : device.multiplierLatency;
    for (int64_t w : rtl.weights)
      rtl.kinds.push_back(productKind(w, rtl.lutMultipliers));
  } else {
    // The ROM's registered read is the multiplier's B register.
    rtl.mulLatency = std::max(2, device.multiplierLatency);
  }
  for (double b : layer.bias)
    rtl.bias.push_back(plan.bias.fromDouble(b));
  mul.latency = rtl.mulLatency;
  if (rtl.lutMultipliers)
    mul.delayNs = device.logicLevelNs * 4 +
                  device.carryNsPerBit * (plan.input.width + plan.weight.width);
  rtl.datapath = denseDatapath(plan, device, rtl.products, mul);
  RETURN_IF_ERROR(schedule(rtl, clockNs, /*pipelined=*/plan.reuse > 1));
  rtl.coreLatency = rtl.schedule.length;
  rtl.coreIi = static_cast<int>(plan.reuse);
  return absl::OkStatus();
}

/// A pooling's max tree: one register after it, so the tree must fit the
/// clock.
absl::Status planPool(RtlLayer &rtl, const Device &device, double clockNs) {
  const LayerPlan &plan = *rtl.plan;
  int levels = rtl::log2Ceil(plan.layer->window.taps());
  double delayNs = levels * (2 * device.logicLevelNs +
                             device.carryNsPerBit * rtl::signedWidth(plan.input)) +
                   device.logicLevelNs;
  if (delayNs > clockNs)
    return absl::UnimplementedError(absl::StrFormat(
        "Verilog: layer %s: its %d-value max tree takes about %.2f ns, over "
        "the %.2f ns clock, and the Verilog emitter registers it once; "
        "lengthen the clock (--clock-period) or emit the HLS project "
        "(--emit=hls)",
        describeLayer(plan), plan.layer->window.taps(), delayNs, clockNs));
  rtl.schedule.slackNs = clockNs - delayNs;
  return absl::OkStatus();
}

/// The layer's streams, from what its predecessor sends (`previous`; the
/// design's input for the first): pixels between convolutions and
/// poolings, a vector into and out of the rest.
absl::Status planStreams(RtlLayer &rtl, const StreamShape *previous) {
  const LayerPlan &plan = *rtl.plan;
  const Layer &layer = *plan.layer;
  bool windowed = layer.windowed();
  const Window &w = layer.window;
  if (previous)
    rtl.in = *previous;
  else
    rtl.in = {layer.nIn, 1, false};
  if (windowed && !rtl.in.pixels)
    return absl::UnimplementedError(absl::StrCat(
        "Verilog: layer ", describeLayer(plan), " is a ",
        layerKindName(layer.kind),
        " after a layer that outputs a vector; the Verilog emitter streams "
        "images only from the input through convolutions and poolings: emit "
        "the HLS project (--emit=hls) for this model"));
  if (layer.kind == LayerKind::Softmax && rtl.in.pixels)
    return absl::UnimplementedError(absl::StrCat(
        "Verilog: layer ", describeLayer(plan),
        " is a softmax over an image's pixels; the Verilog emitter builds a "
        "softmax over a vector (flatten it and add a dense layer first)"));
  if (windowed)
    rtl.out = {layer.kind == LayerKind::Conv2d ? w.outChannels : w.channels,
               w.pixels(), true};
  else if (layer.kind == LayerKind::Relu)
    rtl.out = rtl.in;
  else
    rtl.out = {layer.nOut, 1, false};
  return absl::OkStatus();
}

/// A tree of two-input operations of `kind` over `terms`; returns its root.
int addTree(Graph &g, std::vector<SoftmaxNode> &nodes, SoftmaxNode kind,
            std::vector<int> terms, double delayNs) {
  for (int round = 0; terms.size() > 1; ++round) {
    std::vector<int> next;
    for (size_t i = 0; i + 1 < terms.size(); i += 2) {
      Operation op;
      op.name = absl::StrCat(kind == SoftmaxNode::Max ? "max" : "add", round,
                             "_", i / 2);
      op.delayNs = delayNs;
      int index = g.operations.size();
      g.operations.push_back(op);
      nodes.push_back(kind);
      g.dependences.push_back({terms[i], index, 0});
      g.dependences.push_back({terms[i + 1], index, 0});
      next.push_back(index);
    }
    if (terms.size() % 2)
      next.push_back(terms.back());
    terms = std::move(next);
  }
  return terms.front();
}

int addNode(Graph &g, std::vector<SoftmaxNode> &nodes, SoftmaxNode kind,
            const std::string &name, std::vector<int> from, int latency,
            double delayNs, int resource = -1) {
  Operation op;
  op.name = name;
  op.latency = latency;
  op.delayNs = delayNs;
  op.resource = resource;
  int index = g.operations.size();
  g.operations.push_back(op);
  nodes.push_back(kind);
  for (int f : from)
    g.dependences.push_back({f, index, 0});
  return index;
}

/// The softmax's datapath, list-scheduled.
absl::Status planSoftmax(RtlLayer &rtl, const Device &device, double clockNs) {
  const LayerPlan &plan = *rtl.plan;
  int64_t n = plan.layer->nIn;
  rtl.expCopies = (n + 1) / 2;
  Graph &g = rtl.datapath;
  std::vector<SoftmaxNode> &nodes = rtl.nodes;
  g.resources = {{"multiplier", static_cast<int>(n)},
                 {"exp table port", static_cast<int>(2 * rtl.expCopies)}};
  double lut = device.logicLevelNs, carry = device.carryNsPerBit;
  int xw = softmaxWidth(rtl, SoftmaxNode::Input);
  int sw = softmaxWidth(rtl, SoftmaxNode::Add);
  std::vector<int> in, exp;
  for (int64_t i = 0; i < n; ++i)
    in.push_back(addNode(g, nodes, SoftmaxNode::Input,
                         absl::StrCat("x", i), {}, 0, 0));
  int max = addTree(g, nodes, SoftmaxNode::Max, in, 2 * lut + carry * xw);
  for (int64_t i = 0; i < n; ++i) {
    int sub = addNode(g, nodes, SoftmaxNode::Subtract, absl::StrCat("d", i),
                      {max, in[i]}, 0, lut + carry * (xw + 1));
    exp.push_back(addNode(g, nodes, SoftmaxNode::Exp, absl::StrCat("e", i),
                          {sub}, 1, lut, 1));
  }
  int sum = addTree(g, nodes, SoftmaxNode::Add, exp, lut + carry * sw);
  int inv = addNode(g, nodes, SoftmaxNode::Inverse, "inv", {sum}, 1, lut);
  for (int64_t i = 0; i < n; ++i) {
    int mul = addNode(g, nodes, SoftmaxNode::Multiply, absl::StrCat("p", i),
                      {exp[i], inv}, device.multiplierLatency, 0, 0);
    addNode(g, nodes, SoftmaxNode::Output, absl::StrCat("y", i), {mul}, 1,
            2 * lut + carry * softmaxWidth(rtl, SoftmaxNode::Multiply));
  }
  RETURN_IF_ERROR(schedule(rtl, clockNs, /*pipelined=*/false));
  rtl.latency = rtl.schedule.length;
  rtl.ii = 1;
  return absl::OkStatus();
}

struct Cap {
  const char *name;
  int64_t Resources::*field;
  int64_t available;
};

} // namespace

absl::StatusOr<RtlDesign> planRtl(const DesignPlan &design) {
  RtlDesign rtl;
  rtl.plan = &design;
  // The input streams pixels when the first layer other than a ReLU takes
  // an image.
  std::optional<StreamShape> input;
  for (const LayerPlan &plan : design.layers) {
    const Layer &layer = *plan.layer;
    if (layer.kind == LayerKind::Relu)
      continue;
    if (layer.windowed())
      input = StreamShape{layer.window.channels,
                          layer.window.height * layer.window.width, true};
    break;
  }
  for (const LayerPlan &plan : design.layers) {
    RtlLayer layer;
    layer.plan = &plan;
    layer.device = &design.device;
    RETURN_IF_ERROR(planStreams(
        layer, rtl.layers.empty() ? (input ? &*input : nullptr)
                                  : &rtl.layers.back().out));
    switch (plan.layer->kind) {
    case LayerKind::Dense:
    case LayerKind::Conv2d:
      RETURN_IF_ERROR(planDense(layer, design.device, design.clockNs));
      break;
    case LayerKind::Softmax:
      RETURN_IF_ERROR(planSoftmax(layer, design.device, design.clockNs));
      layer.coreLatency = layer.schedule.length;
      break;
    case LayerKind::MaxPool2d:
      RETURN_IF_ERROR(planPool(layer, design.device, design.clockNs));
      break;
    case LayerKind::Relu:
      break;
    }
    rtl.layers.push_back(std::move(layer));
  }
  RETURN_IF_ERROR(timeDesign(rtl));
  for (RtlLayer &layer : rtl.layers) {
    // The estimate counts what the module declares, as Yosys maps it.
    layer.verilog = layerModule(layer, weightRomFile(layer), layer.estimate,
                                layer.coreVerilog);
    rtl.total += layer.estimate;
  }
  const Device &device = design.device;
  for (const Cap &cap : {Cap{"LUT", &Resources::lut, device.logicLuts()},
                         Cap{"FF", &Resources::ff, device.ff},
                         Cap{"DSP", &Resources::dsp, device.dsp},
                         Cap{"BRAM_18K", &Resources::bram18k,
                             device.memoryBlocks()}}) {
    int64_t allowed = static_cast<int64_t>(cap.available * design.maxUtilization);
    if (rtl.total.*cap.field <= allowed)
      continue;
    std::vector<std::string> users;
    for (const RtlLayer &layer : rtl.layers)
      if (layer.estimate.*cap.field > 0)
        users.push_back(absl::StrCat(describeLayer(*layer.plan), " ",
                                     layer.estimate.*cap.field));
    return absl::ResourceExhaustedError(absl::StrFormat(
        "Verilog: the design needs %d %s (%s), over the %d (%.0f%% of %s) "
        "allowed; raise the reuse factors (--reuse-factor, "
        "--layer-reuse-factor) or --max-utilization, or narrow the "
        "precision (a folded layer multiplies in DSP blocks)",
        rtl.total.*cap.field, cap.name, absl::StrJoin(users, ", "), allowed,
        100 * design.maxUtilization, device.name));
  }
  return rtl;
}

} // namespace cuvil::fpga
