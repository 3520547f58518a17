// RUN: cuvil-opt %s --cuvil-fold-pads --split-input-file | FileCheck %s

// Inception's padded average pool (Pad + AveragePool): the zeros become the
// pool's padding, counted.
// CHECK-LABEL: func.func @avg_pool
// CHECK-NOT: cuvil.pad
// CHECK: cuvil.avg_pool2d %arg0 {count_include_pad, kernel_shape = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x5x5xf32>
func.func @avg_pool(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %p = cuvil.pad %x, pads = [0, 0, 1, 1, 0, 0, 1, 1] : tensor<1x4x5x5xf32>
  %a = cuvil.avg_pool2d %p {kernel_shape = array<i64: 3, 3>} : tensor<1x4x7x7xf32>
  return %a : tensor<1x4x5x5xf32>
}

// -----

// A SAME convolution (asymmetric pad) adds it to its own padding; the pad
// stays for its other reader.
// CHECK-LABEL: func.func @conv
// CHECK: %[[P:.+]] = cuvil.pad %arg0
// CHECK: cuvil.conv2d %arg0, %{{.+}} {padding = array<i64: 1, 2, 2, 3>} : tensor<1x2x6x6xf32>
// CHECK: return %{{.+}}, %[[P]]
func.func @conv(%x: tensor<1x2x6x6xf32>, %w: tensor<4x2x3x3xf32>) -> (tensor<1x4x7x9xf32>, tensor<1x2x9x10xf32>) {
  %p = cuvil.pad %x, pads = [0, 0, 1, 1, 0, 0, 2, 3] : tensor<1x2x6x6xf32>
  %c = cuvil.conv2d %p, %w {padding = array<i64: 0, 1, 0, 0>} : tensor<1x2x9x10xf32>, tensor<4x2x3x3xf32>
  return %c, %p : tensor<1x4x7x9xf32>, tensor<1x2x9x10xf32>
}

// -----

// What does not fold: a max pool (it pads with -infinity), a pad of
// another value or mode, an average pool that does not count its own
// padding or is in ceil mode, a pad of the channels.
// CHECK-LABEL: func.func @kept
// CHECK: cuvil.pad
// CHECK-NEXT: cuvil.max_pool2d %{{.+}} {kernel_shape = array<i64: 3, 3>}
// CHECK-NEXT: cuvil.pad
// CHECK-NEXT: cuvil.conv2d %{{.+}}, %{{.+}} : tensor<1x2x7x7xf32>
// CHECK-NEXT: cuvil.pad
// CHECK-NEXT: cuvil.conv2d %{{.+}}, %{{.+}} : tensor<1x2x7x7xf32>
// CHECK-NEXT: cuvil.pad
// CHECK-NEXT: cuvil.avg_pool2d %{{.+}} {kernel_shape = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT: cuvil.pad
// CHECK-NEXT: cuvil.avg_pool2d %{{.+}} {ceil_mode, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}
// CHECK-NEXT: cuvil.pad
// CHECK-NEXT: cuvil.avg_pool2d %{{.+}} {kernel_shape = array<i64: 3, 3>} : tensor<1x3x7x7xf32>
func.func @kept(%x: tensor<1x2x5x5xf32>, %w: tensor<2x2x3x3xf32>) -> (tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>, tensor<1x2x7x7xf32>, tensor<1x2x4x4xf32>, tensor<1x3x5x5xf32>) {
  %p = cuvil.pad %x, pads = [0, 0, 1, 1, 0, 0, 1, 1] : tensor<1x2x5x5xf32>
  %m = cuvil.max_pool2d %p {kernel_shape = array<i64: 3, 3>} : tensor<1x2x7x7xf32>
  %q = cuvil.pad %x, pads = [0, 0, 1, 1, 0, 0, 1, 1] {value = 1.0 : f64} : tensor<1x2x5x5xf32>
  %c = cuvil.conv2d %q, %w : tensor<1x2x7x7xf32>, tensor<2x2x3x3xf32>
  %r = cuvil.pad %x, pads = [0, 0, 1, 1, 0, 0, 1, 1] {mode = "reflect"} : tensor<1x2x5x5xf32>
  %d = cuvil.conv2d %r, %w : tensor<1x2x7x7xf32>, tensor<2x2x3x3xf32>
  %s = cuvil.pad %x, pads = [0, 0, 1, 1, 0, 0, 1, 1] : tensor<1x2x5x5xf32>
  %a = cuvil.avg_pool2d %s {kernel_shape = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x2x7x7xf32>
  %t = cuvil.pad %x, pads = [0, 0, 1, 1, 0, 0, 1, 1] : tensor<1x2x5x5xf32>
  %b = cuvil.avg_pool2d %t {ceil_mode, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x2x7x7xf32>
  %u = cuvil.pad %x, pads = [0, 1, 1, 1, 0, 0, 1, 1] : tensor<1x2x5x5xf32>
  %e = cuvil.avg_pool2d %u {kernel_shape = array<i64: 3, 3>} : tensor<1x3x7x7xf32>
  return %m, %c, %d, %a, %b, %e : tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>, tensor<1x2x7x7xf32>, tensor<1x2x4x4xf32>, tensor<1x3x5x5xf32>
}
