// RUN: cuvil-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// A fixed-point type round-trips: ap_fixed<16,6> and ap_ufixed<8,0,RND,SAT>.
// CHECK: cuvil.fixed = #cuvil.fixed<!quant.uniform<i16:f32, 9.765625E-4>, "TRN", "WRAP">
// CHECK: cuvil.fixed = {result = #cuvil.fixed<!quant.uniform<u8:f32, 3.906250e-03>, "RND", "SAT">}
func.func @typed(%x: tensor<1x4xf32> {cuvil.fixed = #cuvil.fixed<!quant.uniform<i16:f32, 9.765625E-4>, "TRN", "WRAP">}) -> tensor<1x4xf32> {
  %y = cuvil.relu %x {cuvil.fixed = {result = #cuvil.fixed<!quant.uniform<u8:f32, 0.00390625>, "RND", "SAT">}} : tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// expected-error @+1 {{#cuvil.fixed needs a power-of-two scale and zero point 0, got '!quant.uniform<i8:f32, 3.000000e-01>'}}
func.func @scale() attributes {t = #cuvil.fixed<!quant.uniform<i8:f32, 0.3>, "TRN", "WRAP">} {
  return
}

// -----

// expected-error @+1 {{#cuvil.fixed needs a power-of-two scale and zero point 0}}
func.func @zero_point() attributes {t = #cuvil.fixed<!quant.uniform<i8:f32, 0.5:3>, "TRN", "WRAP">} {
  return
}

// -----

// expected-error @+1 {{#cuvil.fixed rounding 'ROUND' is none of TRN, TRN_ZERO, RND, RND_ZERO, RND_MIN_INF, RND_INF, RND_CONV}}
func.func @rounding() attributes {t = #cuvil.fixed<!quant.uniform<i8:f32, 0.5>, "ROUND", "WRAP">} {
  return
}

// -----

// expected-error @+1 {{#cuvil.fixed overflow 'CLIP' is none of WRAP, SAT, SAT_ZERO, SAT_SYM}}
func.func @overflow() attributes {t = #cuvil.fixed<!quant.uniform<i8:f32, 0.5>, "TRN", "CLIP">} {
  return
}
