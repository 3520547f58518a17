//===- Emitter.h - the CPU C emitter's shared pieces ------------*- C++ -*-===//
//
// Private to cuvil/targets/cpu/emitter. An Emitter walks one planned level2
// function once: every buffer is a C pointer whose dimensions are C
// expressions ("64", "batch*128"); each op's code is written through one
// CWriter. Kernel calls are dispatched by name through a KernelTable that
// each family's file fills (elementwise, data movement, products,
// convolutions, reductions and norms); the artifact writer
// (ArtifactWriter.cpp) wraps the result in the header and the ABI.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_CPU_EMITTER_EMITTER_H
#define CUVIL_TARGETS_CPU_EMITTER_EMITTER_H

#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/targets/cpu/CEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <deque>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace cuvil::cpu::emitter {

/// A buffer as the generated C sees it.
struct Buffer {
  std::string name;
  mlir::MemRefType type;
  /// One C expression per dimension.
  std::vector<std::string> dims;
  /// Channels per block of an NCHW<block>c buffer (cuvil-cpu-assign-layouts);
  /// 1 for row-major.
  int64_t block = 1;
};

/// Where each dimension of an operand is indexed from in an iteration
/// space: a loop's position, or -1 for a broadcast dimension (index 0).
using DimSources = llvm::SmallVector<int64_t, 4>;

/// Where a numpy-broadcast operand `b` of an elementwise `out` is indexed
/// from (dims align at the end; a size-1 dim repeats).
DimSources broadcastSources(const Buffer &b, const Buffer &out);

/// How an elementwise loop on a blocked (NCHW<B>c) `out` reads an input
/// through `sources`: in `out`'s layout and shape, one value per channel
/// ([N or 1, C, 1, 1] or [C, 1, 1], the same bytes in any layout), or one
/// element; anything else has no blocked loop.
enum class BlockedRead { Same, Channel, BatchChannel, Single, None };
BlockedRead blockedRead(const Buffer &b, llvm::ArrayRef<int64_t> sources,
                        const Buffer &out);

//===- C expressions (CExpr.cpp) ------------------------------------------===//

/// The product of C expressions, static factors folded: "batch*150528"
/// rather than "batch*3*224*224".
std::string joinProduct(const std::vector<std::string> &terms);
/// Terms joined by " + ", or "0" when there are none.
std::string joinSum(const std::vector<std::string> &terms);
/// C type of an element type (cuvil/abi/DTypes.def; a quantized type's
/// storage), or "" if the CPU targets cannot compute on it (half and
/// bfloat16 are stored as their bits and computed in float).
std::string cType(mlir::Type type);
/// The ABI's dtype name of an element type ("unknown" if it has none).
std::string dtypeName(mlir::Type type);
int64_t elementBytes(mlir::Type type);
/// A literal of the element type.
std::string literal(double value, mlir::Type type);
/// A float bound of cuvil_epilogue (its lo/hi fields are float).
std::string floatLiteral(double value);
/// Suffix of <math.h> functions for the type ("f" for float).
std::string mathSuffix(mlir::Type type);
/// tanh of `x`; f32 through cuvil_expf, which vectorizes.
std::string tanhExpr(const std::string &x, mlir::Type type);
/// max (`cmp` ">") or min ("<") of `x` and `y`; a NaN in either propagates,
/// as in PyTorch.
std::string extremumExpr(const std::string &cmp, const std::string &x,
                         const std::string &y);
/// Reads an element as computations use it (half types as float).
std::string load(const Buffer &b, const std::string &element);
/// Converts a computed value to the storage of `b`.
std::string store(const Buffer &b, const std::string &value);
/// Row-major strides (C expressions) of `b`.
std::vector<std::string> strides(const Buffer &b);
/// The product of `b`'s dimensions [from, to).
std::string dimsRange(const Buffer &b, size_t from, size_t to);
inline std::string numel(const Buffer &b) { return joinProduct(b.dims); }
std::string bytes(const Buffer &b);
/// A possibly negative axis of a rank-`rank` shape, counted from 0.
inline int64_t normalizeAxis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

//===- Writing C ----------------------------------------------------------===//

/// The one way the emitter writes C: lines at the current block depth.
class CWriter {
public:
  /// A statement (or any line) at the current depth.
  void line(const llvm::Twine &text);
  /// `head {` (or a bare `{` for an empty head), one level deeper.
  void open(const llvm::Twine &head = "");
  /// The matching `}`.
  void close();
  /// The text written since the last take().
  std::string take();
  /// Lines another writer at this depth took.
  void append(const std::string &lines) { text_ += lines; }
  bool empty() const { return text_.empty(); }

private:
  std::string text_;
  /// Inside the part function's body.
  int depth = 1;
};

//===- The emitter --------------------------------------------------------===//

class Emitter {
public:
  Emitter(mlir::func::FuncOp func, const EmitOptions &options);

  /// Emits every op of the function.
  mlir::LogicalResult run();
  /// The run function: the ops' code in static functions of bounded size
  /// (clang's time on one function grows faster than its length), called
  /// in order by cuvil_run_batch, which cuvil_internal_run calls on the
  /// whole batch or, for a sample-parallel function, per chunk of samples.
  std::string runFunctions() const;
  /// Whether the function runs as chunks of its batch, one per thread
  /// (cuvil.sample_parallel; runtime/threads/samples.h).
  bool sampleParallel() const;

  /// Inline weights (--emit=c): C arrays; otherwise the blob's bytes.
  std::string weightsDecls;
  std::string weightsBlob;
  int64_t arenaBytes = 0;
  /// Bytes of all weights (without alignment padding).
  int64_t weightBytes = 0;

  // What the family emitters use.
  CWriter c;
  const Buffer &buffer(mlir::Value value) { return buffers[value]; }
  /// A fresh C local name.
  std::string tmp() { return "t" + std::to_string(tmpCounter++); }
  /// Set while a map is written as its own function for cuvil_parallel_for
  /// (emitMap): the next loop emitted covers units [begin_, end_) of its
  /// outer iterations (emitLoopNest fuses the first two of three or more
  /// dimensions, or the first of two; a flat loop runs chunks of
  /// kParallelChunk elements) and sets *units to their count, then clears
  /// this.
  std::string *units = nullptr;
  static constexpr int64_t kParallelChunk = 4096;
  /// A loop nest over `dims` whose body gets the index variable names.
  void emitLoopNest(const std::vector<std::string> &dims,
                    const std::function<void(llvm::ArrayRef<std::string>)>
                        &inner);
  /// A loop over the elements of `out` (one flat loop when nothing
  /// broadcasts; on a blocked `out`, [N][C/B][H*W][B] with every input
  /// readable by blockedRead); `inner` gets the index expression of each
  /// input, read through its `sources`, and of `out`, and emits the body's
  /// statements.
  void emitParallelLoop(
      const Buffer &out, llvm::ArrayRef<const Buffer *> ins,
      llvm::ArrayRef<DimSources> sources,
      const std::function<void(llvm::ArrayRef<std::string>,
                               const std::string &)> &inner);
  /// `b` as row-major when its layout changes no byte (a blocked
  /// [N, C, 1, 1]: a squeeze-excitation scale read by a plain loop), else
  /// `b`.
  const Buffer *plainView(const Buffer &b);
  /// emitParallelLoop's loop on a blocked `out`.
  void emitBlockedLoop(
      const Buffer &out, llvm::ArrayRef<const Buffer *> ins,
      llvm::ArrayRef<DimSources> sources,
      const std::function<void(llvm::ArrayRef<std::string>,
                               const std::string &)> &inner);
  /// out[...] = expr(elements of ins, numpy-broadcast to out's shape).
  void emitElementwise(
      const Buffer &out, llvm::ArrayRef<const Buffer *> ins,
      const std::function<std::string(llvm::ArrayRef<std::string>)> &expr);
  /// Emits `call`, a kernel call lacking its last argument, with the
  /// address of a cuvil_epilogue initialized by `initializer` (or NULL if
  /// empty).
  void callWithEpilogue(const std::string &call,
                        const std::string &initializer);

private:
  /// plainView's buffers (stable addresses).
  std::deque<Buffer> plainViews;
  /// Maps written as functions run over the context's threads: each one's
  /// name and body (the pointers it uses are declared by runFunctions).
  std::vector<std::pair<std::string, std::string>> parallelMaps;
  /// The functions of parallelMaps and the argument struct they share.
  std::string parallelMapFunctions() const;
  mlir::LogicalResult emitOp(mlir::Operation *op);
  mlir::LogicalResult emitView(cuvil::l2::ViewOp view);
  mlir::LogicalResult emitCopy(cuvil::l2::CopyOp copy);
  /// Control flow (ControlFlow.cpp): C's if and for around the ops of the
  /// regions, and a scan output's row.
  mlir::LogicalResult emitRegion(mlir::Region &region);
  mlir::LogicalResult emitIf(cuvil::l2::IfOp op);
  mlir::LogicalResult emitLoop(cuvil::l2::LoopOp op);
  mlir::LogicalResult emitInsertRow(cuvil::l2::InsertRowOp op);
  mlir::LogicalResult emitKernel(cuvil::l2::UKernelCallOp call);
  /// A `cuvil_l2.kernel "map"` (Map.cpp): its linalg.generic as one loop
  /// nest whose body is the scalar region in C.
  mlir::LogicalResult emitMap(cuvil::l2::KernelOp kernel);
  /// A weight (Weights.cpp): a C array or a slice of the blob.
  mlir::LogicalResult emitWeight(mlir::memref::GetGlobalOp getGlobal);
  mlir::LogicalResult declareArguments();
  /// cuvil_internal_run (opened by `entry`) handing the batch to
  /// cuvil_run_samples with each tensor's bytes per sample.
  std::string sampleParallelEntry(const std::string &entry) const;
  mlir::FailureOr<std::string> indexExpr(mlir::Value value);
  mlir::FailureOr<Buffer> defineBuffer(mlir::Value value, std::string pointer);
  /// Declares buffer pointer `name` (a C local of every part that uses it).
  void declare(const std::string &name, const std::string &declaration);

  mlir::func::FuncOp func;
  const EmitOptions &options;
  /// The function's tensor counts (declareArguments).
  int64_t numInputs = 0, numOutputs = 0;
  /// The code of each op that emits any, in order.
  std::vector<std::string> opCode;
  /// Buffer pointer declarations, by first definition, and each one's index
  /// by name.
  std::vector<std::string> declarations;
  llvm::StringMap<size_t> declarationIndex;
  llvm::DenseMap<mlir::Value, Buffer> buffers;
  llvm::StringMap<std::string> weightSymbols;
  int tmpCounter = 0;
};

//===- Kernel calls, by family --------------------------------------------===//

/// A `cuvil_l2.ukernel_call` as its family's emitter sees it.
struct KernelCall {
  /// Mutable: MLIR op handles are values with non-const accessors.
  mutable cuvil::l2::UKernelCallOp op;
  llvm::StringRef name;
  llvm::SmallVector<const Buffer *> ins;
  const Buffer *out = nullptr;
  /// The element type computations use (float for the half types) and the
  /// one the output stores.
  mlir::Type element, storage;
  /// Its C type and <math.h> suffix.
  std::string T, f;
  bool isFloat = false;
  /// The packing scratch of a matrix product or convolution (its second
  /// output), or "NULL".
  std::string scratch = "NULL";

  std::string lit(double value) const { return literal(value, element); }
  /// An error unless the computation is on floats.
  mlir::LogicalResult floatOnly() const;
  /// An error "'<kernel>' ..." at the call.
  mlir::InFlightDiagnostic error() const;
};

using KernelEmitter = mlir::LogicalResult (*)(Emitter &, const KernelCall &);
struct KernelEntry {
  KernelEmitter emit;
  /// A runtime micro-kernel on float32 only (integer index inputs aside).
  bool f32Only = false;
};
using KernelTable = llvm::StringMap<KernelEntry>;

/// Each family's kernels (one file each).
void addElementwiseKernels(KernelTable &table);
void addDataMovementKernels(KernelTable &table);
void addProductKernels(KernelTable &table);
void addConvolutionKernels(KernelTable &table);
void addReductionKernels(KernelTable &table);
void addQuantizationKernels(KernelTable &table);
void addTreeKernels(KernelTable &table);
void addRecurrentKernels(KernelTable &table);
void addSelectionKernels(KernelTable &table);
void addSamplingKernels(KernelTable &table);

//===- Fused epilogues (Epilogue.cpp) -------------------------------------===//

/// The elementwise epilogue fused into a producer's call (its
/// `#cuvil_l2.epilogue`, from cuvil-fuse-epilogues): its inputs and
/// activation, as the runtime's cuvil_epilogue takes them.
struct Epilogue {
  bool present = false;
  const Buffer *colBias = nullptr;
  const Buffer *residual = nullptr;
  std::string activation = "CUVIL_ACT_NONE";
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  /// Whether the results are requantized into the output's type.
  bool quantize = false;
  /// Trailing inputs of the call that the epilogue's steps consume.
  size_t inputs = 0;

  /// A C initializer of cuvil_epilogue; `colBiasName` overrides the step's.
  std::string initializer(const std::string &rowBias = "NULL",
                          const std::string &colBiasName = "") const;
  /// The initializer, or "" (no epilogue) for callWithEpilogue.
  std::string initializerOrNone() const {
    return present ? initializer() : std::string();
  }
};

Epilogue getEpilogue(const KernelCall &call);

} // namespace cuvil::cpu::emitter

#endif // CUVIL_TARGETS_CPU_EMITTER_EMITTER_H
