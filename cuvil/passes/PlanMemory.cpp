//===- PlanMemory.cpp - one workspace arena per function ------------------===//
//
// Liveness-based reuse: each memref.alloc lives from its first use to its
// last use (in program order, regions numbered where they stand; a buffer
// a loop body uses but does not define lives until the loop ends, since the
// next iteration reads it again; the two branches of an if may share
// bytes, only one of them runs), and is
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
#include <map>

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

/// The largest arena planned: 2^62 bytes, beyond any machine, so that no
/// offset or sum below can overflow.
constexpr int64_t kMaxArenaBytes = int64_t{1} << 62;

int64_t alignUp(int64_t value) {
  return (value + kAlignment - 1) / kAlignment * kAlignment;
}

/// The error for a workspace no machine has (a huge --max-batch).
LogicalResult tooBig(memref::AllocOp alloc, int64_t maxBatch) {
  InFlightDiagnostic error =
      alloc.emitOpError("needs more than 2^62 bytes of workspace");
  if (maxBatch > 1)
    return error << " with --max-batch=" << maxBatch
                 << "; no machine has that much memory (use a smaller "
                    "--max-batch)";
  return error << "; no machine has that much memory";
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

/// Whether `type` with its dynamic dimensions at `bounds` holds more than
/// kMaxArenaBytes even at 8 bytes an element (getBufferBytes sizes it
/// exactly once it fits).
bool exceedsArena(MemRefType type, ArrayRef<int64_t> bounds) {
  __int128 bytes = 8;
  for (int64_t dim : type.getShape()) {
    int64_t size = dim;
    if (ShapedType::isDynamic(dim)) {
      if (bounds.empty())
        return false; // getBufferBytes reports the missing bound
      size = bounds.front();
      bounds = bounds.drop_front();
    }
    bytes *= size;
    if (bytes > kMaxArenaBytes)
      return true;
  }
  return false;
}

/// The largest value a dynamic size (batch or batch * k) takes.
FailureOr<int64_t> boundOf(Value size, Value batch, int64_t maxBatch) {
  if (size == batch)
    return maxBatch;
  if (auto mul = size.getDefiningOp<arith::MulIOp>()) {
    FailureOr<int64_t> lhs = boundOf(mul.getLhs(), batch, maxBatch);
    FailureOr<int64_t> rhs = boundOf(mul.getRhs(), batch, maxBatch);
    if (failed(lhs) || failed(rhs))
      return failure();
    // Saturated: a bound beyond any arena is reported as such by the caller.
    int64_t product;
    if (__builtin_mul_overflow(*lhs, *rhs, &product) ||
        product > kMaxArenaBytes)
      return kMaxArenaBytes + 1;
    return product;
  }
  if (auto constant = size.getDefiningOp<arith::ConstantIndexOp>())
    return constant.value();
  return failure();
}

/// Program positions: every op in pre-order (a region after the op that
/// holds it), and the last position inside each loop.
struct Positions {
  explicit Positions(func::FuncOp func) {
    int64_t index = 0;
    func.getBody().walk<WalkOrder::PreOrder>(
        [&](Operation *op) { position[op] = index++; });
    func.walk([&](cuvil::l2::LoopOp loop) {
      int64_t last = position[loop];
      loop->walk([&](Operation *op) { last = std::max(last, position[op]); });
      loopEnd[loop] = last;
    });
  }

  /// The last position at which a use of a buffer defined at `def` by
  /// `user` needs it: the user's own, or the end of every loop around the
  /// user (or the loop itself) that does not also hold the definition.
  int64_t lastNeeded(Operation *user, Operation *def) {
    int64_t end = position[user];
    for (Operation *op = user; op; op = op->getParentOp())
      if (auto loop = dyn_cast<cuvil::l2::LoopOp>(op);
          loop && !loop->isAncestor(def))
        end = std::max(end, loopEnd[loop]);
    return end;
  }

  llvm::DenseMap<Operation *, int64_t> position, loopEnd;
};

LogicalResult PlanMemory::plan(func::FuncOp func, int64_t maxBatch) {
  Value batch = func.getNumArguments() ? func.getArgument(0) : Value();
  Positions positions(func);
  SmallVector<memref::AllocOp> allocs;
  func.getBody().walk<WalkOrder::PreOrder>(
      [&](memref::AllocOp alloc) { allocs.push_back(alloc); });

  std::vector<Buffer> buffers;
  for (memref::AllocOp alloc : allocs) {
    Buffer buffer;
    buffer.alloc = alloc;
    for (Value size : alloc.getDynamicSizes()) {
      FailureOr<int64_t> bound = boundOf(size, batch, maxBatch);
      if (failed(bound))
        return alloc.emitOpError("has a dynamic size that is not a multiple "
                                 "of the batch");
      if (*bound > kMaxArenaBytes)
        return tooBig(alloc, maxBatch);
      buffer.bounds.push_back(*bound);
    }
    if (exceedsArena(alloc.getType(), buffer.bounds))
      return tooBig(alloc, maxBatch);
    FailureOr<int64_t> bytes = cuvil::l2::getBufferBytes(
        alloc.getType(), buffer.bounds, [&] { return alloc.emitOpError(); });
    if (failed(bytes))
      return failure();
    if (*bytes > kMaxArenaBytes)
      return tooBig(alloc, maxBatch);
    buffer.bytes = alignUp(std::max<int64_t>(*bytes, 1));
    buffer.begin = buffer.end = positions.position[alloc];
    for (Operation *user : alloc->getUsers())
      buffer.end = std::max(buffer.end, positions.lastNeeded(user, alloc));
    buffers.push_back(buffer);
  }

  // Lower bound: the most bytes live at any point, by a sweep over the
  // lifetimes' ends (linear in the buffers after the sort).
  int64_t total = 0, liveBound = 0;
  std::vector<std::pair<int64_t, int64_t>> events; // (time, +-bytes)
  for (const Buffer &b : buffers) {
    if (__builtin_add_overflow(total, b.bytes, &total) ||
        total > kMaxArenaBytes)
      total = kMaxArenaBytes; // reported as "at least"; placement decides
    events.push_back({b.begin, b.bytes});
    events.push_back({b.end + 1, -b.bytes});
  }
  std::sort(events.begin(), events.end());
  __int128 live = 0; // a sum of up to 2^62-byte buffers cannot overflow
  for (auto [time, delta] : events) {
    live += delta;
    liveBound = std::max(liveBound, static_cast<int64_t>(std::min<__int128>(
                                        live, kMaxArenaBytes)));
  }

  // Greedy by size: largest first, lowest free offset among the placed
  // buffers whose lifetimes overlap. Placed buffers that live briefly are
  // found by their start, so a long chain of ops costs linear time.
  std::vector<Buffer *> order;
  for (Buffer &b : buffers)
    order.push_back(&b);
  std::stable_sort(order.begin(), order.end(),
                   [](Buffer *a, Buffer *b) { return a->bytes > b->bytes; });
  constexpr int64_t kShortLife = 64;
  std::multimap<int64_t, Buffer *> shortPlaced; // by begin
  std::vector<Buffer *> longPlaced;
  int64_t arenaBytes = 0;
  for (Buffer *b : order) {
    std::vector<std::pair<int64_t, int64_t>> taken;
    auto consider = [&](Buffer *p) {
      if (p->begin <= b->end && b->begin <= p->end)
        taken.push_back({p->offset, p->offset + p->bytes});
    };
    for (Buffer *p : longPlaced)
      consider(p);
    for (auto it = shortPlaced.lower_bound(b->begin - kShortLife);
         it != shortPlaced.end() && it->first <= b->end; ++it)
      consider(it->second);
    std::sort(taken.begin(), taken.end());
    int64_t offset = 0;
    for (auto [lo, hi] : taken) {
      if (offset + b->bytes <= lo)
        break;
      offset = std::max(offset, hi);
    }
    if (offset > kMaxArenaBytes - b->bytes)
      return tooBig(b->alloc, maxBatch);
    b->offset = offset;
    arenaBytes = std::max(arenaBytes, offset + b->bytes);
    if (b->end - b->begin <= kShortLife)
      shortPlaced.insert({b->begin, b});
    else
      longPlaced.push_back(b);
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
