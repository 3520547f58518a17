// Every level1 verifier and inference error, with its message.
// RUN: cuvil-opt %s -split-input-file -verify-diagnostics

// constant needs static shape
func.func @f() {
  // expected-error @+1 {{'cuvil.constant' op expects a statically shaped tensor value, got vector<2xf32>}}
  %0 = cuvil.constant dense<1.0> : vector<2xf32>
  return
}

// -----

// binary elem type
func.func @f(%a: tensor<2xf32>, %b: tensor<2xi32>) {
  // expected-error @+1 {{'cuvil.add' op expects operands of one element type, got tensor<2xf32> and tensor<2xi32>}}
  %0 = cuvil.add %a, %b : tensor<2xf32>, tensor<2xi32>
  return
}

// -----

// binary broadcast
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.mul' op cannot broadcast shapes 2x3 and 4}}
  %0 = cuvil.mul %a, %b : tensor<2x3xf32>, tensor<4xf32>
  return
}

// -----

// binary non tensor
func.func @f(%a: memref<2xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{custom op 'cuvil.sub' invalid kind of type specified: expected builtin.tensor, but found 'memref<2xf32>'}}
  %0 = cuvil.sub %a, %b : memref<2xf32>, tensor<2xf32>
  return
}

// -----

// binary non tensor, generic form
func.func @f(%a: memref<2xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.sub' op operand #0 must be ranked tensor of}}
  %0 = "cuvil.sub"(%a, %b) : (memref<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

// unranked
func.func @f(%a: tensor<*xf32>) {
  // expected-error @+1 {{custom op 'cuvil.relu' invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = cuvil.relu %a : tensor<*xf32>
  return
}

// -----

// where cond
func.func @f(%c: tensor<2xi8>, %a: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.where' op expects an i1 condition, got tensor<2xi8>}}
  %0 = cuvil.where %c, %a, %a : tensor<2xi8>, tensor<2xf32>, tensor<2xf32>
  return
}

// -----

// where broadcast
func.func @f(%c: tensor<3xi1>, %a: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.where' op cannot broadcast shapes 3 and 2}}
  %0 = cuvil.where %c, %a, %a : tensor<3xi1>, tensor<2xf32>, tensor<2xf32>
  return
}

// -----

// float only
func.func @f(%a: tensor<2xi32>) {
  // expected-error @+1 {{'cuvil.exp' op expects a floating-point tensor, got tensor<2xi32>}}
  %0 = cuvil.exp %a : tensor<2xi32>
  return
}

// -----

// clip min max
func.func @f(%a: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.clip' op expects min <= max, got min = 6.000000e+00 and max = 0.000000e+00}}
  %0 = cuvil.clip %a min = 6.0 max = 0.0 : tensor<2xf32>
  return
}

// -----

// gelu approx
func.func @f(%a: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.gelu' op expects approximate = "none" or "tanh", got "fast"}}
  %0 = cuvil.gelu %a approximate = "fast" : tensor<2xf32>
  return
}

// -----

// cast shape
func.func @f(%a: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.cast' op changes the shape from 2 to 3; a cast only converts elements}}
  %0 = cuvil.cast %a : tensor<2xf32> to tensor<3xi32>
  return
}

// -----

// matmul K
func.func @f(%x: tensor<1x12xf32>, %w: tensor<10x10xf32>) {
  // expected-error @+1 {{'cuvil.matmul' op contracting dimensions differ: lhs tensor<1x12xf32> has 12 columns but rhs tensor<10x10xf32> has 10 rows}}
  %0 = cuvil.matmul %x, %w : tensor<1x12xf32>, tensor<10x10xf32>
  return
}

// -----

// acc_type narrower than the operands
func.func @f(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) {
  // expected-error @+1 {{'cuvil.matmul' op acc_type bf16 must be a float wider than the operands' f32}}
  %0 = cuvil.matmul %x, %w {acc_type = bf16} : tensor<2x3xf32>, tensor<3x4xf32>
  return
}

// -----

// a bfloat16 gemm's C is of acc_type
func.func @f(%x: tensor<2x3xbf16>, %w: tensor<3x4xbf16>, %c: tensor<4xbf16>) {
  // expected-error @+1 {{'cuvil.gemm' op expects C of the result's element type f32, got tensor<4xbf16>}}
  %0 = cuvil.gemm %x, %w, %c {acc_type = f32} : tensor<2x3xbf16>, tensor<3x4xbf16>, tensor<4xbf16>
  return
}

// -----

// a bfloat16 convolution's bias is of acc_type
func.func @f(%x: tensor<1x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{'cuvil.conv2d' op expects a bias of the result's element type f32, got tensor<4xbf16>}}
  %0 = cuvil.conv2d %x, %w, %b {acc_type = f32} : tensor<1x3x8x8xbf16>, tensor<4x3x3x3xbf16>, tensor<4xbf16>
  return
}

// -----

// a convolution's acc_type is wider than its operands
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv2d' op acc_type f16 must be a float wider than the operands' f32}}
  %0 = cuvil.conv2d %x, %w {acc_type = f16} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

// matmul scalar
func.func @f(%x: tensor<f32>, %w: tensor<10xf32>) {
  // expected-error @+1 {{'cuvil.matmul' op expects operands of rank >= 1, got tensor<f32> and tensor<10xf32>}}
  %0 = cuvil.matmul %x, %w : tensor<f32>, tensor<10xf32>
  return
}

// -----

// matmul batch
func.func @f(%x: tensor<2x4x8xf32>, %w: tensor<3x8x4xf32>) {
  // expected-error @+1 {{'cuvil.matmul' op cannot broadcast shapes 2 and 3}}
  %0 = cuvil.matmul %x, %w : tensor<2x4x8xf32>, tensor<3x8x4xf32>
  return
}

// -----

// gemm rank
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'cuvil.gemm' op expects 2-D A and B, got tensor<2x3x4xf32> and tensor<4x5xf32>}}
  %0 = cuvil.gemm %a, %b : tensor<2x3x4xf32>, tensor<4x5xf32>
  return
}

// -----

// gemm K
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'cuvil.gemm' op contracting dimensions differ: A tensor<2x3xf32> has K = 3 but B tensor<4x5xf32> has K = 4}}
  %0 = cuvil.gemm %a, %b : tensor<2x3xf32>, tensor<4x5xf32>
  return
}

// -----

// gemm C
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>, %c: tensor<3x5xf32>) {
  // expected-error @+1 {{'cuvil.gemm' op cannot broadcast shapes 2x5 and 3x5}}
  %0 = cuvil.gemm %a, %b, %c : tensor<2x3xf32>, tensor<3x5xf32>, tensor<3x5xf32>
  return
}

// -----

// gemm C rank
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>, %c: tensor<4x1x5xf32>) {
  // expected-error @+1 {{'cuvil.gemm' op C of shape 4x1x5 does not broadcast to the 2x5 product}}
  %0 = cuvil.gemm %a, %b, %c : tensor<2x3xf32>, tensor<3x5xf32>, tensor<4x1x5xf32>
  return
}

// -----

// conv rank
func.func @f(%x: tensor<3x224x224xf32>, %w: tensor<64x3x7x7xf32>) {
  // expected-error @+1 {{'cuvil.conv2d' op expects a 4-D NCHW input, got tensor<3x224x224xf32>}}
  %0 = cuvil.conv2d %x, %w : tensor<3x224x224xf32>, tensor<64x3x7x7xf32>
  return
}

// -----

// conv weight rank
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<64x3x7xf32>) {
  // expected-error @+1 {{'cuvil.conv2d' op expects a 4-D OIHW weight, got tensor<64x3x7xf32>}}
  %0 = cuvil.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<64x3x7xf32>
  return
}

// -----

// conv channels
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv2d' op weight tensor<16x3x3x3xf32> expects 3 input channels (3 per group x 1 groups) but the input tensor<1x4x8x8xf32> has 4}}
  %0 = cuvil.conv2d %x, %w : tensor<1x4x8x8xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

// conv groups in
func.func @f(%x: tensor<1x6x8x8xf32>, %w: tensor<16x1x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv2d' op input channels 6 are not divisible by groups = 4}}
  %0 = cuvil.conv2d %x, %w {groups = 4} : tensor<1x6x8x8xf32>, tensor<16x1x3x3xf32>
  return
}

// -----

// conv groups out
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<5x2x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv2d' op output channels 5 are not divisible by groups = 2}}
  %0 = cuvil.conv2d %x, %w {groups = 2} : tensor<1x4x8x8xf32>, tensor<5x2x3x3xf32>
  return
}

// -----

// conv groups zero
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv2d' op expects groups >= 1, got 0}}
  %0 = cuvil.conv2d %x, %w {groups = 0} : tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>
  return
}

// -----

// conv strides
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv2d' op expects 2 values in 'strides', got 3}}
  %0 = cuvil.conv2d %x, %w {strides = array<i64: 1, 1, 1>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

// conv stride zero
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv2d' op expects 'strides' values >= 1, got 0}}
  %0 = cuvil.conv2d %x, %w {strides = array<i64: 0, 1>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

// conv padding neg
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv2d' op expects 'padding' values >= 0, got -1}}
  %0 = cuvil.conv2d %x, %w {padding = array<i64: -1, 0, 0, 0>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

// conv window
func.func @f(%x: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv2d' op window of size 3 (dilation 1) does not fit input size 2 with padding 0+0}}
  %0 = cuvil.conv2d %x, %w : tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

// conv bias
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'cuvil.conv2d' op expects a bias of shape 4, got tensor<5xf32>}}
  %0 = cuvil.conv2d %x, %w, %b : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<5xf32>
  return
}

// -----

// softmax axis
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.softmax' op axis 2 is out of range for rank 2 (expected in [-2, 2))}}
  %0 = cuvil.softmax %x, axis = 2 : tensor<2x3xf32>
  return
}

// -----

// reduce empty
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.reduce_sum' op expects at least one axis to reduce}}
  %0 = cuvil.reduce_sum %x, axes = [] : tensor<2x3xf32>
  return
}

// -----

// reduce repeated
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.reduce_max' op axis -1 is repeated}}
  %0 = cuvil.reduce_max %x, axes = [1, -1] : tensor<2x3xf32>
  return
}

// -----

// reduce mean int
func.func @f(%x: tensor<2x3xi32>) {
  // expected-error @+1 {{'cuvil.reduce_mean' op expects a floating-point tensor, got tensor<2x3xi32>}}
  %0 = cuvil.reduce_mean %x, axes = [1] : tensor<2x3xi32>
  return
}

// -----

// layernorm scale
func.func @f(%x: tensor<2x8x16xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'cuvil.layer_norm' op scale of shape 8 does not match the normalized shape 16}}
  %0 = cuvil.layer_norm %x scale %g : tensor<8xf32> : tensor<2x8x16xf32>
  return
}

// -----

// layernorm eps
func.func @f(%x: tensor<2x8x16xf32>) {
  // expected-error @+1 {{'cuvil.layer_norm' op expects epsilon >= 0}}
  %0 = cuvil.layer_norm %x {epsilon = -1.0} : tensor<2x8x16xf32>
  return
}

// -----

// batchnorm rank
func.func @f(%x: tensor<8xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'cuvil.batch_norm' op expects an input of rank >= 2 (N, C, ...), got tensor<8xf32>}}
  %0 = cuvil.batch_norm %x, %c, %c, %c, %c : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  return
}

// -----

// batchnorm param
func.func @f(%x: tensor<1x8x4x4xf32>, %c: tensor<8xf32>, %m: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.batch_norm' op expects mean of shape 8 (one per channel), got tensor<4xf32>}}
  %0 = cuvil.batch_norm %x, %c, %c, %m, %c : tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>
  return
}

// -----

// batchnorm eps
func.func @f(%x: tensor<1x8x4x4xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'cuvil.batch_norm' op expects epsilon >= 0}}
  %0 = cuvil.batch_norm %x, %c, %c, %c, %c {epsilon = -0.5} : tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  return
}

// -----

// pool rank
func.func @f(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'cuvil.max_pool2d' op expects a 4-D NCHW input, got tensor<1x8x8xf32>}}
  %0 = cuvil.max_pool2d %x {kernel_shape = array<i64: 2, 2>} : tensor<1x8x8xf32>
  return
}

// -----

// pool indices rank
func.func @f(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'cuvil.max_pool2d_indices' op expects a 4-D NCHW input, got tensor<1x8x8xf32>}}
  %0 = cuvil.max_pool2d_indices %x {kernel_shape = array<i64: 2, 2>} : tensor<1x8x8xf32>
  return
}

// -----

// pool kernel
func.func @f(%x: tensor<1x1x8x8xf32>) {
  // expected-error @+1 {{'cuvil.max_pool2d' op expects 2 values in 'kernel_shape', got 1}}
  %0 = cuvil.max_pool2d %x {kernel_shape = array<i64: 2>} : tensor<1x1x8x8xf32>
  return
}

// -----

// avgpool dilation
func.func @f(%x: tensor<1x1x8x8xf32>) {
  // expected-error @+1 {{'cuvil.avg_pool2d' op does not support dilation}}
  %0 = cuvil.avg_pool2d %x {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>} : tensor<1x1x8x8xf32>
  return
}

// -----

// pool window
func.func @f(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{'cuvil.avg_pool2d' op window of size 3 (dilation 1) does not fit input size 2 with padding 0+0}}
  %0 = cuvil.avg_pool2d %x {kernel_shape = array<i64: 3, 3>} : tensor<1x1x2x2xf32>
  return
}

// -----

// global pool rank
func.func @f(%x: tensor<1x8xf32>) {
  // expected-error @+1 {{'cuvil.global_avg_pool' op expects an input of rank >= 3 (N, C, spatial...), got tensor<1x8xf32>}}
  %0 = cuvil.global_avg_pool %x : tensor<1x8xf32>
  return
}

// -----

// adaptive rank
func.func @f(%x: tensor<1x8x4xf32>) {
  // expected-error @+1 {{'cuvil.adaptive_avg_pool2d' op expects a 4-D NCHW input, got tensor<1x8x4xf32>}}
  %0 = cuvil.adaptive_avg_pool2d %x, output_size = [1, 1] : tensor<1x8x4xf32>
  return
}

// -----

// adaptive size
func.func @f(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{'cuvil.adaptive_avg_pool2d' op expects 'output_size' values >= 1, got 0}}
  %0 = cuvil.adaptive_avg_pool2d %x, output_size = [0, 1] : tensor<1x8x4x4xf32>
  return
}

// -----

// reshape two inferred
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.reshape' op expects at most one -1 in shape [-1, -1]}}
  %0 = cuvil.reshape %x, shape = [-1, -1] : tensor<2x3xf32>
  return
}

// -----

// reshape zero
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.reshape' op expects shape entries >= 1 or -1, got 0}}
  %0 = cuvil.reshape %x, shape = [0, 6] : tensor<2x3xf32>
  return
}

// -----

// reshape count
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.reshape' op cannot reshape tensor<2x3xf32> (6 elements) to [4, 2] (8 elements)}}
  %0 = cuvil.reshape %x, shape = [4, 2] : tensor<2x3xf32>
  return
}

// -----

// reshape indivisible
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.reshape' op cannot reshape tensor<2x3xf32> (6 elements) to [-1, 4]}}
  %0 = cuvil.reshape %x, shape = [-1, 4] : tensor<2x3xf32>
  return
}

// -----

// flatten axis
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.flatten' op axis 3 is out of range for rank 2 (expected in [-2, 2])}}
  %0 = cuvil.flatten %x {axis = 3} : tensor<2x3xf32>
  return
}

// -----

// transpose perm
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.transpose' op perm [0, 0] is not a permutation of the 2 input dimensions}}
  %0 = cuvil.transpose %x, perm = [0, 0] : tensor<2x3xf32>
  return
}

// -----

// concat rank
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) {
  // expected-error @+1 {{'cuvil.concat' op expects inputs of one rank, got tensor<2x3xf32> and tensor<2x3x1xf32>}}
  %0 = cuvil.concat(%a, %b) axis = 0 : tensor<2x3xf32>, tensor<2x3x1xf32>
  return
}

// -----

// concat dim
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{'cuvil.concat' op inputs differ in dimension 1 (not the concatenation axis 0): tensor<2x3xf32> vs tensor<2x4xf32>}}
  %0 = cuvil.concat(%a, %b) axis = 0 : tensor<2x3xf32>, tensor<2x4xf32>
  return
}

// -----

// concat empty
func.func @f() {
  // expected-error @+2 {{'cuvil.concat' op expects at least one input}}
  // expected-error @+1 {{'cuvil.concat' op failed to infer returned types}}
  %0 = "cuvil.concat"() <{axis = 0 : i64}> : () -> tensor<2xf32>
  return
}

// -----

// split sum
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'cuvil.split' op sizes add up to 5 but dimension 1 of tensor<2x6xf32> is 6}}
  %0:2 = cuvil.split %x, axis = 1, sizes = [2, 3] : tensor<2x6xf32>
  return
}

// -----

// split empty
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'cuvil.split' op expects at least one piece in 'sizes'}}
  cuvil.split %x, axis = 1, sizes = [] : tensor<2x6xf32>
  return
}

// -----

// split nonpositive
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'cuvil.split' op expects 'sizes' values >= 1, got 0}}
  %0:2 = cuvil.split %x, axis = 1, sizes = [6, 0] : tensor<2x6xf32>
  return
}

// -----

// slice lengths
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'cuvil.slice' op expects starts, ends, axes and steps of one length, got 1, 2, 1 and 1}}
  %0 = cuvil.slice %x {starts = array<i64: 0>, ends = array<i64: 1, 2>, axes = array<i64: 0>, steps = array<i64: 1>} : tensor<2x6xf32>
  return
}

// -----

// slice step
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'cuvil.slice' op expects non-zero steps}}
  %0 = cuvil.slice %x {starts = array<i64: 0>, ends = array<i64: 1>, axes = array<i64: 0>, steps = array<i64: 0>} : tensor<2x6xf32>
  return
}

// -----

// slice axes
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'cuvil.slice' op axis 2 is out of range for rank 2 (expected in [-2, 2))}}
  %0 = cuvil.slice %x {starts = array<i64: 0>, ends = array<i64: 1>, axes = array<i64: 2>, steps = array<i64: 1>} : tensor<2x6xf32>
  return
}

// -----

// pad count
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'cuvil.pad' op expects 4 values in 'pads', got 2}}
  %0 = cuvil.pad %x, pads = [1, 1] : tensor<2x6xf32>
  return
}

// -----

// pad mode
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'cuvil.pad' op expects mode "constant", "reflect" or "edge", got "wrap"}}
  %0 = cuvil.pad %x, pads = [0, 1, 0, 1] {mode = "wrap"} : tensor<2x6xf32>
  return
}

// -----

// pad reflect
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'cuvil.pad' op reflect padding of dimension 0 must be smaller than its size 2}}
  %0 = cuvil.pad %x, pads = [2, 0, 0, 0] {mode = "reflect"} : tensor<2x6xf32>
  return
}

// -----

// pad edge empty
func.func @f(%x: tensor<0x6xf32>) {
  // expected-error @+1 {{'cuvil.pad' op cannot edge-pad empty dimension 0}}
  %0 = cuvil.pad %x, pads = [1, 0, 0, 0] {mode = "edge"} : tensor<0x6xf32>
  return
}

// -----

// gather indices
func.func @f(%x: tensor<2x6xf32>, %i: tensor<3xi8>) {
  // expected-error @+1 {{'cuvil.gather' op expects i32 or i64 indices, got tensor<3xi8>}}
  %0 = cuvil.gather %x, %i : tensor<2x6xf32>, tensor<3xi8>
  return
}

// -----

// gather scalar
func.func @f(%x: tensor<f32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.gather' op expects data of rank >= 1}}
  %0 = cuvil.gather %x, %i : tensor<f32>, tensor<3xi64>
  return
}

// -----

// squeeze
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'cuvil.squeeze' op cannot squeeze dimension 1 of tensor<2x6xf32>: its size is 6, not 1}}
  %0 = cuvil.squeeze %x, axes = [1] : tensor<2x6xf32>
  return
}

// -----

// unsqueeze
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'cuvil.unsqueeze' op axis 3 is out of range for rank 3 (expected in [-3, 3))}}
  %0 = cuvil.unsqueeze %x, axes = [3] : tensor<2x6xf32>
  return
}

// -----

// expand
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'cuvil.expand' op cannot broadcast shapes 2x6 and 3x6}}
  %0 = cuvil.expand %x, shape = [3, 6] : tensor<2x6xf32>
  return
}

// -----

// expand zero
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'cuvil.expand' op expects 'shape' values >= 1, got 0}}
  %0 = cuvil.expand %x, shape = [0, 6] : tensor<2x6xf32>
  return
}

// -----

// map args
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.map_reduce' op expects the map region to take (f32), got (f16)}}
  %0 = cuvil.map_reduce ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f16):
    cuvil.yield %x : f16
  }
  return
}

// -----

// map yield
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.map_reduce' op expects the map region to yield (f32), got (i1)}}
  %0 = cuvil.map_reduce ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
    %c = arith.constant true
    cuvil.yield %c : i1
  }
  return
}

// -----

// map with reduce parts
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.map_reduce' op without reduction_dims is a pure map: it takes no reduce region, init or keepdims}}
  %0 = cuvil.map_reduce ins(%a : tensor<4xf32>) init = 0.0 : f32 -> tensor<4xf32> {
  ^bb0(%x: f32):
    cuvil.yield %x : f32
  }
  return
}

// -----

// reduce without region
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.map_reduce' op with reduction_dims needs a reduce region}}
  %0 = cuvil.map_reduce ins(%a : tensor<4xf32>) reduction_dims = [0] init = 0.0 : f32 -> tensor<f32> {
  ^bb0(%x: f32):
    cuvil.yield %x : f32
  }
  return
}

// -----

// reduce init
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.map_reduce' op with reduction_dims needs an init value of type 'f32'}}
  %0 = cuvil.map_reduce ins(%a : tensor<4xf32>) reduction_dims = [0] -> tensor<f32> {
  ^bb0(%x: f32):
    cuvil.yield %x : f32
  } reduce {
  ^bb0(%acc: f32, %v: f32):
    cuvil.yield %acc : f32
  }
  return
}

// -----

// reduce region
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.map_reduce' op expects the reduce region to take (f32, f32), got (f32)}}
  %0 = cuvil.map_reduce ins(%a : tensor<4xf32>) reduction_dims = [0] init = 0.0 : f32 -> tensor<f32> {
  ^bb0(%x: f32):
    cuvil.yield %x : f32
  } reduce {
  ^bb0(%acc: f32):
    cuvil.yield %acc : f32
  }
  return
}

// -----

// reduce result
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'cuvil.map_reduce' op result tensor<8xf32> does not match the iteration shape 4x8 reduced over [1] (expected 4)}}
  %0 = cuvil.map_reduce ins(%a : tensor<4x8xf32>) reduction_dims = [1] init = 0.0 : f32 -> tensor<8xf32> {
  ^bb0(%x: f32):
    cuvil.yield %x : f32
  } reduce {
  ^bb0(%acc: f32, %v: f32):
    cuvil.yield %acc : f32
  }
  return
}

// -----

// map broadcast
func.func @f(%a: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'cuvil.map_reduce' op cannot broadcast shapes 4 and 3}}
  %0 = cuvil.map_reduce ins(%a, %b : tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32, %y: f32):
    cuvil.yield %x : f32
  }
  return
}

// -----

// map no inputs
func.func @f() {
  // expected-error @+1 {{'cuvil.map_reduce' op expects at least one input}}
  %0 = "cuvil.map_reduce"() ({
  ^bb0:
    %c = arith.constant 1.0 : f32
    cuvil.yield %c : f32
  }, {
  }) : () -> tensor<4xf32>
  return
}

// -----

// fused body
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.fused_group' op expects the body region to yield (tensor<4xf32>), got (tensor<4xf16>)}}
  %0 = cuvil.fused_group (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %c = cuvil.cast %x : tensor<4xf32> to tensor<4xf16>
    cuvil.yield %c : tensor<4xf16>
  }
  return
}

// -----

// fused args
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.fused_group' op expects the body region to take (tensor<4xf32>), got ()}}
  %0 = cuvil.fused_group (%a) : (tensor<4xf32>) -> tensor<4xf32> {
    %c = cuvil.constant dense<1.0> : tensor<4xf32>
    cuvil.yield %c : tensor<4xf32>
  }
  return
}

// -----

// yield parent
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.yield' op expects parent op to be one of 'cuvil.map_reduce, cuvil.fused_group, cuvil.if, cuvil.loop'}}
  cuvil.yield %a : tensor<4xf32>
}

// -----

// result type mismatch
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+2 {{'cuvil.relu' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<5xf32>'}}
  // expected-error @+1 {{'cuvil.relu' op failed to infer returned types}}
  %0 = "cuvil.relu"(%a) : (tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----

// location
func.func @f(%x: tensor<1x12xf32>, %w: tensor<10x10xf32>) {
  // Importers attach the ONNX node name or Python file:line; errors report it.
  // expected-error @below {{'cuvil.matmul' op contracting dimensions differ}}
  %0 = cuvil.matmul %x, %w : tensor<1x12xf32>, tensor<10x10xf32> loc("MatMul_0"("model.py":3:8))
  return
}

// -----

// A required attribute missing is an error, not a crash: the parser infers
// the result type before the op is verified.
func.func @f(%x: tensor<1x3x8x8xf32>) {
  // expected-error @below {{'cuvil.max_pool2d' op requires attribute 'kernel_shape'}}
  %0 = cuvil.max_pool2d %x {strides = array<i64: 2, 2>} : tensor<1x3x8x8xf32>
  return
}

// -----

// The same in the generic form, whose verification infers too.
func.func @f(%x: tensor<1x3xf32>) {
  // expected-error @below {{'cuvil.softmax' op requires attribute 'axis'}}
  %0 = "cuvil.softmax"(%x) : (tensor<1x3xf32>) -> tensor<1x3xf32>
  return
}

// -----

// math functions are float only
func.func @f(%a: tensor<2xi32>) {
  // expected-error @+1 {{'cuvil.sin' op expects a floating-point tensor, got tensor<2xi32>}}
  %0 = cuvil.sin %a : tensor<2xi32>
  return
}

// -----

// celu divides by alpha
func.func @f(%a: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.celu' op expects a non-zero alpha (it divides x)}}
  %0 = cuvil.celu %a alpha = 0.0 : tensor<2xf32>
  return
}

// -----

// shrink's lambd
func.func @f(%a: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.shrink' op expects lambd >= 0, got -1}}
  %0 = cuvil.shrink %a lambd = -1.0 : tensor<2xf32>
  return
}

// -----

// logic is on i1
func.func @f(%a: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.and' op operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = cuvil.and %a, %a : tensor<2xf32>, tensor<2xf32>
  return
}

// -----

// classification reads floats
func.func @f(%a: tensor<2xi8>) {
  // expected-error @+1 {{'cuvil.is_nan' op expects a floating-point tensor, got tensor<2xi8>}}
  %0 = cuvil.is_nan %a : tensor<2xi8>
  return
}

// -----

// shifts are of unsigned integers
func.func @f(%a: tensor<2xi32>) {
  // expected-error @+1 {{'cuvil.bit_shift' op shifts unsigned integers, got 'tensor<2xi32>'}}
  %0 = cuvil.bit_shift %a, %a : tensor<2xi32>, tensor<2xi32>
  return
}

// -----

// a float remainder has the dividend's sign
func.func @f(%a: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.mod' op on floats needs fmod (the remainder with the dividend's sign), as ONNX Mod does}}
  %0 = cuvil.mod %a, %a : tensor<2xf32>, tensor<2xf32>
  return
}

// -----

// prelu's slope broadcasts to the input, not beyond
func.func @f(%a: tensor<8xf32>, %s: tensor<2x8xf32>) {
  // expected-error @+1 {{'cuvil.prelu' op expects a slope that broadcasts to the input's shape 8, got tensor<2x8xf32>}}
  %0 = cuvil.prelu %a, %s : tensor<8xf32>, tensor<2x8xf32>
  return
}

// -----

// an index along an empty axis
func.func @f(%a: tensor<2x0xf32>) {
  // expected-error @+1 {{'cuvil.arg_max' op has no index to give along an empty axis}}
  %0 = cuvil.arg_max %a, axis = 1 : tensor<2x0xf32>
  return
}

// -----

// cumsum's axis
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.cumsum' op axis 2 is out of range for rank 2 (expected in [-2, 2))}}
  %0 = cuvil.cumsum %a, axis = 2 : tensor<2x3xf32>
  return
}

// -----

// conv_transpose2d's weight takes the input's channels first
func.func @f(%x: tensor<1x4x5x5xf32>, %w: tensor<3x4x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv_transpose2d' op expects the input's 4 channels to equal the weight's first dimension 3 and divide into 1 groups}}
  %0 = cuvil.conv_transpose2d %x, %w : tensor<1x4x5x5xf32>, tensor<3x4x3x3xf32>
  return
}

// -----

// output padding below the stride
func.func @f(%x: tensor<1x4x5x5xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv_transpose2d' op expects strides and dilations >= 1, pads >= 0 and output padding below the stride or dilation, got [2, 2], [1, 1], [0, 0, 0, 0] and [2, 0]}}
  %0 = cuvil.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, output_padding = array<i64: 2, 0>} : tensor<1x4x5x5xf32>, tensor<4x4x3x3xf32>
  return
}

// -----

// a recurrent op's input gates hold every direction's gates
func.func @f(%gx: tensor<5x2x12xf32>, %r: tensor<2x3x12xf32>) {
  // expected-error @+1 {{'cuvil.lstm' op expects input_gates of shape 5x2x24 and element type f32, got tensor<5x2x12xf32>}}
  %y:3 = cuvil.lstm %gx, %r {hidden_size = 3 : i64, direction = "bidirectional"} : tensor<5x2x12xf32>, tensor<2x3x12xf32>
  return
}

// -----

// the initial state is [directions, batch, hidden]
func.func @f(%gx: tensor<5x2x9xf32>, %r: tensor<1x3x9xf32>, %h0: tensor<1x3x3xf32>) {
  // expected-error @+1 {{'cuvil.gru' op expects initial_h of shape 1x2x3 and element type f32, got tensor<1x3x3xf32>}}
  %y:2 = cuvil.gru %gx, %r initial_h(%h0 : tensor<1x3x3xf32>) {hidden_size = 3 : i64} : tensor<5x2x9xf32>, tensor<1x3x9xf32>
  return
}

// -----

// sequence lengths are int32, one per sequence
func.func @f(%gx: tensor<5x2x3xf32>, %r: tensor<1x3x3xf32>, %lens: tensor<2xi64>) {
  // expected-error @+1 {{'cuvil.rnn' op expects sequence_lens of shape 2 and element type i32, got tensor<2xi64>}}
  %y:2 = cuvil.rnn %gx, %r sequence_lens(%lens : tensor<2xi64>) {hidden_size = 3 : i64} : tensor<5x2x3xf32>, tensor<1x3x3xf32>
  return
}

// -----

// unknown direction
func.func @f(%gx: tensor<5x2x3xf32>, %r: tensor<1x3x3xf32>) {
  // expected-error @+1 {{'cuvil.rnn' op direction must be forward, reverse or bidirectional, got 'backward'}}
  %y:2 = cuvil.rnn %gx, %r {hidden_size = 3 : i64, direction = "backward"} : tensor<5x2x3xf32>, tensor<1x3x3xf32>
  return
}

// -----

// an activation ONNX does not define
func.func @f(%gx: tensor<5x2x3xf32>, %r: tensor<1x3x3xf32>) {
  // expected-error @+1 {{'cuvil.rnn' op has unknown activation 'Swish' (expected Sigmoid, Tanh, Relu, HardSigmoid, LeakyRelu, ThresholdedRelu, ScaledTanh, Affine, Elu, Softsign or Softplus)}}
  %y:2 = cuvil.rnn %gx, %r {hidden_size = 3 : i64, activations = ["Swish"]} : tensor<5x2x3xf32>, tensor<1x3x3xf32>
  return
}

// -----

// three activations per LSTM direction
func.func @f(%gx: tensor<5x2x12xf32>, %r: tensor<1x3x12xf32>) {
  // expected-error @+1 {{'cuvil.lstm' op expects 3 activations (3 per direction), got 2}}
  %y:3 = cuvil.lstm %gx, %r {hidden_size = 3 : i64, activations = ["Sigmoid", "Tanh"]} : tensor<5x2x12xf32>, tensor<1x3x12xf32>
  return
}

// -----

// more alphas than the activations take
func.func @f(%gx: tensor<5x2x3xf32>, %r: tensor<1x3x3xf32>) {
  // expected-error @+1 {{'cuvil.rnn' op has more activation_alpha or activation_beta values than its activations take}}
  %y:2 = cuvil.rnn %gx, %r {hidden_size = 3 : i64, activation_alpha = array<f64: 1.0>} : tensor<5x2x3xf32>, tensor<1x3x3xf32>
  return
}

// -----

// clip is a positive threshold
func.func @f(%gx: tensor<5x2x3xf32>, %r: tensor<1x3x3xf32>) {
  // expected-error @+1 {{'cuvil.rnn' op expects a clip threshold > 0, got 0.000000e+00}}
  %y:2 = cuvil.rnn %gx, %r {hidden_size = 3 : i64, clip = 0.0 : f64} : tensor<5x2x3xf32>, tensor<1x3x3xf32>
  return
}

// -----

// Element gathers take indices of data's rank
func.func @f(%x: tensor<4x5xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.gather_elements' op expects data and indices of one rank >= 1, got tensor<4x5xf32> and tensor<3xi64>}}
  %g = cuvil.gather_elements %x, %i : tensor<4x5xf32>, tensor<3xi64>
  return
}

// -----

// ... no larger than data outside the axis
func.func @f(%x: tensor<4x5xf32>, %i: tensor<6x2xi64>) {
  // expected-error @+1 {{'cuvil.gather_elements' op indices tensor<6x2xi64> are larger than data tensor<4x5xf32> in dimension 0 (not the axis)}}
  %g = cuvil.gather_elements %x, %i {axis = 1 : i64} : tensor<4x5xf32>, tensor<6x2xi64>
  return
}

// -----

// ... of an integer type of 32 or 64 bits
func.func @f(%x: tensor<4x5xf32>, %i: tensor<4x5xi8>) {
  // expected-error @+1 {{'cuvil.gather_elements' op expects i32 or i64 indices, got tensor<4x5xi8>}}
  %g = cuvil.gather_elements %x, %i : tensor<4x5xf32>, tensor<4x5xi8>
  return
}

// -----

// The axis is within the rank
func.func @f(%x: tensor<4x5xf32>, %i: tensor<4x5xi64>) {
  // expected-error @+1 {{'cuvil.gather_elements' op axis 2 is out of range for rank 2 (expected in [-2, 2))}}
  %g = cuvil.gather_elements %x, %i {axis = 2 : i64} : tensor<4x5xf32>, tensor<4x5xi64>
  return
}

// -----

// Scatter updates have the indices' shape
func.func @f(%x: tensor<4x5xf32>, %i: tensor<4x2xi64>, %u: tensor<4x3xf32>) {
  // expected-error @+1 {{'cuvil.scatter_elements' op expects updates of indices' shape, got tensor<4x3xf32> and tensor<4x2xi64>}}
  %s = cuvil.scatter_elements %x, %i, %u {axis = 1 : i64} : tensor<4x5xf32>, tensor<4x2xi64>, tensor<4x3xf32>
  return
}

// -----

// ... and data's element type
func.func @f(%x: tensor<4x5xf32>, %i: tensor<4x2xi64>, %u: tensor<4x2xi32>) {
  // expected-error @+1 {{'cuvil.scatter_elements' op expects updates of data's element type, got tensor<4x2xi32> for tensor<4x5xf32>}}
  %s = cuvil.scatter_elements %x, %i, %u {axis = 1 : i64} : tensor<4x5xf32>, tensor<4x2xi64>, tensor<4x2xi32>
  return
}

// -----

// Scatter reductions are ONNX's
func.func @f(%x: tensor<4x5xf32>, %i: tensor<4x2xi64>, %u: tensor<4x2xf32>) {
  // expected-error @+1 {{'cuvil.scatter_elements' op has reduction 'sum'; expected none, add, mul, max or min}}
  %s = cuvil.scatter_elements %x, %i, %u {reduction = "sum"} : tensor<4x5xf32>, tensor<4x2xi64>, tensor<4x2xf32>
  return
}

// -----

// Booleans are not reduced
func.func @f(%x: tensor<4x5xi1>, %i: tensor<4x2xi64>, %u: tensor<4x2xi1>) {
  // expected-error @+1 {{'cuvil.scatter_elements' op cannot reduce booleans with 'add'}}
  %s = cuvil.scatter_elements %x, %i, %u {reduction = "add"} : tensor<4x5xi1>, tensor<4x2xi64>, tensor<4x2xi1>
  return
}

// -----

// top_k takes no more than a static axis holds
func.func @f(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'cuvil.top_k' op k = 6 exceeds dimension 1 of tensor<4x5xf32>}}
  %v:2 = cuvil.top_k %x {k = 6 : i64} : tensor<4x5xf32>
  return
}

// -----

// top_k takes at least one
func.func @f(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'cuvil.top_k' op expects k >= 1, got 0}}
  %v:2 = cuvil.top_k %x {k = 0 : i64} : tensor<4x5xf32>
  return
}

// -----

// Booleans have no order to rank by
func.func @f(%x: tensor<4x5xi1>) {
  // expected-error @+1 {{'cuvil.top_k' op cannot rank booleans, got tensor<4x5xi1>}}
  %v:2 = cuvil.top_k %x {k = 2 : i64} : tensor<4x5xi1>
  return
}

// -----

// The axis is one of the input's
func.func @f(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'cuvil.top_k' op axis 2 is out of range for rank 2 (expected in [-2, 2))}}
  %v:2 = cuvil.top_k %x {axis = 2 : i64, k = 1 : i64} : tensor<4x5xf32>
  return
}

// -----

// N-D gathers need a static tuple length that fits data
func.func @f(%x: tensor<4x5xf32>, %i: tensor<6x3xi64>) {
  // expected-error @+1 {{'cuvil.gather_nd' op expects indices whose last dimension is a static tuple length in [1, 2], got tensor<6x3xi64>}}
  %g = cuvil.gather_nd %x, %i : tensor<4x5xf32>, tensor<6x3xi64>
  return
}

// -----

// Batch dimensions are shared
func.func @f(%x: tensor<4x5xf32>, %i: tensor<3x1xi64>) {
  // expected-error @+1 {{'cuvil.gather_nd' op expects indices tensor<3x1xi64> to share batch dimension 0 of tensor<4x5xf32>}}
  %g = cuvil.gather_nd %x, %i {batch_dims = 1 : i64} : tensor<4x5xf32>, tensor<3x1xi64>
  return
}

// -----

// batch_dims leaves the tuple a dimension
func.func @f(%x: tensor<4x5xf32>, %i: tensor<4x1xi64>) {
  // expected-error @+1 {{'cuvil.gather_nd' op has batch_dims 2, expected in [0, 2) for tensor<4x5xf32> and tensor<4x1xi64>}}
  %g = cuvil.gather_nd %x, %i {batch_dims = 2 : i64} : tensor<4x5xf32>, tensor<4x1xi64>
  return
}

// -----

// N-D scatters take updates of the tuples' and slices' shape
func.func @f(%x: tensor<4x5xf32>, %i: tensor<6x1xi64>, %u: tensor<6x4xf32>) {
  // expected-error @+1 {{'cuvil.scatter_nd' op expects updates of shape 6x5, got tensor<6x4xf32>}}
  %s = cuvil.scatter_nd %x, %i, %u : tensor<4x5xf32>, tensor<6x1xi64>, tensor<6x4xf32>
  return
}

// -----

// ... and ONNX's reductions
func.func @f(%x: tensor<4x5xf32>, %i: tensor<6x1xi64>, %u: tensor<6x5xf32>) {
  // expected-error @+1 {{'cuvil.scatter_nd' op has reduction 'sum'; expected none, add, mul, max or min}}
  %s = cuvil.scatter_nd %x, %i, %u {reduction = "sum"} : tensor<4x5xf32>, tensor<6x1xi64>, tensor<6x5xf32>
  return
}

// -----

// roi_align: one batch index per region
func.func @f(%x: tensor<2x3x8x8xf32>, %rois: tensor<5x4xf32>, %b: tensor<4xi64>) {
  // expected-error @+1 {{'cuvil.roi_align' op expects one batch index per region (tensor<5x4xf32>), got tensor<4xi64>}}
  %y = cuvil.roi_align %x, %rois, %b {output_height = 2 : i64, output_width = 2 : i64, sampling_ratio = 2 : i64, spatial_scale = 1.0 : f64} : tensor<2x3x8x8xf32>, tensor<5x4xf32>, tensor<4xi64>
  return
}

// -----

// roi_align: boxes are [R, 4]
func.func @f(%x: tensor<2x3x8x8xf32>, %rois: tensor<5x5xf32>, %b: tensor<5xi64>) {
  // expected-error @+1 {{'cuvil.roi_align' op expects rois [R, 4] of the input's element type, got tensor<5x5xf32>}}
  %y = cuvil.roi_align %x, %rois, %b {output_height = 2 : i64, output_width = 2 : i64, sampling_ratio = 2 : i64, spatial_scale = 1.0 : f64} : tensor<2x3x8x8xf32>, tensor<5x5xf32>, tensor<5xi64>
  return
}

// -----

// roi_align: a grid of at least one point per bin, or adaptive (0)
func.func @f(%x: tensor<2x3x8x8xf32>, %rois: tensor<5x4xf32>, %b: tensor<5xi64>) {
  // expected-error @+1 {{'cuvil.roi_align' op expects an output of at least 1 x 1 and a sampling_ratio in [0, 1024], got 2 x 2 and -1}}
  %y = cuvil.roi_align %x, %rois, %b {output_height = 2 : i64, output_width = 2 : i64, sampling_ratio = -1 : i64, spatial_scale = 1.0 : f64} : tensor<2x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64>
  return
}

// -----

// roi_align: a positive, finite scale
func.func @f(%x: tensor<2x3x8x8xf32>, %rois: tensor<5x4xf32>, %b: tensor<5xi64>) {
  // expected-error @+1 {{'cuvil.roi_align' op expects a positive, finite spatial_scale, got 0}}
  %y = cuvil.roi_align %x, %rois, %b {output_height = 2 : i64, output_width = 2 : i64, sampling_ratio = 2 : i64, spatial_scale = 0.0 : f64} : tensor<2x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64>
  return
}

// -----

func.func @if_condition_type(%c: tensor<2xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cuvil.if' op expects a condition of one i1 (rank 0 or [1]), got 'tensor<2xi1>'}}
  %r = cuvil.if %c : tensor<2xi1> -> tensor<4xf32> {
    cuvil.yield %x : tensor<4xf32>
  } else {
    cuvil.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @if_branch_shapes(%c: tensor<i1>, %x: tensor<4xf32>, %y: tensor<5xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cuvil.if' op the else branch yields 'tensor<5xf32>' as value #0, expected 'tensor<4xf32>' (each value must keep one shape and element type; a shape that depends on the data cannot be compiled)}}
  %r = cuvil.if %c : tensor<i1> -> tensor<4xf32> {
    cuvil.yield %x : tensor<4xf32>
  } else {
    cuvil.yield %y : tensor<5xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @loop_condition_rank(%c: tensor<1xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cuvil.loop' op expects a condition of type tensor<i1>, got 'tensor<1xi1>'}}
  %r = cuvil.loop while %c : tensor<1xi1> iter(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %a: tensor<4xf32>):
    cuvil.yield %cond, %a : tensor<i1>, tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @loop_carried_shape(%c: tensor<i1>, %x: tensor<4xf32>, %y: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cuvil.loop' op the body yields 'tensor<8xf32>' as value #1, expected 'tensor<4xf32>'}}
  %r = cuvil.loop while %c : tensor<i1> iter(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %a: tensor<4xf32>):
    cuvil.yield %cond, %y : tensor<i1>, tensor<8xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @loop_arguments(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cuvil.loop' op expects body arguments ('tensor<i64>', 'tensor<i1>', 'tensor<4xf32>') (iteration, condition, carried values), got ('tensor<i1>', 'tensor<4xf32>')}}
  %r = cuvil.loop while %c : tensor<i1> iter(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%cond: tensor<i1>, %a: tensor<4xf32>):
    cuvil.yield %cond, %a : tensor<i1>, tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @loop_scan_rows(%c: tensor<i1>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<3x4xf32>) {
  // expected-error @+1 {{'cuvil.loop' op has scan outputs but no scan_rows}}
  %r:2 = cuvil.loop while %c : tensor<i1> iter(%x : tensor<4xf32>) -> tensor<4xf32>, tensor<3x4xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %a: tensor<4xf32>):
    cuvil.yield %cond, %a, %a : tensor<i1>, tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<3x4xf32>
}

// -----

func.func @loop_scan_stack(%c: tensor<i1>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x4xf32>) {
  // expected-error @+1 {{'cuvil.loop' op scan output 'tensor<2x4xf32>' must stack 3 rows along dimension 0}}
  %r:2 = cuvil.loop while %c : tensor<i1> iter(%x : tensor<4xf32>) -> tensor<4xf32>, tensor<2x4xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %a: tensor<4xf32>):
    cuvil.yield %cond, %a, %a : tensor<i1>, tensor<4xf32>, tensor<4xf32>
  } {scan_rows = 3 : i64}
  return %r#0, %r#1 : tensor<4xf32>, tensor<2x4xf32>
}
