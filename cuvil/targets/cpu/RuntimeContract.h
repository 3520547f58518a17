//===- RuntimeContract.h - the kernels' contract, for cuvilc -*- C++ -*-===//
//
// What the CPU passes must agree on with the kernels, from the runtime's
// own definitions (runtime/contract/): its C header and sizing functions
// (linked into cuvilc), the level2 kernels that have a channel-blocked
// form, and which products the float16 kernels compute.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_CPU_RUNTIMECONTRACT_H
#define CUVIL_TARGETS_CPU_RUNTIMECONTRACT_H

#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/targets/cpu/runtime/contract/contract.h"

#include "llvm/ADT/StringRef.h"

namespace cuvil::cpu {

/// Channels per block of a buffer's NCHW<B>c layout (1: any other).
inline int64_t channelBlock(mlir::Value value) {
  auto type = mlir::dyn_cast<mlir::MemRefType>(value.getType());
  if (auto layout =
          type ? mlir::dyn_cast<l2::LayoutAttr>(type.getLayout()) : nullptr)
    return layout.getBlockSize(1);
  return 1;
}

/// How a level2 kernel's runtime kernels take NCHW<B>c buffers
/// (runtime/contract/blocked_kernels.inc).
enum class BlockedForm {
  /// No blocked form: its buffers stay row-major.
  None,
  /// Writes blocks, reads either layout (a depthwise one: its output's).
  Conv,
  /// Input and output in one layout.
  Same,
  /// Reads blocks, writes the row-major [N, C].
  ToPlain,
  /// concat / split along C: every operand in one layout.
  Channels,
  /// Elementwise: operands of the output's shape in its layout, and
  /// per-channel ([N or 1, C, 1, 1]) or single-element operands, whose
  /// bytes are the same in any layout.
  Elementwise,
};

/// Whether a convolution runs the depthwise kernels (one filter per
/// channel: groups = C = OC), which read their output's layout; any other
/// grouped one is unfolded group by group.
inline bool isDepthwiseConv(int64_t groups, int64_t inChannels,
                            int64_t outChannels) {
  return groups != 1 && inChannels == groups && outChannels == groups;
}

inline BlockedForm blockedForm(llvm::StringRef kernel) {
#define CUVIL_BLOCKED_KERNEL(name, form)                                       \
  if (kernel == name)                                                          \
    return BlockedForm::form;
#include "cuvil/targets/cpu/runtime/contract/blocked_kernels.inc"
#undef CUVIL_BLOCKED_KERNEL
  return BlockedForm::None;
}

/// Whether `call` is a product of float16 operands summed in float16 (a
/// matmul or conv2d of cuvil-convert-products-to-f16, no acc_type): the
/// hgemm family's (runtime/hgemm).
inline bool isF16Product(cuvil::l2::UKernelCallOp call) {
  if ((call.getKernel() != "matmul" && call.getKernel() != "conv2d") ||
      call.getParam("acc_type") || call.getInputs().empty())
    return false;
  auto type = llvm::dyn_cast<mlir::MemRefType>(call.getInputs()[0].getType());
  return type && type.getElementType().isF16();
}

} // namespace cuvil::cpu

#endif // CUVIL_TARGETS_CPU_RUNTIMECONTRACT_H
