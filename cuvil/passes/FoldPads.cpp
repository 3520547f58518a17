//===- FoldPads.cpp - zero pads into the windows that read them ------------===//
//
// Exporters write a convolution's or an average pool's padding as a Pad
// before it when the framework's op cannot say it (Inception's
// avg_pool2d(count_include_pad=True) with padding 1 exports as Pad +
// AveragePool; TensorFlow's "SAME" convolutions as Pad + Conv). A constant
// zero pad of H and W only is the window's own zero padding, so it folds
// into the op's `padding` ([top, left, bottom, right]):
//  - any convolution (its padding reads zeros);
//  - an average pool that counts padding (or has none), which then counts
//    it: the pad's zeros were elements it divided by. Not in ceil mode,
//    where a window that runs past the padded edge divides differently.
// Max pools pad with -infinity, not zeros: a zero pad stays before them.
// The pad stays when something else reads it.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace cuvil {
#define GEN_PASS_DEF_CUVILFOLDPADS
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

/// The [top, left, bottom, right] zeros a Pad adds to an NCHW tensor, or
/// failure when it pads anything else, with anything else.
FailureOr<SmallVector<int64_t>> spatialZeros(l1::PadOp pad) {
  ArrayRef<int64_t> p = pad.getPads();
  if (pad.getMode() != "constant" || pad.getValue().convertToDouble() != 0.0 ||
      p.size() != 8 || p[0] != 0 || p[1] != 0 || p[4] != 0 || p[5] != 0 ||
      llvm::any_of(p, [](int64_t v) { return v < 0; }))
    return failure();
  return SmallVector<int64_t>{p[2], p[3], p[6], p[7]};
}

/// `padding` (empty: none) plus `more`.
DenseI64ArrayAttr addPadding(Builder &b, ArrayRef<int64_t> padding,
                             ArrayRef<int64_t> more) {
  SmallVector<int64_t> sum(more);
  for (auto [s, p] : llvm::zip(sum, padding))
    s += p;
  return b.getDenseI64ArrayAttr(sum);
}

struct FoldPads : cuvil::impl::CuvilFoldPadsBase<FoldPads> {
  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](Operation *op) {
      if (auto conv = dyn_cast<l1::Conv2dOp>(op))
        foldInto(conv, conv.getInputMutable(), [&](ArrayRef<int64_t> more) {
          conv.setPaddingAttr(addPadding(b, conv.getPadding(), more));
        });
      else if (auto pool = dyn_cast<l1::AvgPool2dOp>(op);
               pool && !pool.getCeilMode() &&
               (pool.getCountIncludePad() ||
                llvm::all_of(pool.getPadding(),
                             [](int64_t p) { return p == 0; })))
        foldInto(pool, pool.getInputMutable(), [&](ArrayRef<int64_t> more) {
          pool.setPaddingAttr(addPadding(b, pool.getPadding(), more));
          pool.setCountIncludePad(true);
        });
    });
  }

  /// Reads the pad's input instead of the pad, its zeros added by `widen`.
  template <typename Widen>
  void foldInto(Operation *op, OpOperand &input, Widen widen) {
    auto pad = input.get().getDefiningOp<l1::PadOp>();
    if (!pad)
      return;
    FailureOr<SmallVector<int64_t>> zeros = spatialZeros(pad);
    if (failed(zeros))
      return;
    widen(*zeros);
    input.assign(pad.getInput());
    if (pad->use_empty())
      pad->erase();
    cuvil::addStatistic(op, *this, numFolded, "folded");
  }
};

} // namespace
