// RUN: cuvil-opt %s --cuvil-convert-products-to-f16 --split-input-file -verify-diagnostics | FileCheck %s
// RUN: cuvil-opt %s '--cuvil-convert-products-to-f16=keep-fp32=fc2' --split-input-file 2>&1 | FileCheck %s --check-prefix=KEEP

// A linear layer reads its activation cast to float16 and float16 weights
// [K, N] (a gemm's trans_b and alpha applied), multiplies and sums in
// float16 (no acc_type), casts back and adds its bias in float32. With
// alpha 2 folded in, 1 + 2^-11 lies halfway between two float16 values
// and rounds to the even one, 1.0 (0x3C00); 1 + 3 * 2^-11 rounds up to
// 1 + 2^-9 (0x3C02).
// CHECK-LABEL: func.func @linear
// CHECK: %[[B:.+]] = cuvil.constant dense<5.000000e-01> : tensor<2xf32>
// CHECK: %[[X:.+]] = cuvil.cast %arg0 : tensor<?x3xf32> to tensor<?x3xf16>
// CHECK: %[[W:.+]] = cuvil.constant dense_resource<f16_weights> : tensor<3x2xf16>
// CHECK: %[[P:.+]] = cuvil.matmul %[[X]], %[[W]] : tensor<?x3xf16>, tensor<3x2xf16>
// CHECK: %[[Y:.+]] = cuvil.cast %[[P]] : tensor<?x2xf16> to tensor<?x2xf32>
// CHECK: %[[Z:.+]] = cuvil.add %[[Y]], %[[B]]
// CHECK: cuvil.matmul %{{.+}}, %{{.+}} : tensor<?x2xf16>, tensor<2x4xf16>
// CHECK: f16_weights: "0x40000000003C0038003800380038023C"
// KEEP: warning: loc("/fc2/MatMul"): kept in float32, as asked (keep-fp32 'fc2')
// KEEP-LABEL: func.func @linear
// KEEP: cuvil.matmul {{.+}} : tensor<?x3xf16>, tensor<3x2xf16>
// KEEP: cuvil.matmul {{.+}} : tensor<?x2xf32>, tensor<2x4xf32>
module attributes {cuvil.target = #cuvil.target<backend = "aarch64", cpu = "cortex-a76", features = ["neon", "fullfp16"], vector_bits = 128>} {
func.func @linear(%x: tensor<?x3xf32>) -> tensor<?x4xf32> {
  %w = cuvil.constant dense<[[0.50024414, 0.25, 0.25], [0.25, 0.25, 0.50073242]]> : tensor<2x3xf32>
  %b = cuvil.constant dense<0.5> : tensor<2xf32>
  %w2 = cuvil.constant dense<1.0> : tensor<2x4xf32>
  %h = cuvil.gemm %x, %w, %b {trans_b, alpha = 2.0 : f64} : tensor<?x3xf32>, tensor<2x3xf32>, tensor<2xf32> loc("/fc1/Gemm")
  %y = cuvil.matmul %h, %w2 : tensor<?x2xf32>, tensor<2x4xf32> loc("/fc2/MatMul")
  return %y : tensor<?x4xf32>
}
}

// -----

// An ungrouped convolution reads its input cast to float16 and float16
// OIHW weights, keeps no bias (the float16 kernel has none): its result is
// cast back and the bias, reshaped to [C, 1, 1], added in float32.
// CHECK-LABEL: func.func @conv
// CHECK: %[[X:.+]] = cuvil.cast %arg0 : tensor<?x2x4x4xf32> to tensor<?x2x4x4xf16>
// CHECK: %[[W:.+]] = cuvil.constant dense_resource<f16_weights> : tensor<1x2x1x1xf16>
// CHECK: %[[C:.+]] = cuvil.conv2d %[[X]], %[[W]] {strides = array<i64: 2, 2>} : tensor<?x2x4x4xf16>, tensor<1x2x1x1xf16>
// CHECK: %[[Y:.+]] = cuvil.cast %[[C]] : tensor<?x1x2x2xf16> to tensor<?x1x2x2xf32>
// CHECK: %[[B:.+]] = cuvil.reshape %{{.+}}, shape = [1, 1, 1] : tensor<1xf32>
// CHECK: %[[Z:.+]] = cuvil.add %[[Y]], %[[B]]
// CHECK: cuvil.relu %[[Z]] : tensor<?x1x2x2xf32>
// CHECK: f16_weights: "0x40000000003C023C"
module attributes {cuvil.target = #cuvil.target<backend = "aarch64", cpu = "cortex-a76", features = ["neon", "fullfp16"], vector_bits = 128>} {
func.func @conv(%x: tensor<?x2x4x4xf32>) -> tensor<?x1x2x2xf32> {
  %w = cuvil.constant dense<[[[[1.0]], [[1.00146484]]]]> : tensor<1x2x1x1xf32>
  %b = cuvil.constant dense<0.25> : tensor<1xf32>
  %y = cuvil.conv2d %x, %w, %b {strides = array<i64: 2, 2>} : tensor<?x2x4x4xf32>, tensor<1x2x1x1xf32>, tensor<1xf32>
  %r = cuvil.relu %y : tensor<?x1x2x2xf32>
  return %r : tensor<?x1x2x2xf32>
}
}

// -----

// Products without a float16 form stay float32, each with a warning.
module attributes {cuvil.target = #cuvil.target<backend = "aarch64", cpu = "cortex-a76", features = ["neon", "fullfp16"], vector_bits = 128>} {
func.func @stays(%x: tensor<2x3xf32>, %z: tensor<3x3xf32>, %img: tensor<1x2x4x4xf32>)
    -> (tensor<2x3xf32>, tensor<1x2x4x4xf32>) {
  %k = cuvil.constant dense<1.0> : tensor<2x1x1x1xf32>
  // expected-warning @+1 {{stays float32: its weights are computed at run time}}
  %y = cuvil.matmul %x, %z : tensor<2x3xf32>, tensor<3x3xf32>
  // expected-warning @+1 {{stays float32: it is grouped (the float16 kernels compute ungrouped convolutions)}}
  %c = cuvil.conv2d %img, %k {groups = 2} : tensor<1x2x4x4xf32>, tensor<2x1x1x1xf32>
  return %y, %c : tensor<2x3xf32>, tensor<1x2x4x4xf32>
}
}

// -----

// A target without float16 arithmetic keeps every product in float32, with
// one warning saying what would have it.
module attributes {cuvil.target = #cuvil.target<backend = "aarch64", cpu = "cortex-a72", features = ["neon"], vector_bits = 128>} {
// expected-warning @+1 {{stays float32: the target (aarch64 cortex-a72) has no float16 arithmetic; its float16 products would run on the portable kernels, slower than float32 (--quantize=fp16 needs an aarch64 CPU with +fullfp16, such as cortex-a55, cortex-a76 or neoverse-n1)}}
func.func @slow(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %w = cuvil.constant dense<1.0> : tensor<3x4xf32>
  %y = cuvil.matmul %x, %w : tensor<2x3xf32>, tensor<3x4xf32>
  return %y : tensor<2x4xf32>
}
}
