// cuvilc --explain-kernels: which kernel computes each layer, and why, on
// standard error beside the normal output; a layer on a slow path (here a
// grouped convolution whose 4-channel groups no block divides) says why.
// RUN: cuvilc --quiet --cpu=x86-64-v4 --explain-kernels %s -o %t.so 2>&1 | FileCheck %s
// RUN: test -s %t.so
// CHECK: cuvilc: kernel: kernels for x86-64-v4 ({{.*}}, 512-bit vectors: blocks of 16 channels)
// CHECK: cuvilc: kernel: 'stem' (model.onnx), 'stem_act' (model.onnx): conv2d -> Winograd F(4x4, 3x3) on NCHW16c + [hardswish] -- 3x3 stride 1 on 28x28 outputs and 16 -> 16 channels (Winograd pays from 28x28 and 8)
// CHECK: cuvilc: kernel: 'dw' (model.onnx), 'dw_act' (model.onnx): conv2d -> blocked depthwise register tiles, NCHW16c + [silu] -- the convolutions around it share NCHW16c
// CHECK: cuvilc: kernel: 'expand' (model.onnx): conv2d -> blocked direct register tiles, NCHW16c -- the convolutions around it share NCHW16c
// CHECK: cuvilc: kernel: 'pool' (model.onnx): global_avg_pool on NCHW16c{{$}}
// CHECK: cuvilc: kernel: 'flat' (model.onnx): flatten -- a loop in the run function
// CHECK: cuvilc: kernel: 'fc' (model.onnx): matmul -> matmul (rows over the threads) -- too few rows or columns to pay for packing
// CHECK: cuvilc: kernel: 'narrow' (model.onnx): conv2d -> NCHW direct kernel, group by group -- 4 groups: the direct kernel; stays NCHW: 16 channels in groups of 4 do not split into blocks of 8
// A reader with no blocked form reads a plain copy: the reorder says for whom.
// CHECK: cuvilc: kernel: 'head' (model.onnx): conv2d -> blocked direct register tiles, NCHW16c
// CHECK: cuvilc: kernel: 'flat2' (model.onnx): reorder NCHW16c -> NCHW -- 'flatten' reads NCHW only
// CHECK: cuvilc: kernel: 'flat2' (model.onnx): flatten -- a loop in the run function
// CHECK: cuvilc: kernel: 'rowscale' (model.onnx), 'rowscale_act' (model.onnx): reorder NCHW16c -> NCHW -- 'map' reads NCHW only
// CHECK: cuvilc: kernel: 'rowscale' (model.onnx), 'rowscale_act' (model.onnx): map -> generated loop -- fused elementwise ops, a loop in the run function

// A level1 model stops before kernels are chosen: nothing to report, and
// cuvilc says so.
// RUN: cuvilc --quiet --explain-kernels --emit=mlir-level1 %s -o %t.mlir 2>&1 | FileCheck %s --check-prefix=LEVEL1
// LEVEL1: cuvilc: --explain-kernels: no kernel report (the CPU targets give one from --emit=mlir-level2 on; an FPGA or MLU project has its report.txt)

func.func @net(%x: tensor<1x16x28x28xf32>, %rows: tensor<1x16x28x1xf32>) -> (tensor<1x10xf32>, tensor<1x16x28x28xf32>, tensor<1x12544xf32>, tensor<1x16x28x28xf32>) {
  %w1 = cuvil.constant dense<0.01> : tensor<16x16x3x3xf32>
  %a = cuvil.conv2d %x, %w1 {padding = array<i64: 1, 1, 1, 1>} : tensor<1x16x28x28xf32>, tensor<16x16x3x3xf32> loc("stem"("model.onnx":0:0))
  %h = cuvil.hardswish %a : tensor<1x16x28x28xf32> loc("stem_act"("model.onnx":0:0))
  %wd = cuvil.constant dense<0.02> : tensor<16x1x5x5xf32>
  %d = cuvil.conv2d %h, %wd {groups = 16, padding = array<i64: 2, 2, 2, 2>, strides = array<i64: 2, 2>} : tensor<1x16x28x28xf32>, tensor<16x1x5x5xf32> loc("dw"("model.onnx":0:0))
  %s = cuvil.silu %d : tensor<1x16x14x14xf32> loc("dw_act"("model.onnx":0:0))
  %we = cuvil.constant dense<0.03> : tensor<32x16x1x1xf32>
  %e = cuvil.conv2d %s, %we : tensor<1x16x14x14xf32>, tensor<32x16x1x1xf32> loc("expand"("model.onnx":0:0))
  %p = cuvil.global_avg_pool %e : tensor<1x32x14x14xf32> loc("pool"("model.onnx":0:0))
  %f = cuvil.flatten %p {axis = 1} : tensor<1x32x1x1xf32> loc("flat"("model.onnx":0:0))
  %fc = cuvil.constant dense<0.04> : tensor<32x10xf32>
  %y = cuvil.matmul %f, %fc : tensor<1x32xf32>, tensor<32x10xf32> loc("fc"("model.onnx":0:0))
  %wg = cuvil.constant dense<0.05> : tensor<16x4x3x3xf32>
  %g = cuvil.conv2d %x, %wg {groups = 4, padding = array<i64: 1, 1, 1, 1>} : tensor<1x16x28x28xf32>, tensor<16x4x3x3xf32> loc("narrow"("model.onnx":0:0))
  %wh = cuvil.constant dense<0.06> : tensor<16x16x1x1xf32>
  %hd = cuvil.conv2d %x, %wh : tensor<1x16x28x28xf32>, tensor<16x16x1x1xf32> loc("head"("model.onnx":0:0))
  %f2 = cuvil.flatten %hd {axis = 1} : tensor<1x16x28x28xf32> loc("flat2"("model.onnx":0:0))
  %w3 = cuvil.constant dense<0.07> : tensor<16x16x1x1xf32>
  %h3 = cuvil.conv2d %x, %w3 : tensor<1x16x28x28xf32>, tensor<16x16x1x1xf32> loc("head3"("model.onnx":0:0))
  %rs = cuvil.mul %h3, %rows : tensor<1x16x28x28xf32>, tensor<1x16x28x1xf32> loc("rowscale"("model.onnx":0:0))
  %ra = cuvil.relu %rs : tensor<1x16x28x28xf32> loc("rowscale_act"("model.onnx":0:0))
  return %y, %g, %f2, %ra : tensor<1x10xf32>, tensor<1x16x28x28xf32>, tensor<1x12544xf32>, tensor<1x16x28x28xf32>
}
