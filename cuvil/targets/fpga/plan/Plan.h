//===- Plan.h - a network scheduled onto a device ---------------*- C++ -*-===//
//
// The FPGA target's decisions, layer by layer, on the fixed-point types
// level1 assigned (cuvil-fpga-assign-fixed-point): the reuse factor and
// strategy (raised where the design would not fit the device under its
// utilization caps), the datapath's schedule (II, latency, slack, from
// schedule/Schedule.h) and the resources it needs (estimates by the formulas in
// docs/fpga.md). cuvil-fpga-plan-design runs it at level2 and records each
// layer's reuse factor, strategy and weight memory on its call; planning
// the recorded layers again keeps them, so the emitter writes what level2
// says and the report shows it.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_PLAN_PLAN_H
#define CUVIL_TARGETS_FPGA_PLAN_PLAN_H

#include "cuvil/targets/fpga/device/Device.h"
#include "cuvil/targets/fpga/model/FixedType.h"
#include "cuvil/targets/fpga/model/Network.h"
#include "cuvil/targets/fpga/schedule/Schedule.h"

#include "absl/status/statusor.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cuvil::fpga {

enum class Strategy { Latency, Resource };

/// "latency" or "resource", as users write a strategy and the IR records it.
const char *strategyName(Strategy strategy);
/// The strategy `name` spells (any case), if any.
std::optional<Strategy> parseStrategy(llvm::StringRef name);

/// What the user asked (cuvilc flags, cuvil.compile keywords).
struct PlanOptions {
  /// Per layer, by node name: its reuse factor.
  std::map<std::string, int64_t> layerReuse;
  /// The reuse factor of every other dense layer (raised to fit).
  int64_t reuse = 1;
  /// latency: fully parallel datapaths with weights in logic; resource:
  /// folded loops with weights in memory; none: latency where a layer's
  /// reuse factor is 1, resource elsewhere.
  std::optional<Strategy> strategy;
  /// Per layer, by node name.
  std::map<std::string, Strategy> layerStrategy;
  /// The clock period in ns (0: the device's).
  double clockNs = 0;
  /// The share of each resource the design may use.
  double maxUtilization = 0.8;
};

/// Resources, as hls4ml / Vitis reports count them.
struct Resources {
  int64_t lut = 0, ff = 0, dsp = 0, bram18k = 0, uram = 0;
  Resources &operator+=(const Resources &other);
};

/// A softmax's lookup tables (docs/fpga.md gives their arithmetic): with
/// d = max(x) - x_i, e_i = exp[min(floor(d * 2^indexFraction), entries-1)];
/// with c = ceil(log2 n) and s the exact sum of the e_i (in [1, n]),
/// y_i = e_i * inv[min(floor(s * 2^(invBits - c)), 2^invBits - 1)].
struct SoftmaxTables {
  int entries = 1024;
  int indexFraction = 6;
  int invBits = 10;
  int sumLog2 = 0; // c
  FixedType expType, sumType, invType;
  /// Stored integers: exp(-k / 2^indexFraction) in expType, and
  /// 1 / ((j + 0.5) * 2^(c - invBits)) in invType.
  std::vector<int64_t> exp, inv;
};

struct LayerPlan {
  const Layer *layer = nullptr;
  /// The identifier of its function and arrays in generated code
  /// ("layer2"): never the model's own names.
  std::string id;
  FixedType input, result;
  FixedType weight, bias, accum; // Dense
  std::optional<SoftmaxTables> softmax;
  int64_t reuse = 1;
  Strategy strategy = Strategy::Latency;
  int64_t multipliers = 0;
  bool lutMultipliers = false;
  /// The weights' home: "logic" (constants in the multipliers), "lutram"
  /// or "bram"; "" without weights.
  std::string memory;
  /// Cycles between inputs and from input to output; the schedule's slack
  /// and adder levels chained in one cycle.
  int ii = 1, latency = 1;
  double slackNs = 0;
  int chainedAdders = 0;
  Resources resources;
};

struct DesignPlan {
  Device device;
  double clockNs = 5;
  double maxUtilization = 0.8;
  FixedType input, output;
  std::vector<LayerPlan> layers;
  Resources total;
  int ii = 1, latency = 1;
  double slackNs = 0;
  /// Decisions a person should read: snapped or raised reuse factors.
  std::vector<std::string> decisions;
};

/// Plans `network` (its types assigned) on `device`. InvalidArgument for
/// options that do not apply (a reuse factor for an unknown node),
/// ResourceExhausted when the design cannot fit at any reuse factor (naming
/// what it needs).
absl::StatusOr<DesignPlan> planDesign(const Network &network,
                                      const Device &device,
                                      const PlanOptions &options);

/// The largest magnitude of the network's input and of each layer's
/// output (in float arithmetic) over `samples`: what auto precision sizes
/// (its types need not be assigned).
std::vector<double> observeRanges(const Network &network,
                                  const std::vector<std::vector<double>> &samples);

/// A convolution's or max pooling's output in float arithmetic.
std::vector<double> evaluateWindow(const Layer &layer,
                                   const std::vector<double> &x);

/// How a dense layer's products are built: cycles to the product's
/// register, and the logic in front of its first one.
struct DenseMultiplier {
  int latency = 1;
  double delayNs = 0;
};

/// One output's datapath in one iteration of a dense layer's loop:
/// `products` multiplications, their adder tree (chained under the clock
/// by the scheduler) and the accumulator register, loop-carried across the
/// iterations of a folded layer (reuse factor > 1). The HLS estimate and
/// the Verilog emitter schedule the same graph.
Graph denseDatapath(const LayerPlan &plan, const Device &device,
                    int64_t products, const DenseMultiplier &multiplier);

/// "/fc1/Gemm (layer2)": how messages name a layer.
std::string describeLayer(const LayerPlan &layer);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_PLAN_PLAN_H
