// cuvilc's pass tooling: the IR after chosen passes, pass timing, and a
// reproducer when a pipeline fails, which cuvil-opt reruns.

// RUN: cuvilc --quiet %{cuvil_root}/examples/resnet_block.mlir --emit=mlir-level1 -o /dev/null --print-ir-after=cuvil-fuse-epilogues --time-passes 2>&1 | FileCheck %s --check-prefix=TOOLS
// TOOLS: IR Dump After CuvilFuseEpilogues (cuvil-fuse-epilogues)
// TOOLS: cuvil.fused_group kind = "epilogue"
// TOOLS-NOT: IR Dump After CuvilPrepackWeights
// TOOLS: Execution time report
// TOOLS: CuvilFuseEpilogues

// A dynamic dimension other than the batch fails in cuvil-lower-to-level2;
// the reproducer holds the level1 IR and the level2 pipeline.
// RUN: rm -f %t.repro.mlir
// RUN: not cuvilc --quiet %s --emit=mlir-level2 --reproducer=%t.repro.mlir 2>&1 | FileCheck %s --check-prefix=FAIL
// FAIL: error: 'func.func' op argument #0 of type 'tensor<?x?xf32>' has a dynamic dimension other than the batch (dimension 0)
// FAIL: A reproducer is in {{.*}}.repro.mlir; rerun it with: cuvil-opt --run-reproducer {{.*}}.repro.mlir
// RUN: FileCheck %s --check-prefix=REPRO < %t.repro.mlir
// REPRO: func.func @two_dynamic
// REPRO: pipeline: "builtin.module(cuvil-lower-to-level2
// RUN: not cuvil-opt --run-reproducer %t.repro.mlir 2>&1 | FileCheck %s --check-prefix=AGAIN
// AGAIN: has a dynamic dimension other than the batch (dimension 0)
func.func @two_dynamic(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %y = cuvil.relu %x : tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// --pass-statistics reports what each pass did (counted by Cuvil itself:
// Debian's LLVM keeps no statistics).
// RUN: cuvilc %{cuvil_root}/examples/resnet_block.mlir --emit=mlir-level1 --quiet --pass-statistics -o %t.stats.mlir 2>&1 | FileCheck %s --check-prefix=STATS
// STATS-DAG: cuvilc: cuvil-fold-batch-norm: {{[1-9][0-9]*}} folded
// STATS-DAG: cuvilc: cuvil-fuse-epilogues: {{[1-9][0-9]*}} groups
// STATS-DAG: cuvilc: cuvil-fuse-epilogues: {{[0-9]+}} bytes-saved
