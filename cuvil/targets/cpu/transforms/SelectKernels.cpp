//===- SelectKernels.cpp - which algorithm each x86 micro-kernel runs -----===//
//
// The neutral lowering leaves one `cuvil_l2.ukernel_call` per level1 op; the
// x86 kernels have several ways to compute some of them, each needing its
// own scratch, which this pass adds as an extra output so that memory
// planning places it like any buffer:
//
//  - a 3x3 stride-1 convolution on planes large enough that transforming
//    the weights in every call (~160 flops per channel pair) is small next
//    to the 36 * tiles multiply-adds it saves per pair (at least 28x28
//    outputs and 8 channels in and out) runs by Winograd F(4x4, 3x3);
//  - another ungrouped convolution that is not pointwise multiplies its
//    im2col patches ([C * KH * KW, OH * OW] per image, positions padded to
//    whole strips): a pointwise one multiplies the image as it is, since
//    packing would cost a pass over it for few rows of weights;
//  - a matrix product gets scratch to pack B in strips, which the kernel
//    uses when A has enough rows to pay for it;
//  - a recurrent layer (rnn, gru, lstm) gets [batch, G * H] floats for each
//    step's product of the hidden states with R^T (a GRU without
//    linear_before_reset 5 * H: its z, r * H and candidate product too).
//
// Scratch sizes, the strip and the rows below which the kernel never packs
// are the runtime's (runtime/contract/contract.h); the thresholds for
// Winograd (28x28 outputs, 8 channels) and for packing (K >= 16, N of a
// strip) are this pass's choices: the kernels run any size.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/targets/cpu/RuntimeContract.h"
#include "cuvil/targets/cpu/transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

namespace cuvil::cpu {
#define GEN_PASS_DEF_CUVILCPUSELECTKERNELS
#include "cuvil/targets/cpu/transforms/Passes.h.inc"
} // namespace cuvil::cpu

using namespace mlir;
using cuvil::l2::UKernelCallOp;

namespace {

/// A convolution's algorithm and its scratch (none: the kernel's default,
/// a product on the image for a pointwise one, else direct), and why.
struct ConvChoice {
  std::optional<cuvil::l2::Algorithm> algorithm;
  MemRefType scratch;
  std::string why;
};

ConvChoice chooseConv(UKernelCallOp call) {
  auto inType = cast<MemRefType>(call.getInputs()[0].getType());
  auto wType = cast<MemRefType>(call.getInputs()[1].getType());
  auto outType = cast<MemRefType>(call.getOutputs()[0].getType());
  SmallVector<int64_t> strides = call.getIntsParam("strides", {1, 1});
  SmallVector<int64_t> padding = call.getIntsParam("padding", {0, 0, 0, 0});
  SmallVector<int64_t> dilations = call.getIntsParam("dilations", {1, 1});
  int64_t groups = call.getIntParam("groups", 1);
  bool pointwise = wType.getDimSize(2) == 1 && wType.getDimSize(3) == 1 &&
                   strides[0] == 1 && strides[1] == 1 &&
                   llvm::all_of(padding, [](int64_t p) { return p == 0; });
  bool staticDims = !ShapedType::isDynamic(inType.getDimSize(1)) &&
                    !ShapedType::isDynamic(outType.getDimSize(2)) &&
                    !ShapedType::isDynamic(outType.getDimSize(3));
  int64_t oh = outType.getDimSize(2), ow = outType.getDimSize(3);
  int64_t c = inType.getDimSize(1), k = wType.getDimSize(0);
  Type element = inType.getElementType();
  // A float16 convolution (ungrouped, cuvil-convert-products-to-f16) always
  // multiplies im2col patches, packed as the float16 product's B
  // (cuvil_hconv_scratch_halves: [C * KH * KW, positions in strips of 32]).
  if (element.isF16()) {
    if (groups != 1 || !staticDims)
      return {std::nullopt,
              {},
              "float16, grouped or sized at run time: the "
              "direct kernel"};
    int64_t patch = c * wType.getDimSize(2) * wType.getDimSize(3);
    return {cuvil::l2::Algorithm::im2col,
            MemRefType::get({patch, cuvil_strip_columns(oh * ow)}, element),
            "float16: im2col patches times the float16 product"};
  }
  // What the Winograd kernel computes...
  bool winogradForm = staticDims && groups == 1 && wType.getDimSize(2) == 3 &&
                      wType.getDimSize(3) == 3 && strides[0] == 1 &&
                      strides[1] == 1 && dilations[0] == 1 &&
                      dilations[1] == 1 && wType.getElementType().isF32();
  // ...and where it pays (this pass's heuristic; the kernel runs any size).
  bool winograd = winogradForm && oh * ow >= 28 * 28 && c >= 8 && k >= 8;
  if (winograd)
    return {
        cuvil::l2::Algorithm::winograd_f4x3,
        MemRefType::get({cuvil_winograd_scratch_floats(c, k, oh, ow)}, element),
        llvm::formatv("3x3 stride 1 on {0}x{1} outputs and {2} -> {3} "
                      "channels (Winograd pays from 28x28 and 8)",
                      oh, ow, c, k)
            .str()};
  std::string notWinograd =
      winogradForm ? llvm::formatv(" ({0}x{1} outputs, {2} -> {3} channels: "
                                   "too small for Winograd)",
                                   oh, ow, c, k)
                         .str()
                   : "";
  if (!pointwise && groups == 1 && staticDims) {
    // cuvil_im2col_scratch_floats, as [C * KH * KW, positions].
    int64_t patch = c * wType.getDimSize(2) * wType.getDimSize(3);
    return {cuvil::l2::Algorithm::im2col,
            MemRefType::get({patch, cuvil_strip_columns(oh * ow)}, element),
            "not pointwise: im2col patches times the packed product" +
                notWinograd};
  }
  if (pointwise)
    return {std::nullopt, {}, "pointwise: a product on the image as it is"};
  if (!staticDims)
    return {std::nullopt,
            {},
            "its image size is known at run time only: "
            "the direct kernel"};
  return {std::nullopt,
          {},
          cuvil::cpu::isDepthwiseConv(groups, c, k)
              ? "depthwise: its own micro-kernels"
              : llvm::formatv("{0} groups: the direct kernel", groups).str()};
}

/// Packing scratch for an f32 matrix product worth packing B for: static K
/// and N of at least a strip and a few rows of A (the kernel never packs
/// for fewer than CUVIL_PACK_MIN_ROWS; a vector never pays for the pass
/// over B).
MemRefType chooseProduct(UKernelCallOp call) {
  StringRef kernel = call.getKernel();
  if ((kernel != "matmul" && kernel != "gemm") || call.getInputs().size() < 2)
    return {};
  auto aType = cast<MemRefType>(call.getInputs()[0].getType());
  auto bType = cast<MemRefType>(call.getInputs()[1].getType());
  if (!bType.getElementType().isF32() || aType.getRank() < 2 ||
      bType.getRank() < 2)
    return {};
  int64_t rank = bType.getRank(), m, k, n;
  if (kernel == "gemm") {
    bool transA = bool(call.getParam("trans_a"));
    bool transB = bool(call.getParam("trans_b"));
    m = aType.getDimSize(transA ? 1 : 0);
    k = bType.getDimSize(transB ? 1 : 0);
    n = bType.getDimSize(transB ? 0 : 1);
  } else {
    // Against one B, A's batches are more rows (the kernel flattens them
    // when they are back to back).
    m = aType.getDimSize(aType.getRank() - 2);
    if (rank == 2)
      for (int64_t d = 0; d + 2 < aType.getRank(); ++d)
        m = ShapedType::isDynamic(m) || aType.isDynamicDim(d)
                ? ShapedType::kDynamic
                : m * aType.getDimSize(d);
    k = bType.getDimSize(rank - 2);
    n = bType.getDimSize(rank - 1);
  }
  // K >= 16 and N >= a strip: this pass's choice, not the kernel's.
  if (ShapedType::isDynamic(k) || ShapedType::isDynamic(n) || n < CUVIL_STRIP ||
      k < 16 || (!ShapedType::isDynamic(m) && m < CUVIL_PACK_MIN_ROWS))
    return {};
  return MemRefType::get({cuvil_matmul_scratch_floats(n, k)},
                         bType.getElementType());
}

/// Whether `call` is a recurrent layer (RecurrentOps.td).
bool isRecurrent(UKernelCallOp call) {
  StringRef kernel = call.getKernel();
  return kernel == "rnn" || kernel == "gru" || kernel == "lstm";
}

/// A recurrent layer's step scratch, [batch, floats per sequence].
MemRefType chooseRecurrent(UKernelCallOp call) {
  auto gates = cast<MemRefType>(call.getInputs()[0].getType());
  int64_t hidden = call.getIntParam("hidden_size", 0);
  int64_t perRow = call.getKernel() == "lstm"  ? 4 * hidden
                   : call.getKernel() == "rnn" ? hidden
                   : call.getIntParam("linear_before_reset", 0)
                       ? 3 * hidden
                       : 5 * hidden;
  return MemRefType::get({gates.getDimSize(1), perRow}, gates.getElementType());
}

/// The run-time size of dimension `dim` of the dynamic buffer `value`:
/// its allocation's size, or the batch for a function argument (inputs
/// have the batch as their dynamic dimension).
Value dynamicSize(Value value) {
  if (auto alloc = value.getDefiningOp<memref::AllocOp>())
    return alloc.getDynamicSizes().front();
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner()->getArgument(0);
  return {};
}

/// `call` with `scratch` as a new last output, and `algorithm`.
LogicalResult addScratch(UKernelCallOp call, MemRefType scratch,
                         std::optional<cuvil::l2::Algorithm> algorithm,
                         Value sizeOf = {}) {
  OpBuilder builder(call);
  SmallVector<Value> outs(call.getOutputs());
  SmallVector<Value> sizes;
  if (scratch && scratch.getNumDynamicDims()) {
    Value size = sizeOf ? dynamicSize(sizeOf) : Value();
    if (!size)
      return call.emitOpError("cannot size its scratch: its batch is not an "
                              "allocation's or an argument's");
    sizes.push_back(size);
  }
  if (scratch)
    outs.push_back(memref::AllocOp::create(builder, call.getLoc(), scratch,
                                           sizes,
                                           builder.getI64IntegerAttr(64)));
  UKernelCallOp replacement =
      call.cloneWith(builder, call.getInputs(), outs);
  if (algorithm)
    replacement.setAlgorithm(*algorithm);
  call.erase();
  return success();
}

struct SelectKernels
    : cuvil::cpu::impl::CuvilCpuSelectKernelsBase<SelectKernels> {
  void runOnOperation() override {
    SmallVector<UKernelCallOp> calls;
    getOperation().walk([&](UKernelCallOp call) { calls.push_back(call); });
    for (UKernelCallOp call : calls) {
      // A bfloat16 convolution has one kernel, whose weights and scratch
      // cuvil-cpu-pack-quantized-weights gives it.
      if (call.getKernel() == "conv2d" && call.getParam("acc_type"))
        continue;
      if (call.getKernel() == "conv2d" && call.getInputs().size() >= 2) {
        ConvChoice choice = chooseConv(call);
        call->setAttr(cuvil::cpu::kAlgorithmWhyAttr,
                      StringAttr::get(call.getContext(), choice.why));
        if (choice.scratch || choice.algorithm)
          (void)addScratch(call, choice.scratch, choice.algorithm);
        continue;
      }
      if (isRecurrent(call)) {
        if (failed(addScratch(call, chooseRecurrent(call), std::nullopt,
                              call.getInputs()[0])))
          return signalPassFailure();
        continue;
      }
      if (MemRefType scratch = chooseProduct(call))
        (void)addScratch(call, scratch, std::nullopt);
    }
  }
};

} // namespace
