//===- Network.h - a planned module as a chain of FPGA layers ---*- C++ -*-===//
//
// The FPGA target builds a dataflow design: one hardware function per
// layer, each feeding the next. This reads that chain off the planned
// level2 module (micro-kernel calls named after their level1 ops, on
// buffers): dense layers (gemm / matmul with constant weights, with a
// fused ReLU), convolutions (1-D ones arrive as 2-D of height 1), max
// pooling, standalone ReLUs, softmax, and the flatten / reshape / squeeze
// views between them. What the FPGA target cannot build yet is refused here,
// naming the op and the model's source location. Each layer's fixed-point
// types are those cuvil-fpga-assign-fixed-point set at level1 (its
// `cuvil.fixed`, which the neutral lowering keeps on the call).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_MODEL_NETWORK_H
#define CUVIL_TARGETS_FPGA_MODEL_NETWORK_H

#include "cuvil/targets/fpga/model/FixedType.h"

#include "absl/status/statusor.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cuvil::fpga {

enum class LayerKind { Dense, Relu, Softmax, Conv2d, MaxPool2d };

/// hls4ml's class names: "Dense", "Activation", "Softmax", "Conv2D",
/// "MaxPooling2D".
const char *layerKindName(LayerKind kind);

/// The image and window of a convolution or pooling (one sample, CHW; a
/// 1-D layer is one of height 1).
struct Window {
  int64_t channels = 0, height = 0, width = 0;
  int64_t outChannels = 0, outHeight = 0, outWidth = 0;
  int64_t kernelH = 1, kernelW = 1, strideH = 1, strideW = 1;
  int64_t padTop = 0, padLeft = 0;
  int64_t pixels() const { return outHeight * outWidth; }
  int64_t taps() const { return kernelH * kernelW; }
};

struct Layer {
  LayerKind kind = LayerKind::Dense;
  /// The model's node name ("/fc1/Gemm"; untrusted text: generated code
  /// only quotes it in comments) and source location, for reports,
  /// messages and per-layer settings.
  std::string node;
  std::string location;
  /// Values in and out of one sample (a softmax or ReLU: nIn == nOut).
  int64_t nIn = 0, nOut = 0;
  /// Conv2d and MaxPool2d: the image and the window.
  Window window;
  /// Dense and Conv2d: weights[i * productsOut() + j] multiplies input i
  /// (a convolution's patch element (ci * kernelH + kh) * kernelW + kw)
  /// into output j (its output channel); bias per output (zeros without
  /// one); a ReLU on the result.
  std::vector<double> weights;
  std::vector<double> bias;
  bool relu = false;
  /// Its types (weight and bias: Dense and Conv2d), as level1 assigned
  /// them; unset before cuvil-fpga-assign-fixed-point ran.
  std::optional<FixedType> resultType, weightType, biasType;
  /// The level1 op it came from, where the call carries its index
  /// (kLevel1IndexAttr); -1 otherwise.
  int64_t level1Index = -1;
  /// The call it was read from.
  mlir::Operation *call = nullptr;
  /// What cuvil-fpga-plan-design decided for it (its call's kPlanAttr),
  /// which planning keeps.
  struct Decision {
    int64_t reuse = 1;
    std::string strategy; ///< as recorded: "latency" or "resource"
    std::string memory;   ///< "logic", "lutram" or "bram"
  };
  std::optional<Decision> planned;

  /// The products' shape: a dense layer's inputs and outputs, a
  /// convolution's patch and output channels (per output pixel).
  int64_t productsIn() const {
    return kind == LayerKind::Conv2d
               ? window.channels * window.taps()
               : nIn;
  }
  int64_t productsOut() const {
    return kind == LayerKind::Conv2d ? window.outChannels : nOut;
  }
  /// A convolution or pooling: it slides a window over an image.
  bool windowed() const {
    return kind == LayerKind::Conv2d || kind == LayerKind::MaxPool2d;
  }
  bool hasWeights() const {
    return kind == LayerKind::Dense || kind == LayerKind::Conv2d;
  }
};

struct Network {
  /// The model's input and output names (untrusted text).
  std::string inputName, outputName;
  int64_t inputSize = 0, outputSize = 0;
  /// The input's type, as level1 assigned it.
  std::optional<FixedType> input;
  std::vector<Layer> layers;
};

/// Where a layer's types travel: the op's (then its call's) dictionary
/// {result, weight, bias} of #cuvil.fixed, and the input argument's
/// #cuvil.fixed.
inline constexpr llvm::StringLiteral kFixedAttr = "cuvil.fixed";
/// A layer's planned decisions on its call: {reuse_factor, strategy,
/// memory (a #cuvil_l2.space for weights in memory), ii, latency, hints}.
inline constexpr llvm::StringLiteral kPlanAttr = "fpga.plan";
/// The planner's decisions a person should read, on the function.
inline constexpr llvm::StringLiteral kDecisionsAttr = "fpga.decisions";
/// An index a level1 op may carry into its call, so that what is learnt
/// of a layer (its range on calibration data) finds its way back.
inline constexpr llvm::StringLiteral kLevel1IndexAttr = "cuvil.fpga_op_index";

/// The chain of layers of the planned level2 `module`. InvalidArgument
/// (with the op's location) for ops the FPGA target cannot build.
absl::StatusOr<Network> extractNetwork(mlir::ModuleOp module);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_MODEL_NETWORK_H
