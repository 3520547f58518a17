//===- Network.cpp - a planned module as a chain of FPGA layers -----------===//

#include "cuvil/targets/fpga/model/Network.h"

#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/support/Diagnostics.h"
#include "cuvil/support/ElementsBytes.h"
#include "cuvil/support/SourceEscape.h"
#include "cuvil/support/StatusMacros.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

#include <cstring>

namespace cuvil::fpga {

const char *layerKindName(LayerKind kind) {
  switch (kind) {
  case LayerKind::Dense: return "Dense";
  case LayerKind::Relu: return "Activation";
  case LayerKind::Softmax: return "Softmax";
  case LayerKind::Conv2d: return "Conv2D";
  case LayerKind::MaxPool2d: return "MaxPooling2D";
  }
  return "";
}

namespace {

/// "what (at LOCATION)": an error about `op` the way every Cuvil error
/// names the op and where the user wrote it.
constexpr const char *kNoControlFlow =
    "the FPGA target builds a dataflow of layers, not control flow (an ONNX "
    "If, Loop or Scan; a scripted if, for or while on tensors); the CPU "
    "targets compile it";

absl::Status unsupported(mlir::Operation *op, const std::string &what) {
  op->emitError(what);
  return absl::InvalidArgumentError(absl::StrCat(
      printableText(formatLocation(op->getLoc())), ": error: ", what));
}

/// Values per sample of a buffer [1, ...] (a batch of one; the design
/// takes one sample per call).
std::optional<int64_t> sampleSize(mlir::Value buffer) {
  auto type = llvm::dyn_cast<mlir::MemRefType>(buffer.getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 1 ||
      type.getDimSize(0) != 1)
    return std::nullopt;
  return type.getNumElements();
}

/// The float32 elements of a constant buffer (memref.get_global of a
/// constant memref.global), or an error naming `user`.
/// Buffers that are a constant's values under another shape (a Conv1d's
/// weight unsqueezed to 2-D, written by a call): what they copy.
using Aliases = llvm::DenseMap<mlir::Value, mlir::Value>;

absl::StatusOr<std::vector<double>> constantValues(mlir::Value buffer,
                                                   mlir::Operation *user,
                                                   const Aliases &aliases) {
  for (auto it = aliases.find(buffer); it != aliases.end();
       it = aliases.find(buffer))
    buffer = it->second;
  auto get = buffer.getDefiningOp<mlir::memref::GetGlobalOp>();
  mlir::memref::GlobalOp global =
      get ? mlir::SymbolTable::lookupNearestSymbolFrom<mlir::memref::GlobalOp>(
                get, get.getNameAttr())
          : nullptr;
  if (!global || !global.getConstant() || !global.getInitialValue())
    return unsupported(user, "the FPGA target needs this layer's weights to be "
                             "constants of the model");
  if (!global.getType().getElementType().isF32())
    return unsupported(user, "the FPGA target reads float32 weights; quantize "
                             "them with --precision instead");
  ASSIGN_OR_RETURN(std::string bytes,
                   getElementsBytes(*global.getInitialValue()));
  std::vector<double> values(bytes.size() / 4);
  for (size_t i = 0; i < values.size(); ++i) {
    float value;
    std::memcpy(&value, bytes.data() + 4 * i, 4);
    values[i] = value;
  }
  return values;
}

/// The #cuvil.fixed named `key` of the op's types, if set.
std::optional<FixedType> fixedType(mlir::Operation *op, llvm::StringRef key) {
  auto types = op->getAttrOfType<mlir::DictionaryAttr>(kFixedAttr);
  auto type = types ? types.getAs<l1::FixedAttr>(key) : nullptr;
  if (!type)
    return std::nullopt;
  return FixedType::fromAttr(type);
}

/// The call's planned decisions, if cuvil-fpga-plan-design ran.
std::optional<Layer::Decision> plannedDecision(mlir::Operation *op) {
  auto plan = op->getAttrOfType<mlir::DictionaryAttr>(kPlanAttr);
  auto reuse = plan ? plan.getAs<mlir::IntegerAttr>("reuse_factor") : nullptr;
  auto strategy = plan ? plan.getAs<mlir::StringAttr>("strategy") : nullptr;
  if (!reuse || !strategy)
    return std::nullopt;
  Layer::Decision decision;
  decision.reuse = reuse.getInt();
  decision.strategy = strategy.str();
  auto memory = plan.getAs<l2::MemorySpaceAttr>("memory");
  decision.memory =
      memory ? l2::stringifyMemorySpace(memory.getValue()).str() : "logic";
  return decision;
}

Layer namedLayer(mlir::Operation *op, LayerKind kind) {
  Layer layer;
  layer.kind = kind;
  DiagnosticInfo where = describeLocation(op->getLoc());
  layer.node = where.node;
  layer.location = where.location;
  layer.resultType = fixedType(op, "result");
  layer.weightType = fixedType(op, "weight");
  layer.biasType = fixedType(op, "bias");
  if (auto index = op->getAttrOfType<mlir::IntegerAttr>(kLevel1IndexAttr))
    layer.level1Index = index.getInt();
  layer.call = op;
  layer.planned = plannedDecision(op);
  return layer;
}

/// The call's epilogue: a ReLU the layer applies, or an error for steps
/// the FPGA target does not fuse into `what`.
absl::Status readFusedRelu(l2::UKernelCallOp call, const char *what,
                           Layer &layer) {
  l2::EpilogueAttr epilogue = call.getEpilogueAttr();
  if (!epilogue)
    return absl::OkStatus();
  for (l2::EpilogueStep step : epilogue.getSteps())
    if (step != l2::EpilogueStep::relu)
      return unsupported(call, absl::StrCat(
          "the FPGA target does not fuse a '",
          l2::stringifyEpilogueStep(step).str(), "' step into ", what,
          " yet"));
  layer.relu = epilogue.has(l2::EpilogueStep::relu);
  return absl::OkStatus();
}

/// A gemm / matmul with constant weights: y = x W (+ b), ReLU fused.
absl::StatusOr<Layer> denseLayer(l2::UKernelCallOp call, int64_t nIn,
                                 const Aliases &aliases) {
  mlir::OperandRange inputs = call.getKernelInputs();
  bool gemm = call.getKernel() == "gemm";
  if (call.getParam("trans_a"))
    return unsupported(call, "a gemm with trans_a is not a dense layer the "
                             "FPGA target builds");
  auto weightType = llvm::dyn_cast<mlir::MemRefType>(inputs[1].getType());
  if (!weightType || weightType.getRank() != 2)
    return unsupported(call, "the FPGA target builds matrix products with a "
                             "2-D constant right operand only");
  bool transB = gemm && call.getParam("trans_b");
  int64_t rows = weightType.getDimSize(transB ? 1 : 0);
  int64_t cols = weightType.getDimSize(transB ? 0 : 1);
  if (rows != nIn)
    return unsupported(call, absl::StrCat("a dense layer of ", rows,
                                          " inputs reads ", nIn, " values"));
  Layer layer = namedLayer(call, LayerKind::Dense);
  layer.nIn = rows;
  layer.nOut = cols;
  ASSIGN_OR_RETURN(std::vector<double> w, constantValues(inputs[1], call, aliases));
  double alpha = gemm ? call.getFloatParam("alpha", 1.0) : 1.0;
  layer.weights.resize(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      layer.weights[i * cols + j] =
          alpha * (transB ? w[j * rows + i] : w[i * cols + j]);
  layer.bias.assign(cols, 0.0);
  if (gemm && inputs.size() > 2) {
    ASSIGN_OR_RETURN(std::vector<double> c, constantValues(inputs[2], call, aliases));
    double beta = call.getFloatParam("beta", 1.0);
    if (c.size() == 1)
      c.assign(cols, c[0]);
    if (static_cast<int64_t>(c.size()) != cols)
      return unsupported(call, "the FPGA target takes a gemm's C as a bias "
                               "of one value per output");
    for (int64_t j = 0; j < cols; ++j)
      layer.bias[j] = beta * c[j];
  }
  RETURN_IF_ERROR(readFusedRelu(call, "a dense layer", layer));
  return layer;
}

/// The window of a conv2d / max_pool2d call on [1, C, H, W] buffers.
absl::StatusOr<Window> windowOf(l2::UKernelCallOp call, mlir::Value input,
                                mlir::Value output, bool conv) {
  auto in = llvm::cast<mlir::MemRefType>(input.getType());
  auto out = llvm::cast<mlir::MemRefType>(output.getType());
  if (in.getRank() != 4 || out.getRank() != 4)
    return unsupported(call, "the FPGA target builds convolutions and "
                             "pooling on NCHW (or NCW) images");
  Window w;
  w.channels = in.getDimSize(1);
  w.height = in.getDimSize(2);
  w.width = in.getDimSize(3);
  w.outChannels = out.getDimSize(1);
  w.outHeight = out.getDimSize(2);
  w.outWidth = out.getDimSize(3);
  llvm::SmallVector<int64_t> strides = call.getIntsParam("strides", {1, 1});
  llvm::SmallVector<int64_t> padding =
      call.getIntsParam("padding", {0, 0, 0, 0});
  llvm::SmallVector<int64_t> dilations =
      call.getIntsParam("dilations", {1, 1});
  if (dilations[0] != 1 || dilations[1] != 1)
    return unsupported(call, "the FPGA target does not build dilated windows "
                             "yet");
  w.strideH = strides[0];
  w.strideW = strides[1];
  w.padTop = padding[0];
  w.padLeft = padding[1];
  if (conv) {
    if (call.getIntParam("groups", 1) != 1)
      return unsupported(call, "the FPGA target builds convolutions of one "
                               "group only");
    auto weight = llvm::cast<mlir::MemRefType>(
        call.getKernelInputs()[1].getType());
    w.kernelH = weight.getDimSize(2);
    w.kernelW = weight.getDimSize(3);
  } else {
    llvm::SmallVector<int64_t> kernel = call.getIntsParam("kernel_shape");
    w.kernelH = kernel[0];
    w.kernelW = kernel[1];
    // Max pooling pads with -inf: no padding, and every window inside.
    if (llvm::any_of(padding, [](int64_t p) { return p != 0; }) ||
        (w.outHeight - 1) * w.strideH + w.kernelH > w.height ||
        (w.outWidth - 1) * w.strideW + w.kernelW > w.width)
      return unsupported(call, "the FPGA target builds max pooling whose "
                               "windows lie inside the image (no padding, "
                               "no ceil_mode) only");
  }
  return w;
}

/// A conv2d with constant weights: a dense layer per output pixel.
absl::StatusOr<Layer> convLayer(l2::UKernelCallOp call,
                                const Aliases &aliases) {
  mlir::OperandRange inputs = call.getKernelInputs();
  Layer layer = namedLayer(call, LayerKind::Conv2d);
  ASSIGN_OR_RETURN(layer.window,
                   windowOf(call, inputs[0], call.getOutputs()[0], true));
  const Window &w = layer.window;
  layer.nIn = w.channels * w.height * w.width;
  layer.nOut = w.outChannels * w.pixels();
  ASSIGN_OR_RETURN(std::vector<double> weights, constantValues(inputs[1], call, aliases));
  // OIHW -> [(ci * KH + kh) * KW + kw][co].
  int64_t patch = w.channels * w.taps();
  layer.weights.resize(patch * w.outChannels);
  for (int64_t co = 0; co < w.outChannels; ++co)
    for (int64_t k = 0; k < patch; ++k)
      layer.weights[k * w.outChannels + co] = weights[co * patch + k];
  layer.bias.assign(w.outChannels, 0.0);
  if (inputs.size() > 2) {
    ASSIGN_OR_RETURN(layer.bias, constantValues(inputs[2], call, aliases));
  }
  RETURN_IF_ERROR(readFusedRelu(call, "a convolution", layer));
  return layer;
}

} // namespace

absl::StatusOr<Network> extractNetwork(mlir::ModuleOp module) {
  auto funcs = llvm::to_vector(module.getOps<mlir::func::FuncOp>());
  if (funcs.size() != 1)
    return absl::InvalidArgumentError(
        "the FPGA target builds a model of one function");
  mlir::func::FuncOp func = funcs.front();
  // Control flow first: the ops computing its condition would otherwise be
  // refused one by one, far from the cause.
  mlir::Operation *flow = nullptr;
  func.walk([&](mlir::Operation *op) {
    if (!flow && llvm::isa<l2::IfOp, l2::LoopOp>(op))
      flow = op;
  });
  if (flow)
    return unsupported(flow, kNoControlFlow);
  // Arguments: the batch size (index), the inputs, the outputs, the arena.
  llvm::SmallVector<mlir::BlockArgument> data;
  for (mlir::BlockArgument arg : func.getArguments())
    if (llvm::isa<mlir::MemRefType>(arg.getType()) &&
        !func.getArgAttr(arg.getArgNumber(), "cuvil_l2.arena"))
      data.push_back(arg);
  if (data.size() != 2)
    return absl::InvalidArgumentError(absl::StrCat(
        "the FPGA target builds models of one input and one output; this "
        "one has ", data.size(), " inputs and outputs"));
  Network network;
  auto nameOf = [&](mlir::BlockArgument arg) {
    auto name = func.getArgAttrOfType<mlir::StringAttr>(arg.getArgNumber(),
                                                        "cuvil.name");
    return name ? name.str() : std::string();
  };
  network.inputName = nameOf(data[0]);
  network.outputName = nameOf(data[1]);
  std::optional<int64_t> inputSize = sampleSize(data[0]);
  std::optional<int64_t> outputSize = sampleSize(data[1]);
  if (!inputSize || !outputSize)
    return absl::InvalidArgumentError(
        "the FPGA target builds designs that take one sample per call: the "
        "input and output need static shapes with a batch of 1 (drop "
        "--max-batch; a dynamic batch is not a hardware interface)");
  if (!llvm::cast<mlir::MemRefType>(data[0].getType()).getElementType().isF32())
    return absl::InvalidArgumentError(
        "the FPGA target takes a float32 model input; the design's input "
        "type is its --precision");
  network.inputSize = *inputSize;
  network.outputSize = *outputSize;
  if (auto input = func.getArgAttrOfType<l1::FixedAttr>(data[0].getArgNumber(),
                                                        kFixedAttr))
    network.input = FixedType::fromAttr(input);

  // Follow the chain: each call reads the buffer the previous one wrote.
  mlir::Value current = data[0];
  Aliases aliases;
  int64_t size = *inputSize;
  for (mlir::Operation &op : func.getBody().front()) {
    // Buffers, planned into the arena or not yet (ranges for auto
    // precision are observed on the lowering alone), become arrays.
    if (llvm::isa<mlir::memref::GetGlobalOp, mlir::memref::AllocOp,
                  mlir::memref::DeallocOp, l2::ViewOp, mlir::func::ReturnOp>(
            op))
      continue;
    auto call = llvm::dyn_cast<l2::UKernelCallOp>(op);
    if (!call)
      return unsupported(&op, absl::StrCat("the FPGA target cannot build '",
                                           op.getName().getStringRef().str(),
                                           "'"));
    llvm::StringRef kernel = call.getKernel();
    mlir::OperandRange inputs = call.getKernelInputs();
    bool view = kernel == "flatten" || kernel == "reshape" ||
                kernel == "squeeze" || kernel == "unsqueeze";
    if (view && inputs.size() == 1 && inputs[0] != current &&
        call.getOutputs().size() == 1) {
      // A reshaped constant (a weight), not a step of the chain.
      aliases[call.getOutputs()[0]] = inputs[0];
      continue;
    }
    if (inputs.empty() || inputs[0] != current || call.getOutputs().size() != 1)
      return unsupported(call, absl::StrCat(
          "the FPGA target builds a chain of layers, each reading the one "
          "before; '", kernel.str(), "' does not"));
    mlir::Value output = call.getOutputs()[0];
    std::optional<int64_t> outSize = sampleSize(output);
    if (!outSize)
      return unsupported(call, "the FPGA target needs static shapes with a "
                               "batch of 1");
    if (view) {
      // The same values in the same order: a wire, not a layer.
    } else if (kernel == "gemm" || kernel == "matmul") {
      ASSIGN_OR_RETURN(Layer layer, denseLayer(call, size, aliases));
      network.layers.push_back(std::move(layer));
    } else if (kernel == "conv2d") {
      ASSIGN_OR_RETURN(Layer layer, convLayer(call, aliases));
      network.layers.push_back(std::move(layer));
    } else if (kernel == "max_pool2d") {
      Layer layer = namedLayer(call, LayerKind::MaxPool2d);
      ASSIGN_OR_RETURN(layer.window, windowOf(call, inputs[0], output, false));
      layer.nIn = size;
      layer.nOut = *outSize;
      network.layers.push_back(std::move(layer));
    } else if (kernel == "relu" || kernel == "softmax") {
      if (kernel == "softmax") {
        auto type = llvm::cast<mlir::MemRefType>(output.getType());
        int64_t axis = call.getIntParam("axis", -1);
        if (axis != -1 && axis != type.getRank() - 1)
          return unsupported(call, "the FPGA target builds a softmax over "
                                   "the last axis only");
        if (type.getNumElements() != type.getDimSize(type.getRank() - 1))
          return unsupported(call, "the FPGA target builds a softmax over "
                                   "one vector per sample");
      }
      Layer layer = namedLayer(
          call, kernel == "relu" ? LayerKind::Relu : LayerKind::Softmax);
      layer.nIn = layer.nOut = size;
      network.layers.push_back(std::move(layer));
    } else {
      return unsupported(call, absl::StrCat(
          "the FPGA target cannot build '", kernel.str(),
          "' yet; it builds dense layers (Gemm, MatMul), Conv (1-D, 2-D), "
          "MaxPool, ReLU, Softmax and Flatten / Reshape"));
    }
    current = output;
    size = *outSize;
  }
  if (current != data[1])
    return absl::InvalidArgumentError(
        "the FPGA target builds a chain of layers ending in the model's "
        "output; this model's output is not written by its last layer");
  if (network.layers.empty())
    return absl::InvalidArgumentError(
        "the model has no layer the FPGA target builds");
  return network;
}

} // namespace cuvil::fpga
