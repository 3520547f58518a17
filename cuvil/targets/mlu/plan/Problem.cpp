//===- Problem.cpp - level2 calls read as the device library's problems ---===//
//
// Each supported micro-kernel call becomes one function of
// bang/cuvil_mlu_kernels.h with its shape: products (gemm, matmul), sliding
// windows (conv2d, max/avg pooling), rows over the last axis (softmax,
// layer_norm, global average pooling), elementwise binaries, and gathers
// (reshape, transpose, slice). What the target cannot compute is an error
// at the call's location, naming the op and what to change.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/mlu/plan/KernelPlan.h"

#include "cuvil/ir/CuvilAttrs.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace cuvil::mlu {
namespace {

using mlir::failure;
using mlir::FailureOr;

int64_t product(llvm::ArrayRef<int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

llvm::ArrayRef<int64_t> shapeOf(mlir::Value value) {
  return llvm::cast<mlir::MemRefType>(value.getType()).getShape();
}

/// Reads the epilogue: its activation, and which extra inputs hold a
/// per-column bias and a residual (-1: none). Products and convolutions
/// (`products`) also apply sigmoid, SiLU, hard sigmoid and hard swish
/// (cuvil_epilogue_activate); other kernels relu and clip only.
bool readEpilogue(l2::UKernelCallOp call, Problem &problem, int &colBias,
                  int &residual, bool products = false) {
  colBias = residual = -1;
  l2::EpilogueAttr epilogue = call.getEpilogueAttr();
  if (!epilogue)
    return true;
  int next = static_cast<int>(call.getKernelInputs().size());
  for (l2::EpilogueStep step : epilogue.getSteps()) {
    switch (step) {
    case l2::EpilogueStep::col_bias:
      colBias = next++;
      break;
    case l2::EpilogueStep::add:
      residual = next++;
      break;
    case l2::EpilogueStep::relu:
      problem.act = Activation::Relu;
      break;
    case l2::EpilogueStep::clip: // a missing bound does not clip
      problem.act = Activation::Clip;
      problem.clipMin = epilogue.getClipMin()
                            ? epilogue.getClipMin().getValueAsDouble()
                            : -std::numeric_limits<double>::infinity();
      problem.clipMax = epilogue.getClipMax()
                            ? epilogue.getClipMax().getValueAsDouble()
                            : std::numeric_limits<double>::infinity();
      break;
    case l2::EpilogueStep::quantize:
      break; // refused with the element types
    case l2::EpilogueStep::sigmoid:
      problem.act = Activation::Sigmoid;
      break;
    case l2::EpilogueStep::silu:
      problem.act = Activation::Silu;
      break;
    case l2::EpilogueStep::hardsigmoid: // clip(alpha x + beta, 0, 1)
    case l2::EpilogueStep::hardswish:   // x hardsigmoid(x), 1/6 and 1/2
      problem.act = step == l2::EpilogueStep::hardswish
                        ? Activation::HardSwish
                        : Activation::HardSigmoid;
      problem.clipMin =
          epilogue.getAlpha() && step != l2::EpilogueStep::hardswish
              ? epilogue.getAlpha().getValueAsDouble()
              : 1.0 / 6.0;
      problem.clipMax =
          epilogue.getBeta() && step != l2::EpilogueStep::hardswish
              ? epilogue.getBeta().getValueAsDouble()
              : 0.5;
      break;
    }
    if (!products && problem.act > Activation::Clip)
      return false;
  }
  return true;
}

class Reader {
public:
  explicit Reader(l2::UKernelCallOp call) : call(call) {}

  FailureOr<Problem> read();

private:
  mlir::InFlightDiagnostic refuse(const llvm::Twine &why) {
    return call.emitOpError() << "'" << call.getKernel()
                              << "' cannot run on the MLU target: " << why;
  }
  mlir::LogicalResult checkTypes();
  FailureOr<Problem> readProduct();
  FailureOr<Problem> readWindow();
  FailureOr<Problem> readRows();
  FailureOr<Problem> readBinary();
  FailureOr<Problem> readUnary();
  FailureOr<Problem> readParts();
  FailureOr<Problem> readPad();
  FailureOr<Problem> readGather();

  l2::UKernelCallOp call;
};

mlir::LogicalResult Reader::checkTypes() {
  bool fixed = call.getKernel().starts_with("fixed_");
  if (call.getKernel() == "quantize" || call.getKernel() == "dequantize" ||
      call.getKernel() == "requantize" ||
      call.getKernel().starts_with("quantized_"))
    return refuse("the MLU target runs int8 as its fixed-point products "
                  "(--precision=int8), which quantize their float32 inputs "
                  "on chip; this model's 8-bit tensors outside them (an "
                  "imported QDQ model's) are not supported");
  for (mlir::Value value : llvm::concat<mlir::Value>(call.getInputs(),
                                                     call.getOutputs())) {
    auto type = llvm::dyn_cast<mlir::MemRefType>(value.getType());
    if (!type)
      return refuse("an operand is not a buffer");
    // The fixed-point products' packed weights (cuvil-mlu-lower-fixed-point).
    bool weights = fixed && value == call.getInputs()[1];
    if (weights && !type.getElementType().isInteger(8))
      return refuse("its fixed-point weights are not packed int8");
    if (!weights && !type.getElementType().isF32())
      return refuse("it computes on ")
             << type.getElementType()
             << "; this target compiles float32 models (--precision=fp16 "
                "runs them in float16; integer and int8 tensors are not "
                "supported yet)";
    if (!type.hasStaticShape())
      return refuse("a dimension is dynamic; compile with a fixed batch "
                    "(--max-batch does not apply to the MLU target)");
    if (!type.getLayout().isIdentity())
      return refuse("a buffer has a non-identity layout");
  }
  return mlir::success();
}

FailureOr<Problem> Reader::read() {
  if (mlir::failed(checkTypes()))
    return failure();
  llvm::StringRef kernel = call.getKernel();
  if (kernel == "gemm" || kernel == "matmul" || kernel == "fixed_matmul")
    return readProduct();
  if (kernel == "conv2d" || kernel == "fixed_conv2d" ||
      kernel == "max_pool2d" || kernel == "avg_pool2d")
    return readWindow();
  if (kernel == "softmax" || kernel == "log_softmax" ||
      kernel == "layer_norm" || kernel == "global_avg_pool" ||
      kernel == "global_max_pool" || kernel == "reduce_sum" ||
      kernel == "reduce_mean" || kernel == "reduce_max" ||
      kernel == "batch_norm")
    return readRows();
  if (kernel == "concat" || kernel == "split")
    return readParts();
  if (llvm::is_contained({"add", "sub", "mul", "div", "max", "min"}, kernel))
    return readBinary();
  if (llvm::is_contained({"relu", "clip", "sigmoid", "tanh", "exp", "neg",
                          "abs", "erf", "silu", "hardsigmoid", "hardswish"},
                         kernel))
    return readUnary();
  if (kernel == "pad")
    return readPad();
  if (llvm::is_contained({"reshape", "flatten", "squeeze", "unsqueeze",
                          "identity", "transpose", "slice", "expand"},
                         kernel))
    return readGather();
  refuse("the target has no kernel for it yet (it runs matrix products, "
         "convolutions, max and average pooling, global pooling, "
         "reduce_sum/mean/max over trailing axes, softmax, layer_norm, "
         "batch_norm, add/sub/mul/div/max/min, relu, clip, sigmoid, tanh, "
         "exp, neg, abs, erf, silu, hardsigmoid, hardswish, concat, split, "
         "constant pad, reshape, expand, transpose and slice)");
  return failure();
}

FailureOr<Problem> Reader::readProduct() {
  Problem p;
  p.kind = "gemm";
  int colBias, residual;
  readEpilogue(call, p, colBias, residual, /*products=*/true); // takes all
  auto kernelInputs = call.getKernelInputs();
  llvm::ArrayRef<int64_t> a = shapeOf(kernelInputs[0]),
                          b = shapeOf(kernelInputs[1]),
                          c = shapeOf(call.getOutputs()[0]);
  if (call.getParam("acc_type"))
    return refuse("bfloat16 products are not built for this target");
  if (call.getKernel() == "gemm") {
    if (call.getParam("trans_a") || call.getParam("trans_b"))
      return refuse("a transposed gemm operand is not supported yet");
    if (call.getFloatParam("alpha", 1.0) != 1.0 ||
        call.getFloatParam("beta", 1.0) != 1.0)
      return refuse("gemm's alpha and beta must be 1");
    if (kernelInputs.size() == 3) {
      llvm::ArrayRef<int64_t> bias = shapeOf(kernelInputs[2]);
      bool column = product(bias) == c.back() &&
                    (bias.size() == 1 || (bias.size() == 2 && bias[0] == 1));
      if (column && colBias < 0)
        colBias = 2;
      else if (bias == c && residual < 0)
        residual = 2;
      else
        return refuse("gemm's C must be one value per column or of the "
                      "output's shape");
    }
  }
  if (a.size() < 2 || b.size() < 2)
    return refuse("matrix products of vectors are not supported yet");
  bool fixed = call.getKernel() == "fixed_matmul";
  int64_t M = a[a.size() - 2], K = a.back(), N = fixed ? c.back() : b.back();
  if (fixed) { // B is [Np][Kp], shared by every row
    p.kind = "gemm_int8";
    p.operands = {static_cast<int>(call.getInputs().size()), 0, 1, colBias,
                  residual};
    p.byteOperands = {2};
    p.dims = {{"M", product(a.drop_back())},
              {"N", N},
              {"K", K},
              {"Np", b[0]},
              {"Kp", b[1]},
              {"pos_a", call.getIntParam("input_position", 0)},
              {"pos_w", call.getIntParam("weight_position", 0)}};
    p.ops = 2.0 * product(a.drop_back()) * N * K;
    return p;
  }
  int64_t batchA = product(a.drop_back(2)), batchB = product(b.drop_back(2));
  int64_t batch = product(c.drop_back(2));
  int64_t aBatch = M * K, bBatch = K * N;
  if (batchB == 1) { // shared weights: the batch is more rows
    M *= batchA;
    batch = 1;
    bBatch = 0;
  } else if (batchA == 1 && batchB == batch) {
    aBatch = 0;
  } else if (batchA != batch || batchB != batch) {
    return refuse("a product whose batch dimensions broadcast both ways is "
                  "not supported yet");
  }
  // c, a, b, bias, residual (the output is operand inputs.size()).
  int out = static_cast<int>(call.getInputs().size());
  p.operands = {out, 0, 1, colBias, residual};
  p.dims = {{"batch", batch},  {"M", M},          {"N", N},
            {"K", K},          {"a_batch", aBatch}, {"b_batch", bBatch},
            {"c_batch", M * N}};
  p.ops = 2.0 * batch * M * N * K;
  return p;
}

FailureOr<Problem> Reader::readWindow() {
  Problem p;
  llvm::StringRef kernel = call.getKernel();
  bool fixed = kernel == "fixed_conv2d";
  bool conv = kernel == "conv2d" || fixed;
  p.kind = fixed ? "conv2d_int8" : conv ? "conv2d" : "pool2d";
  int colBias, residual;
  if (!readEpilogue(call, p, colBias, residual, /*products=*/conv))
    return refuse("a fused activation other than relu or clip");
  if (colBias >= 0)
    return refuse("a per-column bias on a window is not supported");
  auto kernelInputs = call.getKernelInputs();
  llvm::ArrayRef<int64_t> x = shapeOf(kernelInputs[0]),
                          y = shapeOf(call.getOutputs()[0]);
  if (x.size() != 4)
    return refuse("only 2-D windows on NCHW are supported");
  llvm::SmallVector<int64_t> kernelShape, strides, padding, dilations;
  int64_t groups = 1;
  if (conv) {
    if (call.getParam("acc_type"))
      return refuse("bfloat16 convolutions are not built for this target");
    llvm::ArrayRef<int64_t> w = shapeOf(kernelInputs[1]);
    // Packed for the tensor unit: [OCp][KH][KW][Cp].
    kernelShape = fixed ? llvm::SmallVector<int64_t>{w[1], w[2]}
                        : llvm::SmallVector<int64_t>{w[2], w[3]};
    if (fixed)
      llvm::append_range(
          p.dims, llvm::ArrayRef<std::pair<std::string, int64_t>>{
                      {"OCp", w[0]},
                      {"Cp", w[3]},
                      {"pos_x", call.getIntParam("input_position", 0)},
                      {"pos_w", call.getIntParam("weight_position", 0)}});
    groups = call.getIntParam("groups", 1);
  } else {
    kernelShape = call.getIntsParam("kernel_shape");
    groups = x[1];
  }
  strides = call.getIntsParam("strides", {1, 1});
  padding = call.getIntsParam("padding", {0, 0, 0, 0});
  dilations = call.getIntsParam("dilations", {1, 1});
  int64_t OH = y[2], OW = y[3];
  p.dims.insert(p.dims.begin(), {{"N", x[0]},
                                 {"C", x[1]},
                                 {"H", x[2]},
                                 {"W", x[3]},
                                 {"OC", y[1]},
                                 {"OH", OH},
                                 {"OW", OW},
                                 {"KH", kernelShape[0]},
                                 {"KW", kernelShape[1]},
                                 {"SH", strides[0]},
                                 {"SW", strides[1]},
                                 {"PT", padding[0]},
                                 {"PL", padding[1]},
                                 {"DH", dilations[0]},
                                 {"DW", dilations[1]},
                                 {"G", groups}});
  int out = static_cast<int>(call.getInputs().size());
  double taps = kernelShape[0] * kernelShape[1];
  if (conv) {
    int bias = kernelInputs.size() == 3 ? 2 : -1;
    p.operands = {out, 0, 1, bias, residual};
    if (fixed)
      p.byteOperands = {2};
    p.ops = 2.0 * product(y) * taps * (x[1] / groups);
    return p;
  }
  if (residual >= 0 || p.act != Activation::None)
    return refuse("pooling with a fused epilogue is not supported");
  p.isMax = kernel == "max_pool2d";
  p.operands = {out, 0};
  p.ops = product(y) * taps;
  if (p.isMax)
    return p;
  if (dilations[0] != 1 || dilations[1] != 1)
    return refuse("dilated average pooling is not supported");
  // PyTorch's divisors: the window clipped to the padded image, or to the
  // image itself without count_include_pad.
  bool includePad = static_cast<bool>(call.getParam("count_include_pad"));
  for (int64_t oh = 0; oh < OH; ++oh)
    for (int64_t ow = 0; ow < OW; ++ow) {
      int64_t h0 = oh * strides[0] - padding[0], w0 = ow * strides[1] - padding[1];
      int64_t h1 = std::min(h0 + kernelShape[0], x[2] + padding[2]);
      int64_t w1 = std::min(w0 + kernelShape[1], x[3] + padding[3]);
      if (!includePad) {
        h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, x[2]), w1 = std::min(w1, x[3]);
      }
      int64_t count = std::max<int64_t>((h1 - h0) * (w1 - w0), 1);
      p.reciprocals.push_back(1.0f / static_cast<float>(count));
    }
  return p;
}

FailureOr<Problem> Reader::readRows() {
  Problem p;
  llvm::StringRef kernel = call.getKernel();
  int colBias, residual;
  if (!readEpilogue(call, p, colBias, residual))
    return refuse("a fused activation other than relu or clip");
  if (colBias >= 0 || residual >= 0 || p.act != Activation::None)
    return refuse("a fused epilogue is not supported on it");
  auto inputs = call.getKernelInputs();
  llvm::ArrayRef<int64_t> x = shapeOf(inputs[0]);
  int out = static_cast<int>(call.getInputs().size());
  int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = rank - 1;
  if (kernel == "global_avg_pool" || kernel == "global_max_pool") {
    if (rank < 3)
      return refuse("global pooling needs NC and spatial dimensions");
    axis = 2;
    p.kind = "rows_reduce";
    p.op = kernel == "global_avg_pool" ? "mean" : "max";
    p.operands = {out, 0};
  } else if (kernel.starts_with("reduce_")) {
    llvm::SmallVector<int64_t> axes = call.getIntsParam("axes");
    for (int64_t &a : axes)
      a = a < 0 ? a + rank : a;
    llvm::sort(axes);
    axis = axes.empty() ? 0 : axes.front();
    for (size_t i = 0; i < axes.size(); ++i)
      if (axes[i] != axis + static_cast<int64_t>(i) || axes.back() != rank - 1)
        return refuse("it reduces axes other than the trailing ones; only "
                      "reductions over the last axes are supported yet");
    p.kind = "rows_reduce";
    p.op = kernel.drop_front(7).str();
    p.operands = {out, 0};
  } else if (kernel == "batch_norm") {
    if (rank < 2)
      return refuse("batch_norm needs a channel dimension");
    axis = 2;
    p.kind = "batch_norm";
    p.epsilon = call.getFloatParam("epsilon", 1e-5);
    p.operands = {out, 0, 1, 2, 3, 4};
    p.dims.push_back({"M", x[1]});
  } else {
    axis = call.getIntParam("axis", -1);
    if (axis < 0)
      axis += rank;
    if (kernel == "layer_norm") {
      p.kind = "layer_norm";
      p.epsilon = call.getFloatParam("epsilon", 1e-5);
      auto segments = llvm::dyn_cast_or_null<mlir::DenseI32ArrayAttr>(
          call.getParam("operandSegmentSizes"));
      if (!segments || segments.size() != 3)
        return refuse("its operandSegmentSizes do not say which of scale "
                      "and bias it has");
      int scale = -1, bias = -1, next = 1;
      scale = segments[1] ? next++ : -1;
      bias = segments[2] ? next++ : -1;
      for (int operand : {scale, bias})
        if (operand >= 0 &&
            product(shapeOf(inputs[operand])) != product(x.drop_front(axis)))
          return refuse("its scale and bias must have the normalized size");
      p.operands = {out, 0, scale, bias};
    } else {
      if (axis != rank - 1)
        return refuse("softmax over an axis other than the last is not "
                      "supported yet");
      p.kind = "softmax";
      p.log = kernel == "log_softmax";
      p.operands = {out, 0};
    }
  }
  int64_t L = product(x.drop_front(axis));
  p.dims.push_back({"rows", product(x.take_front(axis))});
  p.dims.push_back({"L", L});
  p.ops = 5.0 * product(x);
  return p;
}

FailureOr<Problem> Reader::readBinary() {
  Problem p;
  p.kind = "binary";
  p.op = call.getKernel().str();
  int colBias, residual;
  if (!readEpilogue(call, p, colBias, residual))
    return refuse("a fused activation other than relu or clip");
  if (colBias >= 0 || residual >= 0)
    return refuse("a fused bias or residual on an elementwise op");
  auto inputs = call.getKernelInputs();
  llvm::ArrayRef<int64_t> y = shapeOf(call.getOutputs()[0]);
  int64_t n = product(y);
  int full = 0, small = 1;
  if (product(shapeOf(inputs[0])) != n) {
    if (product(shapeOf(inputs[1])) != n)
      return refuse("both operands broadcast; one must have the result's "
                    "shape");
    std::swap(full, small);
    // b op a: only subtraction and division are not commutative.
    p.reversed = p.op == "sub" || p.op == "div";
  }
  p.operands = {static_cast<int>(call.getInputs().size()), full, small};
  p.dims = {{"n", n}};
  p.ops = static_cast<double>(n);
  // The small operand's dimensions, right-aligned, as runs of broadcast
  // ('b') and matching ('m') dimensions of the result (size-1 ones skipped).
  llvm::ArrayRef<int64_t> s = shapeOf(inputs[small]);
  size_t shift = y.size() - s.size();
  llvm::SmallVector<std::pair<char, int64_t>> runs;
  for (size_t d = 0; d < y.size(); ++d) {
    if (y[d] == 1)
      continue;
    char kind = d >= shift && s[d - shift] == y[d] ? 'm' : 'b';
    if (!runs.empty() && runs.back().first == kind)
      runs.back().second *= y[d];
    else
      runs.push_back({kind, y[d]});
  }
  auto rowsMode = [&](const char *mode, int64_t R, int64_t L, int64_t M) {
    p.mode = mode;
    p.dims = {{"n", n}, {"rows", R}, {"L", L}, {"M", M}};
  };
  if (llvm::all_of(runs, [](auto r) { return r.first == 'm'; })) {
    p.mode = "same";
  } else if (llvm::all_of(runs, [](auto r) { return r.first == 'b'; })) {
    if (p.reversed || p.op == "max" || p.op == "min")
      rowsMode("rows", n / y.back(), y.back(), 1);
    else
      p.mode = "scalar";
  } else if (runs.back().first == 'b' &&
             (runs.size() == 2 || (runs.size() == 3 && runs[0].first == 'b'))) {
    int64_t outer = runs.size() == 3 ? runs[0].second : 1;
    int64_t middle = runs[runs.size() - 2].second;
    rowsMode("rows", outer * middle, runs.back().second, middle);
  } else if (runs.size() == 2 && runs[0].first == 'b') {
    rowsMode("columns", runs[0].second, runs[1].second, runs[1].second);
  } else {
    return refuse("its operand broadcasts along interleaved dimensions; "
                  "supported: one value, one per row of trailing "
                  "dimensions, or one per trailing position");
  }
  if (p.act != Activation::None && p.mode != "same" && p.mode != "scalar")
    return refuse("a fused activation on a broadcasting elementwise op");
  return p;
}

FailureOr<Problem> Reader::readParts() {
  Problem p;
  p.kind = call.getKernel().str();
  bool concat = p.kind == "concat";
  mlir::Value whole = concat ? call.getOutputs()[0] : call.getKernelInputs()[0];
  llvm::ArrayRef<int64_t> shape = shapeOf(whole);
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = call.getIntParam("axis", 0);
  axis = axis < 0 ? axis + rank : axis;
  int64_t inner = product(shape.drop_front(axis + 1));
  p.dims = {{"outer", product(shape.take_front(axis))},
            {"total", shape[axis] * inner}};
  int wholeIndex = concat ? static_cast<int>(call.getInputs().size()) : 0;
  p.operands = {wholeIndex};
  auto parts = concat ? llvm::SmallVector<mlir::Value>(call.getKernelInputs())
                      : llvm::SmallVector<mlir::Value>(call.getOutputs());
  for (size_t i = 0; i < parts.size(); ++i) {
    p.operands.push_back(concat ? static_cast<int>(i)
                                : static_cast<int>(call.getInputs().size() + i));
    p.parts.push_back(shapeOf(parts[i])[axis] * inner);
  }
  return p;
}

FailureOr<Problem> Reader::readUnary() {
  Problem p;
  p.kind = "unary";
  p.op = call.getKernel().str();
  if (call.getEpilogueAttr())
    return refuse("a fused epilogue on an elementwise op");
  int64_t n = product(shapeOf(call.getOutputs()[0]));
  p.operands = {static_cast<int>(call.getInputs().size()), 0};
  p.dims = {{"n", n}};
  if (p.op == "clip") {
    p.clipMin = call.getFloatParam("min", -3.4028234663852886e38);
    p.clipMax = call.getFloatParam("max", 3.4028234663852886e38);
  } else if (p.op == "hardsigmoid") {
    p.clipMin = call.getFloatParam("alpha", 1.0 / 6.0);
    p.clipMax = call.getFloatParam("beta", 0.5);
  } else if (p.op == "hardswish") {
    p.clipMin = 1.0 / 6.0, p.clipMax = 0.5;
  }
  p.ops = 4.0 * n;
  return p;
}

FailureOr<Problem> Reader::readPad() {
  Problem p;
  p.kind = "pad";
  llvm::ArrayRef<int64_t> x = shapeOf(call.getKernelInputs()[0]);
  llvm::ArrayRef<int64_t> y = shapeOf(call.getOutputs()[0]);
  auto mode = llvm::dyn_cast_or_null<mlir::StringAttr>(call.getParam("mode"));
  if (mode && mode.getValue() != "constant")
    return refuse("only constant padding is supported yet");
  llvm::SmallVector<int64_t> pads = call.getIntsParam("pads");
  if (x.size() > 6 || x.empty())
    return refuse("padding of more than six dimensions");
  for (int64_t pad : pads)
    if (pad < 0)
      return refuse("negative padding (cropping) is not supported yet");
  p.gatherDims.assign(y.begin(), y.end());          // output dimensions
  p.gatherStrides.assign(x.begin(), x.end());       // input dimensions
  p.parts.assign(pads.begin(), pads.begin() + x.size()); // before, per dim
  p.epsilon = call.getFloatParam("value", 0.0);
  p.operands = {static_cast<int>(call.getInputs().size()), 0};
  p.dims = {{"rows", product(y.drop_back())}, {"L", y.back()}};
  return p;
}

FailureOr<Problem> Reader::readGather() {
  Problem p;
  p.kind = "gather";
  llvm::StringRef kernel = call.getKernel();
  llvm::ArrayRef<int64_t> x = shapeOf(call.getKernelInputs()[0]);
  llvm::ArrayRef<int64_t> y = shapeOf(call.getOutputs()[0]);
  p.operands = {static_cast<int>(call.getInputs().size()), 0};
  llvm::SmallVector<int64_t> inStrides(x.size(), 1);
  for (int64_t d = static_cast<int64_t>(x.size()) - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * x[d + 1];
  if (kernel == "transpose") {
    llvm::SmallVector<int64_t> perm = call.getIntsParam("perm");
    for (int64_t d : perm) {
      p.gatherDims.push_back(x[d]);
      p.gatherStrides.push_back(inStrides[d]);
    }
  } else if (kernel == "slice") {
    llvm::SmallVector<int64_t> starts = call.getIntsParam("starts"),
                               axes = call.getIntsParam("axes"),
                               steps = call.getIntsParam("steps");
    p.gatherDims.assign(y.begin(), y.end());
    p.gatherStrides.assign(inStrides.begin(), inStrides.end());
    int64_t rank = static_cast<int64_t>(x.size());
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
      int64_t step = i < steps.size() ? steps[i] : 1;
      if (step < 1)
        return refuse("a slice with a negative step is not supported yet");
      int64_t start = starts[i] < 0 ? starts[i] + x[axis] : starts[i];
      start = step > 0 ? std::clamp<int64_t>(start, 0, x[axis])
                       : std::clamp<int64_t>(start, 0, x[axis] - 1);
      p.gatherOffset += start * inStrides[axis];
      p.gatherStrides[axis] *= step;
    }
  } else if (kernel == "expand") { // broadcast dimensions read stride 0
    size_t shift = y.size() - x.size();
    p.gatherDims.assign(y.begin(), y.end());
    for (size_t d = 0; d < y.size(); ++d)
      p.gatherStrides.push_back(
          d < shift || x[d - shift] != y[d] ? 0 : inStrides[d - shift]);
  } else { // a copy: the same elements in the same order
    p.gatherDims = {product(y)};
    p.gatherStrides = {1};
  }
  if (p.gatherDims.size() > 6)
    return refuse("more than six dimensions");
  // Merge dimensions that are contiguous in the source too.
  llvm::SmallVector<int64_t> dims, strides;
  for (size_t d = 0; d < p.gatherDims.size(); ++d) {
    if (p.gatherDims[d] == 1)
      continue;
    if (!dims.empty() && strides.back() == p.gatherStrides[d] * p.gatherDims[d]) {
      dims.back() *= p.gatherDims[d];
      strides.back() = p.gatherStrides[d];
      continue;
    }
    dims.push_back(p.gatherDims[d]);
    strides.push_back(p.gatherStrides[d]);
  }
  if (dims.empty())
    dims = {1}, strides = {1};
  p.gatherDims.assign(dims.begin(), dims.end());
  p.gatherStrides.assign(strides.begin(), strides.end());
  return p;
}

} // namespace

int64_t Problem::dim(llvm::StringRef name) const {
  for (const auto &[key, value] : dims)
    if (key == name)
      return value;
  return 0;
}

FailureOr<Problem> describeCall(l2::UKernelCallOp call,
                                int64_t elementBytes) {
  FailureOr<Problem> problem = Reader(call).read();
  if (succeeded(problem))
    problem->elementBytes = elementBytes;
  return problem;
}

std::string precisionOf(mlir::ModuleOp module) {
  l1::TargetAttr target = l1::TargetAttr::lookup(module);
  mlir::DictionaryAttr config = target ? target.getConfig() : nullptr;
  auto precision =
      config ? config.getAs<mlir::StringAttr>("precision") : nullptr;
  return precision ? precision.getValue().str() : "fp32";
}

int64_t elementBytesOf(mlir::ModuleOp module) {
  return precisionOf(module) == "fp16" ? 2 : 4;
}

} // namespace cuvil::mlu
