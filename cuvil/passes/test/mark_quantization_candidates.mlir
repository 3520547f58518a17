// RUN: cuvil-opt %s --cuvil-mark-quantization-candidates --split-input-file -verify-diagnostics | FileCheck %s
// RUN: cuvil-opt %s '--cuvil-mark-quantization-candidates=keep-fp32=fc2,Conv' --split-input-file 2>&1 | FileCheck %s --check-prefix=KEEP
// RUN: cuvil-opt %s '--cuvil-mark-quantization-candidates=grouped-convolutions=false' --split-input-file 2>/dev/null | FileCheck %s --check-prefix=PLAIN
// RUN: cuvil-opt %s '--cuvil-mark-quantization-candidates=grouped-convolutions=false' --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=PLAINWARN

// Linear layers and convolutions with constant weights are numbered in
// program order; a product of two activations stays float32, with a
// warning saying why.
// CHECK-LABEL: func.func @model
// CHECK: cuvil.gemm {{.+}} {cuvil.calibration_point = 0 : i64, trans_b}
// CHECK: cuvil.matmul {{.+}} {cuvil.calibration_point = 1 : i64}
// CHECK: cuvil.matmul %{{[0-9]+}}, %arg1 :
// CHECK: cuvil.conv2d {{.+}} {cuvil.calibration_point = 2 : i64}
// The keep-fp32 list names a module path (fc2 of /fc2/MatMul) and an ONNX
// operator (Conv).
// KEEP: warning: loc("/fc2/MatMul"): kept in float32, as asked (keep-fp32 'fc2')
// KEEP: warning: kept in float32, as asked (keep-fp32 'Conv')
// KEEP-LABEL: func.func @model
// KEEP: cuvil.gemm {{.+}} {cuvil.calibration_point = 0 : i64, trans_b}
// KEEP-NOT: calibration_point
func.func @model(%x: tensor<?x3xf32>, %z: tensor<2x2xf32>, %img: tensor<1x1x4x4xf32>)
    -> (tensor<?x2xf32>, tensor<1x1x4x4xf32>) {
  %w1 = cuvil.constant dense<1.0> : tensor<2x3xf32>
  %w2 = cuvil.constant dense<1.0> : tensor<2x2xf32>
  %k = cuvil.constant dense<1.0> : tensor<1x1x1x1xf32>
  %h = cuvil.gemm %x, %w1 {trans_b} : tensor<?x3xf32>, tensor<2x3xf32> loc("/fc1/Gemm")
  %h2 = cuvil.matmul %h, %w2 : tensor<?x2xf32>, tensor<2x2xf32> loc("/fc2/MatMul")
  // expected-warning @+1 {{stays float32: its weights are computed at run time}}
  %y = cuvil.matmul %h2, %z : tensor<?x2xf32>, tensor<2x2xf32>
  %c = cuvil.conv2d %img, %k : tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>
  return %y, %c : tensor<?x2xf32>, tensor<1x1x4x4xf32>
}

// -----

// A gemm whose activation is transposed has no integer form.
func.func @trans_a(%x: tensor<3x4xf32>) -> tensor<4x2xf32> {
  %w = cuvil.constant dense<1.0> : tensor<3x2xf32>
  // expected-warning @+1 {{stays float32: its activation is transposed (trans_a)}}
  %y = cuvil.gemm %x, %w {trans_a} : tensor<3x4xf32>, tensor<3x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Grouped and dilated convolutions are candidates too (each group's sums
// are exact); depthwise ones up to 512 taps. Not for a target whose int8
// convolutions have neither (an MLU's tensor unit): they stay float32,
// with a warning, and the plain one is still marked.
// CHECK-LABEL: func.func @grouped
// CHECK: cuvil.conv2d {{.+}} {cuvil.calibration_point = 0 : i64, groups = 2 : i64
// CHECK: cuvil.conv2d {{.+}} {cuvil.calibration_point = 1 : i64, dilations = array<i64: 2, 2>
// CHECK: cuvil.conv2d {{.+}} {cuvil.calibration_point = 2 : i64}
// PLAIN-LABEL: func.func @grouped
// PLAINWARN-COUNT-2: warning: stays float32: this target's int8 convolutions have no groups or dilation
// PLAINWARN-NOT: no groups or dilation
// PLAIN: cuvil.conv2d {{.+}} {groups = 2 : i64
// PLAIN: cuvil.conv2d {{.+}} {dilations = array<i64: 2, 2>
// PLAIN: cuvil.conv2d {{.+}} {cuvil.calibration_point = 0 : i64}
func.func @grouped(%x: tensor<1x4x5x5xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x4x3x3xf32>, tensor<1x4x5x5xf32>) {
  %w = cuvil.constant dense<1.0> : tensor<4x2x3x3xf32>
  %y = cuvil.conv2d %x, %w {groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>
  %v = cuvil.constant dense<1.0> : tensor<4x4x2x2xf32>
  %d = cuvil.conv2d %x, %v {dilations = array<i64: 2, 2>} : tensor<1x4x5x5xf32>, tensor<4x4x2x2xf32>
  %u = cuvil.constant dense<1.0> : tensor<4x4x1x1xf32>
  %p = cuvil.conv2d %x, %u : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>
  return %y, %d, %p : tensor<1x4x5x5xf32>, tensor<1x4x3x3xf32>, tensor<1x4x5x5xf32>
}

// -----

func.func @wide_depthwise(%x: tensor<1x4x30x30xf32>) -> tensor<1x4x8x8xf32> {
  %w = cuvil.constant dense<1.0> : tensor<4x1x23x23xf32>
  // expected-warning @+1 {{stays float32: its depthwise window has more than 512 taps}}
  %y = cuvil.conv2d %x, %w {groups = 4 : i64} : tensor<1x4x30x30xf32>, tensor<4x1x23x23xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// Calibration observes the function's own values: a product inside a loop
// stays float32.
func.func @in_loop(%c: tensor<i1>, %x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %w = cuvil.constant dense<1.0> : tensor<4x4xf32>
  %r = cuvil.loop while %c : tensor<i1> iter(%x : tensor<3x4xf32>) -> tensor<3x4xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %a: tensor<3x4xf32>):
    // expected-warning @+1 {{stays float32: it is inside an if or a loop, whose values calibration does not observe}}
    %y = cuvil.matmul %a, %w : tensor<3x4xf32>, tensor<4x4xf32>
    cuvil.yield %cond, %y : tensor<i1>, tensor<3x4xf32>
  }
  return %r : tensor<3x4xf32>
}
