// RUN: cuvil-opt %s --cuvil-raise-activations --split-input-file | FileCheck %s
// RUN: cuvil-opt %s --cuvil-raise-activations "--cuvil-fuse-epilogues=activations=relu,clip,silu,hardswish" --split-input-file | FileCheck %s --check-prefix=FUSED

// torch's nn.SiLU as ONNX spells it, in either operand order: cuvil.silu.
// CHECK-LABEL: func.func @silu
// CHECK-SAME: (%[[X:.+]]: tensor<1x16x8x8xf32>)
// CHECK-NEXT: %[[A:.+]] = cuvil.silu %[[X]] : tensor<1x16x8x8xf32>
// CHECK-NEXT: %[[B:.+]] = cuvil.silu %[[A]] : tensor<1x16x8x8xf32>
// CHECK-NEXT: return %[[B]]
func.func @silu(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %s = cuvil.sigmoid %x : tensor<1x16x8x8xf32>
  %a = cuvil.mul %x, %s : tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>
  %t = cuvil.sigmoid %a : tensor<1x16x8x8xf32>
  %b = cuvil.mul %t, %a : tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>
  return %b : tensor<1x16x8x8xf32>
}

// -----

// nn.Hardswish before opset 14: HardSigmoid(alpha = 1/6, beta = 1/2) * x.
// CHECK-LABEL: func.func @hardswish
// CHECK-NEXT: %[[H:.+]] = cuvil.hardswish %{{.+}} : tensor<?x8xf32>
// CHECK-NEXT: return %[[H]]
func.func @hardswish(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %g = cuvil.hardsigmoid %x alpha = 0.16666667163372040 : tensor<?x8xf32>
  %y = cuvil.mul %g, %x : tensor<?x8xf32>, tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Left alone: a gate of another value, a gate with another user, a hard
// sigmoid of ONNX's default alpha (0.2).
// CHECK-LABEL: func.func @not_gated_products
// CHECK-NOT: cuvil.silu
// CHECK-NOT: cuvil.hardswish
// CHECK: return
func.func @not_gated_products(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %r: tensor<8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) {
  %sy = cuvil.sigmoid %y : tensor<4x8xf32>
  %other = cuvil.mul %x, %sy : tensor<4x8xf32>, tensor<4x8xf32>
  %sx = cuvil.sigmoid %x : tensor<4x8xf32>
  %shared = cuvil.mul %x, %sx : tensor<4x8xf32>, tensor<4x8xf32>
  %h = cuvil.hardsigmoid %r alpha = 0.2 : tensor<8xf32>
  %plain = cuvil.mul %h, %r : tensor<8xf32>, tensor<8xf32>
  return %other, %shared, %sx, %plain : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>
}

// -----

// The point of raising: the convolution producing x then takes SiLU into
// its epilogue.
// FUSED-LABEL: func.func @conv_silu
// FUSED: cuvil.fused_group kind = "epilogue"
// FUSED-NEXT: ^bb0
// FUSED-NEXT: cuvil.conv2d
// FUSED-NEXT: cuvil.silu
// FUSED-NEXT: cuvil.yield
// FUSED-NOT: cuvil.mul
func.func @conv_silu(%x: tensor<?x4x5x5xf32>) -> tensor<?x4x5x5xf32> {
  %w = cuvil.constant dense<0.5> : tensor<4x4x1x1xf32>
  %c = cuvil.conv2d %x, %w {dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<?x4x5x5xf32>, tensor<4x4x1x1xf32>
  %s = cuvil.sigmoid %c : tensor<?x4x5x5xf32>
  %y = cuvil.mul %c, %s : tensor<?x4x5x5xf32>, tensor<?x4x5x5xf32>
  return %y : tensor<?x4x5x5xf32>
}
