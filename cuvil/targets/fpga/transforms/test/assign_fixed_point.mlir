// RUN: cuvil-opt %s --split-input-file --cuvil-fpga-assign-fixed-point --verify-diagnostics | FileCheck %s
// RUN: cuvil-opt %s --split-input-file --cuvil-fpga-assign-fixed-point='precision={fixed<8,3,RND,SAT>} layer-precision={{/fc2/Gemm=ufixed<10,4>}}' --verify-diagnostics | FileCheck %s --check-prefix=GIVEN

// hls4ml's default, ap_fixed<16,6> (2^-10): the input, the dense layer in
// its epilogue group (the group's node names it; its ReLU is no layer of its
// own), the second dense layer and the softmax.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: cuvil.fixed = #cuvil.fixed<!quant.uniform<i16:f32, 9.765625E-4>, "TRN", "WRAP">
// CHECK: cuvil.gemm
// CHECK-SAME: cuvil.fixed = {bias = #cuvil.fixed<!quant.uniform<i16:f32, 9.765625E-4>, "TRN", "WRAP">, result = #cuvil.fixed<!quant.uniform<i16:f32, 9.765625E-4>, "TRN", "WRAP">, weight = #cuvil.fixed<!quant.uniform<i16:f32, 9.765625E-4>, "TRN", "WRAP">}
// CHECK: cuvil.relu
// CHECK-NOT: cuvil.fixed
// CHECK: cuvil.yield
// CHECK: cuvil.gemm
// CHECK-SAME: cuvil.fixed = {bias
// CHECK: cuvil.softmax
// CHECK-SAME: cuvil.fixed = {result = #cuvil.fixed<!quant.uniform<i16:f32, 9.765625E-4>, "TRN", "WRAP">}

// The model at fixed<8,3,RND,SAT> (2^-5), /fc2/Gemm at ufixed<10,4> (2^-6).
// GIVEN-LABEL: func.func @mlp
// GIVEN-SAME: #cuvil.fixed<!quant.uniform<i8:f32, 3.125000e-02>, "RND", "SAT">
// GIVEN: cuvil.gemm
// GIVEN-SAME: result = #cuvil.fixed<!quant.uniform<i8:f32, 3.125000e-02>, "RND", "SAT">
// GIVEN: cuvil.gemm
// GIVEN-SAME: result = #cuvil.fixed<!quant.uniform<u10:f32, 1.562500e-02>, "TRN", "WRAP">
// GIVEN: cuvil.softmax
// GIVEN-SAME: result = #cuvil.fixed<!quant.uniform<i8:f32, 3.125000e-02>, "RND", "SAT">
func.func @mlp(%x: tensor<1x4xf32>) -> tensor<1x2xf32> {
  %w1 = cuvil.constant dense<0.5> : tensor<4x8xf32>
  %b1 = cuvil.constant dense<0.25> : tensor<8xf32>
  %w2 = cuvil.constant dense<0.5> : tensor<8x2xf32>
  %h = cuvil.fused_group kind = "epilogue"(%x, %w1, %b1) : (tensor<1x4xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<1x8xf32> {
  ^bb0(%a: tensor<1x4xf32>, %b: tensor<4x8xf32>, %c: tensor<8xf32>):
    %g = cuvil.gemm %a, %b, %c : tensor<1x4xf32>, tensor<4x8xf32>, tensor<8xf32> loc("/fc1/Gemm")
    %r = cuvil.relu %g : tensor<1x8xf32> loc("/relu/Relu")
    cuvil.yield %r : tensor<1x8xf32>
  } loc(fused["/fc1/Gemm", "/relu/Relu"])
  %y = cuvil.gemm %h, %w2 : tensor<1x8xf32>, tensor<8x2xf32> loc("/fc2/Gemm")
  %s = cuvil.softmax %y, axis = 1 : tensor<1x2xf32> loc("/softmax/Softmax")
  return %s : tensor<1x2xf32>
}
