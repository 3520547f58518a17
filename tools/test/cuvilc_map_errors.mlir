// A map whose region holds an op the x86 emitter cannot write in C fails
// with that op and its location, and leaves no artifact.
// RUN: not cuvilc --quiet %s -o %t.so 2>&1 | FileCheck %s
// RUN: not test -e %t.so
// RUN: not test -e %t.h
// CHECK: cuvilc: error: 'Cbrt_1' (model.onnx): error: 'math.cbrt' op in a map is not supported by the CPU targets (a map's region may hold float constants, add/sub/mul/div/neg, maximum/minimum, cmpf, select, and math exp/log/sqrt/tanh/erf/absf/powf and the functions of <math.h>)
func.func @cube_root(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %y = cuvil.map_reduce ins(%x : tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%e: f32):
    %s = math.cbrt %e : f32 loc("Cbrt_1"("model.onnx":0:0))
    cuvil.yield %s : f32
  }
  return %y : tensor<4x4xf32>
}
