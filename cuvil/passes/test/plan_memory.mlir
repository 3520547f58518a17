// RUN: cuvil-opt %s --cuvil-plan-memory --split-input-file | FileCheck %s

// A chain a -> b -> c -> d: a and c may share bytes (c is written after a's
// last read), b and d likewise; so the arena holds two buffers, the lower
// bound, although four are allocated.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: %[[ARENA:[a-z0-9]+]]: memref<8192xi8> {cuvil_l2.arena})
// CHECK-SAME: cuvil.arena_bytes = 8192 : i64, cuvil.intermediate_bytes = 16384 : i64, cuvil.live_bytes_bound = 8192 : i64
// CHECK: %[[A:.+]] = cuvil_l2.view %[[ARENA]][0] : memref<8192xi8> to memref<1024xf32>
// CHECK: %[[B:.+]] = cuvil_l2.view %[[ARENA]][4096] : memref<8192xi8> to memref<1024xf32>
// CHECK: %[[C:.+]] = cuvil_l2.view %[[ARENA]][0] : memref<8192xi8> to memref<1024xf32>
// CHECK: %[[D:.+]] = cuvil_l2.view %[[ARENA]][4096] : memref<8192xi8> to memref<1024xf32>
// CHECK-NOT: memref.alloc
func.func @chain(%batch: index, %in: memref<1024xf32>, %out: memref<1024xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  cuvil_l2.ukernel_call "relu" ins(%in : memref<1024xf32>) outs(%a : memref<1024xf32>)
  %b = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  cuvil_l2.ukernel_call "relu" ins(%a : memref<1024xf32>) outs(%b : memref<1024xf32>)
  %c = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  cuvil_l2.ukernel_call "relu" ins(%b : memref<1024xf32>) outs(%c : memref<1024xf32>)
  %d = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  cuvil_l2.ukernel_call "relu" ins(%c : memref<1024xf32>) outs(%d : memref<1024xf32>)
  cuvil_l2.ukernel_call "relu" ins(%d : memref<1024xf32>) outs(%out : memref<1024xf32>)
  return
}

// -----

// A value kept alive across the block (a residual) cannot share with
// anything in between; dynamic sizes are planned at the module's max batch.
// CHECK: module attributes {cuvil.max_batch = 4 : i64}
// CHECK-LABEL: func.func @residual
// CHECK-SAME: %[[ARENA:[a-z0-9]+]]: memref<384xi8> {cuvil_l2.arena})
// CHECK-SAME: cuvil.arena_bytes = 384 : i64, cuvil.intermediate_bytes = 384 : i64, cuvil.live_bytes_bound = 384 : i64
// CHECK: cuvil_l2.view %[[ARENA]][{{[0-9]+}}] (%{{.+}}) bounds [4] : memref<384xi8> to memref<?x8xf32>
// CHECK: cuvil_l2.view %[[ARENA]][{{[0-9]+}}] (%{{.+}}) bounds [4]
// CHECK: cuvil_l2.view %[[ARENA]][{{[0-9]+}}] (%{{.+}}) bounds [4]
module attributes {cuvil.max_batch = 4 : i64} {
  func.func @residual(%batch: index, %in: memref<?x8xf32>, %out: memref<?x8xf32>) {
    %r = memref.alloc(%batch) {alignment = 64 : i64} : memref<?x8xf32>
    cuvil_l2.ukernel_call "relu" ins(%in : memref<?x8xf32>) outs(%r : memref<?x8xf32>)
    %a = memref.alloc(%batch) {alignment = 64 : i64} : memref<?x8xf32>
    cuvil_l2.ukernel_call "relu" ins(%r : memref<?x8xf32>) outs(%a : memref<?x8xf32>)
    %b = memref.alloc(%batch) {alignment = 64 : i64} : memref<?x8xf32>
    cuvil_l2.ukernel_call "relu" ins(%a : memref<?x8xf32>) outs(%b : memref<?x8xf32>)
    cuvil_l2.ukernel_call "add" ins(%b, %r : memref<?x8xf32>, memref<?x8xf32>) outs(%out : memref<?x8xf32>)
    return
  }
}

// -----

// A buffer a loop body reads but defines outside (%x) lives until the loop
// ends: the body's own buffer (%t) may not take its bytes though %x's last
// use comes first. Buffers of the two branches of an if share bytes.
// CHECK-LABEL: func @loop_lifetimes
// CHECK: cuvil_l2.view %{{.+}}[0] {{.+}} to memref<16xf32>
// CHECK: cuvil_l2.loop
// CHECK:   cuvil_l2.view %{{.+}}[64] {{.+}} to memref<16xf32>
// CHECK: cuvil_l2.if
// CHECK:   cuvil_l2.view %{{.+}}[0] {{.+}} to memref<16xf32>
// CHECK: } else {
// CHECK:   cuvil_l2.view %{{.+}}[0] {{.+}} to memref<16xf32>
func.func @loop_lifetimes(%batch: index, %c: memref<i1>, %in: memref<16xf32>, %out: memref<16xf32>) {
  %x = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  cuvil_l2.ukernel_call "relu" ins(%in : memref<16xf32>) outs(%x : memref<16xf32>)
  cuvil_l2.loop while %c : memref<i1> {
    cuvil_l2.ukernel_call "relu" ins(%x : memref<16xf32>) outs(%out : memref<16xf32>)
    %t = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    cuvil_l2.ukernel_call "relu" ins(%out : memref<16xf32>) outs(%t : memref<16xf32>)
    cuvil_l2.copy %t, %out : memref<16xf32>, memref<16xf32>
  }
  cuvil_l2.if %c : memref<i1> {
    %a = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    cuvil_l2.ukernel_call "relu" ins(%in : memref<16xf32>) outs(%a : memref<16xf32>)
    cuvil_l2.copy %a, %out : memref<16xf32>, memref<16xf32>
  } else {
    %b = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    cuvil_l2.ukernel_call "neg" ins(%in : memref<16xf32>) outs(%b : memref<16xf32>)
    cuvil_l2.copy %b, %out : memref<16xf32>, memref<16xf32>
  }
  return
}
