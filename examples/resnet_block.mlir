// A torchvision ResNet basic block (conv3x3-BN-ReLU-conv3x3-BN + identity,
// ReLU) on a dynamic batch, in level1. Only operand types appear in the
// assembly; every result type is inferred (and checked) by the op.
func.func @basic_block(%x: tensor<?x64x56x56xf32>) -> tensor<?x64x56x56xf32> {
  %w1 = cuvil.constant dense<0.01> : tensor<64x64x3x3xf32>
  %w2 = cuvil.constant dense<0.01> : tensor<64x64x3x3xf32>
  %gamma = cuvil.constant dense<1.0> : tensor<64xf32>
  %beta = cuvil.constant dense<0.0> : tensor<64xf32>
  %mean = cuvil.constant dense<0.0> : tensor<64xf32>
  %var = cuvil.constant dense<1.0> : tensor<64xf32>
  %c1 = cuvil.conv2d %x, %w1 {padding = array<i64: 1, 1, 1, 1>} : tensor<?x64x56x56xf32>, tensor<64x64x3x3xf32>
  %b1 = cuvil.batch_norm %c1, %gamma, %beta, %mean, %var : tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  %r1 = cuvil.relu %b1 : tensor<?x64x56x56xf32>
  %c2 = cuvil.conv2d %r1, %w2 {padding = array<i64: 1, 1, 1, 1>} : tensor<?x64x56x56xf32>, tensor<64x64x3x3xf32>
  %b2 = cuvil.batch_norm %c2, %gamma, %beta, %mean, %var : tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  %sum = cuvil.add %b2, %x : tensor<?x64x56x56xf32>, tensor<?x64x56x56xf32>
  %out = cuvil.relu %sum : tensor<?x64x56x56xf32>
  return %out : tensor<?x64x56x56xf32>
}
