// A 1x4 input times a 5x3 weight: the inner dimensions differ.
func.func @mismatch(%x: tensor<1x4xf32>) -> tensor<1x3xf32> {
  %w = cuvil.constant dense<1.0> : tensor<5x3xf32>
  %y = cuvil.matmul %x, %w : tensor<1x4xf32>, tensor<5x3xf32>
  return %y : tensor<1x3xf32>
}
