//===- RuntimeSelection.cpp - the runtime families a planned model calls --===//
//
// The emitter calls a runtime kernel for each micro-kernel below and writes
// inline loops for every other ukernel_call (elementwise, data movement)
// and for maps; those loops may call the math family (cuvil_expf,
// cuvil_erff). The ABI's contexts own a thread pool, so every model has one.
//
//===----------------------------------------------------------------------===//

// The variant lists name every architecture's variants here: the compiler
// chooses for any target (runtime/arch.h).
#define CUVIL_LIST_EVERY_ARCH
#include "cuvil/targets/cpu/runtime/arch.h"

#include "cuvil/targets/cpu/Runtime.h"

#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/targets/cpu/RuntimeContract.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"

namespace cuvil::cpu {

using namespace mlir;

std::string familyOf(cuvil::l2::UKernelCallOp call) {
  StringRef kernel = call.getKernel();
  // A float16 product or convolution (cuvil-convert-products-to-f16).
  if (isF16Product(call))
    return "hgemm";
  // A bfloat16 convolution (cuvil-convert-products-to-bf16).
  if (kernel == "conv2d" && call.getParam("acc_type"))
    return "bconv";
  if (kernel == "conv2d") {
    std::optional<cuvil::l2::Algorithm> algorithm = call.getAlgorithm();
    return algorithm == cuvil::l2::Algorithm::winograd_f4x3    ? "winograd"
           : algorithm == cuvil::l2::Algorithm::direct_blocked ? "conv_blocked"
                                                               : "conv";
  }
  // A bfloat16 product (cuvil-convert-products-to-bf16) sums in float32.
  if (kernel == "matmul" && call.getParam("acc_type"))
    return "bgemm";
  return llvm::StringSwitch<std::string>(kernel)
      .Cases({"matmul", "gemm"}, "gemm")
      .Cases({"max_pool2d", "max_pool2d_indices", "avg_pool2d",
              "adaptive_avg_pool2d"},
             "pool")
      .Cases({"global_avg_pool", "global_max_pool", "softmax", "log_softmax",
              "layer_norm", "batch_norm", "reduce_sum", "reduce_mean",
              "reduce_max", "reduce_min"},
             "reduce")
      .Case("gather", "data")
      .Case("tree_ensemble", "trees")
      .Case("quantized_matmul", "qgemm")
      .Case("quantized_conv2d", "qconv")
      .Default("");
}

namespace {

/// The bgemm8 variant for `cpu`: bgemm.inc's choice (FMA on widened values
/// over vdpbf16ps, which runs at half the FMA rate on an Emerald Rapids
/// core), except on AMD's Zen cores (LLVM's znver CPUs), where vdpbf16ps
/// runs at twice it (a Zen 5 core: 448 against 243 GFLOP/s).
std::string preferredBgemm8(StringRef cpu, const std::string &chosen,
                            const std::vector<std::string> &cpuFeatures) {
  if (chosen == "avx512" && cpu.starts_with("znver") &&
      llvm::is_contained(cpuFeatures, "avx512bf16"))
    return "avx512bf16";
  return chosen;
}

/// Whether the convolution `call` has one filter per channel (its
/// weights, packed, no longer say; its input and output channels do).
bool isDepthwise(cuvil::l2::UKernelCallOp call) {
  auto in = cast<MemRefType>(call.getInputs()[0].getType());
  auto out = cast<MemRefType>(call.getOutputs()[0].getType());
  return isDepthwiseConv(call.getIntParam("groups", 1), in.getDimSize(1),
                         out.getDimSize(1));
}

/// Whether `call` runs the blocked direct convolution's register tiles
/// (a depthwise one runs its own kernel; the int8 family unfolds grouped
/// ones onto its GEMM).
bool runsConvbTiles(cuvil::l2::UKernelCallOp call) {
  return call.getAlgorithm() == cuvil::l2::Algorithm::direct_blocked &&
         (call.getKernel() == "conv2d" ? !isDepthwise(call)
                                       : call.getIntParam("groups", 1) == 1);
}

/// Notes the comparison of a tree ensemble laid out as perfect trees
/// (cuvil-cpu-layout-forests), or 0 for one its tables walk, and raises
/// `maxDepth` to its depth.
void notePerfectForest(cuvil::l2::UKernelCallOp call,
                       llvm::SmallSetVector<int64_t, 2> &seen, int &maxDepth) {
  auto depth = call->getAttrOfType<IntegerAttr>("cuvil.forest_depth");
  auto comparison = call->getAttrOfType<IntegerAttr>("cuvil.forest_comparison");
  seen.insert(depth && comparison ? comparison.getInt() : 0);
  if (depth)
    maxDepth = std::max(maxDepth, static_cast<int>(depth.getInt()));
}

/// The int8 tiles (qconvb.inc) by the weights they take: every variant
/// for narrow weights (cuvil-cpu-pack-quantized-weights marks them), those
/// exact for any weights otherwise.
std::vector<std::pair<std::string, std::string>> qconvbVariants(bool narrow) {
  std::vector<std::pair<std::string, std::string>> variants;
#define CUVIL_QCONVB_VARIANT(name, target, features, weights)                  \
  if (narrow || std::string(#weights) == "any")                                \
    variants.emplace_back(#name, features);
#include "cuvil/targets/cpu/runtime/qconv/qconvb.inc"
#undef CUVIL_QCONVB_VARIANT
  return variants;
}

} // namespace

RuntimeSelection selectRuntime(func::FuncOp func, const std::string &cpu,
                               const std::vector<std::string> &cpuFeatures,
                               bool simd, int64_t l2Bytes) {
  RuntimeSelection selection;
  selection.l2Bytes = l2Bytes;
  selection.simd = simd;
  selection.families.insert("threads");
  bool convbTiles = false, qgemm = false, bgemm = false, qconvbTiles = false,
       qconvbNarrow = false, qgemmNarrow = false, bconv = false,
       trees = false, hgemm = false;
  // The comparisons of the perfect forests (0 for a forest walked by its
  // tables, whose code takes the comparison per node).
  llvm::SmallSetVector<int64_t, 2> perfectComparisons;
  func.walk([&](Operation *op) {
    if (auto call = dyn_cast<cuvil::l2::UKernelCallOp>(op)) {
      std::string family = familyOf(call);
      selection.families.insert(family.empty() ? "math" : family);
      bool quantizedConv = call.getKernel() == "quantized_conv2d";
      convbTiles |= family == "conv_blocked" && runsConvbTiles(call);
      selection.convbPairs |= family == "conv_blocked" &&
                              runsConvbTiles(call) &&
                              channelBlock(call.getOutputs()[0]) == 8;
      qconvbTiles |= quantizedConv && runsConvbTiles(call);
      qconvbNarrow |= quantizedConv && runsConvbTiles(call) &&
                      call->hasAttr("cuvil.narrow_weights");
      // The integer convolutions' im2col runs on the int8 GEMM.
      qgemm |= family == "qgemm" || family == "qconv";
      qgemmNarrow |= call->hasAttr("cuvil.narrow_weights") &&
                     (family == "qgemm" ||
                      (quantizedConv && !call.getAlgorithm() &&
                       !isDepthwise(call)));
      bgemm |= family == "bgemm";
      bconv |= family == "bconv";
      trees |= family == "trees";
      if (call.getKernel() == "tree_ensemble")
        notePerfectForest(call, perfectComparisons, selection.perfectMaxDepth);
      hgemm |= family == "hgemm";
    } else if (isa<cuvil::l2::KernelOp>(op)) {
      selection.families.insert("math");
    } else if (auto copy = dyn_cast<cuvil::l2::CopyOp>(op)) {
      if (copy.isReorder())
        selection.families.insert("layout");
    }
  });
  // The portable C99 output (--emit=c) keeps to the references.
  selection.sgemm4 = selection.dwconv = selection.convb = "reference";
  selection.qgemm4 = qgemm ? "reference" : "none";
  selection.qgemm4Narrow = qgemmNarrow ? "reference" : "none";
  selection.bgemm8 = bgemm ? "reference" : "none";
  selection.bconvb = bconv ? "reference" : "none";
  selection.forestWalk = trees ? "reference" : "none";
  if (perfectComparisons.size() == 1)
    selection.perfectComparison = static_cast<int>(perfectComparisons.front());
  selection.hgemm4 = hgemm ? "reference" : "none";
  selection.qconvb = qconvbTiles ? "reference" : "none";
  selection.qconvbNarrow = qconvbNarrow ? "reference" : "none";
  if (simd) {
    std::vector<std::pair<std::string, std::string>> sgemm4, dwconv, convb,
        qgemm4, qgemm4Narrow, bgemm8, bconvb, forestWalk, hgemm4;
#define CUVIL_SGEMM4_VARIANT(name, target, features)                           \
  sgemm4.emplace_back(#name, features);
#include "cuvil/targets/cpu/runtime/gemm/sgemm4.inc"
#undef CUVIL_SGEMM4_VARIANT
#define CUVIL_DWCONV_VARIANT(name, target, features)                           \
  dwconv.emplace_back(#name, features);
#include "cuvil/targets/cpu/runtime/conv/dwconv.inc"
#undef CUVIL_DWCONV_VARIANT
#define CUVIL_CONVB_VARIANT(name, target, features)                            \
  convb.emplace_back(#name, features);
#include "cuvil/targets/cpu/runtime/conv_blocked/convb.inc"
#undef CUVIL_CONVB_VARIANT
#define CUVIL_QGEMM4_VARIANT(name, target, features, weights)                  \
  if (std::string(#weights) == "any")                                          \
    qgemm4.emplace_back(#name, features);                                      \
  qgemm4Narrow.emplace_back(#name, features);
#include "cuvil/targets/cpu/runtime/qgemm/qgemm.inc"
#undef CUVIL_QGEMM4_VARIANT
#define CUVIL_BGEMM8_VARIANT(name, target, features)                           \
  bgemm8.emplace_back(#name, features);
#include "cuvil/targets/cpu/runtime/bgemm/bgemm.inc"
#undef CUVIL_BGEMM8_VARIANT
#define CUVIL_BCONVB_VARIANT(name, target, features)                           \
  bconvb.emplace_back(#name, features);
#include "cuvil/targets/cpu/runtime/bconv/bconvb.inc"
#undef CUVIL_BCONVB_VARIANT
#define CUVIL_FOREST_WALK_VARIANT(name, target, features)                      \
  forestWalk.emplace_back(#name, features);
#include "cuvil/targets/cpu/runtime/trees/trees.inc"
#undef CUVIL_FOREST_WALK_VARIANT
#define CUVIL_HGEMM4_VARIANT(name, target, features)                           \
  hgemm4.emplace_back(#name, features);
#include "cuvil/targets/cpu/runtime/hgemm/hgemm.inc"
#undef CUVIL_HGEMM4_VARIANT
    if (qgemm)
      selection.qgemm4 = chooseVariant(qgemm4, cpuFeatures);
    if (qgemmNarrow)
      selection.qgemm4Narrow = chooseVariant(qgemm4Narrow, cpuFeatures);
    if (bgemm)
      selection.bgemm8 = preferredBgemm8(
          cpu, chooseVariant(bgemm8, cpuFeatures), cpuFeatures);
    if (bconv)
      selection.bconvb = chooseVariant(bconvb, cpuFeatures);
    if (trees)
      selection.forestWalk = chooseVariant(forestWalk, cpuFeatures);
    if (hgemm)
      selection.hgemm4 = chooseVariant(hgemm4, cpuFeatures);
    selection.sgemm4 = chooseVariant(sgemm4, cpuFeatures);
    selection.dwconv = chooseVariant(dwconv, cpuFeatures);
    selection.convb = chooseVariant(convb, cpuFeatures);
    if (qconvbTiles)
      selection.qconvb = chooseVariant(qconvbVariants(false), cpuFeatures);
    if (qconvbNarrow)
      selection.qconvbNarrow = chooseVariant(qconvbVariants(true), cpuFeatures);
  }
  if (!convbTiles)
    selection.convb = "none";
  return selection;
}

} // namespace cuvil::cpu
