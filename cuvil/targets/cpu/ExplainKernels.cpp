//===- ExplainKernels.cpp - which kernel each layer runs, and why ---------===//
//
// cuvilc --explain-kernels: one line per kernel call of the lowered module,
// read from what the passes decided and recorded (the algorithm, the
// buffers' layouts, the epilogue, packed weights, and the reasons
// cuvil-cpu-select-kernels and cuvil-cpu-assign-layouts leave as
// cpu.algorithm_why and cpu.layout_why), so that a layer on a slow path
// says so and why.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/ExplainKernels.h"

#include "cuvil/ir/CuvilAttrs.h"
#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/support/Diagnostics.h"
#include "cuvil/targets/cpu/Runtime.h"
#include "cuvil/targets/cpu/RuntimeContract.h"
#include "cuvil/targets/cpu/transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"

namespace cuvil::cpu {

using namespace mlir;

namespace {

std::string layoutName(Value value) {
  int64_t block = channelBlock(value);
  return block > 1 ? llvm::formatv("NCHW{0}c", block).str() : "NCHW";
}

/// " on NCHW<B>c" if an operand of `op` is blocked, else "".
std::string blockedOperands(Operation *op) {
  for (Value operand : op->getOperands())
    if (channelBlock(operand) > 1)
      return " on " + layoutName(operand);
  return "";
}

std::string why(Operation *op, StringRef attr) {
  auto text = op->getAttrOfType<StringAttr>(attr);
  return text ? text.getValue().str() : std::string();
}

/// "[add, hardswish]" of a call's epilogue, or "".
std::string epilogueSteps(l2::UKernelCallOp call) {
  l2::EpilogueAttr epilogue = call.getEpilogueAttr();
  if (!epilogue)
    return "";
  std::string steps;
  for (l2::EpilogueStep step : epilogue.getSteps())
    steps +=
        (steps.empty() ? "" : ", ") + l2::stringifyEpilogueStep(step).str();
  return " + [" + steps + "]";
}

/// A convolution's kernel and why it runs that one.
std::pair<std::string, std::string> explainConv(l2::UKernelCallOp call,
                                                int64_t lanes) {
  auto in = cast<MemRefType>(call.getInputs()[0].getType());
  auto out = cast<MemRefType>(call.getOutputs()[0].getType());
  int64_t groups = call.getIntParam("groups", 1);
  bool depthwise = in.getRank() == 4 && out.getRank() == 4 &&
                   isDepthwiseConv(groups, in.getDimSize(1), out.getDimSize(1));
  bool int8 = call.getKernel() == "quantized_conv2d";
  bool bf16 = bool(call.getParam("acc_type"));
  std::string precision = int8 ? "int8 " : bf16 ? "bfloat16 " : "";
  std::string layout = layoutName(call.getOutputs()[0]);
  std::string algorithmWhy = why(call, kAlgorithmWhyAttr);
  std::string layoutWhy = why(call, kLayoutWhyAttr);
  std::optional<l2::Algorithm> algorithm = call.getAlgorithm();
  int64_t block = channelBlock(call.getOutputs()[0]);
  // The float32 direct tiles run two 8-channel blocks per 16-lane register.
  bool paired = block * 2 == lanes && !int8 && !bf16 && !depthwise &&
                algorithm == l2::Algorithm::direct_blocked;
  std::string narrow =
      block > 1 && block < lanes
          ? llvm::formatv("; {0}-channel blocks on a {1}-lane target{2}: its "
                          "channels (per group) divide only those",
                          block, lanes, paired ? " (two per register)" : "")
                .str()
          : "";
  if (algorithm == l2::Algorithm::winograd_f4x3)
    return {"Winograd F(4x4, 3x3) on " + layout,
            algorithmWhy + narrow +
                (layoutWhy.empty() ? "" : "; stays NCHW: " + layoutWhy)};
  if (algorithm == l2::Algorithm::direct_blocked)
    return {precision + (depthwise ? "blocked depthwise" : "blocked direct") +
                " register tiles, " + layout +
                (groups > 1 && !depthwise
                     ? llvm::formatv(" ({0} groups)", groups).str()
                     : ""),
            "the convolutions around it share " + layout + narrow};
  std::string plain = layoutWhy.empty() ? "" : "stays NCHW: " + layoutWhy;
  auto join = [](const std::string &a, const std::string &b) {
    return a.empty() ? b : b.empty() ? a : a + "; " + b;
  };
  if (algorithm == l2::Algorithm::im2col)
    return {precision + "im2col + packed product, NCHW",
            join(algorithmWhy, plain)};
  auto weights = cast<MemRefType>(call.getInputs()[1].getType());
  SmallVector<int64_t> strides = call.getIntsParam("strides", {1, 1});
  SmallVector<int64_t> padding = call.getIntsParam("padding", {0, 0, 0, 0});
  bool pointwise = weights.getRank() == 4 && weights.getDimSize(2) == 1 &&
                   weights.getDimSize(3) == 1 &&
                   llvm::all_of(strides, [](int64_t s) { return s == 1; }) &&
                   llvm::all_of(padding, [](int64_t p) { return p == 0; });
  std::string kernel = depthwise    ? "NCHW depthwise micro-kernel"
                       : groups > 1 ? "NCHW direct kernel, group by group"
                       : pointwise  ? "product on the NCHW image"
                                    : "NCHW direct kernel";
  return {precision + kernel, join(algorithmWhy, plain)};
}

std::pair<std::string, std::string> explainProduct(l2::UKernelCallOp call) {
  std::string family = familyOf(call);
  if (family == "bgemm")
    return {"bfloat16 product (bgemm)", "bfloat16 operands, float32 sums"};
  if (family == "hgemm")
    return {"float16 product (hgemm)", "float16 operands and sums"};
  if (call.getPackedB())
    return {"packed product (" + call.getKernel().str() + ")",
            "weights packed in strips at compile time"};
  if (call.getOutputs().size() > 1)
    return {"packed product (" + call.getKernel().str() + ")",
            "B packed in strips per call, into its scratch"};
  return {call.getKernel().str() + " (rows over the threads)",
          "too few rows or columns to pay for packing"};
}

std::string line(Operation *op, const std::string &kernel,
                 const std::string &reason) {
  return formatLocation(op->getLoc()) + ": " + kernel +
         (reason.empty() ? "" : " -- " + reason);
}

/// Why a reorder is there: a model output, or a reader of the plain copy
/// with no blocked form (cuvil-cpu-assign-layouts).
std::string reorderWhy(l2::CopyOp copy) {
  if (isa<BlockArgument>(copy.getTarget()))
    return "a model output";
  for (Operation *user : copy.getTarget().getUsers()) {
    if (user == copy)
      continue;
    std::string name = user->getName().getStringRef().str();
    if (auto call = dyn_cast<l2::UKernelCallOp>(user))
      name = call.getKernel().str();
    else if (auto kernel = dyn_cast<l2::KernelOp>(user))
      name = kernel.getName().str();
    return "'" + name + "' reads NCHW only";
  }
  return "a plain copy";
}

} // namespace

std::vector<std::string> explainKernels(ModuleOp module) {
  l1::TargetAttr target = l1::TargetAttr::lookupOrDefault(module);
  int64_t lanes = target.getVectorBits() / 32;
  std::vector<std::string> lines;
  lines.push_back(
      llvm::formatv("kernels for {0} ({1}, {2}-bit vectors: "
                    "blocks of {3} channels)",
                    target.getCpu().empty() ? "the host" : target.getCpu(),
                    target.getTriple(), target.getVectorBits(), lanes)
          .str());
  module.walk([&](Operation *op) {
    if (auto call = dyn_cast<l2::UKernelCallOp>(op)) {
      StringRef name = call.getKernel();
      std::pair<std::string, std::string> what;
      if (name == "conv2d" || name == "quantized_conv2d")
        what = explainConv(call, lanes);
      else if (name == "matmul" || name == "gemm")
        what = explainProduct(call);
      // Other kernels have one implementation: the layout says the rest,
      // and whether it is a runtime kernel or the emitter's loop.
      if (what.first.empty() && familyOf(call).empty())
        what.second = "a loop in the run function";
      std::string kernel = what.first.empty()
                               ? name.str() + blockedOperands(op)
                               : name.str() + " -> " + what.first;
      lines.push_back(line(op, kernel + epilogueSteps(call), what.second));
    } else if (auto kernel = dyn_cast<l2::KernelOp>(op)) {
      lines.push_back(line(op,
                           kernel.getName().str() + " -> generated loop" +
                               blockedOperands(op),
                           "fused elementwise ops, a loop in the run "
                           "function"));
    } else if (auto copy = dyn_cast<l2::CopyOp>(op)) {
      if (copy.isReorder())
        lines.push_back(line(op,
                             "reorder " + layoutName(copy.getSource()) +
                                 " -> " + layoutName(copy.getTarget()),
                             reorderWhy(copy)));
    }
  });
  return lines;
}

} // namespace cuvil::cpu
