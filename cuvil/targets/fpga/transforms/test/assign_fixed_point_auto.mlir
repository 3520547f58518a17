// RUN: cuvil-opt %s --split-input-file --cuvil-fpga-assign-fixed-point='precision={auto<8>}' --verify-diagnostics | FileCheck %s

// auto<8>: RND / SAT types with the fewest integer bits that hold each
// range. The input reaches 3 (I = 3: [-4, 4)); the layer's result 0.75
// (I = 0: [-0.5, 0.5) is too small, [-1, 1) holds it, I = 1); its weights
// 2 * 1.5 = 3 (alpha scales them; I = 3) and its bias 0.5 * 4 = 2
// (beta; 2 is not below 2^1, so I = 3).
// CHECK-LABEL: func.func @dense
// CHECK-SAME: #cuvil.fixed<!quant.uniform<i8:f32, 3.125000e-02>, "RND", "SAT">
// CHECK: cuvil.gemm
// CHECK-SAME: cuvil.fixed = {bias = #cuvil.fixed<!quant.uniform<i8:f32, 3.125000e-02>, "RND", "SAT">, result = #cuvil.fixed<!quant.uniform<i8:f32, 7.812500e-03>, "RND", "SAT">, weight = #cuvil.fixed<!quant.uniform<i8:f32, 3.125000e-02>, "RND", "SAT">}
// CHECK-NOT: cuvil.abs_max
func.func @dense(%x: tensor<1x2xf32> {cuvil.abs_max = 3.0 : f64}) -> tensor<1x2xf32> {
  %w = cuvil.constant dense<[[1.5, -1.0], [0.5, 0.25]]> : tensor<2x2xf32>
  %b = cuvil.constant dense<[4.0, -1.0]> : tensor<2xf32>
  %y = cuvil.gemm %x, %w, %b {alpha = 2.0 : f64, beta = 0.5 : f64, cuvil.abs_max = 0.75 : f64} : tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>
  return %y : tensor<1x2xf32>
}

// -----

// Without calibration there is no range to size a layer from.
func.func @unobserved(%x: tensor<1x2xf32> {cuvil.abs_max = 1.0 : f64}) -> tensor<1x2xf32> {
  // expected-error @+1 {{--precision=auto needs the range of its result (cuvil.abs_max, from calibration data); give representative inputs with --calibration=FILE.npz}}
  %y = cuvil.relu %x : tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// -----

// A layer whose weights are computed at run time cannot be sized.
func.func @computed(%x: tensor<1x2xf32> {cuvil.abs_max = 1.0 : f64}, %w: tensor<2x2xf32> {cuvil.abs_max = 1.0 : f64}) -> tensor<1x2xf32> {
  // expected-error @+1 {{--precision=auto sizes a layer's weights from its float32 constants; this layer's are not constants of the model}}
  %y = cuvil.matmul %x, %w {cuvil.abs_max = 1.0 : f64} : tensor<1x2xf32>, tensor<2x2xf32>
  return %y : tensor<1x2xf32>
}
