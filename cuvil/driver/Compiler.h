//===- Compiler.h - the compiler's entry point ------------------*- C++ -*-===//
//
// One function turns an input model into an artifact. cuvilc is a thin
// command line over it, and the Python extension calls it too.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_DRIVER_COMPILER_H
#define CUVIL_DRIVER_COMPILER_H

#include "cuvil/importers/trees/Forest.h"
#include "cuvil/quantization/Calibration.h"
#include "cuvil/targets/Target.h"

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cuvil {

/// The outputs every target has: verified, simplified level1 MLIR, and the
/// planned level2 MLIR (micro-kernel calls on buffers in one arena). The
/// others are the target's (TargetBackend::getEmitKinds).
constexpr const char kEmitLevel1[] = "mlir-level1";
constexpr const char kEmitLevel2[] = "mlir-level2";

/// "so, c, header, mlir-level1, mlir-level2": the --emit values `target`
/// accepts, its own first.
std::vector<std::string> getEmitKindNames(const TargetBackend &target);

/// The target `name` (a name or triple) of `targets`, or an error listing
/// them.
absl::StatusOr<const TargetBackend *> lookupTarget(const TargetRegistry &targets,
                                                   const std::string &name);

/// The target's emit kind `emit`: none for level1 / level2 MLIR, an error
/// listing the accepted values for anything else it does not write.
absl::StatusOr<std::optional<EmitKindInfo>>
lookupEmitKind(const TargetBackend &target, const std::string &emit);

struct CompileOptions {
  /// Path of the input model. Format by extension: `.onnx` (ONNX), `.json`
  /// (an XGBoost model) or `.mlir` (level1).
  std::string inputPath;
  /// The model itself, when it is in memory (the Python extension passes
  /// captured models this way); `inputPath` then only names it in messages
  /// and gives the format by its extension.
  std::optional<std::string> inputContents;
  /// ONNX input shapes by input name (-1: dynamic), overriding the model's.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// If set, dimension 0 of every input is a dynamic batch up to this size.
  std::optional<int64_t> maxBatch;
  /// The target: a registered name ("x86") or triple.
  std::string target = "x86_64-linux-gnu";
  /// What the target builds for and how (--cpu, --threads-default, ...).
  TargetOptions targetOptions;
  /// What to write: kEmitLevel1, kEmitLevel2 or one of the target's kinds.
  std::string emit = kEmitLevel1;
  /// Print the IR after every pass to stderr.
  bool printIrAfterAll = false;
  /// Print the IR after the passes with these arguments (e.g.
  /// "cuvil-fuse-epilogues") to stderr.
  std::vector<std::string> printIrAfter;
  /// Report the time each pass took, to stderr.
  bool timePasses = false;
  /// Fill Artifact::kernelReport (cuvilc --explain-kernels).
  bool explainKernels = false;
  /// If set, a failing pass pipeline writes the IR it started from and the
  /// pipeline to this file, which `cuvil-opt --run-reproducer` reruns.
  std::string reproducerPath;
  /// Keep the reproducer of a failure a pass explained with an error of its
  /// own (the user's: an op a target cannot build, a design that does not
  /// fit) too; otherwise only an unexplained failure's is kept.
  bool keepExplainedReproducer = false;
  /// Post-training static int8 quantization (cuvilc --quantize=int8): the
  /// linear layers are calibrated on `calibration.dataPath` and compiled to
  /// integer kernels, except those `keepFp32` names (node names, module
  /// paths or op kinds; cuvil-mark-quantization-candidates).
  struct Quantization {
    quantization::CalibrationOptions calibration;
    std::vector<std::string> keepFp32;
  };
  std::optional<Quantization> quantization;
  /// bfloat16 linear layers summed in float32 (cuvilc --quantize=bf16;
  /// cuvil-convert-products-to-bf16), except those `keepFp32` names.
  struct Bf16 {
    std::vector<std::string> keepFp32;
  };
  std::optional<Bf16> bf16;
  /// float16 linear layers and convolutions summed in float16, on targets
  /// with float16 arithmetic (cuvilc --quantize=fp16;
  /// cuvil-convert-products-to-f16), except those `keepFp32` names.
  struct Fp16 {
    std::vector<std::string> keepFp32;
  };
  std::optional<Fp16> fp16;
  /// Integer I/O (cuvilc --integer-io): float32 inputs and outputs are
  /// taken and returned as 8-bit quantized tensors, their scales and zero
  /// points in the metadata (cuvil-quantize-io). Needs an int8 model: one
  /// calibrated here (`quantization`), or a QDQ model that quantizes its
  /// inputs and dequantizes its outputs.
  bool integerIo = false;
  /// Whether a batch may run as one chunk of samples per thread (cuvilc
  /// --sample-parallel; cuvil-mark-sample-parallel's mode): auto, on, off.
  std::string sampleParallel = "auto";
  /// A tree ensemble's output: the objective's predictions, its margins
  /// (XGBoost's output_margin) or each tree's leaf (pred_leaf) (cuvilc
  /// --tree-output).
  trees::ForestOutput treeOutput = trees::ForestOutput::kPrediction;
  /// A value a tree ensemble's features treat as missing besides NaN
  /// (XGBoost's `missing`; cuvilc --tree-missing).
  std::optional<double> treeMissing;
  /// A LightGBM model's features as float32 (cuvilc
  /// --tree-features=float32; XGBoost's are float32 already).
  bool treeFloat32Features = false;
  /// Receives one human-readable line per compilation stage, if set.
  std::function<void(absl::string_view)> progress;
};

/// Parses "x=1x3x224x224" (a dimension of -1 or ? is dynamic).
absl::Status
parseInputShape(absl::string_view text,
                std::map<std::string, std::vector<int64_t>> &shapes);

struct Artifact {
  /// What --emit asked for: the main file first (.mlir, .so, .c, ...), then
  /// the files that go beside it (a .so's header, external weights).
  std::vector<ArtifactFile> files;
  /// Memory plan of the model (arena and intermediate bytes), once lowered.
  std::string memoryReport;
  /// What the passes did ("cuvil-fold-batch-norm: 20 folded"; the names are
  /// the statistics in cuvil/passes/Passes.td), one line each.
  std::vector<std::string> passStatistics;
  /// Which kernel each layer runs and why, one line each, when
  /// `explainKernels` asked for it (TargetBackend::explainKernels).
  std::vector<std::string> kernelReport;
  /// What quantization chose, layer by layer, when it was asked for.
  std::optional<quantization::QuantizationReport> quantizationReport;
};

/// Compiles `options.inputPath` for a target of `targets`. Errors are
/// InvalidArgument (bad model: with the op, the location and what to do; or
/// bad options), NotFound / PermissionDenied (input file), Unimplemented (an
/// op or type the target cannot compile yet), or Internal (the target's
/// toolchain failed).
absl::StatusOr<Artifact> compile(const CompileOptions &options,
                                 const TargetRegistry &targets);

/// compile() with the targets of this build (cuvil/targets/AllTargets.h).
absl::StatusOr<Artifact> compile(const CompileOptions &options);

} // namespace cuvil

#endif // CUVIL_DRIVER_COMPILER_H
