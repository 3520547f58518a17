//===- Reductions.cpp - pooling, softmax, reductions and norms ------------===//
//
// Calls into the runtime's pool and reduce families; reductions over
// scattered axes become an accumulating loop nest.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"

#include "absl/strings/str_join.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"

namespace cuvil::cpu::emitter {

using namespace mlir;

namespace {

/// A 2-D pool's window as the runtime's pooling functions take it:
/// "kh, kw, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w".
std::string poolWindowArgs(const KernelCall &call) {
  SmallVector<int64_t> ks = call.op.getIntsParam("kernel_shape", {});
  SmallVector<int64_t> st = call.op.getIntsParam("strides", {1, 1});
  SmallVector<int64_t> pd = call.op.getIntsParam("padding", {0, 0, 0, 0});
  SmallVector<int64_t> dl = call.op.getIntsParam("dilations", {1, 1});
  return absl::StrJoin({ks[0], ks[1], st[0], st[1], pd[0], pd[1], dl[0], dl[1]},
                       ", ");
}

LogicalResult emitPool2d(Emitter &e, const KernelCall &call) {
  const Buffer &x = *call.ins[0], &out = *call.out;
  if (x.block != out.block)
    return call.op.emitOpError("pooling keeps its input's layout");
  // Quantized inputs (cuvil-hoist-quantize put the pool after a quantize):
  // the max of the 8-bit values, in any layout.
  if (auto q = dyn_cast<quant::UniformQuantizedType>(x.type.getElementType())) {
    if (call.name != "max_pool2d" || q.getStorageTypeIntegralWidth() != 8 ||
        x.type.getElementType() != out.type.getElementType())
      return call.error() << "on " << x.type.getElementType()
                          << " is not supported by the CPU targets (only "
                             "max pooling of 8-bit values to the same type)";
    e.c.line(std::string("cuvil_max_pool2d_q8(") + (q.isSigned() ? "1" : "0") +
             ", " + absl::StrJoin(x.dims, ", ") + ", " + x.name + ", " +
             poolWindowArgs(call) + ", " + out.dims[2] + ", " + out.dims[3] +
             ", " + out.name + ", " + std::to_string(x.block) + ");");
    return success();
  }
  for (const Buffer *b : {&x, &out})
    if (!b->type.getElementType().isF32())
      return call.error() << "on " << b->type.getElementType()
                          << " is not supported by the CPU targets yet";
  bool blocked = x.block > 1;
  e.c.line(std::string(blocked ? "cuvil_pool2d_blocked_f32(pool, "
                               : "cuvil_pool2d_f32(pool, ") +
           (call.name == "max_pool2d" ? "0" : "1") + ", " +
           absl::StrJoin(x.dims, ", ") + ", " + x.name + ", " +
           poolWindowArgs(call) + ", " +
           (call.op.getParam("count_include_pad") ? "1" : "0") + ", " +
           out.dims[2] + ", " + out.dims[3] + ", " + out.name +
           (blocked ? ", " + std::to_string(x.block) : std::string()) + ");");
  return success();
}

LogicalResult emitMaxPoolIndices(Emitter &e, const KernelCall &call) {
  const Buffer &x = *call.ins[0], &out = *call.out;
  if (x.block != 1 || out.block != 1)
    return call.op.emitOpError("reads and writes row-major NCHW");
  if (!x.type.getElementType().isF32())
    return call.error() << "on " << x.type.getElementType()
                        << " is not supported by the CPU targets yet";
  e.c.line("cuvil_max_pool2d_indices_f32(" + dimsRange(x, 0, 2) + ", " +
           x.dims[2] + ", " + x.dims[3] + ", " + x.name + ", " +
           poolWindowArgs(call) + ", " +
           (call.op.getParam("column_major") ? "1" : "0") + ", " + out.dims[2] +
           ", " + out.dims[3] + ", " + out.name + ");");
  return success();
}

LogicalResult emitGlobalPool(Emitter &e, const KernelCall &call) {
  const Buffer &x = *call.ins[0], &out = *call.out;
  if (out.block > 1)
    return call.op.emitOpError("global pooling writes a row-major output");
  // Blocked [N][C/B][HW][B]: reducing the middle of [N*C/B, HW, B] leaves
  // [N][C], the row-major output.
  std::string b = std::to_string(x.block);
  std::string outer =
      x.block > 1 ? "(" + dimsRange(x, 0, 2) + ")/" + b : dimsRange(x, 0, 2);
  e.c.line(std::string("cuvil_reduce_f32(") +
           (call.name == "global_avg_pool" ? "1" : "2") + ", " + outer + ", " +
           dimsRange(x, 2, x.dims.size()) + ", " + b + ", " + x.name + ", " +
           out.name + ");");
  return success();
}

LogicalResult emitAdaptiveAvgPool(Emitter &e, const KernelCall &call) {
  const Buffer &x = *call.ins[0], &out = *call.out;
  e.c.line("cuvil_adaptive_avg_pool2d_f32(" + absl::StrJoin(x.dims, ", ") +
           ", " + x.name + ", " + out.dims[2] + ", " + out.dims[3] + ", " +
           out.name + ");");
  return success();
}

LogicalResult emitSoftmax(Emitter &e, const KernelCall &call) {
  const Buffer &x = *call.ins[0];
  int64_t axis = normalizeAxis(call.op.getIntParam("axis", -1), x.dims.size());
  e.c.line(std::string("cuvil_softmax_f32(") +
           (call.name == "log_softmax" ? "1" : "0") + ", " +
           dimsRange(x, 0, axis) + ", " + x.dims[axis] + ", " +
           dimsRange(x, axis + 1, x.dims.size()) + ", " + x.name + ", " +
           call.out->name + ");");
  return success();
}

/// cuvil_reduce_f32's kinds, and products (a loop nest only).
enum ReduceKind { kSum = 0, kMean = 1, kMax = 2, kMin = 3, kProd = 4 };

/// The identity of max (`forMax`) or min on `type`: an infinity, or the
/// integer type's limit.
std::string lowest(Type type, bool forMax) {
  if (isa<FloatType>(type))
    return forMax ? "-INFINITY" : "INFINITY";
  auto integer = cast<IntegerType>(type);
  unsigned width = integer.getWidth();
  APInt limit =
      integer.isUnsigned() || width == 1
          ? (forMax ? APInt::getMinValue(width) : APInt::getMaxValue(width))
          : (forMax ? APInt::getSignedMinValue(width)
                    : APInt::getSignedMaxValue(width));
  if (integer.isUnsigned() || width == 1)
    return std::to_string(limit.getZExtValue()) + "u";
  // INT64_MIN has no literal: write it as an expression.
  if (forMax && width == 64)
    return "(-9223372036854775807LL - 1)";
  return std::to_string(limit.getSExtValue()) + "LL";
}

/// A reduction over axes that are not contiguous (or of another type than
/// float32, or a product): the output initialized,
/// then one loop nest over the input accumulating into it.
void emitScatteredReduce(Emitter &e, const KernelCall &call,
                         ArrayRef<int64_t> axes, ReduceKind kind) {
  const Buffer &x = *call.ins[0], &out = *call.out;
  size_t rank = x.dims.size();
  std::string init = kind == kMax    ? lowest(call.element, true)
                     : kind == kMin  ? lowest(call.element, false)
                     : kind == kProd ? call.lit(1)
                                     : call.lit(0);
  std::string i = e.tmp();
  e.c.line("for (int64_t " + i + " = 0; " + i + " < " + numel(out) + "; ++" +
           i + ") " + out.name + "[" + i + "] = " + init + ";");
  std::vector<std::string> xStrides = strides(x);
  e.emitLoopNest(x.dims, [&](ArrayRef<std::string> vars) {
    std::vector<std::string> src, dst;
    std::string suffix = "1";
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      src.push_back(vars[d] + "*" + xStrides[d]);
      if (!llvm::is_contained(axes, static_cast<int64_t>(d))) {
        dst.push_back(vars[d] + "*" + suffix);
        suffix = joinProduct({suffix, x.dims[d]});
      }
    }
    std::string o = out.name + "[" + joinSum(dst) + "]";
    std::string v = x.name + "[" + absl::StrJoin(src, " + ") + "]";
    if (kind == kMax)
      e.c.line("if (" + v + " > " + o + ") " + o + " = " + v + ";");
    else if (kind == kMin)
      e.c.line("if (" + v + " < " + o + ") " + o + " = " + v + ";");
    else if (kind == kProd)
      e.c.line(o + " *= " + v + ";");
    else
      e.c.line(o + " += " + v + ";");
  });
  if (kind != kMean)
    return;
  std::string j = e.tmp();
  std::vector<std::string> reduced;
  for (int64_t a : axes)
    reduced.push_back(x.dims[a]);
  e.c.line("for (int64_t " + j + " = 0; " + j + " < " + numel(out) + "; ++" +
           j + ") " + out.name + "[" + j + "] /= (" + call.T + ")" +
           joinProduct(reduced) + ";");
}

LogicalResult emitReduce(Emitter &e, const KernelCall &call) {
  const Buffer &x = *call.ins[0];
  size_t rank = x.dims.size();
  SmallVector<int64_t> axes;
  for (int64_t a : call.op.getIntsParam("axes", {}))
    axes.push_back(normalizeAxis(a, rank));
  llvm::sort(axes);
  bool contiguous = true;
  for (size_t i = 1; i < axes.size(); ++i)
    contiguous &= axes[i] == axes[i - 1] + 1;
  ReduceKind kind = call.name == "reduce_sum"    ? kSum
                    : call.name == "reduce_mean" ? kMean
                    : call.name == "reduce_max"  ? kMax
                    : call.name == "reduce_min"  ? kMin
                                                 : kProd;
  Type element = x.type.getElementType();
  if (element.isF16() || element.isBF16())
    return call.error() << "on " << element
                        << " is not supported by the CPU targets yet";
  if (x.block > 1) {
    // NCHW<B>c over H and W (cuvil-cpu-assign-layouts): global pooling,
    // the middle of [N*C/B, HW, B], leaving the row-major [N, C].
    if (axes != SmallVector<int64_t>{2, 3} || rank != 4 ||
        call.out->block > 1 || kind == kProd || !element.isF32())
      return call.error() << "reads a blocked layout only to reduce a "
                             "float32 [N, C, H, W] over H and W";
    std::string b = std::to_string(x.block);
    e.c.line("cuvil_reduce_f32(" + std::to_string(kind) + ", (" +
             dimsRange(x, 0, 2) + ")/" + b + ", " + dimsRange(x, 2, 4) + ", " +
             b + ", " + x.name + ", " + call.out->name + ");");
    return success();
  }
  if (!contiguous || kind == kProd || !element.isF32()) {
    emitScatteredReduce(e, call, axes, kind);
    return success();
  }
  e.c.line("cuvil_reduce_f32(" + std::to_string(kind) + ", " +
           dimsRange(x, 0, axes.front()) + ", " +
           dimsRange(x, axes.front(), axes.back() + 1) + ", " +
           dimsRange(x, axes.back() + 1, rank) + ", " + x.name + ", " +
           call.out->name + ");");
  return success();
}

/// arg_max / arg_min: for each (outer, inner) position, a scan along the
/// axis keeping the first (or last) extreme's index.
LogicalResult emitArgReduce(Emitter &e, const KernelCall &call) {
  const Buffer &x = *call.ins[0];
  size_t rank = x.dims.size();
  int64_t axis = normalizeAxis(call.op.getIntParam("axis", 0), rank);
  bool last = call.op.getParam("select_last_index") != nullptr;
  std::string cmp =
      call.name == "arg_max" ? (last ? ">=" : ">") : (last ? "<=" : "<");
  std::string outer = dimsRange(x, 0, axis), n = x.dims[axis],
              inner = dimsRange(x, axis + 1, rank);
  std::string o = e.tmp(), i = e.tmp(), a = e.tmp(), best = e.tmp(),
              index = e.tmp(), v = e.tmp();
  std::string T =
      cType(x.type.getElementType().isF16() || x.type.getElementType().isBF16()
                ? Float32Type::get(call.op.getContext())
                : x.type.getElementType());
  auto at = [&](const std::string &k) {
    return load(x, x.name + "[(" + o + " * " + n + " + " + k + ") * " + inner +
                       " + " + i + "]");
  };
  e.c.open("for (int64_t " + o + " = 0; " + o + " < " + outer + "; ++" + o +
           ")");
  e.c.open("for (int64_t " + i + " = 0; " + i + " < " + inner + "; ++" + i +
           ")");
  e.c.line(T + " " + best + " = " + at("0") + ";");
  e.c.line("int64_t " + index + " = 0;");
  e.c.open("for (int64_t " + a + " = 1; " + a + " < " + n + "; ++" + a + ")");
  e.c.line(T + " " + v + " = " + at(a) + ";");
  e.c.line("if (" + v + " " + cmp + " " + best + ") { " + best + " = " + v +
           "; " + index + " = " + a + "; }");
  e.c.close();
  e.c.line(call.out->name + "[" + o + " * " + inner + " + " + i +
           "] = " + index + ";");
  e.c.close();
  e.c.close();
  return success();
}

/// cumsum: for each (outer, inner) position, one running sum along the
/// axis, forwards or from the end.
LogicalResult emitCumSum(Emitter &e, const KernelCall &call) {
  const Buffer &x = *call.ins[0], &out = *call.out;
  size_t rank = x.dims.size();
  int64_t axis = normalizeAxis(call.op.getIntParam("axis", 0), rank);
  bool exclusive = call.op.getParam("exclusive") != nullptr;
  bool reverse = call.op.getParam("reverse") != nullptr;
  std::string outer = dimsRange(x, 0, axis), n = x.dims[axis],
              inner = dimsRange(x, axis + 1, rank);
  std::string o = e.tmp(), i = e.tmp(), k = e.tmp(), a = e.tmp(), sum = e.tmp(),
              at = e.tmp();
  e.c.open("for (int64_t " + o + " = 0; " + o + " < " + outer + "; ++" + o +
           ")");
  e.c.open("for (int64_t " + i + " = 0; " + i + " < " + inner + "; ++" + i +
           ")");
  e.c.line(call.T + " " + sum + " = " + call.lit(0) + ";");
  e.c.open("for (int64_t " + k + " = 0; " + k + " < " + n + "; ++" + k + ")");
  e.c.line("int64_t " + a + " = " + (reverse ? n + " - 1 - " + k : k) + ";");
  e.c.line("int64_t " + at + " = (" + o + " * " + n + " + " + a + ") * " +
           inner + " + " + i + ";");
  std::string value = load(x, x.name + "[" + at + "]");
  if (exclusive) {
    e.c.line(out.name + "[" + at + "] = " + store(out, sum) + ";");
    e.c.line(sum + " += " + value + ";");
  } else {
    e.c.line(sum + " += " + value + ";");
    e.c.line(out.name + "[" + at + "] = " + store(out, sum) + ";");
  }
  e.c.close();
  e.c.close();
  e.c.close();
  return success();
}

/// An epsilon as a double literal (the runtime's parameter is double).
std::string epsilon(const KernelCall &call) {
  return literal(call.op.getFloatParam("epsilon", 1e-5),
                 Float64Type::get(call.op.getContext()));
}

LogicalResult emitLayerNorm(Emitter &e, const KernelCall &call) {
  const Buffer &x = *call.ins[0];
  int64_t axis = normalizeAxis(call.op.getIntParam("axis", -1), x.dims.size());
  std::string inner = dimsRange(x, axis, x.dims.size());
  std::string scale = "NULL", bias = "NULL";
  auto segments = dyn_cast_or_null<DenseI32ArrayAttr>(
      call.op.getParam("operandSegmentSizes"));
  size_t next = 1;
  for (int s = 1; s <= 2; ++s) {
    bool present = segments ? segments[s] != 0 : next < call.ins.size();
    if (!present)
      continue;
    const Buffer &p = *call.ins[next++];
    if (numel(p) != inner)
      return call.op.emitOpError("layer_norm with broadcast scale or bias is "
                                 "not supported by the CPU targets yet");
    (s == 1 ? scale : bias) = p.name;
  }
  e.c.line("cuvil_layer_norm_f32(" + dimsRange(x, 0, axis) + ", " + inner +
           ", " + x.name + ", " + scale + ", " + bias + ", " + epsilon(call) +
           ", " + call.out->name + ");");
  return success();
}

LogicalResult emitBatchNorm(Emitter &e, const KernelCall &call) {
  const Buffer &x = *call.ins[0];
  if (x.block != call.out->block || x.block > 64)
    return call.error() << "needs its input and output in one layout";
  std::vector<std::string> args = {x.dims[0], x.dims[1],
                                   dimsRange(x, 2, x.dims.size()),
                                   std::to_string(x.block)};
  for (size_t i = 0; i < 5; ++i) // x, scale, bias, mean, variance
    args.push_back(call.ins[i]->name);
  args.push_back(epsilon(call));
  args.push_back(call.out->name);
  e.c.line("cuvil_batch_norm_f32(" + absl::StrJoin(args, ", ") + ");");
  return success();
}

} // namespace

void addReductionKernels(KernelTable &table) {
  table["max_pool2d"] = {emitPool2d}; // float32 or 8-bit: checks its own
  table["avg_pool2d"] = {emitPool2d, true};
  table["max_pool2d_indices"] = {emitMaxPoolIndices};
  table["global_avg_pool"] = {emitGlobalPool, true};
  table["global_max_pool"] = {emitGlobalPool, true};
  table["adaptive_avg_pool2d"] = {emitAdaptiveAvgPool, true};
  table["softmax"] = {emitSoftmax, true};
  table["log_softmax"] = {emitSoftmax, true};
  for (const char *name :
       {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"})
    table[name] = {emitReduce}; // float32 in the runtime, others as loops
  table["cumsum"] = {emitCumSum};
  table["arg_max"] = {emitArgReduce};
  table["arg_min"] = {emitArgReduce};
  table["layer_norm"] = {emitLayerNorm, true};
  table["batch_norm"] = {emitBatchNorm, true};
}

} // namespace cuvil::cpu::emitter
