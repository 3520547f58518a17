//===- Plan.cpp - a network scheduled onto a device -----------------------===//

#include "cuvil/targets/fpga/plan/Plan.h"

#include "cuvil/support/SourceEscape.h"
#include "cuvil/support/StatusMacros.h"
#include "cuvil/targets/fpga/schedule/ReuseFactor.h"
#include "cuvil/targets/fpga/schedule/Schedule.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace cuvil::fpga {

Resources &Resources::operator+=(const Resources &other) {
  lut += other.lut;
  ff += other.ff;
  dsp += other.dsp;
  bram18k += other.bram18k;
  uram += other.uram;
  return *this;
}

std::string describeLayer(const LayerPlan &layer) {
  // The model's node name, or where the op is written (an MLIR model):
  // model text, shown on terminals and in logs.
  const std::string &name = layer.layer->node.empty() ? layer.layer->location
                                                      : layer.layer->node;
  if (name.empty())
    return layer.id;
  return absl::StrCat(printableText(name), " (", layer.id, ")");
}

namespace {

/// Products whose operands total at most this many bits are built from
/// LUTs (as Vitis HLS does for narrow products); wider ones use DSPs.
constexpr int kLutMultiplierMaxBits = 16;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int ceilLog2(int64_t n) {
  int bits = 0;
  while ((int64_t{1} << bits) < n)
    ++bits;
  return bits;
}

/// The accumulator that holds every partial sum of a dense layer exactly:
/// the products' fraction bits (the bias's if finer), and integer bits for
/// nIn products and the bias.
absl::StatusOr<FixedType> exactAccumulator(const LayerPlan &plan) {
  const FixedType &x = plan.input, &w = plan.weight, &b = plan.bias;
  FixedType acc;
  int fraction = std::max(x.fraction() + w.fraction(), b.fraction());
  int product = x.integer + w.integer;
  int bias = b.integer + (b.isSigned ? 0 : 1);
  acc.integer = std::max(product, bias) + ceilLog2(plan.layer->productsIn() + 1);
  acc.width = acc.integer + fraction;
  if (acc.width > 62)
    return absl::InvalidArgumentError(absl::StrCat(
        "layer ", describeLayer(plan), ": its exact sums need a ", acc.width,
        "-bit accumulator (", x.str(), " inputs times ", w.str(),
        " weights over ", plan.layer->productsIn(),
        " inputs); at most 62 bits are supported: narrow the precision"));
  if (acc.width < 1) {
    acc.width = 1;
    acc.integer = 1 - fraction;
  }
  return acc;
}

/// DSP blocks for one product of a x b bits (the wider operand on the wider
/// port), 0 for a LUT multiplier.
int64_t dspPerProduct(const Device &device, int a, int b) {
  if (a + b <= kLutMultiplierMaxBits)
    return 0;
  int wide = std::max(device.multiplierABits, device.multiplierBBits);
  int narrow = std::min(device.multiplierABits, device.multiplierBBits);
  return ceilDiv(std::max(a, b), wide) * ceilDiv(std::min(a, b), narrow);
}

/// Blocks of `bits`-bit memory holding `depth` words of `width` bits.
int64_t memoryBlocks(int64_t width, int64_t depth, int64_t blockBits,
                     int64_t maxWidth) {
  int64_t depthPerBlock = std::max<int64_t>(1, blockBits / maxWidth);
  return ceilDiv(width, maxWidth) * ceilDiv(depth, depthPerBlock);
}

/// A dense layer's resources at its reuse factor and strategy (docs/fpga.md).
void estimateDense(LayerPlan &plan, const Device &device) {
  const Layer &layer = *plan.layer;
  int wx = plan.input.width, ww = plan.weight.width;
  int64_t m = multipliersAt(layer.productsIn(), layer.productsOut(), plan.reuse);
  plan.multipliers = m;
  int64_t perProduct = dspPerProduct(device, wx, ww);
  plan.lutMultipliers = perProduct == 0;
  Resources r;
  r.dsp = m * perProduct;
  if (plan.lutMultipliers)
    r.lut += m * (wx * ww / 2 + wx + ww);
  r.lut += m * plan.accum.width; // one adder per product into its sum
  r.ff += m * (wx + ww) +
          layer.productsOut() * (plan.accum.width + plan.result.width);
  if (plan.strategy == Strategy::Latency) {
    // Constants in the multipliers; beyond R = 1 a multiplexer picks each
    // cycle's weight (a LUT per weight bit per 64 choices).
    plan.memory = plan.reuse == 1 ? "logic" : "lutram";
    if (plan.reuse > 1)
      r.lut += m * ww * ceilDiv(plan.reuse, 64);
  } else {
    // One word of m weights per cycle, R words deep.
    int64_t width = m * ww;
    r.ff += width;
    if (plan.reuse <= device.lutramMaxDepth) {
      plan.memory = "lutram";
      r.lut += width * ceilDiv(plan.reuse, 64);
    } else {
      plan.memory = "bram";
      r.bram18k = memoryBlocks(width, plan.reuse, device.bramBits,
                               device.bramMaxWidth);
    }
  }
  plan.resources = r;
}

void estimateSoftmax(LayerPlan &plan, const Device &device) {
  const SoftmaxTables &t = *plan.softmax;
  int64_t n = plan.layer->nIn;
  int win = plan.input.width;
  Resources r;
  r.dsp = n * dspPerProduct(device, t.expType.width, t.invType.width);
  // Each dual-port copy of the exp table serves two lookups a cycle.
  int64_t expBlocks = memoryBlocks(t.expType.width, t.entries, device.bramBits,
                                   device.bramMaxWidth);
  int64_t invBlocks = memoryBlocks(t.invType.width, int64_t{1} << t.invBits,
                                   device.bramBits, device.bramMaxWidth);
  r.bram18k = ceilDiv(n, 2) * expBlocks + invBlocks;
  r.lut = (n - 1) * win + n * (win + 1) + (n - 1) * t.sumType.width;
  r.ff = n * (win + t.expType.width + plan.result.width) + t.sumType.width;
  plan.memory = "bram";
  plan.resources = r;
}

void estimate(LayerPlan &plan, const Device &device) {
  switch (plan.layer->kind) {
  case LayerKind::Dense:
  case LayerKind::Conv2d: estimateDense(plan, device); break;
  case LayerKind::MaxPool2d: {
    const Window &w = plan.layer->window;
    plan.resources = Resources();
    plan.resources.lut = w.channels * (w.taps() - 1) * plan.input.width;
    plan.resources.ff = w.channels * (plan.input.width + plan.result.width);
    break;
  }
  case LayerKind::Softmax: estimateSoftmax(plan, device); break;
  case LayerKind::Relu:
    plan.resources = Resources();
    plan.resources.lut = plan.layer->nIn * plan.result.width;
    plan.resources.ff = plan.layer->nIn * plan.result.width;
    break;
  }
}

SoftmaxTables softmaxTables(int64_t n) {
  SoftmaxTables t;
  t.sumLog2 = ceilLog2(n);
  t.expType = FixedType{18, 1, false, Rounding::RND, Overflow::SAT};
  t.invType = FixedType{18, 1, false, Rounding::RND, Overflow::SAT};
  // The exact sum of n values below 2: up to n <= 2^c.
  t.sumType = FixedType{18 + t.sumLog2, 1 + t.sumLog2, false, Rounding::TRN,
                        Overflow::WRAP};
  for (int k = 0; k < t.entries; ++k)
    t.exp.push_back(
        t.expType.fromDouble(std::exp(-std::ldexp(k, -t.indexFraction))));
  for (int j = 0; j < (1 << t.invBits); ++j)
    t.inv.push_back(t.invType.fromDouble(
        1.0 / std::ldexp(j + 0.5, t.sumLog2 - t.invBits)));
  return t;
}

/// A combinational adder of `from` (chained under the clock by the
/// scheduler).
int addAdder(Graph &g, const std::string &name, const std::vector<int> &from,
             double delayNs) {
  Operation op;
  op.name = name;
  op.delayNs = delayNs;
  int index = g.operations.size();
  g.operations.push_back(op);
  for (int f : from)
    g.dependences.push_back({f, index, 0});
  return index;
}

/// A balanced tree of adders summing `terms`; returns its root.
int addAdderTree(Graph &g, std::vector<int> terms, double delayNs) {
  for (int round = 0; terms.size() > 1; ++round) {
    std::vector<int> next;
    for (size_t i = 0; i + 1 < terms.size(); i += 2)
      next.push_back(addAdder(g, absl::StrCat("add", round, "_", i / 2),
                              {terms[i], terms[i + 1]}, delayNs));
    if (terms.size() % 2)
      next.push_back(terms.back());
    terms = std::move(next);
  }
  return terms.front();
}

absl::Status scheduleDense(LayerPlan &plan, const Device &device,
                           double clockNs) {
  DenseMultiplier mul;
  if (plan.lutMultipliers) {
    int narrow = std::min(plan.input.width, plan.weight.width);
    mul.latency = 1;
    mul.delayNs = device.logicLevelNs * (ceilLog2(narrow) + 1) +
                  device.carryNsPerBit * (plan.input.width + plan.weight.width);
  } else {
    mul.latency = device.multiplierLatency;
  }
  Graph g = denseDatapath(
      plan, device,
      std::max<int64_t>(1, plan.multipliers / plan.layer->productsOut()), mul);
  absl::StatusOr<Schedule> s =
      plan.reuse == 1 ? listSchedule(g, clockNs)
                      : moduloSchedule(g, clockNs, /*maxIi=*/16);
  if (!s.ok())
    return absl::Status(s.status().code(),
                        absl::StrCat("scheduling layer ", describeLayer(plan),
                                     ": ", s.status().message()));
  int loopIi = std::max(1, s->ii);
  plan.latency = static_cast<int>((plan.reuse - 1) * loopIi) + s->length;
  plan.ii = static_cast<int>(plan.reuse * loopIi);
  plan.slackNs = s->slackNs;
  int levels = ceilLog2(std::max<int64_t>(
                   1, plan.multipliers / plan.layer->productsOut())) + 1;
  plan.chainedAdders = levels;
  return absl::OkStatus();
}

/// A convolution's pixel loop: per pixel, one output channel's products
/// (patch of them on M / CO multipliers: R cycles) fed by its input
/// channel's bank (taps reads on two ports), summed by an adder tree.
/// II = max(R, ceil(taps / 2)); the layer takes (pixels - 1) x II + the
/// iteration's length + 1 cycles.
absl::Status scheduleConv(LayerPlan &plan, const Device &device,
                          double clockNs) {
  const Layer &layer = *plan.layer;
  const Window &w = layer.window;
  int64_t perOutput = std::max<int64_t>(1, plan.multipliers / layer.productsOut());
  Graph g;
  g.resources = {{"multiplier", static_cast<int>(perOutput)},
                 {"input bank port", 2}};
  double adderNs = device.logicLevelNs + device.carryNsPerBit * plan.accum.width;
  std::vector<int> level;
  for (int64_t k = 0; k < layer.productsIn(); ++k) {
    int read = g.operations.size();
    Operation load;
    load.name = absl::StrCat("read", k);
    // One channel's taps share its bank's ports; the others' reads come
    // from their own banks, in parallel.
    load.resource = k < w.taps() ? 1 : -1;
    load.latency = 1;
    g.operations.push_back(load);
    Operation mul;
    mul.name = absl::StrCat("mul", k);
    mul.resource = 0;
    mul.latency = plan.lutMultipliers ? 1 : device.multiplierLatency;
    level.push_back(g.operations.size());
    g.operations.push_back(mul);
    g.dependences.push_back({read, level.back(), 0});
  }
  addAdderTree(g, level, adderNs);
  absl::StatusOr<Schedule> s = moduloSchedule(
      g, clockNs, /*maxIi=*/static_cast<int>(plan.reuse + w.taps()));
  if (!s.ok())
    return absl::Status(s.status().code(),
                        absl::StrCat("scheduling layer ", describeLayer(plan),
                                     ": ", s.status().message()));
  plan.ii = s->ii;
  plan.latency = static_cast<int>((w.pixels() - 1) * s->ii) + s->length + 1;
  plan.slackNs = s->slackNs;
  plan.chainedAdders = ceilLog2(layer.productsIn()) + 1;
  return absl::OkStatus();
}

void scheduleSoftmax(LayerPlan &plan, const Device &device, double clockNs) {
  // max tree, subtract, exp lookup (2), sum tree, reciprocal lookup (2),
  // product (DSP), output register: levels of chained LUT logic counted
  // in cycles of the clock.
  int64_t n = plan.layer->nIn;
  double compareNs = device.logicLevelNs + device.carryNsPerBit * plan.input.width;
  int perCycle = std::max(1, static_cast<int>(clockNs / compareNs));
  int treeCycles = static_cast<int>(ceilDiv(ceilLog2(n) + 1, perCycle));
  plan.latency = 2 * treeCycles + 4 + device.multiplierLatency + 1;
  plan.ii = 1;
  plan.slackNs = clockNs - compareNs * std::min<int64_t>(perCycle, ceilLog2(n) + 1);
}

double maxAbs(const std::vector<double> &values) {
  double max = 0;
  for (double v : values)
    max = std::max(max, std::fabs(v));
  return max;
}

} // namespace

Graph denseDatapath(const LayerPlan &plan, const Device &device,
                    int64_t products, const DenseMultiplier &multiplier) {
  Graph g;
  g.resources.push_back({"multiplier", static_cast<int>(products)});
  double adderNs = device.logicLevelNs + device.carryNsPerBit * plan.accum.width;
  std::vector<int> level;
  for (int64_t k = 0; k < products; ++k) {
    Operation mul;
    mul.name = absl::StrCat("mul", k);
    mul.resource = 0;
    mul.latency = multiplier.latency;
    mul.delayNs = multiplier.delayNs;
    level.push_back(g.operations.size());
    g.operations.push_back(mul);
  }
  int sum = addAdderTree(g, level, adderNs);
  // The accumulator is a register: its sum is there the next cycle, when
  // the next iteration adds to it (a recurrence of one cycle).
  int acc = addAdder(g, "accumulate", {sum}, adderNs);
  g.operations[acc].latency = 1;
  if (plan.reuse > 1)
    g.dependences.push_back({acc, acc, 1});
  return g;
}


std::vector<double> evaluateWindow(const Layer &layer,
                                   const std::vector<double> &x) {
  const Window &w = layer.window;
  bool conv = layer.kind == LayerKind::Conv2d;
  std::vector<double> y(layer.nOut);
  for (int64_t oc = 0; oc < w.outChannels; ++oc)
    for (int64_t oh = 0; oh < w.outHeight; ++oh)
      for (int64_t ow = 0; ow < w.outWidth; ++ow) {
        double value = conv ? layer.bias[oc] : -INFINITY;
        for (int64_t ci = conv ? 0 : oc; ci < (conv ? w.channels : oc + 1); ++ci)
          for (int64_t kh = 0; kh < w.kernelH; ++kh)
            for (int64_t kw = 0; kw < w.kernelW; ++kw) {
              int64_t ih = oh * w.strideH - w.padTop + kh;
              int64_t iw = ow * w.strideW - w.padLeft + kw;
              bool inside = ih >= 0 && ih < w.height && iw >= 0 && iw < w.width;
              double v = inside ? x[(ci * w.height + ih) * w.width + iw] : 0.0;
              if (!conv) {
                value = std::max(value, v);
                continue;
              }
              int64_t k = (ci * w.kernelH + kh) * w.kernelW + kw;
              value += v * layer.weights[k * w.outChannels + oc];
            }
        if (conv && layer.relu)
          value = std::max(value, 0.0);
        y[(oc * w.outHeight + oh) * w.outWidth + ow] = value;
      }
  return y;
}

std::vector<double> observeRanges(const Network &network,
                                  const std::vector<std::vector<double>> &samples) {
  std::vector<double> ranges(network.layers.size() + 1, 0.0);
  for (const std::vector<double> &sample : samples) {
    std::vector<double> x = sample;
    ranges[0] = std::max(ranges[0], maxAbs(x));
    for (size_t l = 0; l < network.layers.size(); ++l) {
      const Layer &layer = network.layers[l];
      std::vector<double> y(layer.nOut, 0.0);
      switch (layer.kind) {
      case LayerKind::Dense:
        for (int64_t j = 0; j < layer.nOut; ++j) {
          double sum = layer.bias[j];
          for (int64_t i = 0; i < layer.nIn; ++i)
            sum += x[i] * layer.weights[i * layer.nOut + j];
          y[j] = layer.relu ? std::max(sum, 0.0) : sum;
        }
        break;
      case LayerKind::Relu:
        for (int64_t i = 0; i < layer.nIn; ++i)
          y[i] = std::max(x[i], 0.0);
        break;
      case LayerKind::Conv2d:
      case LayerKind::MaxPool2d:
        y = evaluateWindow(layer, x);
        break;
      case LayerKind::Softmax: {
        double top = *std::max_element(x.begin(), x.end()), sum = 0;
        for (int64_t i = 0; i < layer.nIn; ++i)
          sum += y[i] = std::exp(x[i] - top);
        for (double &v : y)
          v /= sum;
        break;
      }
      }
      ranges[l + 1] = std::max(ranges[l + 1], maxAbs(y));
      x = std::move(y);
    }
  }
  return ranges;
}

const char *strategyName(Strategy strategy) {
  return strategy == Strategy::Resource ? "resource" : "latency";
}

std::optional<Strategy> parseStrategy(llvm::StringRef name) {
  if (name.equals_insensitive("latency"))
    return Strategy::Latency;
  if (name.equals_insensitive("resource"))
    return Strategy::Resource;
  return std::nullopt;
}

absl::StatusOr<DesignPlan> planDesign(const Network &network,
                                      const Device &device,
                                      const PlanOptions &options) {
  DesignPlan design;
  design.device = device;
  design.clockNs = options.clockNs > 0 ? options.clockNs : device.clockNs;
  design.maxUtilization = options.maxUtilization;
  if (options.maxUtilization <= 0 || options.maxUtilization > 1)
    return absl::InvalidArgumentError(
        "--max-utilization must be in (0, 1] (a share of each resource)");

  std::set<std::string> nodes;
  for (const Layer &layer : network.layers)
    nodes.insert(layer.node);
  auto checkNames = [&](const auto &byNode, const char *what) -> absl::Status {
    for (const auto &[node, value] : byNode)
      if (!nodes.count(node))
        return absl::InvalidArgumentError(printableText(absl::StrCat(
            "a ", what, " is given for '", node,
            "', which is no layer of the model; its layers are: ",
            absl::StrJoin(nodes, ", "))));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(checkNames(options.layerReuse, "reuse factor"));
  RETURN_IF_ERROR(checkNames(options.layerStrategy, "strategy"));

  auto untyped = [](const std::string &what) {
    return absl::InternalError(absl::StrCat(
        what, " has no fixed-point type: cuvil-fpga-assign-fixed-point "
              "assigns them at level1"));
  };
  if (!network.input)
    return untyped("the model's input");
  design.input = *network.input;
  FixedType current = design.input;
  for (size_t i = 0; i < network.layers.size(); ++i) {
    const Layer &layer = network.layers[i];
    LayerPlan plan;
    plan.layer = &layer;
    plan.id = absl::StrCat("layer", i + 1);
    if (!layer.resultType ||
        (layer.hasWeights() && (!layer.weightType || !layer.biasType)))
      return untyped(absl::StrCat("layer ", describeLayer(plan)));
    plan.input = current;
    plan.result = *layer.resultType;
    if (layer.hasWeights()) {
      plan.weight = *layer.weightType;
      plan.bias = *layer.biasType;
      ASSIGN_OR_RETURN(plan.accum, exactAccumulator(plan));
      auto fixed = options.layerReuse.find(layer.node);
      int64_t requested =
          fixed != options.layerReuse.end() ? fixed->second : options.reuse;
      if (layer.planned)
        requested = layer.planned->reuse;
      ASSIGN_OR_RETURN(ReuseChoice choice,
                       snapReuseFactor(describeLayer(plan), layer.productsIn(),
                                       layer.productsOut(), requested));
      plan.reuse = choice.reuse;
      if (!choice.message.empty())
        design.decisions.push_back(choice.message);
    } else if (layer.kind == LayerKind::Softmax) {
      if (layer.nIn > 1024)
        return absl::InvalidArgumentError(absl::StrCat(
            "layer ", describeLayer(plan), ": the FPGA softmax takes at most "
            "1024 values (its reciprocal table's range); this one has ",
            layer.nIn));
      plan.softmax = softmaxTables(layer.nIn);
    }
    current = plan.result;
    design.layers.push_back(std::move(plan));
  }
  design.output = current;

  // Fit: raise the reuse factor of the layer using most of a resource over
  // its cap until the design fits (only layers whose factor the user left
  // to the compiler).
  auto strategyOf = [&](const LayerPlan &plan) {
    if (plan.layer->planned)
      return parseStrategy(plan.layer->planned->strategy)
          .value_or(Strategy::Latency);
    auto given = options.layerStrategy.find(plan.layer->node);
    if (given != options.layerStrategy.end())
      return given->second;
    return options.strategy.value_or(plan.reuse == 1 ? Strategy::Latency
                                                     : Strategy::Resource);
  };
  struct Cap {
    const char *name;
    int64_t Resources::*field;
    int64_t budget;
  };
  std::vector<Cap> caps = {
      {"DSP", &Resources::dsp, device.dsp},
      {device.isIntel() ? "LUT (two per ALM)" : "LUT", &Resources::lut,
       device.logicLuts()},
      {"FF", &Resources::ff, device.ff},
      {device.memoryBlockName(), &Resources::bram18k, device.memoryBlocks()},
  };
  std::map<const LayerPlan *, int64_t> startReuse;
  for (LayerPlan &plan : design.layers)
    startReuse[&plan] = plan.reuse;
  while (true) {
    design.total = Resources();
    for (LayerPlan &plan : design.layers) {
      plan.strategy = strategyOf(plan);
      estimate(plan, device);
      design.total += plan.resources;
    }
    const Cap *over = nullptr;
    for (const Cap &cap : caps)
      if (design.total.*cap.field >
          static_cast<int64_t>(cap.budget * options.maxUtilization)) {
        over = &cap;
        break;
      }
    if (!over)
      break;
    LayerPlan *grow = nullptr;
    for (LayerPlan &plan : design.layers) {
      if (!plan.layer->hasWeights() || plan.layer->planned ||
          options.layerReuse.count(plan.layer->node) ||
          plan.reuse == plan.layer->productsIn() * plan.layer->productsOut())
        continue;
      if (!grow || plan.resources.*over->field > grow->resources.*over->field)
        grow = &plan;
    }
    int64_t allowed = static_cast<int64_t>(over->budget * options.maxUtilization);
    if (!grow || grow->resources.*over->field == 0) {
      std::vector<std::string> users;
      for (const LayerPlan &plan : design.layers) {
        if (plan.resources.*over->field == 0)
          continue;
        std::string use = absl::StrCat(describeLayer(plan), " ",
                                       plan.resources.*over->field,
                                       " at reuse factor ", plan.reuse);
        // For DSPs, what a layer whose factor was fixed would fit at.
        int64_t perProduct = plan.multipliers
                                 ? plan.resources.dsp / plan.multipliers
                                 : 0;
        if (over->field == &Resources::dsp && perProduct > 0 &&
            options.layerReuse.count(plan.layer->node)) {
          int64_t room = allowed - (design.total.dsp - plan.resources.dsp);
          absl::StatusOr<int64_t> fits = smallestReuseWithin(
              describeLayer(plan), plan.layer->productsIn(),
              plan.layer->productsOut(), room / perProduct);
          if (fits.ok())
            absl::StrAppend(&use, " (it fits at reuse factor ", *fits, ")");
        }
        users.push_back(use);
      }
      return absl::ResourceExhaustedError(absl::StrFormat(
          "the design does not fit %s: it needs %d %s, and %.0f%% of the "
          "device allows %d (%s). Every layer left to the compiler is at "
          "its largest reuse factor; fix fewer reuse factors, choose a "
          "narrower --precision or a larger device, or raise "
          "--max-utilization",
          device.name, design.total.*over->field, over->name,
          100 * options.maxUtilization, allowed,
          absl::StrJoin(users, "; ")));
    }
    std::vector<int64_t> valid = validReuseFactors(
        grow->layer->productsIn(), grow->layer->productsOut());
    grow->reuse = *std::upper_bound(valid.begin(), valid.end(), grow->reuse);
  }
  for (LayerPlan &plan : design.layers)
    if (plan.reuse != startReuse[&plan])
      design.decisions.push_back(absl::StrFormat(
          "layer %s: reuse factor raised from %d to %d so that the design "
          "fits %.0f%% of %s", describeLayer(plan), startReuse[&plan],
          plan.reuse, 100 * options.maxUtilization, device.name));

  design.slackNs = design.clockNs;
  design.latency = 0;
  design.ii = 1;
  for (LayerPlan &plan : design.layers) {
    switch (plan.layer->kind) {
    case LayerKind::Dense:
      RETURN_IF_ERROR(scheduleDense(plan, device, design.clockNs));
      break;
    case LayerKind::Conv2d:
      RETURN_IF_ERROR(scheduleConv(plan, device, design.clockNs));
      break;
    case LayerKind::MaxPool2d: {
      // Each channel's bank gives two values a cycle (dual port).
      const Window &w = plan.layer->window;
      plan.ii = static_cast<int>(ceilDiv(w.taps(), 2));
      plan.latency = static_cast<int>((w.pixels() - 1) * plan.ii) + 3;
      plan.slackNs = design.clockNs - device.logicLevelNs -
                     device.carryNsPerBit * plan.input.width;
      break;
    }
    case LayerKind::Softmax:
      scheduleSoftmax(plan, device, design.clockNs);
      break;
    case LayerKind::Relu:
      plan.latency = 1;
      plan.ii = 1;
      plan.slackNs = design.clockNs - device.logicLevelNs;
      break;
    }
    design.latency += plan.latency;
    design.ii = std::max(design.ii, plan.ii);
    design.slackNs = std::min(design.slackNs, plan.slackNs);
  }
  return design;
}

} // namespace cuvil::fpga
