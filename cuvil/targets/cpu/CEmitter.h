//===- CEmitter.h - level2 to C99 -------------------------------*- C++ -*-===//
//
// Emits a planned level2 module as C99: the run function (micro-kernel
// calls and inline loops on pointers into the caller's arena), the weights,
// and the exported C ABI (docs/abi.md).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_CPU_CEMITTER_H
#define CUVIL_TARGETS_CPU_CEMITTER_H

#include "cuvil/targets/cpu/CpuTarget.h"

#include "absl/status/statusor.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace cuvil::cpu {

struct EmitOptions {
  /// The architecture and CPU the code is built for: the features that
  /// choose the kernels' variants, and that the artifact checks at run time
  /// before running any of it.
  CpuTarget target;
  /// Hash of the input model, for the metadata.
  std::string modelHash;
  std::string compilerVersion;
  /// Threads a context uses when its creator asks for 0.
  int threadsDefault = 1;
  /// L2 bytes per core of the target (#cuvil.target): the matrix
  /// products size their column blocks to it.
  int64_t l2Bytes = 1 << 20;
  /// Weights as C arrays in the source (--emit=c) instead of a binary blob
  /// assembled with .incbin (the .so path: fast for large models).
  bool inlineWeights = true;
  /// Weights in a file beside the .so (<name>.weights.bin), mmap'd when the
  /// .so is loaded, instead of in its .rodata (for large models).
  bool externalWeights = false;
};

struct EmittedModel {
  /// Model code: weights (if inline), the run function, kernels. Built for
  /// `cpu`.
  std::string modelSource;
  /// Exported entry points; built for the baseline ISA so that the CPU check
  /// itself cannot fault.
  std::string abiSource;
  /// The public header (model.h).
  std::string header;
  /// With !inlineWeights: the blob, and (unless external) a top-level asm
  /// statement, compiled with abiSource, that includes it as "weights.bin".
  std::string weightsBlob;
  std::string weightsAsm;
  /// The metadata JSON the artifact returns.
  std::string metadata;
  /// All of the above C in one translation unit (--emit=c).
  std::string singleSource() const;
};

/// Emits `module` (level2, after memory planning; one function).
absl::StatusOr<EmittedModel> emitModel(mlir::ModuleOp module,
                                       const EmitOptions &options);

} // namespace cuvil::cpu

#endif // CUVIL_TARGETS_CPU_CEMITTER_H
