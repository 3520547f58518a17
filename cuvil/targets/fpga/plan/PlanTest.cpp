#include "cuvil/targets/fpga/plan/Plan.h"
#include "cuvil/targets/fpga/plan/Interpreter.h"
#include "cuvil/targets/fpga/plan/PlanTesting.h"
#include "cuvil/targets/fpga/schedule/ReuseFactor.h"

#include <algorithm>

#include "gtest/gtest.h"

namespace cuvil::fpga {
namespace {

Layer dense(const std::string &node, int64_t nIn, int64_t nOut, bool relu,
            double weight = 0.25, double bias = 0.5) {
  Layer layer;
  layer.kind = LayerKind::Dense;
  layer.node = node;
  layer.nIn = nIn;
  layer.nOut = nOut;
  layer.relu = relu;
  layer.weights.assign(nIn * nOut, weight);
  layer.bias.assign(nOut, bias);
  return layer;
}

/// hls4ml's jet tagger: 16-64-32-32-5, ReLU, softmax.
Network jetTagger() {
  Network network;
  network.inputSize = 16;
  network.outputSize = 5;
  network.layers = {dense("fc1", 16, 64, true), dense("fc2", 64, 32, true),
                    dense("fc3", 32, 32, true), dense("fc4", 32, 5, false)};
  Layer softmax;
  softmax.kind = LayerKind::Softmax;
  softmax.node = "softmax";
  softmax.nIn = softmax.nOut = 5;
  network.layers.push_back(softmax);
  return network;
}

PlanOptions defaults() { return PlanOptions(); }

const Device &zu9eg() {
  static const Device device = *lookupDevice("xczu9eg");
  return device;
}

TEST(PlanTest, JetTaggerAt16BitsFitsVersalFullyParallel) {
  Network network = jetTagger();
  absl::StatusOr<DesignPlan> design =
      planAt(network, *lookupDevice("xcvm1802"), defaults());
  ASSERT_TRUE(design.ok()) << design.status().message();
  // One DSP per 16 x 16 product: 16*64 + 64*32 + 32*32 + 32*5 products,
  // and one per softmax output (18 x 18).
  EXPECT_EQ(design->total.dsp, 1024 + 2048 + 1024 + 160 + 5);
  for (const LayerPlan &plan : design->layers) {
    if (plan.layer->kind != LayerKind::Dense)
      continue;
    EXPECT_EQ(plan.reuse, 1);
    EXPECT_EQ(plan.strategy, Strategy::Latency);
    EXPECT_EQ(plan.memory, "logic");
    EXPECT_EQ(plan.ii, 1);
  }
  // fc1's exact accumulator: 20 fraction bits, 12 + ceil(log2(17)) integer.
  EXPECT_EQ(design->layers[0].accum.fraction(), 20);
  EXPECT_EQ(design->layers[0].accum.integer, 17);
  EXPECT_TRUE(design->decisions.empty());
  EXPECT_GT(design->slackNs, 0);
  EXPECT_EQ(design->ii, 1);
}

TEST(PlanTest, JetTaggerAt16BitsIsFoldedOnZu9eg) {
  // 4261 DSPs at reuse factor 1; ZU9EG allows 80% of 2520.
  Network network = jetTagger();
  absl::StatusOr<DesignPlan> design = planAt(network, zu9eg(), defaults());
  ASSERT_TRUE(design.ok()) << design.status().message();
  EXPECT_LE(design->total.dsp, 2016);
  EXPECT_FALSE(design->decisions.empty());
  // The biggest layer, fc2, gives way first.
  EXPECT_GT(design->layers[1].reuse, 1);
  EXPECT_EQ(design->layers[1].strategy, Strategy::Resource);
  int slowest = 1;
  for (const LayerPlan &plan : design->layers)
    slowest = std::max(slowest, plan.ii);
  EXPECT_EQ(design->ii, slowest);
}

TEST(PlanTest, JetTaggerAt8BitsUsesLutMultipliers) {
  Network network = jetTagger();
  absl::StatusOr<DesignPlan> design =
      planAt(network, zu9eg(), defaults(),
             FixedType{8, 3, true, Rounding::RND, Overflow::SAT});
  ASSERT_TRUE(design.ok()) << design.status().message();
  EXPECT_TRUE(design->layers[0].lutMultipliers);
  EXPECT_EQ(design->layers[0].resources.dsp, 0);
  EXPECT_EQ(design->layers[0].reuse, 1);
  EXPECT_EQ(design->total.dsp, 5); // the softmax's products only
}

TEST(PlanTest, TooBigAtReuseOneIsFolded) {
  Network network;
  network.inputSize = 128;
  network.layers = {dense("big", 128, 64, true)}; // 8192 products
  absl::StatusOr<DesignPlan> design = planAt(network, zu9eg(), defaults());
  ASSERT_TRUE(design.ok()) << design.status().message();
  const LayerPlan &plan = design->layers[0];
  EXPECT_GT(plan.reuse, 1);
  EXPECT_LE(design->total.dsp, 2016);
  EXPECT_EQ(plan.strategy, Strategy::Resource);
  EXPECT_EQ(plan.ii, plan.reuse);
  EXPECT_GE(plan.latency, plan.reuse);
  ASSERT_EQ(design->decisions.size(), 1u);
  EXPECT_NE(design->decisions[0].find("raised from 1 to"), std::string::npos);
  // The smallest that fits: the valid factor before it needs more than
  // the 2016 DSPs the cap allows (one DSP per 16 x 16 product).
  std::vector<int64_t> valid = validReuseFactors(128, 64);
  auto at = std::find(valid.begin(), valid.end(), plan.reuse);
  ASSERT_NE(at, valid.begin());
  EXPECT_GT(multipliersAt(128, 64, *(at - 1)), 2016);
  EXPECT_LE(multipliersAt(128, 64, plan.reuse), 2016);
}

TEST(PlanTest, AFixedReuseFactorThatCannotFitSaysSo) {
  Network network;
  network.inputSize = 128;
  network.layers = {dense("big", 128, 64, true)};
  PlanOptions options = defaults();
  options.layerReuse["big"] = 1;
  absl::StatusOr<DesignPlan> design = planAt(network, zu9eg(), options);
  ASSERT_FALSE(design.ok());
  EXPECT_EQ(design.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(design.status().message().find("8192 DSP"), std::string::npos)
      << design.status().message();
  EXPECT_NE(design.status().message().find("allows 2016"), std::string::npos);
  // 2016 of the DSPs leave room for 2016 products: 8192 / 4 = 2048 do not
  // fit, 8192 / 8 = 1024 do.
  EXPECT_NE(design.status().message().find("it fits at reuse factor 8"),
            std::string::npos)
      << design.status().message();
}

TEST(PlanTest, InvalidReuseFactorsAreSnappedWithAMessage) {
  Network network = jetTagger();
  PlanOptions options = defaults();
  options.layerReuse["fc1"] = 5; // 16 x 64: 5 divides no valid count
  absl::StatusOr<DesignPlan> design = planAt(network, zu9eg(), options);
  ASSERT_TRUE(design.ok()) << design.status().message();
  EXPECT_EQ(design->layers[0].reuse, 4);
  ASSERT_FALSE(design->decisions.empty());
  EXPECT_NE(design->decisions[0].find("fc1"), std::string::npos);
}

TEST(PlanTest, SettingsForUnknownLayersAreRefused) {
  PlanOptions options = defaults();
  options.layerReuse["fc9"] = 2;
  Network network = jetTagger();
  absl::StatusOr<DesignPlan> design = planAt(network, zu9eg(), options);
  ASSERT_FALSE(design.ok());
  EXPECT_NE(design.status().message().find("'fc9'"), std::string::npos);
  EXPECT_NE(design.status().message().find("fc1"), std::string::npos);
}

TEST(PlanTest, UntypedLayersAreAnInternalError) {
  // The types come from level1 (cuvil-fpga-assign-fixed-point).
  Network network = jetTagger();
  absl::StatusOr<DesignPlan> design = planDesign(network, zu9eg(), defaults());
  ASSERT_FALSE(design.ok());
  EXPECT_EQ(design.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(design.status().message().find("cuvil-fpga-assign-fixed-point"),
            std::string::npos);
}

TEST(PlanTest, PerLayerPrecisionChangesThatLayerOnly) {
  Network network = jetTagger();
  FixedType fc2{8, 3, true, Rounding::RND, Overflow::SAT};
  network.layers[1].resultType = network.layers[1].weightType =
      network.layers[1].biasType = fc2;
  absl::StatusOr<DesignPlan> design = planAt(network, zu9eg(), defaults());
  ASSERT_TRUE(design.ok());
  EXPECT_EQ(design->layers[1].result.str(), "fixed<8,3,RND,SAT>");
  EXPECT_EQ(design->layers[1].weight.width, 8);
  EXPECT_EQ(design->layers[2].input.width, 8);
  EXPECT_EQ(design->layers[2].result.width, 16);
  // 16-bit inputs by 8-bit weights: still DSPs (24 bits > 16).
  EXPECT_FALSE(design->layers[1].lutMultipliers);
  // fc3 reads 8-bit values with 16-bit weights.
  EXPECT_FALSE(design->layers[2].lutMultipliers);
}

TEST(PlanTest, InterpreterComputesByHand) {
  // y = relu(x . w + b) at fixed<8,4> (quantum 1/16), by hand.
  Network network;
  network.inputSize = 2;
  Layer layer = dense("d", 2, 1, true);
  layer.weights = {0.5, -1.25};
  layer.bias = {0.0625};
  network.layers = {layer};
  absl::StatusOr<DesignPlan> design =
      planAt(network, zu9eg(), defaults(),
             FixedType{8, 4, true, Rounding::RND, Overflow::SAT});
  ASSERT_TRUE(design.ok());
  // 1.5 * 0.5 - 0.25 * 1.25 + 0.0625 = 0.5 -> 8 sixteenths.
  EXPECT_EQ(interpretDesign(*design, {1.5, 0.25}), std::vector<int64_t>{8});
  // Negative sums are cut by the ReLU; big ones saturate at 127/16.
  EXPECT_EQ(interpretDesign(*design, {0, 2}), std::vector<int64_t>{0});
  EXPECT_EQ(interpretDesign(*design, {7.9, -5}), std::vector<int64_t>{127});
  // 0.03125 is half a quantum: the input rounds (RND) up to 1/16.
  // 1/16 * 0.5 + 0.0625 = 0.09375 = 1.5 quanta -> 2 (RND, ties up).
  EXPECT_EQ(interpretDesign(*design, {0.03125, 0}), std::vector<int64_t>{2});
}

TEST(PlanTest, SoftmaxOfEqualValuesIsUniform) {
  Network network;
  network.inputSize = 4;
  Layer softmax;
  softmax.kind = LayerKind::Softmax;
  softmax.nIn = softmax.nOut = 4;
  network.layers = {softmax};
  absl::StatusOr<DesignPlan> design =
      planAt(network, zu9eg(), defaults(),
             FixedType{16, 2, true, Rounding::RND, Overflow::SAT});
  ASSERT_TRUE(design.ok());
  std::vector<int64_t> y = interpretDesign(*design, {1, 1, 1, 1});
  for (int64_t v : y)
    EXPECT_NEAR(design->output.toDouble(v), 0.25, 1e-3);
  y = interpretDesign(*design, {1, 0, 0, 0});
  double e = std::exp(1.0);
  EXPECT_NEAR(design->output.toDouble(y[0]), e / (e + 3), 5e-3);
  EXPECT_NEAR(design->output.toDouble(y[1]), 1 / (e + 3), 5e-3);
}

} // namespace
} // namespace cuvil::fpga

namespace cuvil::fpga {
namespace {

Layer conv3x3(int64_t channels, int64_t outChannels, int64_t size) {
  Layer layer;
  layer.kind = LayerKind::Conv2d;
  layer.node = "conv";
  Window &w = layer.window;
  w.channels = channels;
  w.height = w.width = size;
  w.outChannels = outChannels;
  w.outHeight = w.outWidth = size - 2;
  w.kernelH = w.kernelW = 3;
  layer.nIn = channels * size * size;
  layer.nOut = outChannels * w.pixels();
  layer.weights.assign(channels * 9 * outChannels, 0.125);
  layer.bias.assign(outChannels, 0.5);
  return layer;
}

TEST(PlanTest, ConvolutionPixelsWaitForTheirBankOrTheirMultipliers) {
  Network network;
  network.layers = {conv3x3(1, 4, 28)};
  PlanOptions options = defaults();
  absl::StatusOr<DesignPlan> design = planAt(network, zu9eg(), options);
  ASSERT_TRUE(design.ok()) << design.status().message();
  // Nine taps from one channel's bank, two ports: a pixel every 5 cycles.
  EXPECT_EQ(design->layers[0].ii, 5);
  EXPECT_EQ(design->layers[0].multipliers, 36);
  EXPECT_GE(design->layers[0].latency, 26 * 26 * 5);
  // Reuse factor 9: a product per multiplier per cycle, 9 cycles a pixel.
  options.layerReuse["conv"] = 9;
  design = planAt(network, zu9eg(), options);
  ASSERT_TRUE(design.ok()) << design.status().message();
  EXPECT_EQ(design->layers[0].multipliers, 4);
  EXPECT_EQ(design->layers[0].ii, 9);
}

TEST(PlanTest, InterpreterConvolvesWithZeroPadding) {
  // One channel, 3x3 image of ones, a 3x3 kernel of 1/8 with padding 1:
  // the corner sees 4 ones, the edge 6, the centre 9; bias 1/2.
  Network network;
  Layer layer = conv3x3(1, 1, 3);
  layer.window.padTop = layer.window.padLeft = 1;
  layer.window.outHeight = layer.window.outWidth = 3;
  layer.nOut = 9;
  network.layers = {layer};
  absl::StatusOr<DesignPlan> design = planAt(network, zu9eg(), defaults());
  ASSERT_TRUE(design.ok());
  std::vector<int64_t> y = interpretDesign(*design, std::vector<double>(9, 1.0));
  auto value = [&](int i) { return design->output.toDouble(y[i]); };
  EXPECT_EQ(value(0), 0.5 + 4 * 0.125);
  EXPECT_EQ(value(1), 0.5 + 6 * 0.125);
  EXPECT_EQ(value(4), 0.5 + 9 * 0.125);
}

} // namespace
} // namespace cuvil::fpga
