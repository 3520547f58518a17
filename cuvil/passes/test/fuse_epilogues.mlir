// RUN: cuvil-opt %s --cuvil-fuse-epilogues --split-input-file | FileCheck %s
// RUN: cuvil-opt %s --cuvil-fuse-epilogues="quantized-residuals=1" --split-input-file | FileCheck %s --check-prefix=BYTES
// RUN: cuvil-opt %s --cuvil-fuse-epilogues="requantize=0" --split-input-file | FileCheck %s --check-prefix=FLOATOUT

// A ResNet basic block: conv + relu, and conv + residual add + relu, each
// become one group; the group takes the producer's operands, then the
// residual.
// CHECK-LABEL: func.func @basic_block
// CHECK-SAME: (%[[X:.+]]: tensor<?x8x6x6xf32>)
// CHECK: %[[W:.+]] = cuvil.constant dense<5.000000e-01>
// CHECK: %[[B:.+]] = cuvil.constant dense<2.500000e-01>
// CHECK: %[[G1:.+]] = cuvil.fused_group kind = "epilogue"(%[[X]], %[[W]], %[[B]]) : (tensor<?x8x6x6xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<?x8x6x6xf32> {
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<?x8x6x6xf32>, %[[A1:.+]]: tensor<8x8x3x3xf32>, %[[A2:.+]]: tensor<8xf32>):
// CHECK-NEXT: %[[C:.+]] = cuvil.conv2d %[[A0]], %[[A1]], %[[A2]]
// CHECK-NEXT: %[[R:.+]] = cuvil.relu %[[C]]
// CHECK-NEXT: cuvil.yield %[[R]]
// CHECK: %[[G2:.+]] = cuvil.fused_group kind = "epilogue"(%[[G1]], %[[W]], %[[X]])
// CHECK-NEXT: ^bb0(%[[B0:.+]]: tensor<?x8x6x6xf32>, %[[B1:.+]]: tensor<8x8x3x3xf32>, %[[B2:.+]]: tensor<?x8x6x6xf32>):
// CHECK-NEXT: %[[C2:.+]] = cuvil.conv2d %[[B0]], %[[B1]]
// CHECK-NEXT: %[[S:.+]] = cuvil.add %[[C2]], %[[B2]]
// CHECK-NEXT: %[[R2:.+]] = cuvil.relu %[[S]]
// CHECK-NEXT: cuvil.yield %[[R2]]
// CHECK: return %[[G2]]
// CHECK-NOT: cuvil.relu
func.func @basic_block(%x: tensor<?x8x6x6xf32>) -> tensor<?x8x6x6xf32> {
  %w = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  %b = cuvil.constant dense<0.25> : tensor<8xf32>
  %c1 = cuvil.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>} : tensor<?x8x6x6xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>
  %r1 = cuvil.relu %c1 : tensor<?x8x6x6xf32>
  %c2 = cuvil.conv2d %r1, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<?x8x6x6xf32>, tensor<8x8x3x3xf32>
  %s = cuvil.add %c2, %x : tensor<?x8x6x6xf32>, tensor<?x8x6x6xf32>
  %y = cuvil.relu %s : tensor<?x8x6x6xf32>
  return %y : tensor<?x8x6x6xf32>
}

// -----

// relu6 (clip) keeps its bounds; a residual on the left works too.
// CHECK-LABEL: func.func @clip_and_left_residual
// CHECK: cuvil.fused_group kind = "epilogue"
// CHECK: cuvil.conv2d
// CHECK-NEXT: cuvil.clip %{{.+}} min = 0.000000e+00 max = 6.000000e+00
// CHECK: cuvil.fused_group kind = "epilogue"
// CHECK: %[[C:.+]] = cuvil.conv2d
// CHECK-NEXT: cuvil.add %{{.+}}, %[[C]]
// CHECK-NEXT: cuvil.yield
func.func @clip_and_left_residual(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %w = cuvil.constant dense<0.5> : tensor<4x4x1x1xf32>
  %c = cuvil.conv2d %x, %w : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>
  %r = cuvil.clip %c min = 0.0 max = 6.0 : tensor<1x4x5x5xf32>
  %c2 = cuvil.conv2d %r, %w : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>
  %y = cuvil.add %x, %c2 : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>
  return %y : tensor<1x4x5x5xf32>
}

// -----

// Not fused: a convolution used twice (its value must exist), a broadcast
// add (not a residual), and an activation before the add (the kernel
// applies add first). The relu of the last conv is fused; the add after it
// stays.
// CHECK-LABEL: func.func @not_fused
// CHECK: %[[C1:.+]] = cuvil.conv2d
// CHECK: cuvil.relu %[[C1]]
// CHECK: cuvil.add %[[C1]]
// CHECK: %[[C2:.+]] = cuvil.conv2d
// CHECK: cuvil.add %[[C2]], %{{.+}} : tensor<1x4x5x5xf32>, tensor<4x1x1xf32>
// CHECK: %[[G:.+]] = cuvil.fused_group kind = "epilogue"
// CHECK: cuvil.conv2d
// CHECK-NEXT: cuvil.relu
// CHECK-NEXT: cuvil.yield
// CHECK: cuvil.add %[[G]]
func.func @not_fused(%x: tensor<1x4x5x5xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) {
  %w = cuvil.constant dense<0.5> : tensor<4x4x1x1xf32>
  %bias = cuvil.constant dense<1.0> : tensor<4x1x1xf32>
  %c1 = cuvil.conv2d %x, %w : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>
  %r1 = cuvil.relu %c1 : tensor<1x4x5x5xf32>
  %a1 = cuvil.add %c1, %r1 : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>
  %c2 = cuvil.conv2d %x, %w : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>
  %a2 = cuvil.add %c2, %bias : tensor<1x4x5x5xf32>, tensor<4x1x1xf32>
  %c3 = cuvil.conv2d %x, %w : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>
  %r3 = cuvil.relu %c3 : tensor<1x4x5x5xf32>
  %a3 = cuvil.add %r3, %x : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>
  return %a1, %a2, %a3 : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>
}

// -----

// A linear layer (gemm with a per-column bias) takes its residual add and
// activation too; a scaled gemm and one with a full-matrix C do not.
// CHECK-LABEL: func.func @linear_layers
// CHECK: %[[G:.+]] = cuvil.fused_group kind = "epilogue"(%arg0, %{{.+}}, %{{.+}}) :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: cuvil.gemm
// CHECK-NEXT: cuvil.add
// CHECK-NEXT: cuvil.relu
// CHECK: cuvil.gemm %[[G]], %{{.+}}, %{{.+}} {alpha = 5.000000e-01 : f64}
// CHECK-NEXT: cuvil.relu
// CHECK: cuvil.gemm %{{.+}}, %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>
// CHECK-NEXT: cuvil.relu
func.func @linear_layers(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = cuvil.constant dense<0.5> : tensor<8x8xf32>
  %b = cuvil.constant dense<0.25> : tensor<8xf32>
  %full = cuvil.constant dense<0.125> : tensor<4x8xf32>
  %y = cuvil.gemm %x, %w, %b : tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>
  %s = cuvil.add %y, %x : tensor<4x8xf32>, tensor<4x8xf32>
  %r = cuvil.relu %s : tensor<4x8xf32>
  %scaled = cuvil.gemm %r, %w, %b {alpha = 0.5 : f64} : tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>
  %r2 = cuvil.relu %scaled : tensor<4x8xf32>
  %z = cuvil.gemm %r2, %w, %full : tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>
  %r3 = cuvil.relu %z : tensor<4x8xf32>
  return %r2, %r3 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// PyTorch's linear layer on 3-D inputs: matmul + a broadcast bias add, then a
// residual add and relu, all fused; a bias that is not one per column is not.
// CHECK-LABEL: func.func @linear_3d
// CHECK: %[[G:.+]] = cuvil.fused_group kind = "epilogue"(%arg0, %{{.+}}, %{{.+}}) :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: cuvil.matmul
// CHECK-NEXT: cuvil.add {{.*}}tensor<1x4x8xf32>, tensor<8xf32>
// CHECK-NEXT: cuvil.add {{.*}}tensor<1x4x8xf32>, tensor<1x4x8xf32>
// CHECK-NEXT: cuvil.relu
// CHECK: %[[M:.+]] = cuvil.matmul %[[G]]
// CHECK-NEXT: cuvil.add %[[M]], %{{.+}} : tensor<1x4x8xf32>, tensor<4x8xf32>
func.func @linear_3d(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %w = cuvil.constant dense<0.5> : tensor<8x8xf32>
  %b = cuvil.constant dense<0.25> : tensor<8xf32>
  %b2 = cuvil.constant dense<0.25> : tensor<4x8xf32>
  %y = cuvil.matmul %x, %w : tensor<1x4x8xf32>, tensor<8x8xf32>
  %yb = cuvil.add %y, %b : tensor<1x4x8xf32>, tensor<8xf32>
  %s = cuvil.add %yb, %x : tensor<1x4x8xf32>, tensor<1x4x8xf32>
  %r = cuvil.relu %s : tensor<1x4x8xf32>
  %z = cuvil.matmul %r, %w : tensor<1x4x8xf32>, tensor<8x8xf32>
  %zb = cuvil.add %z, %b2 : tensor<1x4x8xf32>, tensor<4x8xf32>
  return %zb : tensor<1x4x8xf32>
}

// -----

// An int8 linear layer: the integer product's bias add and relu fuse like a
// float matmul's; the group takes the quantized operands.
!a = !quant.uniform<u8:f32, 0.05:120>
!w = !quant.uniform<i8:f32:1, {0.5, 0.25}>
// CHECK-LABEL: func.func @int8_linear
// CHECK: cuvil.fused_group kind = "epilogue"(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<?x3x!quant.uniform<u8:f32, 5.000000e-02:120>>, tensor<3x2x!quant.uniform<i8:f32:1, {5.000000e-01,2.500000e-01}>>, tensor<2xf32>) -> tensor<?x2xf32>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: cuvil.quantized_matmul
// CHECK-NEXT: cuvil.add {{.*}}tensor<?x2xf32>, tensor<2xf32>
// CHECK-NEXT: cuvil.relu
func.func @int8_linear(%x: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %q = cuvil.quantize %x : tensor<?x3xf32> to tensor<?x3x!a>
  %c = cuvil.constant dense<[[1, -2], [3, 4], [-5, 6]]> : tensor<3x2xi8>
  %wq = cuvil.storage_cast %c : tensor<3x2xi8> to tensor<3x2x!w>
  %b = cuvil.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %y = cuvil.quantized_matmul %q, %wq : tensor<?x3x!a>, tensor<3x2x!w>
  %yb = cuvil.add %y, %b : tensor<?x2xf32>, tensor<2xf32>
  %r = cuvil.relu %yb : tensor<?x2xf32>
  return %r : tensor<?x2xf32>
}

// -----

// Two int8 linear layers: the first's bias, relu and the quantize of the
// second's input join its group, which yields the uint8 tensor itself.
!a = !quant.uniform<u8:f32, 0.05:120>
!h = !quant.uniform<u8:f32, 0.1>
!w = !quant.uniform<i8:f32, 0.5>
// CHECK-LABEL: func.func @requantized_linear
// CHECK: %[[G:.+]] = cuvil.fused_group kind = "epilogue"({{.+}}) : ({{.+}}) -> tensor<?x3x!quant.uniform<u8:f32, 1.000000e-01>> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: cuvil.quantized_matmul
// CHECK-NEXT: cuvil.add
// CHECK-NEXT: cuvil.relu
// CHECK-NEXT: cuvil.quantize
// CHECK: cuvil.quantized_matmul %[[G]]
// Without `requantize` (a target whose products quantize what they read),
// the group ends at the relu, and the quantize stays after it.
// FLOATOUT-LABEL: func.func @requantized_linear
// FLOATOUT: %[[G:.+]] = cuvil.fused_group kind = "epilogue"({{.+}}) : ({{.+}}) -> tensor<?x3xf32> {
// FLOATOUT: cuvil.relu
// FLOATOUT-NEXT: cuvil.yield
// FLOATOUT: cuvil.quantize %[[G]]
func.func @requantized_linear(%x: tensor<?x3x!a>) -> tensor<?x3xf32> {
  %c = cuvil.constant dense<1> : tensor<3x3xi8>
  %w = cuvil.storage_cast %c : tensor<3x3xi8> to tensor<3x3x!w>
  %b = cuvil.constant dense<0.5> : tensor<3xf32>
  %y1 = cuvil.quantized_matmul %x, %w : tensor<?x3x!a>, tensor<3x3x!w>
  %yb = cuvil.add %y1, %b : tensor<?x3xf32>, tensor<3xf32>
  %r1 = cuvil.relu %yb : tensor<?x3xf32>
  %q1 = cuvil.quantize %r1 : tensor<?x3xf32> to tensor<?x3x!h>
  %y2 = cuvil.quantized_matmul %q1, %w : tensor<?x3x!h>, tensor<3x3x!w>
  return %y2 : tensor<?x3xf32>
}

// -----

// Two int8 convolutions: the first's relu and the quantize of the second's
// input join its group, which yields the uint8 tensor itself (no float32
// tensor between them). The second's result stays float32: its quantize
// has another user beside it (a float32 residual is returned too).
!q = !quant.uniform<u8:f32, 0.05:0>
!w = !quant.uniform<i8:f32, 0.5>
// CHECK-LABEL: func.func @requantized
// CHECK: %[[G:.+]] = cuvil.fused_group kind = "epilogue"({{.+}}) : ({{.+}}) -> tensor<1x8x5x5x!quant.uniform<u8:f32, 5.000000e-02>> {
// CHECK: %[[C:.+]] = cuvil.quantized_conv2d
// CHECK-NEXT: %[[R:.+]] = cuvil.relu %[[C]]
// CHECK-NEXT: %[[Q:.+]] = cuvil.quantize %[[R]]
// CHECK-NEXT: cuvil.yield %[[Q]]
// CHECK: %[[Y:.+]] = cuvil.quantized_conv2d %[[G]]
// CHECK-NEXT: %[[Z:.+]] = cuvil.quantize %[[Y]]
func.func @requantized(%x: tensor<1x8x5x5x!q>) -> (tensor<1x8x5x5x!q>, tensor<1x8x5x5xf32>) {
  %c = cuvil.constant dense<1> : tensor<8x8x1x1xi8>
  %w = cuvil.storage_cast %c : tensor<8x8x1x1xi8> to tensor<8x8x1x1x!w>
  %y1 = cuvil.quantized_conv2d %x, %w : tensor<1x8x5x5x!q>, tensor<8x8x1x1x!w>
  %r1 = cuvil.relu %y1 : tensor<1x8x5x5xf32>
  %q1 = cuvil.quantize %r1 : tensor<1x8x5x5xf32> to tensor<1x8x5x5x!q>
  %y2 = cuvil.quantized_conv2d %q1, %w : tensor<1x8x5x5x!q>, tensor<8x8x1x1x!w>
  %q2 = cuvil.quantize %y2 : tensor<1x8x5x5xf32> to tensor<1x8x5x5x!q>
  return %q2, %y2 : tensor<1x8x5x5x!q>, tensor<1x8x5x5xf32>
}

// -----

// An int8 convolution's shortcut read as bytes (cuvil-quantize-residuals'
// form): with quantized-residuals, the dequantize joins the group, whose
// input is the 8-bit tensor; without, the group takes the float32 value.
!q = !quant.uniform<u8:f32, 0.05:3>
!w = !quant.uniform<i8:f32, 0.5>
// CHECK-LABEL: func.func @quantized_residual
// CHECK: %[[Q:.+]] = cuvil.quantize %arg0
// CHECK: %[[D:.+]] = cuvil.dequantize %[[Q]]
// CHECK: cuvil.fused_group kind = "epilogue"(%arg1, %{{.+}}, %[[D]])
// CHECK: cuvil.add
// CHECK-NEXT: cuvil.relu
// BYTES-LABEL: func.func @quantized_residual
// BYTES: %[[Q:.+]] = cuvil.quantize %arg0
// BYTES-NOT: cuvil.dequantize
// BYTES: cuvil.fused_group kind = "epilogue"(%arg1, %{{.+}}, %[[Q]]) : {{.+}} -> tensor<1x8x5x5x!quant.uniform<u8:f32, 5.000000e-02:3>> {
// BYTES-NEXT: ^bb0(%[[X:.+]]: tensor<1x8x5x5x!quant.uniform<u8:f32, 5.000000e-02:3>>, %[[W:.+]]: tensor<8x8x1x1x!quant.uniform<i8:f32, 5.000000e-01>>, %[[R:.+]]: tensor<1x8x5x5x!quant.uniform<u8:f32, 5.000000e-02:3>>):
// BYTES-NEXT: %[[C:.+]] = cuvil.quantized_conv2d %[[X]], %[[W]]
// BYTES-NEXT: %[[RD:.+]] = cuvil.dequantize %[[R]]
// BYTES-NEXT: %[[S:.+]] = cuvil.add %[[RD]], %[[C]]
// BYTES-NEXT: %[[RELU:.+]] = cuvil.relu %[[S]]
// BYTES-NEXT: %[[OUT:.+]] = cuvil.quantize %[[RELU]]
// BYTES-NEXT: cuvil.yield %[[OUT]]
func.func @quantized_residual(%y: tensor<1x8x5x5xf32>, %x: tensor<1x8x5x5x!q>) -> tensor<1x8x5x5x!q> {
  %c = cuvil.constant dense<1> : tensor<8x8x1x1xi8>
  %w = cuvil.storage_cast %c : tensor<8x8x1x1xi8> to tensor<8x8x1x1x!w>
  %q = cuvil.quantize %y : tensor<1x8x5x5xf32> to tensor<1x8x5x5x!q>
  %d = cuvil.dequantize %q : tensor<1x8x5x5x!q>
  %conv = cuvil.quantized_conv2d %x, %w : tensor<1x8x5x5x!q>, tensor<8x8x1x1x!w>
  %s = cuvil.add %d, %conv : tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>
  %r = cuvil.relu %s : tensor<1x8x5x5xf32>
  %out = cuvil.quantize %r : tensor<1x8x5x5xf32> to tensor<1x8x5x5x!q>
  return %out : tensor<1x8x5x5x!q>
}
