//===- Compiler.h - the compiler's entry point ------------------*- C++ -*-===//
//
// One function turns an input model into an artifact. cuvilc is a thin
// command line over it, and the Python extension calls it too.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_DRIVER_COMPILER_H
#define CUVIL_DRIVER_COMPILER_H

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cuvil {

/// What the compiler writes.
enum class EmitKind {
  /// Verified, simplified level1 MLIR.
  MlirLevel1,
  /// level2 MLIR: micro-kernel calls on buffers in a planned arena.
  MlirLevel2,
  /// One C99 translation unit: kernels, weights, run function and C ABI.
  C,
  /// The model's C header (the ABI of the .so).
  Header,
  /// An x86-64 shared object needing only libc/libm.
  SharedObject,
};

/// Parses `--emit` values; the error lists the accepted ones.
absl::StatusOr<EmitKind> parseEmitKind(absl::string_view text);

/// The accepted `--emit` values, for help texts.
std::vector<std::string> getEmitKindNames();

struct CompileOptions {
  /// Path of the input model. Format by extension: `.onnx` (ONNX) or
  /// `.mlir` (level1).
  std::string inputPath;
  /// The model itself, when it is in memory (the Python extension passes
  /// captured models this way); `inputPath` then only names it in messages
  /// and gives the format by its extension.
  std::optional<std::string> inputContents;
  /// ONNX input shapes by input name (-1: dynamic), overriding the model's.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// If set, dimension 0 of every input is a dynamic batch up to this size.
  std::optional<int64_t> maxBatch;
  /// The target triple; only x86_64-linux-gnu is supported.
  std::string target = "x86_64-linux-gnu";
  /// CPU to build for: native, x86-64, x86-64-v2/v3/v4, or an LLVM CPU name.
  std::string cpu = "native";
  /// Threads a context of the artifact uses by default.
  int threadsDefault = 1;
  /// Keep the weights in a file beside the .so (<name>.weights.bin).
  bool externalWeights = false;
  EmitKind emit = EmitKind::MlirLevel1;
  /// Print the IR after every pass to stderr.
  bool printIrAfterAll = false;
  /// Print the IR after the passes with these arguments (e.g.
  /// "cuvil-fuse-epilogues") to stderr.
  std::vector<std::string> printIrAfter;
  /// Report the time each pass took, to stderr.
  bool timePasses = false;
  /// If set, a failing pass pipeline writes the IR it started from and the
  /// pipeline to this file, which `cuvil-opt --run-reproducer` reruns.
  std::string reproducerPath;
  /// Receives one human-readable line per compilation stage, if set.
  std::function<void(absl::string_view)> progress;
};

/// Parses "x=1x3x224x224" (a dimension of -1 or ? is dynamic).
absl::Status
parseInputShape(absl::string_view text,
                std::map<std::string, std::vector<int64_t>> &shapes);

struct Artifact {
  /// What --emit asked for.
  std::string contents;
  /// For EmitKind::SharedObject: the header that goes beside the .so.
  std::string header;
  /// With externalWeights: <name>.weights.bin, also beside the .so.
  std::string externalWeights;
  /// Memory plan of the model (arena and intermediate bytes), once lowered.
  std::string memoryReport;
  /// What the passes did ("cuvil-fold-batch-norm: 20 folded"; the names are
  /// the statistics in cuvil/passes/Passes.td), one line each.
  std::vector<std::string> passStatistics;
};

/// Compiles `options.inputPath`. Errors are InvalidArgument (bad model: with
/// the op, the location and what to do), NotFound / PermissionDenied (input
/// file), Unimplemented (an op or type the target cannot compile yet), or
/// Internal (the C toolchain failed).
absl::StatusOr<Artifact> compile(const CompileOptions &options);

} // namespace cuvil

#endif // CUVIL_DRIVER_COMPILER_H
