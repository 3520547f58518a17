//===- KernelPlan.h - how one layer runs on an MLU -------------*- C++ -*-===//
//
// A level2 micro-kernel call, read as the problem it computes (`Problem`:
// a matrix product, a sliding window, rows, elementwise, a gather), and
// planned onto a chip (`KernelPlan`): the tiles, so that each core's
// working set fits its NRAM (double buffered where a loop streams tiles),
// the on-chip buffers with their memory spaces and padded sizes, the work
// split over tasks and the function type, and the GDRAM traffic and
// operations the report's roofline reads.
//
// cuvil-mlu-plan-kernels records each plan on its call (`mlu.plan`); the
// serializer reads it back from there, so the IR is the one truth.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_MLU_PLAN_KERNELPLAN_H
#define CUVIL_TARGETS_MLU_PLAN_KERNELPLAN_H

#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/targets/mlu/chips/Chip.h"

#include "absl/status/statusor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil::mlu {

/// The vector unit's alignment: pointers and lengths of __bang_* calls.
constexpr int64_t kAlignBytes = 128;

/// The device library's cuvil_activation.
enum class Activation {
  None = 0,
  Relu = 1,
  Clip = 2,
  Sigmoid = 3,
  Silu = 4,
  HardSigmoid = 5,
  HardSwish = 6
};

/// What a call computes, in the device library's terms
/// (bang/cuvil_mlu_kernels.h). `operands` maps each kernel argument, in
/// the library function's order, to the call's operand index (-1: none).
struct Problem {
  std::string kind; // gemm, gemm_int8, conv2d, conv2d_int8, pool2d,
                    // softmax, layer_norm,
                    // rows_reduce, batch_norm, binary, unary, concat,
                    // split, pad, gather
  int64_t elementBytes = 4;
  std::vector<int> operands;
  /// Positions in `operands` whose elements are int8 (fixed-point weights).
  std::vector<int> byteOperands;
  /// The shape fields the kind uses, by the library struct's names
  /// (cuvil_gemm_shape: batch, M, N, K, a_batch, ...).
  std::vector<std::pair<std::string, int64_t>> dims;
  Activation act = Activation::None;
  /// The clip's bounds; a hard sigmoid's (unary or fused) alpha and beta.
  double clipMin = 0, clipMax = 0;
  /// pool2d: max (else average, by `reciprocals`, one per output position);
  /// softmax: log; binary: the op and a one-value second operand.
  bool isMax = false, log = false;
  /// binary: the op, how the second operand broadcasts (same, scalar,
  /// rows: one value per row, columns: one per position of a row), and
  /// whether it is the first operand (b op a). rows_reduce: sum, mean, max.
  std::string op, mode;
  bool reversed = false;
  /// concat and split: each part's values per row of the whole.
  std::vector<int64_t> parts;
  double epsilon = 0;
  std::vector<float> reciprocals;
  /// gather: source strides and offset per output dimension. pad: the
  /// output's and input's dimensions (gatherDims, gatherStrides), the
  /// padding before each dimension (parts) and the value (epsilon).
  std::vector<int64_t> gatherDims, gatherStrides;
  int64_t gatherOffset = 0;
  double ops = 0; // arithmetic operations (a multiply-add is two)

  int64_t dim(llvm::StringRef name) const;
};

/// Reads `call` as a Problem on elements of `elementBytes` (4: float32, 2:
/// float16, the precision the kernels compute in), or an error saying what
/// the MLU target does not support about it (reported at the call's
/// location).
mlir::FailureOr<Problem> describeCall(l2::UKernelCallOp call,
                                      int64_t elementBytes);

/// The precision the module's #cuvil.target's config asks: fp32 (also
/// when it names none), fp16 or int8.
std::string precisionOf(mlir::ModuleOp module);

/// The bytes of the elements the module's kernels compute on: 2 for fp16,
/// else 4 (int8's kernels compute in float32 around the tensor unit).
int64_t elementBytesOf(mlir::ModuleOp module);

enum class FunctionType { Block, Union1, Union2, Union4 };
llvm::StringRef functionTypeName(FunctionType type);

struct OnChipBuffer {
  std::string name;
  l2::MemorySpace space;
  int64_t elements = 0; // per copy, padded to the alignment
  int64_t copies = 1;   // 2: ping-pong
  /// 4 for float32 sums whatever the model's precision; 0: the problem's.
  int64_t elementBytes = 0;

  int64_t bytes(int64_t problemElementBytes) const {
    int64_t each = elementBytes ? elementBytes : problemElementBytes;
    return (elements * copies * each + kAlignBytes - 1) / kAlignBytes *
           kAlignBytes;
  }
};

struct KernelPlan {
  /// Tile sizes, the kind's: gemm [Mt, Kt, Nt]; conv2d and pool2d
  /// [OCt, Ct, Ht]; rows [Rt, Lp]; binary and unary [Et]; gather [].
  std::vector<int64_t> tile;
  std::vector<OnChipBuffer> buffers;
  int64_t workItems = 0, tasks = 1;
  FunctionType functionType = FunctionType::Block;
  bool doubleBuffered = false;
  int64_t gdramBytes = 0;

  int64_t bytesIn(l2::MemorySpace space, int64_t elementBytes) const;
  mlir::DictionaryAttr toAttr(mlir::MLIRContext *context,
                              mlir::Type elementType) const;
  static mlir::FailureOr<KernelPlan> fromAttr(mlir::DictionaryAttr attr);
};

/// Plans `problem` on `chip`, or says why it cannot fit.
absl::StatusOr<KernelPlan> planKernel(const Problem &problem, const Chip &chip);

/// Rounds `elements` up to the vector alignment.
int64_t alignElements(int64_t elements, int64_t elementBytes);

/// A window problem's tile of Ht output rows: its patch rows' length (Ht *
/// OW padded to a vector: cuvil_window_shape's Pt) and the input rows it
/// reads (RowsIn). The planner sizes buffers by them, the emitter passes
/// them to the device library.
int64_t windowPositions(const Problem &problem, int64_t Ht);
int64_t windowRowsIn(const Problem &problem, int64_t Ht);

} // namespace cuvil::mlu

#endif // CUVIL_TARGETS_MLU_PLAN_KERNELPLAN_H
