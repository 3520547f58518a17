#include "cuvil/passes/LinearLayers.h"

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Quantization.h"
#include "cuvil/passes/ConstantUtil.h"

#include "mlir/IR/Builders.h"

#include <cassert>

using namespace mlir;
namespace l1 = cuvil::l1;

namespace cuvil {

namespace {

/// The largest K whose int8 sums are exact in int32 (qgemm's bound).
constexpr int64_t kMaxK = 65536;

bool isStaticF32Matrix(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getElementType().isF32() && type.hasStaticShape() &&
         type.getRank() == 2;
}

std::optional<std::string> checkActivation(Value activation) {
  auto type = cast<RankedTensorType>(activation.getType());
  if (!type.getElementType().isF32())
    return std::string("its activation is not float32");
  if (type.getRank() < 2)
    return std::string("its activation is a vector ([..., M, K] is needed)");
  return std::nullopt;
}

/// The ONNX operator a level1 op imports from, for matching op kinds.
StringRef onnxKind(Operation *op) {
  if (isa<l1::MatmulOp>(op))
    return "MatMul";
  if (isa<l1::GemmOp>(op))
    return "Gemm";
  if (isa<l1::Conv2dOp>(op))
    return "Conv";
  return "";
}

bool matchesEntry(Operation *op, StringRef node, StringRef entry) {
  if (entry.empty())
    return false;
  if (node == entry)
    return true;
  std::string path = ("/" + entry.trim('/') + "/").str();
  if (("/" + node.str()).find(path) != std::string::npos)
    return true;
  StringRef kind = op->getName().stripDialect();
  return entry.equals_insensitive(kind) ||
         entry.equals_insensitive(onnxKind(op));
}

std::optional<std::string> checkWeights(Value weights) {
  if (!weights.getDefiningOp<l1::ConstantOp>())
    return std::string("its weights are computed at run time");
  if (!isStaticF32Matrix(weights))
    return std::string("its weights are not a float32 matrix");
  return std::nullopt;
}

} // namespace

bool isQuantizableKind(Operation *op) {
  return isa<l1::MatmulOp, l1::GemmOp, l1::Conv2dOp>(op);
}

std::optional<std::string> keptInFp32(Operation *op, StringRef node,
                                      ArrayRef<std::string> keepFp32) {
  for (const std::string &entry : keepFp32)
    if (matchesEntry(op, node, entry))
      return entry;
  return std::nullopt;
}

std::optional<std::string> whyNotConstantLinear(Operation *op) {
  if (auto matmul = dyn_cast<l1::MatmulOp>(op)) {
    if (std::optional<std::string> why = checkWeights(matmul.getRhs()))
      return why;
    return checkActivation(matmul.getLhs());
  }
  if (auto gemm = dyn_cast<l1::GemmOp>(op)) {
    if (gemm.getTransA())
      return std::string("its activation is transposed (trans_a)");
    if (std::optional<std::string> why = checkWeights(gemm.getB()))
      return why;
    if (gemm.getC() && gemm.getBeta().convertToDouble() != 1.0 &&
        failed(getF32Constant(gemm.getC())))
      return std::string("it scales a run-time bias (beta != 1)");
    return checkActivation(gemm.getA());
  }
  return std::string("it is not a matrix product");
}

std::optional<std::string> whyNotIntegerLinear(Operation *op) {
  if (isa<l1::MatmulOp, l1::GemmOp>(op)) {
    if (std::optional<std::string> why = whyNotConstantLinear(op))
      return why;
    int64_t k = getLinearLayerK(op);
    if (k > kMaxK)
      return "K is " + std::to_string(k) + " (int8 sums are exact up to 65536)";
    return std::nullopt;
  }
  if (auto conv = dyn_cast<l1::Conv2dOp>(op)) {
    auto weights = dyn_cast<RankedTensorType>(conv.getWeight().getType());
    auto input = dyn_cast<RankedTensorType>(conv.getInput().getType());
    auto groups = static_cast<int64_t>(conv.getGroups());
    if (weights && input && l1::isDepthwise(input, weights, groups) &&
        weights.getDimSize(2) * weights.getDimSize(3) > l1::kMaxDepthwiseTaps)
      return "its depthwise window has more than " +
             std::to_string(l1::kMaxDepthwiseTaps) + " taps";
    if (!conv.getWeight().getDefiningOp<l1::ConstantOp>())
      return std::string("its weights are computed at run time");
    if (!weights || !weights.getElementType().isF32() ||
        !weights.hasStaticShape())
      return std::string("its weights are not a static float32 tensor");
    if (!cast<RankedTensorType>(conv.getInput().getType()).getElementType().isF32())
      return std::string("its input is not float32");
    int64_t k = weights.getDimSize(1) * weights.getDimSize(2) *
                weights.getDimSize(3);
    if (k > kMaxK)
      return "C/G * KH * KW is " + std::to_string(k) +
             " (int8 sums are exact up to 65536)";
    return std::nullopt;
  }
  return std::string("it is not a matrix product or a convolution");
}

int64_t getLinearLayerK(Operation *op) {
  if (auto matmul = dyn_cast<l1::MatmulOp>(op))
    return cast<RankedTensorType>(matmul.getRhs().getType()).getDimSize(0);
  auto gemm = cast<l1::GemmOp>(op);
  auto b = cast<RankedTensorType>(gemm.getB().getType());
  return b.getDimSize(gemm.getTransB() ? 1 : 0);
}

LinearLayer getLinearLayer(Operation *op) {
  assert(!isa<l1::Conv2dOp>(op) && "convolutions are not linear layers here");
  LinearLayer layer;
  Value weights;
  bool transposed = false;
  double alpha = 1.0;
  if (auto matmul = dyn_cast<l1::MatmulOp>(op)) {
    layer.activation = matmul.getLhs();
    weights = matmul.getRhs();
  } else {
    auto gemm = cast<l1::GemmOp>(op);
    layer.activation = gemm.getA();
    weights = gemm.getB();
    transposed = gemm.getTransB();
    alpha = gemm.getAlpha().convertToDouble();
    layer.bias = gemm.getC();
    double beta = gemm.getBeta().convertToDouble();
    if (layer.bias && beta != 1.0) {
      std::vector<float> bias = *getF32Constant(layer.bias);
      for (float &b : bias)
        b = static_cast<float>(b * beta);
      OpBuilder builder(op);
      layer.bias = createResourceConstant(
          builder, op->getLoc(), cast<RankedTensorType>(layer.bias.getType()),
          "gemm_bias_scaled", toBytes(bias));
    }
  }
  auto type = cast<RankedTensorType>(weights.getType());
  std::vector<float> values = *getF32Constant(weights);
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  layer.k = transposed ? cols : rows;
  layer.n = transposed ? rows : cols;
  layer.weights.resize(values.size());
  for (int64_t i = 0; i < layer.k; ++i)
    for (int64_t j = 0; j < layer.n; ++j)
      layer.weights[i * layer.n + j] = static_cast<float>(
          alpha * values[transposed ? j * cols + i : i * cols + j]);
  return layer;
}

} // namespace cuvil
