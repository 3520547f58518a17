//===- PlanMemory.cpp - one workspace arena per function ------------------===//
//
// Liveness-based reuse: each memref.alloc lives from its first use to its
// last use (in program order; level2 functions are straight-line), and is
// placed in the arena at the lowest aligned offset not used by a buffer whose
// lifetime overlaps, largest buffers first (the classic greedy-by-size
// heuristic used by TFLite's and XLA's buffer assignment).
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <algorithm>

namespace cuvil {
#define GEN_PASS_DEF_CUVILPLANMEMORY
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;

namespace {

struct Buffer {
  memref::AllocOp alloc;
  int64_t bytes = 0;
  int64_t begin = 0, end = 0; // Live over op indices [begin, end].
  int64_t offset = -1;
  SmallVector<int64_t> bounds;
};

constexpr int64_t kAlignment = cuvil::l2::ViewOp::kAlignment;

int64_t alignUp(int64_t value) {
  return (value + kAlignment - 1) / kAlignment * kAlignment;
}

struct PlanMemory : cuvil::impl::CuvilPlanMemoryBase<PlanMemory> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t maxBatch = 1;
    if (auto attr = module->getAttrOfType<IntegerAttr>("cuvil.max_batch"))
      maxBatch = attr.getInt();
    for (func::FuncOp func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && failed(plan(func, maxBatch)))
        return signalPassFailure();
  }

  LogicalResult plan(func::FuncOp func, int64_t maxBatch);
};

/// The largest value a dynamic size (batch or batch * k) takes.
FailureOr<int64_t> boundOf(Value size, Value batch, int64_t maxBatch) {
  if (size == batch)
    return maxBatch;
  if (auto mul = size.getDefiningOp<arith::MulIOp>()) {
    FailureOr<int64_t> lhs = boundOf(mul.getLhs(), batch, maxBatch);
    FailureOr<int64_t> rhs = boundOf(mul.getRhs(), batch, maxBatch);
    if (failed(lhs) || failed(rhs))
      return failure();
    return *lhs * *rhs;
  }
  if (auto constant = size.getDefiningOp<arith::ConstantIndexOp>())
    return constant.value();
  return failure();
}

LogicalResult PlanMemory::plan(func::FuncOp func, int64_t maxBatch) {
  Block &body = func.getBody().front();
  Value batch = func.getNumArguments() ? func.getArgument(0) : Value();
  llvm::DenseMap<Operation *, int64_t> position;
  int64_t index = 0;
  for (Operation &op : body)
    position[&op] = index++;

  std::vector<Buffer> buffers;
  for (Operation &op : body) {
    auto alloc = dyn_cast<memref::AllocOp>(op);
    if (!alloc)
      continue;
    Buffer buffer;
    buffer.alloc = alloc;
    for (Value size : alloc.getDynamicSizes()) {
      FailureOr<int64_t> bound = boundOf(size, batch, maxBatch);
      if (failed(bound))
        return alloc.emitOpError("has a dynamic size that is not a multiple "
                                 "of the batch");
      buffer.bounds.push_back(*bound);
    }
    FailureOr<int64_t> bytes = cuvil::l2::getBufferBytes(
        alloc.getType(), buffer.bounds, [&] { return alloc.emitOpError(); });
    if (failed(bytes))
      return failure();
    buffer.bytes = alignUp(std::max<int64_t>(*bytes, 1));
    buffer.begin = buffer.end = position[alloc];
    for (Operation *user : alloc->getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top)
        return alloc.emitOpError("is used outside its function body");
      buffer.end = std::max(buffer.end, position[top]);
    }
    buffers.push_back(buffer);
  }

  // Lower bound: the most bytes live at any point.
  int64_t total = 0, liveBound = 0;
  for (const Buffer &b : buffers)
    total += b.bytes;
  for (int64_t t = 0; t < index; ++t) {
    int64_t live = 0;
    for (const Buffer &b : buffers)
      if (b.begin <= t && t <= b.end)
        live += b.bytes;
    liveBound = std::max(liveBound, live);
  }

  // Greedy by size: largest first, lowest free offset among the placed
  // buffers whose lifetimes overlap.
  std::vector<Buffer *> order;
  for (Buffer &b : buffers)
    order.push_back(&b);
  std::stable_sort(order.begin(), order.end(),
                   [](Buffer *a, Buffer *b) { return a->bytes > b->bytes; });
  std::vector<Buffer *> placed;
  int64_t arenaBytes = 0;
  for (Buffer *b : order) {
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (Buffer *p : placed)
      if (p->begin <= b->end && b->begin <= p->end)
        taken.push_back({p->offset, p->offset + p->bytes});
    std::sort(taken.begin(), taken.end());
    int64_t offset = 0;
    for (auto [lo, hi] : taken) {
      if (offset + b->bytes <= lo)
        break;
      offset = std::max(offset, hi);
    }
    b->offset = offset;
    arenaBytes = std::max(arenaBytes, offset + b->bytes);
    placed.push_back(b);
  }
  arenaBytes = std::max<int64_t>(arenaBytes, kAlignment);

  // The arena becomes the last argument.
  OpBuilder builder(func.getContext());
  auto arenaType = MemRefType::get({arenaBytes}, builder.getI8Type());
  unsigned arenaIndex = func.getNumArguments();
  if (failed(func.insertArgument(
          arenaIndex, arenaType,
          builder.getDictionaryAttr(
              {builder.getNamedAttr(cuvil::l2::CuvilL2Dialect::kArenaAttrName,
                                    builder.getUnitAttr())}),
          func.getLoc())))
    return failure();
  Value arena = func.getArgument(arenaIndex);
  for (Buffer &b : buffers) {
    builder.setInsertionPoint(b.alloc);
    auto view = cuvil::l2::ViewOp::create(
        builder, b.alloc.getLoc(), b.alloc.getType(), arena,
        builder.getI64IntegerAttr(b.offset), b.alloc.getDynamicSizes(),
        b.bounds.empty() ? DenseI64ArrayAttr()
                         : builder.getDenseI64ArrayAttr(b.bounds));
    b.alloc.replaceAllUsesWith(view.getResult());
    b.alloc.erase();
  }
  func->setAttr("cuvil.arena_bytes", builder.getI64IntegerAttr(arenaBytes));
  func->setAttr("cuvil.intermediate_bytes", builder.getI64IntegerAttr(total));
  func->setAttr("cuvil.live_bytes_bound", builder.getI64IntegerAttr(liveBound));
  return success();
}

} // namespace
