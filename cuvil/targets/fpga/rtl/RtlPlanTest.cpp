#include "cuvil/targets/fpga/rtl/RtlPlan.h"
#include "cuvil/targets/fpga/plan/PlanTesting.h"
#include "cuvil/targets/fpga/rtl/VerilogText.h"

#include "gtest/gtest.h"

namespace cuvil::fpga {
namespace {

Layer dense(const std::string &node, int64_t nIn, int64_t nOut,
            std::vector<double> weights) {
  Layer layer;
  layer.kind = LayerKind::Dense;
  layer.node = node;
  layer.nIn = nIn;
  layer.nOut = nOut;
  layer.weights = std::move(weights);
  layer.bias.assign(nOut, 0.5);
  return layer;
}

PlanOptions options() { return PlanOptions(); }

const Device &zu9eg() {
  static const Device device = *lookupDevice("xczu9eg");
  return device;
}

TEST(RtlPlanTest, LatencyIsTheScheduleOfTheDatapath) {
  // Four inputs, two outputs; weights 0.3 need DSPs (not powers of two).
  Network network;
  network.inputSize = 4;
  network.outputSize = 2;
  network.layers = {dense("fc", 4, 2, std::vector<double>(8, 0.3))};
  absl::StatusOr<DesignPlan> design = planAt(network, zu9eg(), options());
  ASSERT_TRUE(design.ok()) << design.status().message();
  absl::StatusOr<RtlDesign> rtl = planRtl(*design);
  ASSERT_TRUE(rtl.ok()) << rtl.status().message();
  const RtlLayer &layer = rtl->layers[0];
  // DSP48E2's three stages, then the adder tree chained under 5 ns into
  // the output register: 3 + 1 cycles.
  EXPECT_EQ(layer.mulLatency, 3);
  EXPECT_EQ(layer.schedule.length, 4);
  EXPECT_EQ(layer.latency, 4);
  EXPECT_EQ(layer.ii, 1);
  // Every input times the same weight: one shared product per input.
  EXPECT_EQ(layer.estimate.dsp, 4);
  EXPECT_NE(layer.verilog.find("module layer1 ("), std::string::npos);
  EXPECT_NE(layer.verilog.find("localparam REUSE_FACTOR = 1;"),
            std::string::npos);
  // Products of 16 x 10 bits (0.3 is 307 / 1024); each tree adder is one
  // bit wider than its operands, in a module of its own.
  EXPECT_NE(layer.verilog.find("cuvil_add #(26, 26, 27)"), std::string::npos);
  EXPECT_NE(layer.verilog.find("cuvil_add #(27, 27, 28)"), std::string::npos);
}

TEST(RtlPlanTest, FoldedLatencyAddsTheIterations) {
  Network network;
  network.inputSize = 8;
  network.outputSize = 2;
  network.layers = {dense("fc", 8, 2, std::vector<double>(16, 0.3))};
  PlanOptions o = options();
  o.layerReuse["fc"] = 4;
  absl::StatusOr<DesignPlan> design = planAt(network, zu9eg(), o);
  ASSERT_TRUE(design.ok()) << design.status().message();
  absl::StatusOr<RtlDesign> rtl = planRtl(*design);
  ASSERT_TRUE(rtl.ok()) << rtl.status().message();
  const RtlLayer &layer = rtl->layers[0];
  EXPECT_EQ(layer.products, 2);
  EXPECT_EQ(layer.ii, 4);
  EXPECT_EQ(layer.latency, 3 + layer.schedule.length);
  EXPECT_EQ(layer.estimate.dsp, 2 * 2);
}

TEST(RtlPlanTest, ZeroAndPowerOfTwoWeightsTakeNoDsp) {
  Network network;
  network.inputSize = 2;
  network.outputSize = 2;
  // 0, 0.5 (a shift), -0.25 (a negated shift), 0.3 (a DSP).
  network.layers = {dense("fc", 2, 2, {0.0, 0.5, -0.25, 0.3})};
  absl::StatusOr<DesignPlan> design = planAt(network, zu9eg(), options());
  ASSERT_TRUE(design.ok());
  absl::StatusOr<RtlDesign> rtl = planRtl(*design);
  ASSERT_TRUE(rtl.ok());
  const RtlLayer &layer = rtl->layers[0];
  EXPECT_EQ(layer.kinds, (std::vector<ProductKind>{
                             ProductKind::Zero, ProductKind::Shift,
                             ProductKind::Shift, ProductKind::Dsp}));
  EXPECT_EQ(layer.estimate.dsp, 1);
}

/// A 3x3 convolution of a 1x4x4 image into two channels (2x2 pixels),
/// then a dense layer of the 8 values into 2.
Network convThenDense() {
  Network network;
  Layer conv;
  conv.kind = LayerKind::Conv2d;
  conv.node = "/conv/Conv";
  conv.window = Window{1, 4, 4, 2, 2, 2, 3, 3, 1, 1, 0, 0};
  conv.nIn = 16;
  conv.nOut = 8;
  conv.weights.assign(18, 0.3);
  conv.bias.assign(2, 0.0);
  network.inputSize = 16;
  network.outputSize = 2;
  network.layers = {conv, dense("fc", 8, 2, std::vector<double>(16, 0.3))};
  return network;
}

TEST(RtlPlanTest, ConvolutionsStreamPixelsIntoAGather) {
  Network network = convThenDense(); // the plan points into it
  absl::StatusOr<DesignPlan> design = planAt(network, zu9eg(), options());
  ASSERT_TRUE(design.ok()) << design.status().message();
  absl::StatusOr<RtlDesign> rtl = planRtl(*design);
  ASSERT_TRUE(rtl.ok()) << rtl.status().message();
  const RtlLayer &conv = rtl->layers[0], &fc = rtl->layers[1];
  EXPECT_TRUE(conv.in.pixels && conv.out.pixels && fc.in.pixels);
  EXPECT_EQ(conv.in.values, 1);
  EXPECT_EQ(conv.in.transfers, 16);
  EXPECT_EQ(conv.out.values, 2);
  EXPECT_EQ(conv.out.transfers, 4);
  EXPECT_FALSE(fc.out.pixels);
  // A pixel a cycle from cycle 0: the last (3, 3) is stepped in cycle 15,
  // its window goes to the core in cycle 16, the result comes
  // coreLatency cycles later. The next image's pixels follow at once.
  EXPECT_EQ(conv.latency, 16 + conv.coreLatency);
  EXPECT_EQ(conv.ii, 16);
  EXPECT_NE(conv.coreVerilog.find("module layer1_core ("), std::string::npos);
  EXPECT_NE(fc.verilog.find("layer2_core u_core"), std::string::npos);
  // The gather takes the 4 pixels, then the dense layer's datapath.
  EXPECT_EQ(fc.latency, 4 + fc.coreLatency);
}

TEST(RtlPlanTest, AFoldedCoreHoldsTheSweep) {
  PlanOptions o = options();
  o.layerReuse["/conv/Conv"] = 3;
  Network network = convThenDense();
  absl::StatusOr<DesignPlan> design = planAt(network, zu9eg(), o);
  ASSERT_TRUE(design.ok()) << design.status().message();
  absl::StatusOr<RtlDesign> rtl = planRtl(*design);
  ASSERT_TRUE(rtl.ok()) << rtl.status().message();
  const RtlLayer &conv = rtl->layers[0];
  // Windows end at pixels 10, 11, 14 and 15 (stepped in those cycles). The
  // core takes one every 3 cycles: in cycles 11, 14, 17 (pixel 14 waits a
  // cycle for it) and 20; the last result comes 2 + coreLatency after.
  EXPECT_EQ(conv.latency, 20 + 2 + conv.coreLatency);
}

TEST(RtlPlanTest, AConvolutionAfterAVectorIsRefused) {
  Network network = convThenDense();
  std::swap(network.layers[0], network.layers[1]);
  network.layers[0].nIn = 16;
  network.layers[0].nOut = 16;
  network.layers[0].weights.assign(256, 0.3);
  network.layers[0].bias.assign(16, 0.0);
  absl::StatusOr<DesignPlan> design = planAt(network, zu9eg(), options());
  ASSERT_TRUE(design.ok()) << design.status().message();
  absl::StatusOr<RtlDesign> rtl = planRtl(*design);
  ASSERT_FALSE(rtl.ok());
  EXPECT_EQ(rtl.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(rtl.status().message().find(
                "/conv/Conv (layer2) is a Conv2D after a layer that outputs"),
            std::string::npos);
}

TEST(VerilogTextTest, LiteralsAndBlocks) {
  EXPECT_EQ(rtl::signedLiteral(-5, 8), "(-8'sd5)");
  EXPECT_EQ(rtl::signedLiteral(7, 4), "4'sd7");
  EXPECT_EQ(rtl::csdDigits(7), 2);  // 8 - 1
  EXPECT_EQ(rtl::csdDigits(-5), 2); // -(4 + 1)
  // 18 Kb blocks: 1024 x 18 fits one; 1024 x 19 needs two; 512 x 36 one.
  EXPECT_EQ(rtl::romBlocks(zu9eg(), 18, 1024), 1);
  EXPECT_EQ(rtl::romBlocks(zu9eg(), 19, 1024), 2);
  EXPECT_EQ(rtl::romBlocks(zu9eg(), 36, 512), 1);
  EXPECT_EQ(rtl::dspBlocks(zu9eg(), 16, 16), 1);
  EXPECT_EQ(rtl::dspBlocks(zu9eg(), 19, 19), 2);
}

} // namespace
} // namespace cuvil::fpga
