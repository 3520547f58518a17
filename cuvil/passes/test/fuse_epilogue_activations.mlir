// RUN: cuvil-opt %s --cuvil-fuse-epilogues="activations=relu,clip,hardswish,hardsigmoid,sigmoid,silu" --split-input-file | FileCheck %s
// RUN: cuvil-opt %s --cuvil-fuse-epilogues --split-input-file | FileCheck %s --check-prefix=DEFAULT
// RUN: not cuvil-opt %s --cuvil-fuse-epilogues="activations=relu,gelu" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// The CPU kernels' activations beyond a clamp: MobileNetV3's conv +
// hardswish, its squeeze-excitation's conv + hardsigmoid, EfficientNet's
// conv + SiLU and a residual add then sigmoid. A target that lists only
// relu and clip (the default: the FPGA and MLU kernels) leaves them ops.
// CHECK-LABEL: func.func @activations
// CHECK: cuvil.fused_group kind = "epilogue"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: cuvil.conv2d
// CHECK-NEXT: cuvil.hardswish
// CHECK-NEXT: cuvil.yield
// CHECK: cuvil.fused_group kind = "epilogue"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: cuvil.conv2d
// CHECK-NEXT: cuvil.hardsigmoid %{{.+}} alpha = 2.000000e-01 beta = 4.000000e-01
// CHECK-NEXT: cuvil.yield
// CHECK: cuvil.fused_group kind = "epilogue"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: cuvil.conv2d
// CHECK-NEXT: cuvil.silu
// CHECK-NEXT: cuvil.yield
// CHECK: cuvil.fused_group kind = "epilogue"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: cuvil.conv2d
// CHECK-NEXT: cuvil.add
// CHECK-NEXT: cuvil.sigmoid
// CHECK-NEXT: cuvil.yield
// CHECK-NOT: cuvil.fused_group
// DEFAULT-LABEL: func.func @activations
// DEFAULT-NOT: cuvil.fused_group
// DEFAULT: cuvil.hardswish
// DEFAULT: cuvil.hardsigmoid
// DEFAULT: cuvil.silu
// DEFAULT: cuvil.sigmoid
// UNKNOWN: cuvil-fuse-epilogues: unknown activation 'gelu' (known: relu, clip, hardswish, hardsigmoid, sigmoid, silu)
func.func @activations(%x: tensor<?x4x5x5xf32>) -> tensor<?x4x5x5xf32> {
  %w = cuvil.constant dense<0.5> : tensor<4x4x1x1xf32>
  %c1 = cuvil.conv2d %x, %w : tensor<?x4x5x5xf32>, tensor<4x4x1x1xf32>
  %a1 = cuvil.hardswish %c1 : tensor<?x4x5x5xf32>
  %c2 = cuvil.conv2d %a1, %w : tensor<?x4x5x5xf32>, tensor<4x4x1x1xf32>
  %a2 = cuvil.hardsigmoid %c2 alpha = 0.2 beta = 0.4 : tensor<?x4x5x5xf32>
  %c3 = cuvil.conv2d %a2, %w : tensor<?x4x5x5xf32>, tensor<4x4x1x1xf32>
  %a3 = cuvil.silu %c3 : tensor<?x4x5x5xf32>
  %c4 = cuvil.conv2d %a3, %w : tensor<?x4x5x5xf32>, tensor<4x4x1x1xf32>
  %s4 = cuvil.add %c4, %a3 : tensor<?x4x5x5xf32>, tensor<?x4x5x5xf32>
  %a4 = cuvil.sigmoid %s4 : tensor<?x4x5x5xf32>
  return %a4 : tensor<?x4x5x5xf32>
}

// -----

// After an int8 product only relu and clip fuse: its kernels apply no
// other activation.
!q = !quant.uniform<u8:f32, 0.05:0>
!w = !quant.uniform<i8:f32, 0.5>
// CHECK-LABEL: func.func @int8_producer
// CHECK-NOT: cuvil.fused_group
// CHECK: cuvil.quantized_conv2d
// CHECK-NEXT: cuvil.hardswish
func.func @int8_producer(%x: tensor<1x8x5x5x!q>) -> tensor<1x8x5x5xf32> {
  %c = cuvil.constant dense<1> : tensor<8x8x1x1xi8>
  %w = cuvil.storage_cast %c : tensor<8x8x1x1xi8> to tensor<8x8x1x1x!w>
  %y = cuvil.quantized_conv2d %x, %w : tensor<1x8x5x5x!q>, tensor<8x8x1x1x!w>
  %h = cuvil.hardswish %y : tensor<1x8x5x5xf32>
  return %h : tensor<1x8x5x5xf32>
}
