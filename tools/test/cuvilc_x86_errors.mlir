// Models the x86 target cannot compile yet fail with the op and location,
// and leave no artifact.
// RUN: not cuvilc --quiet %s -o %t.so 2>&1 | FileCheck %s
// RUN: not test -e %t.so
// RUN: not test -e %t.h
// CHECK: cuvilc: error: 'Cast_2' (model.onnx): error: the x86 target does not support 'f16' tensors yet
func.func @half(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = cuvil.cast %x : tensor<4xf32> to tensor<4xf16> loc("Cast_2"("model.onnx":0:0))
  %e = cuvil.exp %h : tensor<4xf16> loc("Exp_3"("model.onnx":0:0))
  %f = cuvil.cast %e : tensor<4xf16> to tensor<4xf32> loc("Cast_4"("model.onnx":0:0))
  return %f : tensor<4xf32>
}

// RUN: sed -n 's|^// MODEL:||p' %s > %t.io.mlir
// RUN: not cuvilc --quiet %t.io.mlir 2>&1 | FileCheck %s --check-prefix=IO
// IO: error: the x86 target does not support 'bf16' tensors yet (model input 0)
// MODEL:func.func @f(%x: tensor<4xbf16>) -> tensor<4xbf16> {
// MODEL:  return %x : tensor<4xbf16>
// MODEL:}
