// A tree ensemble whose tables arrive at run time cannot be checked when
// it is compiled: the x86 target refuses it, naming the node, and writes
// nothing.
// RUN: not cuvilc --quiet %s -o %t.so 2>&1 | FileCheck %s
// RUN: not test -e %t.so
// CHECK: 'forest' (model.onnx): error: 'cuvil_l2.ukernel_call' op 'tree_ensemble' needs constant tables on the CPU targets (they are checked when the model is compiled)
func.func @runtime_tables(%x: tensor<4x2xf32>, %nodes: tensor<3x3xi32>) -> tensor<4x1xf32> {
  %thresholds = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %trees = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %leaves = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %0 = cuvil.tree_ensemble %x, %nodes, %thresholds, %trees, %leaves {base_values = array<f64: 0.0>} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32> loc("forest"("model.onnx":0:0))
  return %0 : tensor<4x1xf32>
}
