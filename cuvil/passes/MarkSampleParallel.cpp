//===- MarkSampleParallel.cpp - functions whose samples run apart --------===//
//
// A model with a dynamic batch whose every op treats the samples of dimension
// 0 apart (convolutions, row-wise products, reductions over other axes, ...)
// computes each sample the same way whatever else is in the batch. Such a
// function can run as chunks of its batch, one chunk per thread, each on
// its own workspace: no barrier between layers and each core's activations
// in its own cache, where splitting every layer across the cores makes both
// wait for the slower at each layer and streams the whole batch's
// activations through the shared cache.
//
// The price is that every chunk reads all the weights, so the pass marks a
// function (`cuvil.sample_parallel`) only when its products do some work
// per weight byte for one sample. Measured at 2 threads, batch 2 and 8
// (docs/ARCHITECTURE.md), chunks won or tied on every separable network:
// 1.3-2x on depthwise and squeeze-excitation CNNs, 1.2-1.3x on ResNets,
// 1.04x on MLPs up to 4096 wide, whose small-batch products already read
// every weight on each thread (they split rows). So the default asks only
// for products (0.1 multiply-adds per byte); a tree ensemble, whose walk
// splits rows itself and does no multiply-adds, is left as it is.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"
#include "cuvil/passes/SampleSeparability.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace cuvil {
#define GEN_PASS_DEF_CUVILMARKSAMPLEPARALLEL
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;

namespace {

struct MarkSampleParallel
    : cuvil::impl::CuvilMarkSampleParallelBase<MarkSampleParallel> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    func->removeAttr(cuvil::kSampleParallelAttr);
    if (mode == "off")
      return;
    if (mode != "auto" && mode != "on") {
      func.emitError() << "sample-parallel mode must be auto, on or off, not '"
                       << mode << "'";
      return signalPassFailure();
    }
    auto module = func->getParentOfType<ModuleOp>();
    IntegerAttr maxBatch;
    if (module)
      maxBatch = module->getAttrOfType<IntegerAttr>("cuvil.max_batch");
    bool on = mode == "on";
    if (!maxBatch || maxBatch.getInt() < 2) {
      if (on)
        func.emitError() << "sample-parallel execution needs a dynamic batch "
                            "of at least 2 (compile with --max-batch=N)";
      return on ? signalPassFailure() : void();
    }
    cuvil::SampleSeparability separability = cuvil::analyzeSamples(func);
    if (!separability.separable) {
      if (!on)
        return;
      (separability.culprit ? separability.culprit->emitOpError()
                            : func.emitError())
          << "cannot run the batch's samples apart: " << separability.reason;
      return signalPassFailure();
    }
    double reuse = separability.macsPerWeightByte();
    if (!on && reuse < minReuse)
      return;
    func->setAttr(cuvil::kSampleParallelAttr, UnitAttr::get(&getContext()));
    cuvil::addStatistic(func, *this, numMarked, "marked");
  }
};

} // namespace
