// RUN: cuvil-opt %s --cuvil-fuse-elementwise --split-input-file | FileCheck %s

// ONNX's decomposed exact GELU: five ops, one map. The splat constants become
// scalars in the region and their tensors go away.
// CHECK-LABEL: func.func @gelu
// CHECK-SAME: (%[[X:.+]]: tensor<?x4x8xf32>)
// CHECK-NOT: cuvil.constant
// CHECK: %[[M:.+]] = cuvil.map_reduce ins(%[[X]] : tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
// CHECK-NEXT: ^bb0(%[[E:.+]]: f32):
// CHECK-NEXT: %[[S2:.+]] = arith.constant 1.41421354 : f32
// CHECK-NEXT: %[[D:.+]] = arith.divf %[[E]], %[[S2]] : f32
// CHECK-NEXT: %[[ERF:.+]] = math.erf %[[D]] : f32
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[A:.+]] = arith.addf %[[ERF]], %[[ONE]] : f32
// CHECK-NEXT: %[[P:.+]] = arith.mulf %[[E]], %[[A]] : f32
// CHECK-NEXT: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[Y:.+]] = arith.mulf %[[P]], %[[HALF]] : f32
// CHECK-NEXT: cuvil.yield %[[Y]] : f32
// CHECK: return %[[M]]
func.func @gelu(%x: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
  %s = cuvil.constant dense<1.4142135> : tensor<f32>
  %one = cuvil.constant dense<1.0> : tensor<f32>
  %half = cuvil.constant dense<0.5> : tensor<f32>
  %d = cuvil.div %x, %s : tensor<?x4x8xf32>, tensor<f32>
  %e = cuvil.erf %d : tensor<?x4x8xf32>
  %a = cuvil.add %e, %one : tensor<?x4x8xf32>, tensor<f32>
  %m = cuvil.mul %x, %a : tensor<?x4x8xf32>, tensor<?x4x8xf32>
  %y = cuvil.mul %m, %half : tensor<?x4x8xf32>, tensor<f32>
  return %y : tensor<?x4x8xf32>
}

// -----

// SiLU as x * sigmoid(x): x is read once per element. The sigmoid keeps the
// kernels' formula, 1 / (1 + exp(-x)).
// CHECK-LABEL: func.func @silu
// CHECK: cuvil.map_reduce ins(%{{.+}} : tensor<1x16x8x8xf32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: f32):
// CHECK-NEXT: %[[N:.+]] = arith.negf %[[E]]
// CHECK-NEXT: %[[X:.+]] = math.exp %[[N]]
// CHECK-NEXT: arith.constant 1.0
// CHECK-NEXT: %[[D:.+]] = arith.addf %{{.+}}, %[[X]]
// CHECK-NEXT: arith.constant 1.0
// CHECK-NEXT: %[[S:.+]] = arith.divf %{{.+}}, %[[D]]
// CHECK-NEXT: %[[Y:.+]] = arith.mulf %[[E]], %[[S]]
// CHECK-NEXT: cuvil.yield %[[Y]]
// CHECK-NOT: cuvil.sigmoid
func.func @silu(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %s = cuvil.sigmoid %x : tensor<1x16x8x8xf32>
  %y = cuvil.mul %x, %s : tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>
  return %y : tensor<1x16x8x8xf32>
}

// -----

// Broadcast inputs (a per-channel scale, a per-row shift) stay tensor inputs
// of the map, in first-use order. pow by a constant 2 is a product; relu and
// clip keep their NaN behavior (x > 0 ? x : 0).
// CHECK-LABEL: func.func @broadcast_inputs
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xf32>, %[[G:.+]]: tensor<8xf32>, %[[B:.+]]: tensor<4x1xf32>)
// CHECK: cuvil.map_reduce ins(%[[X]], %[[G]], %[[B]] : tensor<2x4x8xf32>, tensor<8xf32>, tensor<4x1xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: ^bb0(%[[E:.+]]: f32, %[[EG:.+]]: f32, %[[EB:.+]]: f32):
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[E]], %[[EG]]
// CHECK-NEXT: %[[A:.+]] = arith.addf %[[M]], %[[EB]]
// CHECK-NEXT: arith.constant 2.0
// CHECK-NEXT: %[[SQ:.+]] = arith.mulf %[[A]], %[[A]]
// CHECK-NEXT: %[[Z:.+]] = arith.constant 0.0
// CHECK-NEXT: %[[C:.+]] = arith.cmpf ogt, %[[SQ]], %[[Z]]
// CHECK-NEXT: %[[R:.+]] = arith.select %[[C]], %[[SQ]], %[[Z]]
// CHECK-NEXT: %[[HI:.+]] = arith.constant 6.0
// CHECK-NEXT: %[[C2:.+]] = arith.cmpf ogt, %[[R]], %[[HI]]
// CHECK-NEXT: %[[Y:.+]] = arith.select %[[C2]], %[[HI]], %[[R]]
// CHECK-NEXT: cuvil.yield %[[Y]]
func.func @broadcast_inputs(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %b: tensor<4x1xf32>) -> tensor<2x4x8xf32> {
  %two = cuvil.constant dense<2.0> : tensor<1xf32>
  %m = cuvil.mul %x, %g : tensor<2x4x8xf32>, tensor<8xf32>
  %a = cuvil.add %m, %b : tensor<2x4x8xf32>, tensor<4x1xf32>
  %p = cuvil.pow %a, %two : tensor<2x4x8xf32>, tensor<1xf32>
  %r = cuvil.relu %p : tensor<2x4x8xf32>
  %y = cuvil.clip %r max = 6.0 : tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// A value with a user outside the group ends it: %a is returned too, so it
// roots its own map (with %m) and the sigmoid-mul pair reads it.
// CHECK-LABEL: func.func @shared_value
// CHECK: %[[A:.+]] = cuvil.map_reduce ins(%{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: %[[K:.+]] = cuvil.map_reduce ins(%[[A]] : tensor<4x8xf32>)
// CHECK: return %[[K]], %[[A]]
func.func @shared_value(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m = cuvil.mul %x, %y : tensor<4x8xf32>, tensor<4x8xf32>
  %a = cuvil.add %m, %y : tensor<4x8xf32>, tensor<4x8xf32>
  %s = cuvil.sigmoid %a : tensor<4x8xf32>
  %k = cuvil.mul %s, %a : tensor<4x8xf32>, tensor<4x8xf32>
  return %k, %a : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A diamond (%a used twice, both inside the group) fuses whole.
// CHECK-LABEL: func.func @diamond
// CHECK: cuvil.map_reduce ins(%{{.+}} : tensor<16xf32>)
// CHECK-NOT: cuvil.map_reduce
// CHECK-NOT: cuvil.exp
// CHECK-NOT: cuvil.neg
func.func @diamond(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = cuvil.exp %x : tensor<16xf32>
  %b = cuvil.neg %a : tensor<16xf32>
  %c = cuvil.mul %a, %b : tensor<16xf32>, tensor<16xf32>
  return %c : tensor<16xf32>
}

// -----

// Not fused: a producer of another shape (it would be recomputed per
// element of the larger result), integer and half tensors, a single op,
// and ops a convolution epilogue already took.
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: cuvil.map_reduce
// CHECK: cuvil.sigmoid %{{.+}} : tensor<1x16x1x1xf32>
// CHECK: cuvil.mul
// CHECK: cuvil.neg %{{.+}} : tensor<8xi32>
// CHECK: cuvil.abs %{{.+}} : tensor<8xi32>
// CHECK: cuvil.neg %{{.+}} : tensor<8xf16>
// CHECK: cuvil.abs %{{.+}} : tensor<8xf16>
// CHECK: cuvil.fused_group kind = "epilogue"
// CHECK: cuvil.relu
func.func @not_fused(%x: tensor<1x16x8x8xf32>, %se: tensor<1x16x1x1xf32>, %i: tensor<8xi32>, %h: tensor<8xf16>) -> (tensor<1x16x8x8xf32>, tensor<8xi32>, tensor<8xf16>, tensor<1x16x8x8xf32>) {
  %s = cuvil.sigmoid %se : tensor<1x16x1x1xf32>
  %y = cuvil.mul %x, %s : tensor<1x16x8x8xf32>, tensor<1x16x1x1xf32>
  %n = cuvil.neg %i : tensor<8xi32>
  %a = cuvil.abs %n : tensor<8xi32>
  %hn = cuvil.neg %h : tensor<8xf16>
  %ha = cuvil.abs %hn : tensor<8xf16>
  %w = cuvil.constant dense<0.5> : tensor<16x16x1x1xf32>
  %g = cuvil.fused_group kind = "epilogue"(%x, %w) : (tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x8x8xf32> {
  ^bb0(%gx: tensor<1x16x8x8xf32>, %gw: tensor<16x16x1x1xf32>):
    %c = cuvil.conv2d %gx, %gw : tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>
    %r = cuvil.relu %c : tensor<1x16x8x8xf32>
    cuvil.yield %r : tensor<1x16x8x8xf32>
  }
  return %y, %a, %ha, %g : tensor<1x16x8x8xf32>, tensor<8xi32>, tensor<8xf16>, tensor<1x16x8x8xf32>
}

// -----

// Math functions and parameterized activations fuse like the rest: a sine,
// a leaky relu and a per-channel prelu are one map over memory.
// CHECK-LABEL: func.func @math_chain
// CHECK: cuvil.map_reduce ins(%{{.+}}, %{{.+}} : tensor<2x8xf32>, tensor<8xf32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: f32, %[[S:.+]]: f32):
// CHECK-NEXT: %[[SIN:.+]] = math.sin %[[E]] : f32
// CHECK-DAG: %[[SCALED:.+]] = arith.mulf %{{.+}}, %[[SIN]] : f32
// CHECK-DAG: %[[GE:.+]] = arith.cmpf oge, %[[SIN]]
// CHECK: %[[LEAKY:.+]] = arith.select %[[GE]], %[[SIN]], %[[SCALED]] : f32
// CHECK-DAG: %[[P:.+]] = arith.mulf %[[LEAKY]], %[[S]] : f32
// CHECK-DAG: %[[LT:.+]] = arith.cmpf olt, %[[LEAKY]]
// CHECK: %[[Y:.+]] = arith.select %[[LT]], %[[P]], %[[LEAKY]] : f32
// CHECK-NEXT: cuvil.yield %[[Y]] : f32
// CHECK-NOT: cuvil.sin
func.func @math_chain(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = cuvil.sin %x : tensor<2x8xf32>
  %1 = cuvil.leaky_relu %0 alpha = 0.1 : tensor<2x8xf32>
  %2 = cuvil.prelu %1, %s : tensor<2x8xf32>, tensor<8xf32>
  return %2 : tensor<2x8xf32>
}
