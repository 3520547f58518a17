//===- RtlPlan.cpp - a design's layers as Verilog pipelines ---------------===//

#include "cuvil/targets/fpga/rtl/RtlPlan.h"

#include "cuvil/support/StatusMacros.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include <algorithm>
#include <cstdlib>

namespace cuvil::fpga {

int signedBits(int64_t value) {
  int bits = 1;
  while (value < -(int64_t{1} << (bits - 1)) ||
         value >= (int64_t{1} << (bits - 1)))
    ++bits;
  return bits;
}

namespace {

/// Products of at most this many operand bits are built from LUTs (the
/// HLS plan's rule, so both builds agree on which products are narrow).
bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Signed widths of a layer's operands: an unsigned type gains a zero sign
/// bit, as every datapath value is signed.
int signedWidth(const FixedType &type) {
  return type.width + (type.isSigned ? 0 : 1);
}

ProductKind productKind(int64_t weight, bool lut) {
  if (weight == 0)
    return ProductKind::Zero;
  if (isPowerOfTwo(std::llabs(weight)))
    return ProductKind::Shift;
  return lut ? ProductKind::Lut : ProductKind::Dsp;
}

/// Nonzero digits of the canonical signed-digit form of |value|: the terms
/// of a shift-and-add multiplier.
int csdDigits(int64_t value) {
  int digits = 0;
  for (uint64_t v = std::llabs(value); v;) {
    if (v & 1) {
      ++digits;
      v = (v & 2) ? v + 1 : v - 1;
    }
    v >>= 1;
  }
  return digits;
}

int64_t dspBlocks(const Device &device, int a, int b) {
  int wide = std::max(device.multiplierABits, device.multiplierBBits);
  int narrow = std::min(device.multiplierABits, device.multiplierBBits);
  return ceilDiv(std::max(a, b), wide) * ceilDiv(std::min(a, b), narrow);
}

/// Registers the schedule puts between each operation and its readers, in
/// cycles, summed over the datapath's operands.
int64_t operandDelays(const RtlLayer &rtl) {
  int64_t cycles = 0;
  for (const Dependence &d : rtl.datapath.dependences) {
    if (d.distance)
      continue;
    const Operation &from = rtl.datapath.operations[d.from];
    cycles += rtl.schedule.start[d.to] -
              (rtl.schedule.start[d.from] + from.latency);
  }
  return cycles;
}

/// The RTL's resources (docs/fpga.md, "RTL estimates"): what the emitted
/// Verilog declares, less what synthesis removes (constant-zero products).
void estimateDense(RtlLayer &rtl, const Device &device) {
  const LayerPlan &plan = *rtl.plan;
  const Layer &layer = *plan.layer;
  int xw = signedWidth(plan.input), ww = signedWidth(plan.weight);
  int aw = plan.accum.width;
  Resources r;
  int64_t nOut = layer.productsOut();
  if (plan.reuse == 1) {
    int64_t terms = 0;
    std::vector<bool> used(layer.productsIn(), false);
    for (int64_t i = 0; i < layer.productsIn(); ++i)
      for (int64_t j = 0; j < nOut; ++j) {
        int64_t w = rtl.weights[i * nOut + j];
        ProductKind kind = rtl.kinds[i * nOut + j];
        if (kind == ProductKind::Zero)
          continue;
        used[i] = true;
        ++terms;
        int pw = xw + signedBits(w);
        if (kind == ProductKind::Dsp)
          r.dsp += dspBlocks(device, xw, signedBits(w));
        if (kind == ProductKind::Lut)
          r.lut += (csdDigits(w) - 1) * pw;
        r.ff += pw * std::max(1, rtl.mulLatency - 1);
      }
    if (rtl.mulLatency >= 2)
      r.ff += xw * std::count(used.begin(), used.end(), true);
    // Adders: one per term into its output's sum (the bias is the first).
    r.lut += terms * aw;
  } else {
    int64_t m = rtl.products * nOut;
    r.dsp = m * dspBlocks(device, xw, ww);
    // The input's remaining chunks, the A and B registers, the products'
    // pipeline, the accumulators.
    r.ff += layer.productsIn() * xw + rtl.products * xw + m * ww +
            m * (xw + ww) * (rtl.mulLatency - 1) + nOut * aw;
    r.lut += m * aw + rtl.products * xw; // adders; the input's shift mux
    int64_t width = m * ww;
    if (plan.memory == "bram")
      r.bram18k = ceilDiv(width, device.bramMaxWidth) *
                  ceilDiv(plan.reuse, device.bramBits / device.bramMaxWidth);
    else
      r.lut += width * ceilDiv(plan.reuse, 64);
  }
  r.ff += operandDelays(rtl) * nOut * aw;
  // The result: quantized (a comparison and a multiplexer per bit when it
  // saturates), registered at reuse factor 1.
  r.lut += nOut * plan.result.width;
  if (plan.reuse == 1)
    r.ff += nOut * plan.result.width;
  rtl.estimate = r;
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
  if (plan.reuse == 1) {
    rtl.lutMultipliers = plan.lutMultipliers;
    rtl.mulLatency = rtl.lutMultipliers ? 1 : device.multiplierLatency;
    for (double w : layer.weights)
      rtl.weights.push_back(plan.weight.fromDouble(w));
    for (int64_t w : rtl.weights)
      rtl.kinds.push_back(productKind(w, rtl.lutMultipliers));
  } else {
    // The ROM's registered read is the multiplier's B register.
    rtl.mulLatency = std::max(2, device.multiplierLatency);
    for (double w : layer.weights)
      rtl.weights.push_back(plan.weight.fromDouble(w));
  }
  for (double b : layer.bias)
    rtl.bias.push_back(plan.bias.fromDouble(b));
  mul.latency = rtl.mulLatency;
  if (rtl.lutMultipliers)
    mul.delayNs = device.logicLevelNs * 4 +
                  device.carryNsPerBit * (plan.input.width + plan.weight.width);
  rtl.datapath = denseDatapath(plan, device, rtl.products, mul);
  absl::StatusOr<Schedule> s =
      plan.reuse == 1 ? listSchedule(rtl.datapath, clockNs)
                      : moduloSchedule(rtl.datapath, clockNs, /*maxIi=*/1);
  if (!s.ok())
    return absl::Status(s.status().code(),
                        absl::StrCat("Verilog: scheduling layer ",
                                     describeLayer(plan), ": ",
                                     s.status().message()));
  rtl.schedule = *s;
  rtl.latency = static_cast<int>(plan.reuse - 1) + s->length;
  rtl.ii = static_cast<int>(plan.reuse);
  estimateDense(rtl, device);
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
  for (const LayerPlan &plan : design.layers) {
    RtlLayer layer;
    layer.plan = &plan;
    switch (plan.layer->kind) {
    case LayerKind::Dense:
      RETURN_IF_ERROR(planDense(layer, design.device, design.clockNs));
      break;
    case LayerKind::Relu:
      layer.latency = 1;
      layer.ii = 1;
      layer.estimate.ff = plan.layer->nOut * plan.result.width;
      layer.estimate.lut = plan.layer->nOut * plan.result.width;
      break;
    default:
      return absl::UnimplementedError(absl::StrCat(
          "Verilog: layer ", describeLayer(plan), " is a ",
          layerKindName(plan.layer->kind),
          " layer; the Verilog emitter builds Dense and ReLU layers so far "
          "(issue #22): emit the HLS project (--emit=hls) for this model"));
    }
    rtl.latency += layer.latency;
    rtl.ii = std::max(rtl.ii, layer.ii);
    rtl.total += layer.estimate;
    rtl.layers.push_back(std::move(layer));
  }
  const Device &device = design.device;
  for (const Cap &cap : {Cap{"LUT", &Resources::lut, device.logicLuts()},
                         Cap{"FF", &Resources::ff, device.ff},
                         Cap{"DSP", &Resources::dsp, device.dsp},
                         Cap{"BRAM_18K", &Resources::bram18k,
                             device.memoryBlocks()}}) {
    int64_t allowed = static_cast<int64_t>(cap.available * design.maxUtilization);
    if (rtl.total.*cap.field > allowed)
      return absl::ResourceExhaustedError(absl::StrFormat(
          "Verilog: the design needs %d %s, over the %d (%.0f%% of %s) "
          "allowed; raise the reuse factors (--reuse-factor, "
          "--layer-reuse-factor) or --max-utilization, or narrow the "
          "precision",
          rtl.total.*cap.field, cap.name, allowed,
          100 * design.maxUtilization, device.name));
  }
  return rtl;
}

} // namespace cuvil::fpga
