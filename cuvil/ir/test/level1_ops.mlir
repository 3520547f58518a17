// Round trip of every level1 op: parse, verify, print, and parse the printed
// form again (generic form too), with inferred result types checked.
// RUN: cuvil-opt %s | cuvil-opt | FileCheck %s
// RUN: cuvil-opt %s --mlir-print-op-generic | cuvil-opt | FileCheck %s

// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<2x2xf32>, tensor<3xi64>) {
  // CHECK: %[[W:.+]] = cuvil.constant dense_resource<weight> : tensor<2x2xf32>
  %w = cuvil.constant dense_resource<weight> : tensor<2x2xf32>
  // CHECK: cuvil.constant dense<[1, 2, 3]> : tensor<3xi64>
  %s = cuvil.constant dense<[1, 2, 3]> : tensor<3xi64>
  return %w, %s : tensor<2x2xf32>, tensor<3xi64>
}

// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:.+]]: tensor<?x3x1xf32>, %[[B:.+]]: tensor<4xf32>)
func.func @binary(%a: tensor<?x3x1xf32>, %b: tensor<4xf32>) {
  // CHECK: %[[ADD:.+]] = cuvil.add %[[A]], %[[B]] : tensor<?x3x1xf32>, tensor<4xf32>
  %0 = cuvil.add %a, %b : tensor<?x3x1xf32>, tensor<4xf32>
  // CHECK: cuvil.sub %[[ADD]], %[[B]] : tensor<?x3x4xf32>, tensor<4xf32>
  %1 = cuvil.sub %0, %b : tensor<?x3x4xf32>, tensor<4xf32>
  // CHECK: cuvil.mul
  %2 = cuvil.mul %1, %b : tensor<?x3x4xf32>, tensor<4xf32>
  // CHECK: cuvil.div
  %3 = cuvil.div %2, %b : tensor<?x3x4xf32>, tensor<4xf32>
  // CHECK: cuvil.pow
  %4 = cuvil.pow %3, %b : tensor<?x3x4xf32>, tensor<4xf32>
  // CHECK: cuvil.max
  %5 = cuvil.max %4, %b : tensor<?x3x4xf32>, tensor<4xf32>
  // CHECK: cuvil.min
  %6 = cuvil.min %5, %b : tensor<?x3x4xf32>, tensor<4xf32>
  // CHECK: %[[EQ:.+]] = cuvil.equal
  %7 = cuvil.equal %6, %b : tensor<?x3x4xf32>, tensor<4xf32>
  // CHECK: cuvil.less
  %8 = cuvil.less %6, %b : tensor<?x3x4xf32>, tensor<4xf32>
  // CHECK: cuvil.less_equal
  %9 = cuvil.less_equal %6, %b : tensor<?x3x4xf32>, tensor<4xf32>
  // CHECK: cuvil.greater
  %10 = cuvil.greater %6, %b : tensor<?x3x4xf32>, tensor<4xf32>
  // CHECK: cuvil.greater_equal
  %11 = cuvil.greater_equal %6, %b : tensor<?x3x4xf32>, tensor<4xf32>
  // CHECK: cuvil.where %[[EQ]], %{{.+}}, %[[B]] : tensor<?x3x4xi1>, tensor<?x3x4xf32>, tensor<4xf32>
  %12 = cuvil.where %7, %6, %b : tensor<?x3x4xi1>, tensor<?x3x4xf32>, tensor<4xf32>
  // Inferred types feed the next op: these only parse if they were right.
  %13 = cuvil.add %12, %12 : tensor<?x3x4xf32>, tensor<?x3x4xf32>
  return
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<2x8xf32>, %i: tensor<4xi32>) {
  // CHECK: cuvil.relu %{{.+}} : tensor<2x8xf32>
  %0 = cuvil.relu %x : tensor<2x8xf32>
  // CHECK: cuvil.clip %{{.+}} min = 0.000000e+00 max = 6.000000e+00 : tensor<2x8xf32>
  %1 = cuvil.clip %0 min = 0.0 max = 6.0 : tensor<2x8xf32>
  // CHECK: cuvil.clip %{{.+}} max = 1.000000e+00 : tensor<4xi32>
  %2 = cuvil.clip %i max = 1.0 : tensor<4xi32>
  // CHECK: cuvil.sigmoid
  %3 = cuvil.sigmoid %1 : tensor<2x8xf32>
  // CHECK: cuvil.tanh
  %4 = cuvil.tanh %3 : tensor<2x8xf32>
  // CHECK: cuvil.gelu %{{.+}} : tensor<2x8xf32>
  %5 = cuvil.gelu %4 : tensor<2x8xf32>
  // CHECK: cuvil.gelu %{{.+}} approximate = "tanh" : tensor<2x8xf32>
  %6 = cuvil.gelu %5 approximate = "tanh" : tensor<2x8xf32>
  // CHECK: cuvil.silu
  %7 = cuvil.silu %6 : tensor<2x8xf32>
  // CHECK: cuvil.hardswish
  %8 = cuvil.hardswish %7 : tensor<2x8xf32>
  // CHECK: cuvil.hardsigmoid %{{.+}} : tensor<2x8xf32>
  %9 = cuvil.hardsigmoid %8 : tensor<2x8xf32>
  // Default-valued attributes are elided when printed.
  // CHECK: cuvil.hardsigmoid %{{.+}} alpha = 2.000000e-01 : tensor<2x8xf32>
  %10 = cuvil.hardsigmoid %9 alpha = 0.2 beta = 0.5 : tensor<2x8xf32>
  // CHECK: cuvil.exp
  %11 = cuvil.exp %10 : tensor<2x8xf32>
  // CHECK: cuvil.log
  %12 = cuvil.log %11 : tensor<2x8xf32>
  // CHECK: cuvil.sqrt
  %13 = cuvil.sqrt %12 : tensor<2x8xf32>
  // CHECK: cuvil.rsqrt
  %14 = cuvil.rsqrt %13 : tensor<2x8xf32>
  // CHECK: cuvil.reciprocal
  %15 = cuvil.reciprocal %14 : tensor<2x8xf32>
  // CHECK: cuvil.erf
  %16 = cuvil.erf %15 : tensor<2x8xf32>
  // CHECK: cuvil.neg %{{.+}} : tensor<4xi32>
  %17 = cuvil.neg %2 : tensor<4xi32>
  // CHECK: cuvil.abs %{{.+}} : tensor<4xi32>
  %18 = cuvil.abs %17 : tensor<4xi32>
  // CHECK: cuvil.cast %{{.+}} : tensor<4xi32> to tensor<4xf16>
  %19 = cuvil.cast %18 : tensor<4xi32> to tensor<4xf16>
  return
}

// CHECK-LABEL: func.func @math_and_logic
func.func @math_and_logic(%x: tensor<2x8xf32>, %h: tensor<3xf16>,
                          %i: tensor<4xi32>, %s: tensor<8xf32>,
                          %p: tensor<2x8xi1>, %q: tensor<8xi1>) {
  // CHECK: cuvil.sin %{{.+}} : tensor<2x8xf32>
  %0 = cuvil.sin %x : tensor<2x8xf32>
  // CHECK: cuvil.acosh %{{.+}} : tensor<3xf16>
  %1 = cuvil.acosh %h : tensor<3xf16>
  // CHECK: cuvil.round
  %2 = cuvil.round %0 : tensor<2x8xf32>
  // CHECK: cuvil.softplus
  %3 = cuvil.softplus %2 : tensor<2x8xf32>
  // CHECK: cuvil.elu %{{.+}} alpha = 5.000000e-01 : tensor<2x8xf32>
  %4 = cuvil.elu %3 alpha = 0.5 : tensor<2x8xf32>
  // CHECK: cuvil.selu %{{.+}} : tensor<2x8xf32>
  %5 = cuvil.selu %4 : tensor<2x8xf32>
  // CHECK: cuvil.leaky_relu %{{.+}} alpha = 1.000000e-01 : tensor<2x8xf32>
  %6 = cuvil.leaky_relu %5 alpha = 0.1 : tensor<2x8xf32>
  // CHECK: cuvil.shrink %{{.+}} lambd = 1.000000e+00 bias = 2.000000e+00 : tensor<2x8xf32>
  %7 = cuvil.shrink %6 lambd = 1.0 bias = 2.0 : tensor<2x8xf32>
  // CHECK: cuvil.sign %{{.+}} : tensor<4xi32>
  %8 = cuvil.sign %i : tensor<4xi32>
  // The slope broadcasts to the input (per channel, or one for all).
  // CHECK: cuvil.prelu %{{.+}}, %{{.+}} : tensor<2x8xf32>, tensor<8xf32>
  %9 = cuvil.prelu %7, %s : tensor<2x8xf32>, tensor<8xf32>
  // CHECK: cuvil.is_nan %{{.+}} : tensor<2x8xf32>
  %10 = cuvil.is_nan %9 : tensor<2x8xf32>
  // CHECK: cuvil.is_inf %{{.+}} detect_negative = false : tensor<2x8xf32>
  %11 = cuvil.is_inf %9 detect_negative = false : tensor<2x8xf32>
  // CHECK: cuvil.and %{{.+}}, %{{.+}} : tensor<2x8xi1>, tensor<8xi1>
  %12 = cuvil.and %10, %q : tensor<2x8xi1>, tensor<8xi1>
  %13 = cuvil.xor %12, %11 : tensor<2x8xi1>, tensor<2x8xi1>
  // CHECK: cuvil.not %{{.+}} : tensor<2x8xi1>
  %14 = cuvil.not %13 : tensor<2x8xi1>
  %15 = cuvil.or %14, %p : tensor<2x8xi1>, tensor<2x8xi1>
  %16 = cuvil.where %15, %9, %x : tensor<2x8xi1>, tensor<2x8xf32>, tensor<2x8xf32>
  // CHECK: cuvil.mod %{{.+}}, %{{.+}} fmod : tensor<2x8xf32>, tensor<8xf32>
  %17 = cuvil.mod %16, %s fmod : tensor<2x8xf32>, tensor<8xf32>
  // CHECK: cuvil.mod %{{.+}}, %{{.+}} : tensor<4xi32>, tensor<4xi32>
  %18 = cuvil.mod %8, %i : tensor<4xi32>, tensor<4xi32>
  // CHECK: cuvil.reduce_prod %{{.+}}, axes = [1] : tensor<2x8xf32>
  %19 = cuvil.reduce_prod %17, axes = [1] : tensor<2x8xf32>
  // Indices are i64; keepdims keeps the axis with size 1.
  // CHECK: cuvil.arg_max %{{.+}}, axis = 1 keepdims select_last_index : tensor<2x8xf32>
  %20 = cuvil.arg_max %17, axis = 1 keepdims select_last_index : tensor<2x8xf32>
  %21 = cuvil.add %20, %20 : tensor<2x1xi64>, tensor<2x1xi64>
  %22 = cuvil.arg_min %i, axis = -1 : tensor<4xi32>
  %23 = cuvil.add %22, %22 : tensor<i64>, tensor<i64>
  // CHECK: cuvil.cumsum %{{.+}}, axis = -1 exclusive reverse : tensor<4xi32>
  %24 = cuvil.cumsum %i, axis = -1 exclusive reverse : tensor<4xi32>
  return
}

// CHECK-LABEL: func.func @conv_transpose
func.func @conv_transpose(%x: tensor<?x4x5x6xf32>, %w: tensor<4x3x3x2xf32>,
                          %b: tensor<6xf32>) {
  // (5 - 1) * 2 + 2 * 2 + 1 + 1 - 1 - 1 = 12; (6 - 1) * 3 + 1 + 1 = 17.
  // CHECK: cuvil.conv_transpose2d %{{.+}}, %{{.+}}, %{{.+}} {dilations = array<i64: 2, 1>, groups = 2 : i64, output_padding = array<i64: 1, 0>, padding = array<i64: 1, 0, 1, 0>, strides = array<i64: 2, 3>} : tensor<?x4x5x6xf32>, tensor<4x3x3x2xf32>, tensor<6xf32>
  %0 = cuvil.conv_transpose2d %x, %w, %b {strides = array<i64: 2, 3>, padding = array<i64: 1, 0, 1, 0>, dilations = array<i64: 2, 1>, output_padding = array<i64: 1, 0>, groups = 2 : i64} : tensor<?x4x5x6xf32>, tensor<4x3x3x2xf32>, tensor<6xf32>
  %1 = cuvil.add %0, %0 : tensor<?x6x12x17xf32>, tensor<?x6x12x17xf32>
  return
}

// CHECK-LABEL: func.func @linear_algebra
func.func @linear_algebra(%x: tensor<1x10xf32>, %w: tensor<10x10xf32>,
                          %bx: tensor<5x1x4x8xf32>, %by: tensor<3x8x2xf32>,
                          %v: tensor<8xf32>, %lw: tensor<16x10xf32>,
                          %lb: tensor<16xf32>) {
  // CHECK: cuvil.matmul %{{.+}}, %{{.+}} : tensor<1x10xf32>, tensor<10x10xf32>
  %0 = cuvil.matmul %x, %w : tensor<1x10xf32>, tensor<10x10xf32>
  // Batched with broadcasting: 5x1 and 3 broadcast to 5x3.
  // CHECK: cuvil.matmul %{{.+}}, %{{.+}} : tensor<5x1x4x8xf32>, tensor<3x8x2xf32>
  %1 = cuvil.matmul %bx, %by : tensor<5x1x4x8xf32>, tensor<3x8x2xf32>
  %2 = cuvil.add %1, %1 : tensor<5x3x4x2xf32>, tensor<5x3x4x2xf32>
  // Matrix-vector: the vector's dimension is dropped from the result.
  %3 = cuvil.matmul %bx, %v : tensor<5x1x4x8xf32>, tensor<8xf32>
  %4 = cuvil.add %3, %3 : tensor<5x1x4xf32>, tensor<5x1x4xf32>
  // CHECK: cuvil.gemm %{{.+}}, %{{.+}}, %{{.+}} {trans_b} : tensor<1x10xf32>, tensor<16x10xf32>, tensor<16xf32>
  %5 = cuvil.gemm %x, %lw, %lb {trans_b} : tensor<1x10xf32>, tensor<16x10xf32>, tensor<16xf32>
  // CHECK: cuvil.gemm %{{.+}}, %{{.+}} {alpha = 5.000000e-01 : f64} : tensor<1x10xf32>, tensor<10x10xf32>
  %6 = cuvil.gemm %x, %w {alpha = 0.5} : tensor<1x10xf32>, tensor<10x10xf32>
  %7 = cuvil.add %5, %5 : tensor<1x16xf32>, tensor<1x16xf32>
  return
}

// bfloat16 products summed in float32 give float32.
// CHECK-LABEL: func.func @bf16_products
func.func @bf16_products(%x: tensor<2x3xbf16>, %w: tensor<3x4xbf16>, %c: tensor<4xf32>) {
  // CHECK: cuvil.matmul %{{.+}}, %{{.+}} {acc_type = f32} : tensor<2x3xbf16>, tensor<3x4xbf16>
  %0 = cuvil.matmul %x, %w {acc_type = f32} : tensor<2x3xbf16>, tensor<3x4xbf16>
  %1 = cuvil.add %0, %0 : tensor<2x4xf32>, tensor<2x4xf32>
  // CHECK: cuvil.gemm %{{.+}}, %{{.+}}, %{{.+}} {acc_type = f32} : tensor<2x3xbf16>, tensor<3x4xbf16>, tensor<4xf32>
  %2 = cuvil.gemm %x, %w, %c {acc_type = f32} : tensor<2x3xbf16>, tensor<3x4xbf16>, tensor<4xf32>
  %3 = cuvil.add %2, %2 : tensor<2x4xf32>, tensor<2x4xf32>
  return
}

// A bfloat16 convolution summed in float32: its bias and result float32.
// CHECK-LABEL: func.func @bf16_convolution
func.func @bf16_convolution(%x: tensor<?x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>, %b: tensor<4xf32>) {
  // CHECK: cuvil.conv2d %{{.+}}, %{{.+}}, %{{.+}} {acc_type = f32} : tensor<?x3x8x8xbf16>, tensor<4x3x3x3xbf16>, tensor<4xf32>
  %0 = cuvil.conv2d %x, %w, %b {acc_type = f32} : tensor<?x3x8x8xbf16>, tensor<4x3x3x3xbf16>, tensor<4xf32>
  // CHECK: cuvil.relu %{{.+}} : tensor<?x4x6x6xf32>
  %1 = cuvil.relu %0 : tensor<?x4x6x6xf32>
  return
}

// CHECK-LABEL: func.func @convolution
func.func @convolution(%x: tensor<?x3x224x224xf32>, %w: tensor<64x3x7x7xf32>,
                       %b: tensor<64xf32>, %dw: tensor<64x1x3x3xf32>) {
  // CHECK: cuvil.conv2d %{{.+}}, %{{.+}}, %{{.+}} {padding = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : tensor<?x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>
  %0 = cuvil.conv2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>} : tensor<?x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>
  // Depthwise, dilated.
  // CHECK: cuvil.conv2d %{{.+}}, %{{.+}} {dilations = array<i64: 2, 2>, groups = 64 : i64} : tensor<?x64x112x112xf32>, tensor<64x1x3x3xf32>
  %1 = cuvil.conv2d %0, %dw {groups = 64, dilations = array<i64: 2, 2>} : tensor<?x64x112x112xf32>, tensor<64x1x3x3xf32>
  %2 = cuvil.relu %1 : tensor<?x64x108x108xf32>
  return
}

// CHECK-LABEL: func.func @normalization
func.func @normalization(%x: tensor<2x16x8x8xf32>, %c: tensor<16xf32>,
                         %s: tensor<2x128x512xf32>, %g: tensor<512xf32>) {
  // CHECK: cuvil.softmax %{{.+}}, axis = 1 : tensor<2x16x8x8xf32>
  %0 = cuvil.softmax %x, axis = 1 : tensor<2x16x8x8xf32>
  // CHECK: cuvil.log_softmax %{{.+}}, axis = -1 : tensor<2x16x8x8xf32>
  %1 = cuvil.log_softmax %0, axis = -1 : tensor<2x16x8x8xf32>
  // CHECK: cuvil.reduce_sum %{{.+}}, axes = [2, 3] : tensor<2x16x8x8xf32>
  %2 = cuvil.reduce_sum %1, axes = [2, 3] : tensor<2x16x8x8xf32>
  // CHECK: cuvil.reduce_mean %{{.+}}, axes = [-1] keepdims : tensor<2x16x8x8xf32>
  %3 = cuvil.reduce_mean %1, axes = [-1] keepdims : tensor<2x16x8x8xf32>
  %4 = cuvil.reduce_max %3, axes = [0] : tensor<2x16x8x1xf32>
  %5 = cuvil.reduce_min %4, axes = [0, 1, 2] : tensor<16x8x1xf32>
  %6 = cuvil.add %2, %2 : tensor<2x16xf32>, tensor<2x16xf32>
  // CHECK: cuvil.layer_norm %{{.+}} scale %{{.+}} : tensor<512xf32> bias %{{.+}} : tensor<512xf32> {epsilon = 9.9999999999999995E-7 : f64} : tensor<2x128x512xf32>
  %7 = cuvil.layer_norm %s scale %g : tensor<512xf32> bias %g : tensor<512xf32> {epsilon = 1.0e-6} : tensor<2x128x512xf32>
  // CHECK: cuvil.layer_norm %{{.+}} {axis = 1 : i64} : tensor<2x128x512xf32>
  %8 = cuvil.layer_norm %s {axis = 1} : tensor<2x128x512xf32>
  // CHECK: cuvil.batch_norm
  %9 = cuvil.batch_norm %x, %c, %c, %c, %c : tensor<2x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// CHECK-LABEL: func.func @pooling
func.func @pooling(%x: tensor<1x64x112x112xf32>) {
  // CHECK: cuvil.max_pool2d %{{.+}} {kernel_shape = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x64x112x112xf32>
  %0 = cuvil.max_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x64x112x112xf32>
  %1 = cuvil.relu %0 : tensor<1x64x56x56xf32>
  // Where each maximum is, in int64 (ONNX MaxPool's Indices).
  // CHECK: %[[I:.+]] = cuvil.max_pool2d_indices %{{.+}} {column_major, kernel_shape = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x64x112x112xf32>
  // CHECK: cuvil.add %[[I]], %[[I]] : tensor<1x64x56x56xi64>
  %i = cuvil.max_pool2d_indices %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, column_major} : tensor<1x64x112x112xf32>
  %i2 = cuvil.add %i, %i : tensor<1x64x56x56xi64>, tensor<1x64x56x56xi64>
  // ceil_mode rounds up: (56 - 3) / 2 + 1 = 27.5 -> 28.
  // CHECK: cuvil.avg_pool2d %{{.+}} {ceil_mode, count_include_pad, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>}
  %2 = cuvil.avg_pool2d %1 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode, count_include_pad} : tensor<1x64x56x56xf32>
  %3 = cuvil.relu %2 : tensor<1x64x28x28xf32>
  // CHECK: cuvil.global_avg_pool %{{.+}} : tensor<1x64x28x28xf32>
  %4 = cuvil.global_avg_pool %3 : tensor<1x64x28x28xf32>
  // CHECK: cuvil.global_max_pool
  %5 = cuvil.global_max_pool %3 : tensor<1x64x28x28xf32>
  %6 = cuvil.add %4, %5 : tensor<1x64x1x1xf32>, tensor<1x64x1x1xf32>
  // CHECK: cuvil.adaptive_avg_pool2d %{{.+}}, output_size = [7, 7] : tensor<1x64x28x28xf32>
  %7 = cuvil.adaptive_avg_pool2d %3, output_size = [7, 7] : tensor<1x64x28x28xf32>
  %8 = cuvil.relu %7 : tensor<1x64x7x7xf32>
  return
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<?x512x1x1xf32>, %y: tensor<2x3x4xf32>,
                  %idx: tensor<5xi64>) {
  // CHECK: cuvil.reshape %{{.+}}, shape = [-1, 512] : tensor<?x512x1x1xf32>
  %0 = cuvil.reshape %x, shape = [-1, 512] : tensor<?x512x1x1xf32>
  %1 = cuvil.relu %0 : tensor<?x512xf32>
  // CHECK: cuvil.flatten %{{.+}} : tensor<?x512x1x1xf32>
  %2 = cuvil.flatten %x : tensor<?x512x1x1xf32>
  %3 = cuvil.relu %2 : tensor<?x512xf32>
  // CHECK: cuvil.transpose %{{.+}}, perm = [2, 0, 1] : tensor<2x3x4xf32>
  %4 = cuvil.transpose %y, perm = [2, 0, 1] : tensor<2x3x4xf32>
  %5 = cuvil.relu %4 : tensor<4x2x3xf32>
  // CHECK: cuvil.concat(%{{.+}}, %{{.+}}) axis = 1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %6 = cuvil.concat(%y, %y) axis = 1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %7 = cuvil.relu %6 : tensor<2x6x4xf32>
  // CHECK: %{{.+}}:2 = cuvil.split %{{.+}}, axis = -1, sizes = [1, 3] : tensor<2x3x4xf32>
  %8:2 = cuvil.split %y, axis = -1, sizes = [1, 3] : tensor<2x3x4xf32>
  %9 = cuvil.add %8#0, %8#1 : tensor<2x3x1xf32>, tensor<2x3x3xf32>
  // CHECK: cuvil.slice %{{.+}} {axes = array<i64: 1, 2>, ends = array<i64: 9223372036854775807, 0>, starts = array<i64: 1, -1>, steps = array<i64: 1, -2>} : tensor<2x3x4xf32>
  %10 = cuvil.slice %y {starts = array<i64: 1, -1>, ends = array<i64: 9223372036854775807, 0>, axes = array<i64: 1, 2>, steps = array<i64: 1, -2>} : tensor<2x3x4xf32>
  %11 = cuvil.relu %10 : tensor<2x2x2xf32>
  // CHECK: cuvil.pad %{{.+}}, pads = [0, 1, 2, 0, 1, 2] {mode = "reflect"} : tensor<2x3x4xf32>
  %12 = cuvil.pad %y, pads = [0, 1, 2, 0, 1, 2] {mode = "reflect"} : tensor<2x3x4xf32>
  %13 = cuvil.relu %12 : tensor<2x5x8xf32>
  // CHECK: cuvil.pad %{{.+}}, pads = [1, 0, 0, 1, 0, 0] {value = 1.500000e+00 : f64} : tensor<2x3x4xf32>
  %14 = cuvil.pad %y, pads = [1, 0, 0, 1, 0, 0] {value = 1.5} : tensor<2x3x4xf32>
  // CHECK: cuvil.gather %{{.+}}, %{{.+}} {axis = 1 : i64} : tensor<2x3x4xf32>, tensor<5xi64>
  %15 = cuvil.gather %y, %idx {axis = 1} : tensor<2x3x4xf32>, tensor<5xi64>
  %16 = cuvil.relu %15 : tensor<2x5x4xf32>
  // CHECK: cuvil.squeeze %{{.+}}, axes = [2, 3] : tensor<?x512x1x1xf32>
  %17 = cuvil.squeeze %x, axes = [2, 3] : tensor<?x512x1x1xf32>
  // CHECK: cuvil.unsqueeze %{{.+}}, axes = [0, -1] : tensor<?x512xf32>
  %18 = cuvil.unsqueeze %17, axes = [0, -1] : tensor<?x512xf32>
  %19 = cuvil.relu %18 : tensor<1x?x512x1xf32>
  // CHECK: cuvil.expand %{{.+}}, shape = [5, 2, 1, 4] : tensor<2x3x4xf32>
  %20 = cuvil.expand %y, shape = [5, 2, 1, 4] : tensor<2x3x4xf32>
  %21 = cuvil.relu %20 : tensor<5x2x3x4xf32>
  return
}

// CHECK-LABEL: func.func @fusion_targets
func.func @fusion_targets(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
  // CHECK: cuvil.map_reduce ins(%{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8xf32>) reduction_dims = [1] init = 0.000000e+00 : f32 -> tensor<4xf32> {
  // CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32):
  // CHECK: } reduce {
  %0 = cuvil.map_reduce ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>)
         reduction_dims = [1] init = 0.0 : f32 -> tensor<4xf32> {
  ^bb0(%x: f32, %y: f32):
    %d = arith.subf %x, %y : f32
    %s = arith.mulf %d, %d : f32
    cuvil.yield %s : f32
  } reduce {
  ^bb0(%acc: f32, %v: f32):
    %n = arith.addf %acc, %v : f32
    cuvil.yield %n : f32
  }
  // A pure map has no reduce region.
  // CHECK: cuvil.map_reduce ins(%{{.+}} : tensor<4x8xf32>) -> tensor<4x8xf32> {
  %1 = cuvil.map_reduce ins(%a : tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: f32):
    %e = math.exp %x : f32
    cuvil.yield %e : f32
  }
  // CHECK: cuvil.fused_group kind = "conv_epilogue"(%{{.+}}, %{{.+}}) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  %2 = cuvil.fused_group kind = "conv_epilogue" (%1, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%p: tensor<4x8xf32>, %q: tensor<8xf32>):
    %sum = cuvil.add %p, %q : tensor<4x8xf32>, tensor<8xf32>
    %r = cuvil.relu %sum : tensor<4x8xf32>
    cuvil.yield %r : tensor<4x8xf32>
  }
  return %0 : tensor<4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weight: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// CHECK-LABEL: func.func @recurrent
func.func @recurrent(%gx: tensor<5x?x24xf32>, %r: tensor<2x3x12xf32>,
                     %b: tensor<2x24xf32>, %lens: tensor<?xi32>,
                     %h0: tensor<2x?x3xf32>, %p: tensor<2x9xf32>,
                     %gg: tensor<5x?x9xf32>, %gr: tensor<1x3x9xf32>,
                     %rg: tensor<5x?x3xf32>, %rr: tensor<1x3x3xf32>) {
  // CHECK: cuvil.lstm %{{.+}}, %{{.+}} bias(%{{.+}} : tensor<2x24xf32>) sequence_lens(%{{.+}} : tensor<?xi32>) initial_h(%{{.+}} : tensor<2x?x3xf32>) initial_c(%{{.+}} : tensor<2x?x3xf32>) peepholes(%{{.+}} : tensor<2x9xf32>) {clip = 3.000000e+00 : f64, direction = "bidirectional", hidden_size = 3 : i64, input_forget = true} : tensor<5x?x24xf32>, tensor<2x3x12xf32>
  %y:3 = cuvil.lstm %gx, %r bias(%b : tensor<2x24xf32>) sequence_lens(%lens : tensor<?xi32>) initial_h(%h0 : tensor<2x?x3xf32>) initial_c(%h0 : tensor<2x?x3xf32>) peepholes(%p : tensor<2x9xf32>) {hidden_size = 3 : i64, direction = "bidirectional", clip = 3.0 : f64, input_forget = true} : tensor<5x?x24xf32>, tensor<2x3x12xf32>
  // CHECK: cuvil.gru %{{.+}}, %{{.+}} {activation_alpha = array<f64: 2.500000e-01, 1.000000e-01>, activations = ["HardSigmoid", "LeakyRelu"], direction = "reverse", hidden_size = 3 : i64, linear_before_reset = true} : tensor<5x?x9xf32>, tensor<1x3x9xf32>
  %g:2 = cuvil.gru %gg, %gr {hidden_size = 3 : i64, direction = "reverse", linear_before_reset = true, activations = ["HardSigmoid", "LeakyRelu"], activation_alpha = array<f64: 0.25, 0.1>} : tensor<5x?x9xf32>, tensor<1x3x9xf32>
  // CHECK: cuvil.rnn %{{.+}}, %{{.+}} {hidden_size = 3 : i64} : tensor<5x?x3xf32>, tensor<1x3x3xf32>
  %s:2 = cuvil.rnn %rg, %rr {hidden_size = 3 : i64} : tensor<5x?x3xf32>, tensor<1x3x3xf32>
  // Inferred: Y [T, D, B, H], Y_h and Y_c [D, B, H].
  %0 = cuvil.add %y#0, %y#0 : tensor<5x2x?x3xf32>, tensor<5x2x?x3xf32>
  %1 = cuvil.add %y#2, %g#1 : tensor<2x?x3xf32>, tensor<1x?x3xf32>
  %2 = cuvil.add %s#0, %g#0 : tensor<5x1x?x3xf32>, tensor<5x1x?x3xf32>
  return
}

// CHECK-LABEL: func.func @element_gathers
func.func @element_gathers(%x: tensor<?x5xf32>, %i: tensor<?x3xi64>,
                           %u: tensor<?x3xf32>) {
  // CHECK: cuvil.gather_elements %{{.+}}, %{{.+}} {axis = 1 : i64} : tensor<?x5xf32>, tensor<?x3xi64>
  %g = cuvil.gather_elements %x, %i {axis = 1 : i64} : tensor<?x5xf32>, tensor<?x3xi64>
  // CHECK: cuvil.scatter_elements %{{.+}}, %{{.+}}, %{{.+}} {axis = -1 : i64, reduction = "max"} : tensor<?x5xf32>, tensor<?x3xi64>, tensor<?x3xf32>
  %s = cuvil.scatter_elements %x, %i, %u {axis = -1 : i64, reduction = "max"} : tensor<?x5xf32>, tensor<?x3xi64>, tensor<?x3xf32>
  // Inferred: the gather has the indices' shape, the scatter data's.
  %0 = cuvil.add %g, %u : tensor<?x3xf32>, tensor<?x3xf32>
  %1 = cuvil.add %s, %x : tensor<?x5xf32>, tensor<?x5xf32>
  return
}

// CHECK-LABEL: func @nd_indexing
func.func @nd_indexing(%x: tensor<?x5x3xf32>, %i: tensor<?x2x1xi64>,
                       %j: tensor<6x2xi64>, %u: tensor<6x3xf32>) {
  // CHECK: cuvil.gather_nd %{{.+}}, %{{.+}} {batch_dims = 1 : i64} : tensor<?x5x3xf32>, tensor<?x2x1xi64>
  %g = cuvil.gather_nd %x, %i {batch_dims = 1 : i64} : tensor<?x5x3xf32>, tensor<?x2x1xi64>
  // CHECK: cuvil.scatter_nd %{{.+}}, %{{.+}}, %{{.+}} {reduction = "add"} : tensor<?x5x3xf32>, tensor<6x2xi64>, tensor<6x3xf32>
  %s = cuvil.scatter_nd %x, %j, %u {reduction = "add"} : tensor<?x5x3xf32>, tensor<6x2xi64>, tensor<6x3xf32>
  // Inferred: the tuples' shape then the picked slices; the scatter data's.
  %0 = cuvil.add %g, %g : tensor<?x2x3xf32>, tensor<?x2x3xf32>
  %1 = cuvil.add %s, %x : tensor<?x5x3xf32>, tensor<?x5x3xf32>
  return
}

// CHECK-LABEL: func @roi_align
func.func @roi_align(%x: tensor<2x3x12x14xf32>, %rois: tensor<?x4xf32>, %b: tensor<?xi64>) -> tensor<?x3x2x4xf32> {
  // CHECK: cuvil.roi_align %{{.+}}, %{{.+}}, %{{.+}} {half_pixel, max, output_height = 2 : i64, output_width = 4 : i64, sampling_ratio = 0 : i64, spatial_scale = 5.000000e-01 : f64} : tensor<2x3x12x14xf32>, tensor<?x4xf32>, tensor<?xi64>
  %y = cuvil.roi_align %x, %rois, %b {half_pixel, max, output_height = 2 : i64, output_width = 4 : i64, sampling_ratio = 0 : i64, spatial_scale = 0.5 : f64} : tensor<2x3x12x14xf32>, tensor<?x4xf32>, tensor<?xi64>
  return %y : tensor<?x3x2x4xf32>
}

// CHECK-LABEL: func @top_k
func.func @top_k(%x: tensor<?x9x3xf32>) {
  // CHECK: %{{.+}}, %{{.+}} = cuvil.top_k %{{.+}} {axis = 1 : i64, k = 4 : i64, largest = false} : tensor<?x9x3xf32>
  %v:2 = cuvil.top_k %x {axis = 1 : i64, k = 4 : i64, largest = false} : tensor<?x9x3xf32>
  // Inferred: k along the axis; values of the input's type, i64 indices.
  %0 = cuvil.add %v#0, %v#0 : tensor<?x4x3xf32>, tensor<?x4x3xf32>
  %1 = cuvil.add %v#1, %v#1 : tensor<?x4x3xi64>, tensor<?x4x3xi64>
  return
}

// CHECK-LABEL: func @bit_shift
func.func @bit_shift(%x: tensor<4x3xui16>, %n: tensor<3xui16>) {
  // CHECK: cuvil.bit_shift %{{.+}}, %{{.+}} : tensor<4x3xui16>, tensor<3xui16>
  %0 = cuvil.bit_shift %x, %n : tensor<4x3xui16>, tensor<3xui16>
  // CHECK: cuvil.bit_shift %{{.+}}, %{{.+}} right : tensor<4x3xui16>, tensor<3xui16>
  %1 = cuvil.bit_shift %0, %n right : tensor<4x3xui16>, tensor<3xui16>
  %2 = cuvil.max %1, %x : tensor<4x3xui16>, tensor<4x3xui16>
  return
}

// CHECK-LABEL: func @if_else
func.func @if_else(%c: tensor<i1>, %x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // CHECK: cuvil.if %{{.+}} : tensor<i1> -> tensor<?x3xf32> {
  // CHECK: cuvil.relu
  // CHECK: } else {
  // CHECK: cuvil.yield %{{.+}} : tensor<?x3xf32>
  %r = cuvil.if %c : tensor<i1> -> tensor<?x3xf32> {
    %a = cuvil.relu %x : tensor<?x3xf32>
    cuvil.yield %a : tensor<?x3xf32>
  } else {
    cuvil.yield %x : tensor<?x3xf32>
  }
  return %r : tensor<?x3xf32>
}

// CHECK-LABEL: func @loop_scan
func.func @loop_scan(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<3x4xf32>) {
  // CHECK: cuvil.loop max(%{{.+}} : tensor<i64>) while %{{.+}} : tensor<i1> iter(%{{.+}} : tensor<4xf32>) -> tensor<4xf32>, tensor<3x4xf32> {
  // CHECK: ^bb0(%{{.+}}: tensor<i64>, %{{.+}}: tensor<i1>, %{{.+}}: tensor<4xf32>):
  // CHECK: } {scan_rows = 3 : i64}
  %r:2 = cuvil.loop max(%m : tensor<i64>) while %c : tensor<i1> iter(%x : tensor<4xf32>) -> tensor<4xf32>, tensor<3x4xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %a: tensor<4xf32>):
    %b = cuvil.add %a, %a : tensor<4xf32>, tensor<4xf32>
    cuvil.yield %cond, %b, %a : tensor<i1>, tensor<4xf32>, tensor<4xf32>
  } {scan_rows = 3 : i64}
  return %r#0, %r#1 : tensor<4xf32>, tensor<3x4xf32>
}

// CHECK-LABEL: func @while_loop
func.func @while_loop(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: cuvil.loop while %{{.+}} : tensor<i1> iter
  %r = cuvil.loop while %c : tensor<i1> iter(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %a: tensor<4xf32>):
    %b = cuvil.neg %a : tensor<4xf32>
    %s = cuvil.reduce_sum %b, axes = [0] : tensor<4xf32>
    %z = cuvil.constant dense<0.0> : tensor<f32>
    %n = cuvil.less %s, %z : tensor<f32>, tensor<f32>
    cuvil.yield %n, %b : tensor<i1>, tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
