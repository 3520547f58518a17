//===- Quantization.cpp - quantize, dequantize, requantize as loops -------===//
//
// Scales and zero points come from the buffers' `!quant.uniform` element
// types (the C stores their storage integers). Float math in the expressed
// type (float32), rounding half to even with nearbyintf (the default
// rounding mode), so the results are exactly ONNX QuantizeLinear /
// DequantizeLinear's; per-axis types index small tables by the element's
// coordinate on the axis.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"
#include "cuvil/targets/cpu/RuntimeContract.h"

#include "absl/strings/str_join.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"

namespace cuvil::cpu::emitter {

using namespace mlir;

namespace {

/// A quantized buffer's parameters.
struct QuantParams {
  quant::QuantizedType type;
  std::vector<double> scales;
  std::vector<int64_t> zeroPoints;
  int64_t axis = -1;

  explicit QuantParams(Type element)
      : type(cast<quant::QuantizedType>(element)) {
    if (auto uniform = dyn_cast<quant::UniformQuantizedType>(type)) {
      scales = {uniform.getScale()};
      zeroPoints = {uniform.getZeroPoint()};
      return;
    }
    auto perAxis = cast<quant::UniformQuantizedPerAxisType>(type);
    scales.assign(perAxis.getScales().begin(), perAxis.getScales().end());
    zeroPoints.assign(perAxis.getZeroPoints().begin(),
                      perAxis.getZeroPoints().end());
    axis = perAxis.getQuantizedDimension();
  }

  bool perAxis() const { return axis >= 0; }
};

/// A quantized buffer's scale and zero point as C, at a coordinate on its
/// axis (ignored per tensor).
using ParamsAt =
    std::function<std::pair<std::string, std::string>(const std::string &)>;

/// Declares a per-axis buffer's tables where the writer is (before the
/// loops that read them).
ParamsAt declareParams(Emitter &e, const QuantParams &q) {
  Type f32 = Float32Type::get(q.type.getContext());
  if (!q.perAxis()) {
    std::string scale = literal(q.scales[0], f32);
    std::string zero = std::to_string(q.zeroPoints[0]) + ".0f";
    return [=](const std::string &) { return std::make_pair(scale, zero); };
  }
  std::string s = e.tmp(), z = e.tmp();
  std::vector<std::string> scales, zeros;
  for (double scale : q.scales)
    scales.push_back(literal(scale, f32));
  for (int64_t zero : q.zeroPoints)
    zeros.push_back(std::to_string(zero) + ".0f");
  e.c.line("static const float " + s + "[] = {" + absl::StrJoin(scales, ", ") +
           "};");
  e.c.line("static const float " + z + "[] = {" + absl::StrJoin(zeros, ", ") +
           "};");
  return [=](const std::string &i) {
    return std::make_pair(s + "[" + i + "]", z + "[" + i + "]");
  };
}

/// `v` (a float) divided by the scale in float (as ONNX does), rounded half
/// to even, offset by the zero point and saturated to the storage of `q`;
/// NaN becomes the zero point. 32-bit storage rounds and clamps in double,
/// where its bounds are exact.
std::string quantizeExpr(const QuantParams &q, const std::string &v,
                         const std::pair<std::string, std::string> &params) {
  const auto &[scale, zero] = params;
  bool wide = q.type.getStorageTypeIntegralWidth() > 16;
  std::string suffix = wide ? ".0" : ".0f";
  std::string lo = std::to_string(q.type.getStorageTypeMin()) + suffix;
  std::string hi = std::to_string(q.type.getStorageTypeMax()) + suffix;
  std::string r =
      wide ? "(nearbyint((double)(" + v + " / " + scale + ")) + (double)" +
                 zero + ")"
           : "(nearbyintf(" + v + " / " + scale + ") + " + zero + ")";
  return "(" + r + " != " + r + " ? " + zero + " : " + r + " < " + lo + " ? " +
         lo + " : " + r + " > " + hi + " ? " + hi + " : " + r + ")";
}

/// `q` (a stored integer) as the float it stands for.
std::string dequantizeExpr(const std::string &q,
                           const std::pair<std::string, std::string> &params) {
  const auto &[scale, zero] = params;
  return "(((float)" + q + " - " + zero + ") * " + scale + ")";
}

/// The quantization kernels convert to and from float32.
LogicalResult checkExpressed(const KernelCall &call, const QuantParams &q) {
  if (!q.type.getExpressedType().isF32())
    return call.error() << "on " << q.type
                        << " is not supported by the CPU targets yet (it "
                           "quantizes float32)";
  return success();
}

/// quantize, dequantize and requantize (= quantize(dequantize)): one loop
/// over the output, over every dimension when a per-axis type reads its
/// parameters at the element's coordinate on its axis.
LogicalResult emitQuantization(Emitter &e, const KernelCall &call) {
  const Buffer &in = *call.ins[0], &out = *call.out;
  Type inType = in.type.getElementType(), outType = out.type.getElementType();
  std::optional<QuantParams> qin, qout;
  if (isa<quant::QuantizedType>(inType))
    qin.emplace(inType);
  if (isa<quant::QuantizedType>(outType))
    qout.emplace(outType);
  if ((qin && failed(checkExpressed(call, *qin))) ||
      (qout && failed(checkExpressed(call, *qout))))
    return failure();
  e.c.open();
  ParamsAt pin = qin ? declareParams(e, *qin) : ParamsAt();
  ParamsAt pout = qout ? declareParams(e, *qout) : ParamsAt();
  // The stored result of element `x`, whose coordinates are `vars`.
  auto stored = [&](const std::string &x, ArrayRef<std::string> vars) {
    auto coordinate = [&](const QuantParams &q) {
      return q.perAxis() ? vars[q.axis] : std::string();
    };
    std::string value = qin ? dequantizeExpr(x, pin(coordinate(*qin))) : x;
    if (!qout)
      return value;
    return "(" + cType(outType) + ")" +
           quantizeExpr(*qout, value, pout(coordinate(*qout)));
  };
  if ((!qin || !qin->perAxis()) && (!qout || !qout->perAxis())) {
    e.emitElementwise(out, {&in}, [&](ArrayRef<std::string> x) {
      return stored(x[0], {});
    });
  } else {
    std::vector<std::string> st = strides(in);
    e.emitLoopNest(out.dims, [&](ArrayRef<std::string> vars) {
      std::vector<std::string> terms;
      for (size_t d = 0; d < vars.size(); ++d)
        terms.push_back(vars[d] + "*" + st[d]);
      std::string index = joinSum(terms);
      e.c.line(out.name + "[" + index + "] = " +
               stored(in.name + "[" + index + "]", vars) + ";");
    });
  }
  e.c.close();
  return success();
}

/// The int8 GEMM variant for the call's weights: the narrow one (which the
/// runtime selection makes the best for narrow weights) when they are.
std::string qgemmVariant(const KernelCall &call) {
  return call.op->hasAttr("cuvil.narrow_weights") ? "CUVIL_QGEMM4_NARROW"
                                                  : "CUVIL_QGEMM4";
}

/// A fused quantize's output type as a `static const cuvil_qout qout`
/// (in the open block), or "NULL" for a float32 output.
std::string emitQout(Emitter &e, const KernelCall &call,
                     quant::UniformQuantizedType outQ) {
  if (!outQ)
    return "NULL";
  e.c.line("static const cuvil_qout qout = {" +
           std::string(outQ.isSigned() ? "1" : "0") + ", " +
           literal(outQ.getScale(), Float32Type::get(call.op.getContext())) +
           ", " + std::to_string(outQ.getZeroPoint()) + ".0f};");
  return "&qout";
}

/// An int8 product on weights packed at compile time
/// (cuvil-cpu-pack-quantized-weights): ins (a, packed, column sums, column
/// scales, then a fused epilogue's), outs (y, A-panel scratch). Rows are
/// split over the context's threads; the epilogue (bias, residual,
/// activation) is applied to each row as it is finished, and a quantize
/// step writes y's 8-bit type (cuvil_qgemm_q8).
LogicalResult emitQuantizedMatmul(Emitter &e, const KernelCall &call) {
  Epilogue epilogue = getEpilogue(call);
  if (!call.op.getPackedB() || call.ins.size() != 4 + epilogue.inputs ||
      call.op.getOutputs().size() != 2)
    return call.error() << "needs its weights packed at compile time "
                           "(cuvil-cpu-pack-quantized-weights)";
  const Buffer &a = *call.ins[0], &out = *call.out;
  auto q = dyn_cast<quant::UniformQuantizedType>(a.type.getElementType());
  if (!q || q.getStorageTypeIntegralWidth() != 8)
    return call.error() << "needs an 8-bit lhs quantized per tensor";
  auto outQ = dyn_cast<quant::UniformQuantizedType>(out.type.getElementType());
  if (epilogue.quantize != bool(outQ))
    return call.error() << "writes float32, or 8 bits through its quantize "
                           "epilogue step";
  std::vector<std::string> rows(a.dims.begin(), a.dims.end() - 1);
  const std::string &k = a.dims.back(), &n = out.dims.back();
  e.c.open();
  std::string qout = emitQout(e, call, outQ);
  e.callWithEpilogue(
      std::string(outQ ? "cuvil_qgemm_q8(pool, " : "cuvil_qgemm_f32(pool, ") +
          qgemmVariant(call) + ", " + joinProduct(rows) + ", " + n + ", " + k +
          ", " + a.name + ", " + k + ", " + (q.isSigned() ? "1" : "0") + ", " +
          std::to_string(q.getZeroPoint()) + ", " + call.ins[1]->name + ", " +
          call.ins[2]->name + ", " + call.ins[3]->name + ", " + out.name +
          ", " + n + ", (uint8_t *)" + e.buffer(call.op.getOutputs()[1]).name +
          ", " + (outQ ? qout + ", " : ""),
      epilogue.initializerOrNone());
  e.c.close();
  return success();
}

/// An int8 convolution (runtime/qconv/qconv.h) by the kernel its weights
/// were packed for (cuvil-cpu-pack-quantized-weights): ins (x, packed,
/// sums, scales, [bias], then a fused epilogue's residual), outs (y[,
/// scratch]). A quantize step writes y's 8-bit type (a cuvil_qout).
LogicalResult emitQuantizedConv2d(Emitter &e, const KernelCall &call) {
  Epilogue epilogue = getEpilogue(call);
  size_t own = call.ins.size() - epilogue.inputs;
  auto size = call.op->getAttrOfType<DenseI64ArrayAttr>("cuvil.kernel_size");
  if (!call.op.getPackedB() || (own != 4 && own != 5) || !size ||
      size.size() != 2)
    return call.error() << "needs its weights packed at compile time "
                           "(cuvil-cpu-pack-quantized-weights)";
  const Buffer &x = *call.ins[0], &out = *call.out;
  auto q = dyn_cast<quant::UniformQuantizedType>(x.type.getElementType());
  if (!q || q.getStorageTypeIntegralWidth() != 8 || x.dims.size() != 4)
    return call.error() << "needs an 8-bit NCHW input quantized per tensor";
  auto outQ = dyn_cast<quant::UniformQuantizedType>(out.type.getElementType());
  if (epilogue.quantize != bool(outQ))
    return call.error() << "writes float32, or 8 bits through its quantize "
                           "epilogue step";
  SmallVector<int64_t> strides = call.op.getIntsParam("strides", {1, 1}),
                       padding = call.op.getIntsParam("padding", {0, 0, 0, 0}),
                       dilations = call.op.getIntsParam("dilations", {1, 1});
  std::string window = absl::StrJoin({strides[0], strides[1], padding[0],
                                      padding[1], dilations[0], dilations[1]},
                                     ", ");
  std::string kernel = std::to_string(size[0]) + ", " + std::to_string(size[1]);
  std::string bias = own == 5 ? call.ins[4]->name : "NULL";
  std::string input = absl::StrJoin(x.dims, ", ") + ", " + x.name;
  std::string zero = std::string(q.isSigned() ? "1" : "0") + ", " +
                     std::to_string(q.getZeroPoint());
  std::string weights = call.ins[1]->name + ", " + call.ins[2]->name + ", " +
                        call.ins[3]->name + ", " + bias;
  std::string output = out.dims[2] + ", " + out.dims[3] + ", " + out.name;
  int64_t groups = call.op.getIntParam("groups", 1);
  // One filter per channel; other grouped convolutions run im2col per group.
  bool depthwise = isDepthwiseConv(groups, x.type.getDimSize(1),
                                   out.type.getDimSize(1));
  bool tiles = !depthwise && call.op.getAlgorithm() ==
                                 cuvil::l2::Algorithm::direct_blocked;
  // Depthwise: one layout; the tiles: blocked output, either input; the
  // GEMM: plain NCHW.
  bool layouts = depthwise ? x.block == out.block
                 : tiles   ? out.block > 1
                           : x.block == 1 && out.block == 1;
  if (!layouts)
    return call.error() << "reads or writes a layout its kernel does not";
  e.c.open();
  std::string qout = emitQout(e, call, outQ);
  if (depthwise) {
    // The packed floats of each filter; the sums are not needed.
    e.callWithEpilogue("cuvil_qdwconv(pool, " + input + ", " + zero + ", " +
                           kernel + ", (const float *)" + call.ins[1]->name +
                           ", " + call.ins[3]->name + ", " + bias + ", " +
                           window + ", " + output + ", " +
                           std::to_string(out.block) + ", " + qout + ", ",
                       epilogue.initializerOrNone());
  } else if (tiles) {
    std::string tile = call.op->hasAttr("cuvil.narrow_weights")
                           ? "CUVIL_QCONVB_NARROW"
                           : "CUVIL_QCONVB";
    e.callWithEpilogue("cuvil_qconv2d_blocked(" + tile + ", pool, (uint8_t *)" +
                           call.scratch + ", " + absl::StrJoin(x.dims, ", ") +
                           ", " + x.name + ", " + std::to_string(x.block) +
                           ", " + zero + ", " + out.dims[1] + ", " + kernel +
                           ", " + weights + ", " + window + ", " + output +
                           ", " + std::to_string(out.block) + ", " + qout +
                           ", ",
                       epilogue.initializerOrNone());
  } else {
    e.callWithEpilogue("cuvil_qconv2d(pool, " + qgemmVariant(call) + ", " +
                           input + ", " + zero + ", " + out.dims[1] + ", " +
                           kernel + ", " + std::to_string(groups) + ", " +
                           weights + ", " + window + ", " + output +
                           ", (uint8_t *)" + call.scratch + ", " + qout + ", ",
                       epilogue.initializerOrNone());
  }
  e.c.close();
  return success();
}

} // namespace

void addQuantizationKernels(KernelTable &table) {
  for (const char *name : {"quantize", "dequantize", "requantize"})
    table[name] = {emitQuantization};
  table["quantized_matmul"] = {emitQuantizedMatmul};
  table["quantized_conv2d"] = {emitQuantizedConv2d};
}

} // namespace cuvil::cpu::emitter
