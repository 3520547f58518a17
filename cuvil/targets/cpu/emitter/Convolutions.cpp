//===- Convolutions.cpp - conv2d by the algorithm the CPU passes chose ----===//
//
// cuvil-cpu-select-kernels and cuvil-cpu-assign-layouts record the
// algorithm: direct_blocked (NCHW<B>c register tiles, or the blocked
// depthwise kernel), winograd_f4x3, im2col (scratch as the second output)
// or, without one, the runtime's direct NCHW kernel.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"

#include "cuvil/targets/cpu/RuntimeContract.h"

#include "absl/strings/str_join.h"

namespace cuvil::cpu::emitter {

using namespace mlir;

namespace {

/// A convolution's operands and attributes as C arguments.
struct ConvArgs {
  const Buffer &x, &w, &out;
  SmallVector<int64_t> strides, padding, dilations;
  int64_t groups;
  /// The bias input, or "NULL".
  std::string bias;
  Epilogue epilogue;

  explicit ConvArgs(const KernelCall &call)
      : x(*call.ins[0]), w(*call.ins[1]), out(*call.out),
        strides(call.op.getIntsParam("strides", {1, 1})),
        padding(call.op.getIntsParam("padding", {0, 0, 0, 0})),
        dilations(call.op.getIntsParam("dilations", {1, 1})),
        groups(call.op.getIntParam("groups", 1)),
        epilogue(getEpilogue(call)) {
    bias = call.ins.size() - epilogue.inputs > 2 ? call.ins[2]->name : "NULL";
  }

  /// "sh, sw, ph, pw, dh, dw" (the top and left padding).
  std::string window() const {
    return absl::StrJoin({strides[0], strides[1], padding[0], padding[1],
                          dilations[0], dilations[1]},
                         ", ");
  }
  /// The input's dimensions, "n, c, h, w".
  std::string input() const { return absl::StrJoin(x.dims, ", "); }
  std::string outputSize() const { return out.dims[2] + ", " + out.dims[3]; }
};

/// Depthwise, weights packed [C/B][KH][KW][B] by cuvil-cpu-assign-layouts.
LogicalResult emitBlockedDepthwise(Emitter &e, const KernelCall &call,
                                   const ConvArgs &a) {
  if ((a.out.block != 4 && a.out.block != 8 && a.out.block != 16) ||
      a.x.block != a.out.block || a.w.dims.size() != 4)
    return call.op.emitOpError("a blocked depthwise convolution needs input "
                               "and output in one NCHW4c, NCHW8c or NCHW16c "
                               "layout");
  e.callWithEpilogue("(void)cuvil_dwconv_blocked_f32(pool, " + a.input() +
                         ", " + a.x.name + ", " + a.w.dims[1] + ", " +
                         a.w.dims[2] + ", " + a.w.name + ", " + a.bias + ", " +
                         a.window() + ", " + a.outputSize() + ", " +
                         a.out.name + ", " + std::to_string(a.out.block) +
                         ", ",
                     a.epilogue.initializerOrNone());
  return success();
}

/// Weights packed [OC/B][C/groups/ib][KH][KW][ib][B] by
/// cuvil-cpu-assign-layouts.
LogicalResult emitBlockedDirect(Emitter &e, const KernelCall &call,
                                const ConvArgs &a) {
  if (a.out.block == 1 || a.w.dims.size() != 6 ||
      a.w.dims[4] != std::to_string(a.x.block))
    return call.op.emitOpError("a blocked direct convolution needs a blocked "
                               "output and weights packed for its input");
  auto in = cast<MemRefType>(call.op.getInputs()[0].getType());
  auto out = cast<MemRefType>(call.op.getOutputs()[0].getType());
  if (a.groups > 1 && (in.getDimSize(1) / a.groups % a.x.block != 0 ||
                       out.getDimSize(1) / a.groups % a.out.block != 0))
    return call.op.emitOpError("a blocked grouped convolution needs blocks "
                               "that divide its channels per group");
  e.callWithEpilogue("cuvil_conv2d_blocked_f32(CUVIL_CONVB, pool, " +
                         call.scratch + ", " + a.input() + ", " + a.x.name +
                         ", " + std::to_string(a.x.block) + ", " +
                         a.out.dims[1] + ", " + std::to_string(a.groups) +
                         ", " + a.w.dims[2] + ", " +
                         a.w.dims[3] + ", " + a.w.name + ", " + a.bias + ", " +
                         a.window() + ", " + a.outputSize() + ", " +
                         a.out.name + ", " + std::to_string(a.out.block) +
                         ", ",
                     a.epilogue.initializerOrNone());
  return success();
}

/// Winograd F(4x4, 3x3): stride 1, weights transformed per call into the
/// scratch; reads and writes either layout.
void emitWinograd(Emitter &e, const KernelCall &call, const ConvArgs &a) {
  e.callWithEpilogue("cuvil_conv2d_winograd_f32(pool, " + call.scratch + ", " +
                         a.input() + ", " + a.x.name + ", " +
                         std::to_string(a.x.block) + ", " + a.w.dims[0] +
                         ", " + a.w.name + ", " + a.bias + ", " +
                         std::to_string(a.padding[0]) + ", " +
                         std::to_string(a.padding[1]) + ", " +
                         a.outputSize() + ", " + a.out.name + ", " +
                         std::to_string(a.out.block) + ", ",
                     a.epilogue.initializerOrNone());
}

/// NCHW: im2col + GEMM with scratch, the direct kernel without.
void emitPlain(Emitter &e, const KernelCall &call, const ConvArgs &a) {
  e.callWithEpilogue("cuvil_conv2d_f32(pool, " + call.scratch + ", " +
                         a.input() + ", " + a.x.name + ", " + a.w.dims[0] +
                         ", " + a.w.dims[2] + ", " + a.w.dims[3] + ", " +
                         a.w.name + ", " + a.bias + ", " +
                         std::to_string(a.groups) + ", " + a.window() + ", " +
                         a.outputSize() + ", " + a.out.name + ", ",
                     a.epilogue.initializerOrNone());
}

/// bfloat16 operands summed in float32 (runtime/bconv/bconv.h), weights
/// packed by cuvil-cpu-pack-quantized-weights for `cuvil.channel_block`:
/// ins (x, packed, [bias], then a fused epilogue's), outs (y, scratch). x
/// is float32 (the kernel rounds it, its cast fused) or bfloat16.
LogicalResult emitBf16Conv(Emitter &e, const KernelCall &call,
                           const ConvArgs &a) {
  auto size = call.op->getAttrOfType<DenseI64ArrayAttr>("cuvil.kernel_size");
  auto block = call.op->getAttrOfType<IntegerAttr>("cuvil.channel_block");
  if (!call.op.getPackedB() || !size || size.size() != 2 || !block ||
      call.op.getOutputs().size() != 2 || a.groups != 1)
    return call.error() << "needs its bfloat16 weights packed at compile "
                           "time (cuvil-cpu-pack-quantized-weights)";
  Type element = a.x.type.getElementType();
  if (!(element.isF32() || element.isBF16()) ||
      !a.out.type.getElementType().isF32())
    return call.error() << "on the CPU targets convolves float32 or bfloat16 into "
                           "float32, not "
                        << element << " into " << a.out.type.getElementType();
  e.callWithEpilogue(
      "cuvil_bconv2d_blocked(CUVIL_BCONVB, pool, (uint8_t *)" + call.scratch +
          ", " + a.input() + ", " + a.x.name + ", " +
          (element.isBF16() ? "1" : "0") + ", " + std::to_string(a.x.block) +
          ", " + a.out.dims[1] + ", " + std::to_string(size[0]) + ", " +
          std::to_string(size[1]) + ", (const uint16_t *)" + a.w.name + ", " +
          a.bias + ", " + a.window() + ", " + a.outputSize() + ", " +
          a.out.name + ", " + std::to_string(block.getInt()) + ", " +
          std::to_string(a.out.block) + ", ",
      a.epilogue.initializerOrNone());
  return success();
}

/// float16 operands summed in float16 (runtime/hgemm/hgemm.h): an
/// ungrouped NCHW convolution without bias, im2col into the scratch
/// (cuvil-cpu-select-kernels sizes it), then the float16 product.
LogicalResult emitF16Conv(Emitter &e, const KernelCall &call,
                          const ConvArgs &a) {
  if (a.groups != 1 || call.ins.size() != 2 || call.op.getEpilogueAttr() ||
      call.scratch.empty())
    return call.error() << "on float16 needs an ungrouped convolution without "
                           "bias or epilogue, with its patch scratch "
                           "(cuvil-convert-products-to-f16, "
                           "cuvil-cpu-select-kernels)";
  if (!a.w.type.getElementType().isF16() ||
      !a.out.type.getElementType().isF16() || a.x.block > 1 || a.out.block > 1)
    return call.error() << "on the CPU targets convolves plain float16 into "
                           "float16";
  e.c.line("cuvil_conv2d_f16(pool, CUVIL_HGEMM4, (uint16_t *)" + call.scratch +
           ", " + a.input() + ", (const uint16_t *)" + a.x.name + ", " +
           a.w.dims[0] + ", " + a.w.dims[2] + ", " + a.w.dims[3] +
           ", (const uint16_t *)" + a.w.name + ", " + a.window() + ", " +
           a.outputSize() + ", (uint16_t *)" + a.out.name + ");");
  return success();
}

LogicalResult emitConv2d(Emitter &e, const KernelCall &call) {
  ConvArgs a(call);
  if (call.op.getParam("acc_type"))
    return emitBf16Conv(e, call, a);
  if (isF16Product(call.op))
    return emitF16Conv(e, call, a);
  using cuvil::l2::Algorithm;
  std::optional<Algorithm> algorithm = call.op.getAlgorithm();
  if (algorithm == Algorithm::direct_blocked) {
    auto in = cast<MemRefType>(call.op.getInputs()[0].getType());
    auto out = cast<MemRefType>(call.op.getOutputs()[0].getType());
    return isDepthwiseConv(a.groups, in.getDimSize(1), out.getDimSize(1))
               ? emitBlockedDepthwise(e, call, a)
               : emitBlockedDirect(e, call, a);
  }
  if (algorithm == Algorithm::winograd_f4x3) {
    emitWinograd(e, call, a);
    return success();
  }
  if (a.x.block > 1 || a.out.block > 1)
    return call.op.emitOpError("only direct_blocked and Winograd "
                               "convolutions read or write blocked layouts");
  emitPlain(e, call, a);
  return success();
}

/// conv_transpose2d as a direct scatter: the output starts as the bias,
/// then each input element adds its products with the weights into the
/// window it spreads over. (A reference-speed kernel: no blocking yet.)
LogicalResult emitConvTranspose2d(Emitter &e, const KernelCall &call) {
  const Buffer &x = *call.ins[0], &w = *call.ins[1], &out = *call.out;
  if (call.storage != call.element || x.block > 1 || out.block > 1)
    return call.error() << "on " << call.storage
                        << " or a blocked layout is not supported by the CPU "
                           "targets (float32 and float64, NCHW)";
  SmallVector<int64_t> st = call.op.getIntsParam("strides", {1, 1}),
                       pd = call.op.getIntsParam("padding", {0, 0, 0, 0}),
                       dl = call.op.getIntsParam("dilations", {1, 1});
  int64_t groups = call.op.getIntParam("groups", 1);
  const std::string &N = x.dims[0], &C = x.dims[1], &H = x.dims[2],
                    &W = x.dims[3], &O = out.dims[1], &OH = out.dims[2],
                    &OW = out.dims[3], &KH = w.dims[2], &KW = w.dims[3];
  std::string cg = "(" + C + " / " + std::to_string(groups) + ")",
              og = "(" + O + " / " + std::to_string(groups) + ")";
  std::string n = e.tmp(), c = e.tmp(), h = e.tmp(), x0 = e.tmp(), o = e.tmp(),
              kh = e.tmp(), kw = e.tmp(), oy = e.tmp(), ox = e.tmp(),
              v = e.tmp(), plane = e.tmp(), i = e.tmp();
  auto loop = [&](const std::string &var, const std::string &bound) {
    e.c.open("for (int64_t " + var + " = 0; " + var + " < " + bound + "; ++" +
             var + ")");
  };
  // The bias (or 0) in every output element.
  std::string bias = call.ins.size() > 2 ? call.ins[2]->name : "";
  e.c.line("const int64_t " + plane + " = " + OH + " * " + OW + ";");
  loop(i, N + " * " + O + " * " + plane);
  e.c.line(out.name + "[" + i + "] = " +
           (bias.empty() ? call.lit(0)
                         : bias + "[(" + i + " / " + plane + ") % " + O + "]") +
           ";");
  e.c.close();
  loop(n, N);
  loop(c, C);
  loop(h, H);
  loop(x0, W);
  e.c.line("const " + call.T + " " + v + " = " + x.name + "[((" + n + " * " +
           C + " + " + c + ") * " + H + " + " + h + ") * " + W + " + " + x0 +
           "];");
  loop(o, og);
  loop(kh, KH);
  e.c.line("const int64_t " + oy + " = " + h + " * " + std::to_string(st[0]) +
           " - " + std::to_string(pd[0]) + " + " + kh + " * " +
           std::to_string(dl[0]) + ";");
  e.c.line("if (" + oy + " < 0 || " + oy + " >= " + OH + ") continue;");
  loop(kw, KW);
  e.c.line("const int64_t " + ox + " = " + x0 + " * " + std::to_string(st[1]) +
           " - " + std::to_string(pd[1]) + " + " + kw + " * " +
           std::to_string(dl[1]) + ";");
  e.c.line("if (" + ox + " < 0 || " + ox + " >= " + OW + ") continue;");
  e.c.line(out.name + "[((" + n + " * " + O + " + " + c + " / " + cg + " * " +
           og + " + " + o + ") * " + OH + " + " + oy + ") * " + OW + " + " +
           ox + "] += " + v + " * " + w.name + "[((" + c + " * " + og + " + " +
           o + ") * " + KH + " + " + kh + ") * " + KW + " + " + kw + "];");
  for (int closeLoop = 0; closeLoop < 7; ++closeLoop)
    e.c.close();
  return success();
}

} // namespace

void addConvolutionKernels(KernelTable &table) {
  table["conv2d"] = {emitConv2d, /*f32Only=*/true};
  table["conv_transpose2d"] = {emitConvTranspose2d};
}

} // namespace cuvil::cpu::emitter
