//===- Pipelines.h - Cuvil's compilation pipelines --------------*- C++ -*-===//
//
// The one definition of what runs, in which order: cuvilc, the Python
// extension and the tests all build their pass managers from here. A target
// adds its own level2 passes (TargetBackend::buildLevel2Pipeline) between
// the neutral lowering and memory planning.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PASSES_PIPELINES_H
#define CUVIL_PASSES_PIPELINES_H

#include "cuvil/targets/Target.h"

#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace cuvil {

/// level1 -> verified, simplified level1 (folding, canonicalization, CSE).
/// Choices the level1 pipeline takes from the compile.
struct Level1Options {
  /// Take and return quantized tensors (cuvil-quantize-io).
  bool integerIo = false;
  /// cuvil-mark-sample-parallel's mode: auto, on or off.
  std::string sampleParallel = "auto";
  /// Run cuvil-fuse-elementwise (TargetBackend::generatesFusedMaps).
  bool fuseElementwise = true;
  /// Run cuvil-batch-norm-to-affine (TargetBackend::affineBatchNorm).
  bool affineBatchNorm = false;
  /// cuvil-fuse-epilogues's activations
  /// (TargetBackend::epilogueActivations).
  std::vector<std::string> epilogueActivations = {"relu", "clip"};
  /// int8 convolutions' epilogues may read 8-bit residuals
  /// (TargetBackend::quantizedResiduals; cuvil-fuse-epilogues's
  /// `quantized-residuals`).
  bool quantizedResiduals = false;
  /// Run cuvil-quantize-residuals: shortcuts read their 8-bit tensor. It
  /// changes what the graph computes, so only where Cuvil chose the
  /// quantization (--quantize=int8), never on an imported QDQ graph.
  bool quantizeShortcuts = false;
  /// int8 in fixed point: power-of-two scales (cuvil-quantize-products's
  /// `power-of-two`; TargetBackend::Int8Form).
  bool powerOfTwoScales = false;
  /// int8 products may write the next layer's 8-bit input: quantizes are
  /// hoisted over max pools and fused into their producers' epilogues.
  bool requantizingEpilogues = true;
};

void buildLevel1Pipeline(mlir::OpPassManager &pm,
                         const Level1Options &options = {});

/// Verified level1 -> level2 for `target`: the neutral lowering to
/// micro-kernel calls on buffers, the target's passes, then every
/// intermediate placed in one arena.
void buildLevel2Pipeline(mlir::OpPassManager &pm, const TargetBackend &target);

/// Registers every neutral Cuvil pass and every pass of `targets`, and the
/// pipelines above as `cuvil-level1-pipeline` and
/// `cuvil-level2-pipeline{target=NAME}`, for cuvil-opt.
void registerCuvilPipelines(const TargetRegistry &targets);

} // namespace cuvil

#endif // CUVIL_PASSES_PIPELINES_H
