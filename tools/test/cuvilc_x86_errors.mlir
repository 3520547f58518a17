// Models the x86 target cannot compile yet fail with the op and location,
// and leave no artifact.
// RUN: not cuvilc --quiet %s -o %t.so 2>&1 | FileCheck %s
// RUN: not test -e %t.so
// RUN: not test -e %t.h
// CHECK: cuvilc: error: 'MatMul_3' (model.onnx): error: 'cuvil_l2.ukernel_call' op 'matmul' on 'f64' is not supported by the CPU targets yet
func.func @double(%x: tensor<4x4xf64>) -> tensor<4x4xf64> {
  %e = cuvil.exp %x : tensor<4x4xf64> loc("Exp_2"("model.onnx":0:0))
  %m = cuvil.matmul %e, %e : tensor<4x4xf64>, tensor<4x4xf64> loc("MatMul_3"("model.onnx":0:0))
  return %m : tensor<4x4xf64>
}
