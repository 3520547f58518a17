// Models the x86 target cannot compile yet fail with the op and location,
// and leave no artifact.
// RUN: not cuvilc --quiet %s -o %t.so 2>&1 | FileCheck %s
// RUN: not test -e %t.so
// RUN: not test -e %t.h
// CHECK: cuvilc: error: 'Conv_3' (model.onnx): error: 'cuvil_l2.ukernel_call' op 'conv2d' on 'f64' is not supported by the CPU targets yet
func.func @double(%x: tensor<1x1x4x4xf64>, %w: tensor<1x1x3x3xf64>) -> tensor<1x1x2x2xf64> {
  %e = cuvil.exp %x : tensor<1x1x4x4xf64> loc("Exp_2"("model.onnx":0:0))
  %c = cuvil.conv2d %e, %w : tensor<1x1x4x4xf64>, tensor<1x1x3x3xf64> loc("Conv_3"("model.onnx":0:0))
  return %c : tensor<1x1x2x2xf64>
}
