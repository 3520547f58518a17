// The shipped examples compile; their inferred types are the expected ones.
// RUN: cuvilc --emit=mlir-level1 --quiet %{cuvil_root}/examples/classifier.mlir | FileCheck %s --check-prefix=CLASSIFIER
// RUN: cuvilc --emit=mlir-level1 --quiet %{cuvil_root}/examples/resnet_block.mlir | FileCheck %s --check-prefix=RESNET

// CLASSIFIER-LABEL: func.func @simple_classifier
// CLASSIFIER: cuvil.matmul {{.*}} : tensor<?x10xf32>, tensor<10x10xf32>
// CLASSIFIER: cuvil.mul {{.*}} : tensor<?x10xf32>, tensor<f32>
// CLASSIFIER: cuvil.softmax {{.*}} : tensor<?x10xf32>
// CLASSIFIER: return {{.*}} : tensor<?x10xf32>

// The ResNet block after the level1 pipeline: batch norms folded into the
// convolutions, each convolution fused with its residual add and relu.
// RESNET-LABEL: func.func @basic_block
// RESNET-NOT: cuvil.batch_norm
// RESNET: cuvil.fused_group kind = "epilogue"
// RESNET-NEXT: ^bb0
// RESNET-NEXT: cuvil.conv2d {{.*}} : tensor<?x64x56x56xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>
// RESNET-NEXT: cuvil.relu
// RESNET: cuvil.fused_group kind = "epilogue"
// RESNET-NEXT: ^bb0
// RESNET-NEXT: cuvil.conv2d
// RESNET-NEXT: cuvil.add {{.*}} : tensor<?x64x56x56xf32>, tensor<?x64x56x56xf32>
// RESNET-NEXT: cuvil.relu
// RESNET-NOT: cuvil.batch_norm
// RESNET: return {{.*}} : tensor<?x64x56x56xf32>
