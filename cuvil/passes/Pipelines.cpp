#include "cuvil/passes/Pipelines.h"

#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace cuvil {

void buildLevel1Pipeline(mlir::OpPassManager &pm,
                         const Level1Options &options) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  // Calibrated layers (if any) become QDQ, then integer products.
  CuvilQuantizeProductsOptions quantize;
  quantize.powerOfTwo = options.powerOfTwoScales;
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilQuantizeProducts(quantize));
  // Before the fold, so that the first layer reads the input and the last
  // layer's epilogue takes the output's quantize.
  if (options.integerIo)
    pm.addNestedPass<mlir::func::FuncOp>(createCuvilQuantizeIO());
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilFoldQuantizedProducts());
  // One quantize per tensor and type, then moved before max pools, so
  // that cuvil-fuse-epilogues finds it after the int8 convolution.
  pm.addPass(mlir::createCSEPass());
  if (options.requantizingEpilogues)
    pm.addNestedPass<mlir::func::FuncOp>(createCuvilHoistQuantize());
  if (options.quantizeShortcuts)
    pm.addNestedPass<mlir::func::FuncOp>(createCuvilQuantizeResiduals());
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilFoldPads());
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilFoldBatchNorm());
  if (options.affineBatchNorm)
    pm.addNestedPass<mlir::func::FuncOp>(createCuvilBatchNormToAffine());
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilPrepackWeights());
  // Drops the constants folding and prepacking replaced.
  pm.addPass(mlir::createCanonicalizerPass());
  // Before fusion, while every op is one the separability analysis knows.
  CuvilMarkSampleParallelOptions sampleParallel;
  sampleParallel.mode = options.sampleParallel;
  pm.addNestedPass<mlir::func::FuncOp>(
      createCuvilMarkSampleParallel(sampleParallel));
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilRaiseLayerNorm());
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilRaiseActivations());
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilBatchParallelConvs());
  CuvilFuseEpiloguesOptions epilogues;
  epilogues.activations.assign(options.epilogueActivations.begin(),
                               options.epilogueActivations.end());
  epilogues.quantizedResiduals = options.quantizedResiduals;
  epilogues.requantize = options.requantizingEpilogues;
  pm.addNestedPass<mlir::func::FuncOp>(createCuvilFuseEpilogues(epilogues));
  if (options.fuseElementwise)
    pm.addNestedPass<mlir::func::FuncOp>(createCuvilFuseElementwise());
}

void buildLevel2Pipeline(mlir::OpPassManager &pm, const TargetBackend &target) {
  pm.addPass(createCuvilLowerToLevel2());
  target.buildLevel2Pipeline(pm);
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(createCuvilPlanMemory());
}

namespace {

struct Level1PipelineOptions
    : public mlir::PassPipelineOptions<Level1PipelineOptions> {
  Option<bool> integerIo{*this, "integer-io",
                         llvm::cl::desc("Take and return quantized tensors "
                                        "(cuvil-quantize-io)"),
                         llvm::cl::init(false)};
  Option<std::string> sampleParallel{
      *this, "sample-parallel",
      llvm::cl::desc("cuvil-mark-sample-parallel's mode: auto, on, off"),
      llvm::cl::init("auto")};
  Option<bool> quantizedResiduals{
      *this, "quantized-residuals",
      llvm::cl::desc("int8 convolutions read 8-bit residuals, and shortcuts "
                     "read their 8-bit tensor (cuvil-quantize-residuals)"),
      llvm::cl::init(false)};
};

struct Level2PipelineOptions
    : public mlir::PassPipelineOptions<Level2PipelineOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("The target whose level2 passes "
                                            "run (a name or triple)"),
                             llvm::cl::init("x86")};
};

} // namespace

void registerCuvilPipelines(const TargetRegistry &targets) {
  registerCuvilPasses();
  for (const TargetBackend *target : targets.list())
    target->registerPasses();
  mlir::PassPipelineRegistration<Level1PipelineOptions>(
      "cuvil-level1-pipeline",
      "Simplify level1: fold constants and shapes, canonicalize, CSE",
      [](mlir::OpPassManager &pm, const Level1PipelineOptions &options) {
        Level1Options level1;
        level1.integerIo = options.integerIo;
        level1.sampleParallel = options.sampleParallel;
        level1.quantizedResiduals = options.quantizedResiduals;
        level1.quantizeShortcuts = options.quantizedResiduals;
        buildLevel1Pipeline(pm, level1);
      });
  mlir::PassPipelineRegistration<Level2PipelineOptions>(
      "cuvil-level2-pipeline",
      "level1 -> level2: bufferize into micro-kernel calls, the target's "
      "kernel choices, layouts and packing, plan memory",
      [&targets](mlir::OpPassManager &pm,
                 const Level2PipelineOptions &options) {
        // An unknown target leaves the pipeline empty; cuvil-opt then
        // reports the pipeline as failed to build.
        if (const TargetBackend *target = targets.lookup(options.target))
          buildLevel2Pipeline(pm, *target);
        else
          llvm::errs() << "cuvil-level2-pipeline: unknown target '"
                       << options.target << "'; known: "
                       << targets.describeChoices() << "\n";
      });
}

} // namespace cuvil
