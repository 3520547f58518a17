//===- Target.h - the interface every compilation target implements -*- C++ -*-===//
//
// A target (x86, an FPGA, an MLU) is a folder under cuvil/targets and one
// line in AllTargets.cpp. Through this interface it resolves the device it
// compiles for (the module's #cuvil.target), finishes level1 with its own
// choices (an FPGA's fixed-point types), contributes its level2 passes
// (kernel selection, layouts, packing) between the target-neutral lowering
// and memory planning, names the outputs it writes, and serializes the
// planned module into files. The driver knows targets only through this
// interface and the registry (after IREE's TargetBackend).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_TARGET_H
#define CUVIL_TARGETS_TARGET_H

#include "cuvil/ir/CuvilAttrs.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cuvil {

/// An output a target writes, selected by `--emit=<name>`.
struct EmitKindInfo {
  std::string name;
  std::string description;
  /// The suffixes of the files it writes, the main file's first (".so",
  /// ".h", ".weights.bin"); the others go beside it (ArtifactFile).
  std::vector<std::string> suffixes;
  /// Progress lines serialize reports for it (SerializeInfo::stage).
  int stages = 1;
  /// Binary output: written to a file named after the model, never to a
  /// terminal, when no output is given.
  bool binary = false;
  /// A folder: the output path names it, and each file's suffix is its
  /// path inside (an HLS project). Written whole or not at all.
  bool directory = false;
};

/// What the user asked of the target (cuvilc flags, cuvil.compile keywords).
/// A target refuses, in checkOptions, what it cannot honour.
struct TargetOptions {
  /// The CPU or device to build for ("native", "x86-64-v3", a part name).
  std::string cpu = "native";
  /// Threads a context of the artifact uses by default.
  int threadsDefault = 1;
  /// Keep weights in a file beside the artifact instead of inside it.
  bool externalWeights = false;
  /// A name for the artifact's C ABI (PREFIX_model_run, ...), so that
  /// several models link into one program; "" keeps cuvil_model_run.
  std::string symbolPrefix;
  /// What only one target reads, by name (an FPGA's "precision",
  /// "reuse_factor:NODE", ...; cuvil/targets/fpga/FpgaSettings.h). A target
  /// refuses names it does not know in checkOptions.
  std::map<std::string, std::string> settings;
};

/// Facts about the compile that reach the artifact's metadata.
struct SerializeInfo {
  std::string modelHash;
  std::string compilerVersion;
  /// Reports the start of a stage ("building the shared object"), as many
  /// times as the emit kind's `stages`.
  std::function<void(llvm::StringRef)> stage = [](llvm::StringRef) {};
  /// Tells the user a decision the target took for them (a reuse factor
  /// snapped or raised), as a note beside the progress lines.
  std::function<void(llvm::StringRef)> note = [](llvm::StringRef) {};
};

/// One file of an artifact. The first file of a serialization is the main
/// output (cuvilc -o PATH); each other one is written beside it, its name
/// the main one's stem plus `suffix` (model.so -> model.h).
struct ArtifactFile {
  std::string suffix;
  std::string contents;
};

/// Runs a pass pipeline on a module with the compile's diagnostics (the
/// error names the failing op and where the user wrote it).
using PipelineRunner = std::function<absl::Status(
    mlir::ModuleOp, const std::function<void(mlir::OpPassManager &)> &)>;

class TargetBackend {
public:
  virtual ~TargetBackend() = default;

  /// The short name (`--target=x86`), a sentence for --help, and the target
  /// triples that select it too (`--target=x86_64-linux-gnu`).
  virtual llvm::StringRef getName() const = 0;
  virtual llvm::StringRef getDescription() const = 0;
  virtual std::vector<std::string> getTriples() const = 0;

  /// The devices --device / --cpu accepts, as a table for --list-devices
  /// ("" when the target builds for CPUs it describes itself).
  virtual std::string describeDevices() const { return ""; }

  /// The outputs this target writes, the default first. (level1 and level2
  /// MLIR are the driver's, for every target.)
  virtual std::vector<EmitKindInfo> getEmitKinds() const = 0;

  /// Refuses options this target cannot honour for `emit`, before any
  /// work; the message says what to do.
  virtual absl::Status checkOptions(const TargetOptions &options,
                                    llvm::StringRef emit) const = 0;

  /// The device description for `options`, attached to the module before
  /// level1 runs, so that every pass sees the hardware it compiles for.
  virtual absl::StatusOr<l1::TargetAttr>
  resolveTarget(mlir::MLIRContext *context,
                const TargetOptions &options) const = 0;

  /// Registers this target's passes (for cuvil-opt and pass flags).
  virtual void registerPasses() const = 0;

  /// The target's own level1 step, after the neutral level1 pipeline and
  /// before --emit=mlir-level1 prints the module: choices the level1 IR
  /// should show (an FPGA design's fixed-point types). `run` runs passes
  /// on `module` or on a copy of it.
  virtual absl::Status finishLevel1(mlir::ModuleOp module,
                                    const TargetOptions &options,
                                    const PipelineRunner &run) const {
    return absl::OkStatus();
  }

  /// Whether the target generates fused elementwise maps (the level2
  /// kernels cuvil-fuse-elementwise's cuvil.map_reduce and
  /// cuvil.fused_group lower to); without, each elementwise op stays its
  /// own micro-kernel call.
  virtual bool generatesFusedMaps() const { return true; }

  /// Whether batch norms no convolution absorbs become x * s + t
  /// (cuvil-batch-norm-to-affine), to fuse with the ops around them into
  /// maps, rather than staying batch norms for the target's own kernel.
  virtual bool affineBatchNorm() const { return false; }

  /// The activations this target's convolutions and matrix products apply
  /// in a fused epilogue (cuvil-fuse-epilogues's `activations`: relu,
  /// clip, hardswish, hardsigmoid, sigmoid, silu); any other stays an op.
  virtual std::vector<std::string> epilogueActivations() const {
    return {"relu", "clip"};
  }

  /// Whether this target's int8 convolutions add residuals quantized to 8
  /// bits per tensor, read dequantized in their epilogue: residual
  /// shortcuts then read the next layer's 8-bit input rather than a
  /// float32 copy (cuvil-quantize-residuals; cuvil-fuse-epilogues's
  /// `quantized-residuals`).
  virtual bool quantizedResiduals() const { return false; }

  /// What this target's int8 kernels take, for the int8 level1 passes.
  struct Int8Form {
    /// Symmetric per-tensor types whose scales are powers of two (fixed
    /// point: Cambricon MLU2xx's tensor unit), not per-channel weights and
    /// asymmetric activations (cuvil-quantize-products's `power-of-two`).
    bool powerOfTwoScales = false;
    /// Whether grouped, depthwise and dilated convolutions are quantized
    /// too (cuvil-mark-quantization-candidates's `grouped-convolutions`).
    bool groupedConvolutions = true;
    /// Whether an int8 product may write the next layer's 8-bit input
    /// itself (cuvil-hoist-quantize; cuvil-fuse-epilogues's
    /// `requantize`), rather than each product quantizing what it reads.
    bool requantizingEpilogues = true;
  };
  virtual Int8Form int8Form() const { return {}; }

  /// Whether `options` choose int8 through the target's own setting (an
  /// MLU's precision int8): the compile then needs calibration data.
  virtual bool asksInt8(const TargetOptions &options) const { return false; }

  /// Which kernel computes each layer of a module this target's level2
  /// pipeline lowered, and why, one line each (cuvilc --explain-kernels);
  /// empty if the target has no such report (an FPGA or MLU project has
  /// its own report).
  virtual std::vector<std::string> explainKernels(mlir::ModuleOp) const {
    return {};
  }

  /// Adds this target's level2 passes: they run on the neutral lowering's
  /// micro-kernel calls, before memory planning.
  virtual void buildLevel2Pipeline(mlir::OpPassManager &pm) const = 0;

  /// Writes the planned level2 `module` as `emit` (one of getEmitKinds()).
  /// Errors are InvalidArgument (the module uses what the target cannot
  /// compile), Unimplemented, or Internal (its toolchain failed).
  virtual absl::StatusOr<std::vector<ArtifactFile>>
  serialize(mlir::ModuleOp module, llvm::StringRef emit,
            const TargetOptions &options, const SerializeInfo &info) const = 0;
};

/// The targets a build knows, looked up by name or triple.
class TargetRegistry {
public:
  /// Adds `target`; its name and triples must be new.
  void add(std::unique_ptr<TargetBackend> target);
  /// The target named `nameOrTriple`, or null.
  const TargetBackend *lookup(llvm::StringRef nameOrTriple) const;
  /// Every target, in registration order.
  std::vector<const TargetBackend *> list() const;
  /// "x86 (x86_64-linux-gnu), ...": what --target accepts, for messages.
  std::string describeChoices() const;

private:
  std::vector<std::unique_ptr<TargetBackend>> targets;
};

} // namespace cuvil

#endif // CUVIL_TARGETS_TARGET_H
