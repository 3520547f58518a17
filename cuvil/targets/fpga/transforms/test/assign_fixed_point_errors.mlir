// RUN: cuvil-opt %s --split-input-file --cuvil-fpga-assign-fixed-point='layer-precision={{/fc9/Gemm=fixed<8,3>}}' --verify-diagnostics
// RUN: not cuvil-opt %s --cuvil-fpga-assign-fixed-point='precision={fixed<40,3>}' 2>&1 | FileCheck %s --check-prefix=WIDE
// RUN: not cuvil-opt %s --cuvil-fpga-assign-fixed-point='layer-precision={/fc1/Gemm}' 2>&1 | FileCheck %s --check-prefix=NOTYPE

// A precision for a node that is no layer lists the layers.
// expected-error @+1 {{a precision is given for '/fc9/Gemm', which is no layer of the model; its layers are: /fc1/Gemm, /relu/Relu}}
module {
  func.func @mlp(%x: tensor<1x4xf32>) -> tensor<1x8xf32> {
    %w = cuvil.constant dense<0.5> : tensor<4x8xf32>
    %g = cuvil.gemm %x, %w : tensor<1x4xf32>, tensor<4x8xf32> loc("/fc1/Gemm")
    %r = cuvil.relu %g : tensor<1x8xf32> loc("/relu/Relu")
    return %r : tensor<1x8xf32>
  }
}

// WIDE: cuvil-fpga-assign-fixed-point precision: bad fixed-point type 'fixed<40,3>': W must be 1 to 32
// NOTYPE: cuvil-fpga-assign-fixed-point layer-precision '/fc1/Gemm': write NODE=TYPE
