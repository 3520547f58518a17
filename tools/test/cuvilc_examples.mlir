// The shipped examples compile; their inferred types are the expected ones.
// RUN: cuvilc --emit=mlir-level1 --quiet %{cuvil_root}/examples/classifier.mlir | FileCheck %s --check-prefix=CLASSIFIER
// RUN: cuvilc --emit=mlir-level1 --quiet %{cuvil_root}/examples/resnet_block.mlir | FileCheck %s --check-prefix=RESNET

// CLASSIFIER-LABEL: func.func @simple_classifier
// CLASSIFIER: cuvil.matmul {{.*}} : tensor<?x10xf32>, tensor<10x10xf32>
// CLASSIFIER: cuvil.mul {{.*}} : tensor<?x10xf32>, tensor<f32>
// CLASSIFIER: cuvil.softmax {{.*}} : tensor<?x10xf32>
// CLASSIFIER: return {{.*}} : tensor<?x10xf32>

// RESNET-LABEL: func.func @basic_block
// RESNET: cuvil.conv2d
// RESNET: cuvil.batch_norm {{.*}} : tensor<?x64x56x56xf32>,
// RESNET: cuvil.add {{.*}} : tensor<?x64x56x56xf32>, tensor<?x64x56x56xf32>
// RESNET: return {{.*}} : tensor<?x64x56x56xf32>
