// RUN: cuvil-opt %s --cuvil-quantize-io --split-input-file --verify-diagnostics | FileCheck %s

!a = !quant.uniform<u8:f32, 0.05:3>

// A QDQ model: the input is the type its quantize gives (which goes), the
// output the type it was dequantized from (the dequantize goes); the ABI
// names stay.
// CHECK-LABEL: func.func @qdq
// CHECK-SAME: (%arg0: tensor<1x2x4x8x!quant.uniform<u8:f32, 5.000000e-02:3>> {cuvil.name = "x"})
// CHECK-SAME: -> (tensor<1x2x2x4x!quant.uniform<u8:f32, 5.000000e-02:3>> {cuvil.name = "y"})
// CHECK-NEXT: %[[P:.+]] = cuvil.max_pool2d %arg0
// CHECK-NEXT: return %[[P]]
func.func @qdq(%x: tensor<1x2x4x8xf32> {cuvil.name = "x"}) -> (tensor<1x2x2x4xf32> {cuvil.name = "y"}) {
  %q = cuvil.quantize %x : tensor<1x2x4x8xf32> to tensor<1x2x4x8x!a>
  %p = cuvil.max_pool2d %q {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x2x4x8x!a>
  %d = cuvil.dequantize %p : tensor<1x2x2x4x!a>
  return %d : tensor<1x2x2x4xf32>
}

// -----

// Calibrated ranges: the input is uint8 over [-1, 3] (scale 4/255, zero
// point 64) and read dequantized by the float op; the output is quantized
// to uint8 over [0, 2] (zero is always in range).
// CHECK-LABEL: func.func @calibrated
// CHECK-SAME: (%arg0: tensor<2x!quant.uniform<u8:f32, 0.01568627{{[0-9]*}}:64>>)
// CHECK-SAME: -> tensor<2x!quant.uniform<u8:f32, 0.0078431377{{[0-9]*}}>>
// CHECK-NEXT: %[[D:.+]] = cuvil.dequantize %arg0
// CHECK-NEXT: %[[R:.+]] = cuvil.relu %[[D]]
// CHECK-NEXT: %[[Q:.+]] = cuvil.quantize %[[R]]
// CHECK-NEXT: return %[[Q]]
// CHECK-NOT: cuvil.io_range
func.func @calibrated(%x: tensor<2xf32> {cuvil.io_range = array<f64: -1.0, 3.0>}) -> (tensor<2xf32> {cuvil.io_range = array<f64: 0.5, 2.0>}) {
  %r = cuvil.relu %x : tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Inputs and outputs that are not float32 stay as they are; an unused
// float32 input takes its range's type all the same.
// CHECK-LABEL: func.func @integers
// CHECK-SAME: (%arg0: tensor<3xi64>, %arg1: tensor<3x!quant.uniform<u8:f32, 0.0039215688{{[0-9]*}}>>) -> tensor<3xi64>
func.func @integers(%x: tensor<3xi64>, %y: tensor<3xf32> {cuvil.io_range = array<f64: 0.0, 1.0>}) -> tensor<3xi64> {
  return %x : tensor<3xi64>
}

// -----

// expected-error @+1 {{integer I/O: input 'pixels' is float32, and the model neither quantizes it nor has a calibrated range for it; calibrate the model (--quantize=int8) or compile without --integer-io}}
func.func @unquantized_input(%x: tensor<2xf32> {cuvil.name = "pixels"}) -> tensor<2xf32> {
  %r = cuvil.relu %x : tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

!a = !quant.uniform<u8:f32, 0.05:3>

// expected-error @+1 {{integer I/O: output 1 is float32, not dequantized by the model and has no calibrated range}}
func.func @unquantized_output(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %q = cuvil.quantize %x : tensor<2xf32> to tensor<2x!a>
  %d = cuvil.dequantize %q : tensor<2x!a>
  %r = cuvil.relu %d : tensor<2xf32>
  return %d, %r : tensor<2xf32>, tensor<2xf32>
}
