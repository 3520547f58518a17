// RUN: cuvil-opt %s --cuvil-convert-products-to-bf16 --split-input-file -verify-diagnostics | FileCheck %s
// RUN: cuvil-opt %s '--cuvil-convert-products-to-bf16=keep-fp32=fc2' --split-input-file 2>&1 | FileCheck %s --check-prefix=KEEP

// A linear layer reads its activation cast to bfloat16 and bfloat16
// weights [K, N] (a gemm's trans_b and alpha applied), sums in float32,
// and adds its bias after, in float32. With alpha 2 folded in, 1.00390625
// = 1 + 2^-8 lies halfway between two bfloat16 values and rounds to the
// even one, 1.0 (0x3F80); 1.01171875 = 1 + 3 * 2^-8 rounds up to 1.015625
// (0x3F82).
// CHECK-LABEL: func.func @linear
// CHECK: %[[B:.+]] = cuvil.constant dense<5.000000e-01> : tensor<2xf32>
// CHECK: %[[X:.+]] = cuvil.cast %arg0 : tensor<?x3xf32> to tensor<?x3xbf16>
// CHECK: %[[W:.+]] = cuvil.constant dense_resource<bf16_weights> : tensor<3x2xbf16>
// CHECK: %[[Y:.+]] = cuvil.matmul %[[X]], %[[W]] {acc_type = f32} : tensor<?x3xbf16>, tensor<3x2xbf16>
// CHECK: %[[Z:.+]] = cuvil.add %[[Y]], %[[B]]
// CHECK: cuvil.matmul %{{.+}}, %{{.+}} {acc_type = f32} : tensor<?x2xbf16>, tensor<2x4xbf16>
// CHECK: bf16_weights: "0x40000000803F803F803F803F803F823F"
// KEEP: warning: loc("/fc2/MatMul"): kept in float32, as asked (keep-fp32 'fc2')
// KEEP-LABEL: func.func @linear
// KEEP: cuvil.matmul {{.+}} {acc_type = f32} : tensor<?x3xbf16>, tensor<3x2xbf16>
// KEEP: cuvil.matmul {{.+}} : tensor<?x2xf32>, tensor<2x4xf32>
func.func @linear(%x: tensor<?x3xf32>) -> tensor<?x4xf32> {
  %w = cuvil.constant dense<[[0.501953125, 0.5, 0.5], [0.5, 0.5, 0.505859375]]> : tensor<2x3xf32>
  %b = cuvil.constant dense<0.5> : tensor<2xf32>
  %w2 = cuvil.constant dense<1.0> : tensor<2x4xf32>
  %h = cuvil.gemm %x, %w, %b {trans_b, alpha = 2.0 : f64} : tensor<?x3xf32>, tensor<2x3xf32>, tensor<2xf32> loc("/fc1/Gemm")
  %y = cuvil.matmul %h, %w2 : tensor<?x2xf32>, tensor<2x4xf32> loc("/fc2/MatMul")
  return %y : tensor<?x4xf32>
}

// -----

// An ungrouped convolution reads its input cast to bfloat16 and bfloat16
// OIHW weights (1.01171875 rounds up to 0x3F82), keeps its float32 bias
// and sums in float32, so that its epilogue still fuses.
// CHECK-LABEL: func.func @conv
// CHECK: %[[X:.+]] = cuvil.cast %arg0 : tensor<?x2x4x4xf32> to tensor<?x2x4x4xbf16>
// CHECK: %[[W:.+]] = cuvil.constant dense_resource<bf16_weights> : tensor<1x2x1x1xbf16>
// CHECK: %[[Y:.+]] = cuvil.conv2d %[[X]], %[[W]], %{{.+}} {acc_type = f32, strides = array<i64: 2, 2>} : tensor<?x2x4x4xbf16>, tensor<1x2x1x1xbf16>, tensor<1xf32>
// CHECK: cuvil.relu %[[Y]] : tensor<?x1x2x2xf32>
// CHECK: bf16_weights: "0x40000000803F823F"
func.func @conv(%x: tensor<?x2x4x4xf32>) -> tensor<?x1x2x2xf32> {
  %w = cuvil.constant dense<[[[[1.0]], [[1.01171875]]]]> : tensor<1x2x1x1xf32>
  %b = cuvil.constant dense<0.25> : tensor<1xf32>
  %y = cuvil.conv2d %x, %w, %b {strides = array<i64: 2, 2>} : tensor<?x2x4x4xf32>, tensor<1x2x1x1xf32>, tensor<1xf32>
  %r = cuvil.relu %y : tensor<?x1x2x2xf32>
  return %r : tensor<?x1x2x2xf32>
}

// -----

// Products without a bfloat16 form stay float32, each with a warning.
func.func @stays(%x: tensor<2x3xf32>, %z: tensor<3x3xf32>, %img: tensor<1x2x4x4xf32>,
                 %k2: tensor<1x2x1x1xf32>)
    -> (tensor<2x3xf32>, tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) {
  %k = cuvil.constant dense<1.0> : tensor<2x1x1x1xf32>
  // expected-warning @+1 {{stays float32: its weights are computed at run time}}
  %y = cuvil.matmul %x, %z : tensor<2x3xf32>, tensor<3x3xf32>
  // expected-warning @+1 {{stays float32: it is grouped (the bfloat16 kernels compute ungrouped convolutions)}}
  %c = cuvil.conv2d %img, %k {groups = 2} : tensor<1x2x4x4xf32>, tensor<2x1x1x1xf32>
  // expected-warning @+1 {{stays float32: its weights are computed at run time}}
  %d = cuvil.conv2d %img, %k2 : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>
  return %y, %c, %d : tensor<2x3xf32>, tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>
}
