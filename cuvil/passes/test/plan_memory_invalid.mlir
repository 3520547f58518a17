// RUN: cuvil-opt %s --cuvil-plan-memory --split-input-file --verify-diagnostics

// A batch bound no machine can hold (cuvilc --max-batch=2^58): a clear
// error, not an overflowed offset.
module attributes {cuvil.max_batch = 288230376151711744 : i64} {
  func.func @huge_batch(%batch: index, %in: memref<?x10xf32>, %out: memref<?x10xf32>) {
    // expected-error @+1 {{'memref.alloc' op needs more than 2^62 bytes of workspace with --max-batch=288230376151711744; no machine has that much memory (use a smaller --max-batch)}}
    %a = memref.alloc(%batch) {alignment = 64 : i64} : memref<?x10xf32>
    cuvil_l2.ukernel_call "relu" ins(%in : memref<?x10xf32>) outs(%a : memref<?x10xf32>)
    cuvil_l2.ukernel_call "relu" ins(%a : memref<?x10xf32>) outs(%out : memref<?x10xf32>)
    return
  }
}

// -----

// Buffers that each fit but together would not: placement stops at 2^62.
func.func @too_much_live(%batch: index, %in: memref<1xf32>, %out: memref<1xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<576460752303423488xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<576460752303423488xf32>
  // expected-error @+1 {{'memref.alloc' op needs more than 2^62 bytes of workspace; no machine has that much memory}}
  %c = memref.alloc() {alignment = 64 : i64} : memref<576460752303423488xf32>
  cuvil_l2.ukernel_call "relu" ins(%in : memref<1xf32>) outs(%a : memref<576460752303423488xf32>)
  cuvil_l2.ukernel_call "relu" ins(%in : memref<1xf32>) outs(%b : memref<576460752303423488xf32>)
  cuvil_l2.ukernel_call "relu" ins(%in : memref<1xf32>) outs(%c : memref<576460752303423488xf32>)
  cuvil_l2.ukernel_call "add" ins(%a, %b : memref<576460752303423488xf32>, memref<576460752303423488xf32>) outs(%out : memref<1xf32>)
  cuvil_l2.ukernel_call "add" ins(%c, %b : memref<576460752303423488xf32>, memref<576460752303423488xf32>) outs(%out : memref<1xf32>)
  return
}
