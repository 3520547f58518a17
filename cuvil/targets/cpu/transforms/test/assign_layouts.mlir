// RUN: cuvil-opt %s --cuvil-fuse-epilogues --cuvil-fuse-elementwise --cuvil-lower-to-level2 --cuvil-cpu-fuse-conv-input-casts --cuvil-cpu-select-kernels --cuvil-cpu-assign-layouts=block=16 --split-input-file | FileCheck %s
// RUN: cuvil-opt %s --cuvil-fuse-epilogues --cuvil-fuse-elementwise --cuvil-lower-to-level2 --cuvil-cpu-fuse-conv-input-casts --cuvil-cpu-select-kernels --cuvil-cpu-assign-layouts --split-input-file | FileCheck %s --check-prefix=TARGET

// A residual block: the stem reads the plain 2-channel input as blocks of
// one channel (weights [OC/16][C][KH][KW][1][16]: for each input channel, the
// 16 output channels' taps, so 0, 2, 4, ... then 1, 3, 5, ...), the pooling,
// the convolutions and the fused residual all stay NCHW16c, and global
// pooling writes the plain [N, C] from blocks: not one reorder.
// CHECK-LABEL: memref.global "private" constant @resnet_constant_{{[0-9]+}}_blocked16_plain : memref<1x2x1x1x1x16xf32>
// CHECK-LABEL: func.func @resnet
// CHECK-NOT: cuvil_l2.copy
// CHECK: %[[STEM:.+]] = memref.alloc(%{{.+}}) {{.*}} : memref<?x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%{{.+}}, %{{.+}}, %{{.+}} : memref<?x2x8x8xf32>, memref<1x2x1x1x1x16xf32>, memref<16xf32>) outs(%[[STEM]] : {{.*}}) params {{.*}} algorithm <direct_blocked>
// CHECK: %[[POOL:.+]] = memref.alloc(%{{.+}}) {{.*}} : memref<?x16x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
// CHECK: cuvil_l2.ukernel_call "max_pool2d" ins(%[[STEM]] : {{.*}}) outs(%[[POOL]] : {{.*}})
// CHECK: %[[A:.+]] = memref.alloc(%{{.+}}) {{.*}} : memref<?x16x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
// The padded image: 16 channels of 6x6.
// CHECK: %[[PAD:.+]] = memref.alloc() {{.*}} : memref<576xf32>
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%[[POOL]], %{{.+}}, %{{.+}} : {{.*}}, memref<1x1x3x3x16x16xf32>, memref<16xf32>) outs(%[[A]], %[[PAD]] : {{.*}}) params {{.*}} algorithm <direct_blocked> epilogue <steps = [relu]>
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%[[A]], %{{.+}}, %{{.+}}, %[[POOL]] : {{.*}}) outs(%[[B:[^,]+]], %{{.+}} : memref<?x16x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>, memref<576xf32>) params {{.*}} algorithm <direct_blocked> epilogue <steps = [add, relu]>
// CHECK: cuvil_l2.ukernel_call "global_avg_pool" ins(%[[B]] : memref<?x16x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>) outs(%{{.+}} : memref<?x16x1x1xf32>)
// CHECK-NOT: cuvil_l2.copy
// CHECK: resnet_constant_{{[0-9]+}}_blocked16_plain: "0x400000000000000000000040000080400000C0400000004100002041000040410000604100008041000090410000A0410000B0410000C0410000D0410000E0410000F0410000803F000040400000A0400000E0400000104100003041000050410000704100008841000098410000A8410000B8410000C8410000D8410000E8410000F841"
// Without a target description the block is the default 256-bit vector's 8.
// TARGET-LABEL: func.func @resnet
// TARGET: memref<?x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW8c">>
func.func @resnet(%x: tensor<?x2x8x8xf32>) -> tensor<?x16x1x1xf32> {
  %w0 = cuvil.constant dense<[[[[0.0]], [[1.0]]], [[[2.0]], [[3.0]]], [[[4.0]], [[5.0]]], [[[6.0]], [[7.0]]], [[[8.0]], [[9.0]]], [[[10.0]], [[11.0]]], [[[12.0]], [[13.0]]], [[[14.0]], [[15.0]]], [[[16.0]], [[17.0]]], [[[18.0]], [[19.0]]], [[[20.0]], [[21.0]]], [[[22.0]], [[23.0]]], [[[24.0]], [[25.0]]], [[[26.0]], [[27.0]]], [[[28.0]], [[29.0]]], [[[30.0]], [[31.0]]]]> : tensor<16x2x1x1xf32>
  %b = cuvil.constant dense<0.1> : tensor<16xf32>
  %c0 = cuvil.conv2d %x, %w0, %b : tensor<?x2x8x8xf32>, tensor<16x2x1x1xf32>, tensor<16xf32>
  %r0 = cuvil.relu %c0 : tensor<?x16x8x8xf32>
  %p = cuvil.max_pool2d %r0 {kernel_shape = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<?x16x8x8xf32>
  %w1 = cuvil.constant dense<0.02> : tensor<16x16x3x3xf32>
  %c1 = cuvil.conv2d %p, %w1, %b {padding = array<i64: 1, 1, 1, 1>} : tensor<?x16x4x4xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>
  %r1 = cuvil.relu %c1 : tensor<?x16x4x4xf32>
  %c2 = cuvil.conv2d %r1, %w1, %b {padding = array<i64: 1, 1, 1, 1>} : tensor<?x16x4x4xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>
  %s = cuvil.add %c2, %p : tensor<?x16x4x4xf32>, tensor<?x16x4x4xf32>
  %r2 = cuvil.relu %s : tensor<?x16x4x4xf32>
  %g = cuvil.global_avg_pool %r2 : tensor<?x16x4x4xf32>
  return %g : tensor<?x16x1x1xf32>
}

// -----

// Flatten has no blocked form: it reads a plain copy of the convolution's
// output, made before it (a reorder), so the convolution still runs the
// blocked kernels. Both readers of the pooled output share one copy.
// CHECK-LABEL: func.func @plain_consumer
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%{{.+}}, %{{.+}} : memref<1x16x4x4xf32>, memref<1x16x3x3x1x16xf32>) outs(%[[C:[^,]+]], %{{.+}} : memref<1x16x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>, memref<576xf32>) {{.*}} algorithm <direct_blocked>
// CHECK: %[[P:.+]] = memref.alloc() {{.*}} : memref<1x16x2x2xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
// CHECK: cuvil_l2.ukernel_call "max_pool2d" ins(%[[C]] : {{.*}}) outs(%[[P]] : {{.*}})
// CHECK: %[[PLAIN:.+]] = memref.alloc() {{.*}} : memref<1x16x2x2xf32>
// CHECK-NEXT: cuvil_l2.copy %[[P]], %[[PLAIN]] : memref<1x16x2x2xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>, memref<1x16x2x2xf32>
// CHECK-NEXT: cuvil_l2.ukernel_call "flatten" ins(%[[PLAIN]] : memref<1x16x2x2xf32>)
// CHECK-NOT: cuvil_l2.copy
// CHECK: cuvil_l2.ukernel_call "flatten" ins(%[[PLAIN]] : memref<1x16x2x2xf32>)
func.func @plain_consumer(%x: tensor<1x16x4x4xf32>) -> (tensor<1x64xf32>, tensor<1x64xf32>) {
  %w = cuvil.constant dense<0.02> : tensor<16x16x3x3xf32>
  %c = cuvil.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x16x4x4xf32>, tensor<16x16x3x3xf32>
  %p = cuvil.max_pool2d %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x16x4x4xf32>
  %f = cuvil.flatten %p {axis = 1} : tensor<1x16x2x2xf32>
  %g = cuvil.flatten %p {axis = 1} : tensor<1x16x2x2xf32>
  return %f, %g : tensor<1x64xf32>, tensor<1x64xf32>
}

// -----

// A class that stays plain (12 channels are no multiple of a block) reads
// its intermediate directly again: no copy is left.
// CHECK-LABEL: func.func @plain_consumer_of_a_plain_class
// CHECK-NOT: #cuvil_l2.layout
// CHECK-NOT: cuvil_l2.copy
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%{{.+}}, %{{.+}} : memref<1x16x4x4xf32>, memref<12x16x3x3xf32>) outs(%[[C:[^,]+]], %{{.+}} : memref<1x12x4x4xf32>, memref<144x32xf32>)
// CHECK-NEXT: cuvil_l2.ukernel_call "flatten" ins(%[[C]] : memref<1x12x4x4xf32>)
// CHECK-NOT: memref.alloc
func.func @plain_consumer_of_a_plain_class(%x: tensor<1x16x4x4xf32>) -> tensor<1x192xf32> {
  %w = cuvil.constant dense<0.02> : tensor<12x16x3x3xf32>
  %c = cuvil.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x16x4x4xf32>, tensor<12x16x3x3xf32>
  %f = cuvil.flatten %c {axis = 1} : tensor<1x12x4x4xf32>
  return %f : tensor<1x192xf32>
}

// -----

// A grouped convolution of 2 groups of 8 channels runs the direct kernel
// group by group: 16 lanes do not divide a group's 8 channels, so its input
// and output take NCHW8c; its weights pack [OC/8][C/groups/8][KH][KW][8][8].
// CHECK-LABEL: func.func @chain_to_grouped
// CHECK: ukernel_call "conv2d" ins(%arg1, {{.+}}) outs(%[[A:.+]] : memref<1x16x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
// CHECK: ukernel_call "conv2d" ins(%[[A]], {{.+}}) outs(%[[B:.+]] : memref<1x16x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW8c">>)
// CHECK: ukernel_call "conv2d" ins(%[[B]], %{{.+}} : memref<1x16x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW8c">>, memref<2x1x3x3x8x8xf32>) outs(%[[C:[^,]+]], %{{.+}} : memref<1x16x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW8c">>, memref<576xf32>) params {groups = 2 : i64{{.*}}} algorithm <direct_blocked>
// CHECK: cuvil_l2.copy %[[C]], %arg2
func.func @chain_to_grouped(%x: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %w = cuvil.constant dense<0.02> : tensor<16x16x1x1xf32>
  %gw = cuvil.constant dense<0.5> : tensor<16x8x3x3xf32>
  %a = cuvil.conv2d %x, %w : tensor<1x16x4x4xf32>, tensor<16x16x1x1xf32>
  %b = cuvil.conv2d %a, %w : tensor<1x16x4x4xf32>, tensor<16x16x1x1xf32>
  %c = cuvil.conv2d %b, %gw {groups = 2, padding = array<i64: 1, 1, 1, 1>} : tensor<1x16x4x4xf32>, tensor<16x8x3x3xf32>
  return %c : tensor<1x16x4x4xf32>
}

// -----

// Groups of 4 channels are narrower than the smallest block (8): the
// grouped convolution must write NCHW, and a plain-output convolution reads
// NCHW, so the convolutions before it stay plain too. Each says why
// (cpu.layout_why, for cuvilc --explain-kernels): the first, that the
// second reads its output and writes NCHW; the second writes the grouped
// one's input.
// CHECK-LABEL: func.func @chain_to_narrow_groups
// CHECK-NOT: #cuvil_l2.layout
// CHECK: ukernel_call "conv2d"{{.*}}cpu.layout_why = "the convolution at {{.*}} reads it and writes NCHW"
// CHECK: ukernel_call "conv2d"{{.*}}cpu.layout_why = "16 channels in groups of 4 do not split into blocks of 8"
// CHECK: ukernel_call "conv2d"{{.*}}cpu.layout_why = "16 channels in groups of 4 do not split into blocks of 8"
// CHECK: return
func.func @chain_to_narrow_groups(%x: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %w = cuvil.constant dense<0.02> : tensor<16x16x1x1xf32>
  %gw = cuvil.constant dense<0.5> : tensor<16x4x3x3xf32>
  %a = cuvil.conv2d %x, %w : tensor<1x16x4x4xf32>, tensor<16x16x1x1xf32>
  %b = cuvil.conv2d %a, %w : tensor<1x16x4x4xf32>, tensor<16x16x1x1xf32>
  %c = cuvil.conv2d %b, %gw {groups = 4, padding = array<i64: 1, 1, 1, 1>} : tensor<1x16x4x4xf32>, tensor<16x4x3x3xf32>
  return %c : tensor<1x16x4x4xf32>
}

// -----

// A MobileNet block of 24 channels: 16 lanes do not divide them, 8 do, so
// the class is NCHW8c (AVX-512 runs it with the AVX2 tiles). The depthwise
// convolution reads and writes it, its filters packed [C/8][KH][KW][8] (no
// padded-image scratch: it tests bounds itself); the expansion reads the
// plain input as blocks of one channel.
// CHECK-LABEL: func.func @mobilenet
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%{{.+}}, %{{.+}} : memref<1x16x8x8xf32>, memref<3x16x1x1x1x8xf32>) outs(%[[E:.+]] : memref<1x24x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW8c">>) params {{.*}} algorithm <direct_blocked> epilogue <steps = [clip], clip_min
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%[[E]], %{{.+}} : memref<1x24x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW8c">>, memref<3x3x3x8xf32>) outs(%[[D:.+]] : memref<1x24x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW8c">>) params {{{.*}}groups = 24{{.*}}} algorithm <direct_blocked>
// CHECK: cuvil_l2.ukernel_call "global_avg_pool" ins(%[[D]] : memref<1x24x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW8c">>)
func.func @mobilenet(%x: tensor<1x16x8x8xf32>) -> tensor<1x24x1x1xf32> {
  %w = cuvil.constant dense<0.02> : tensor<24x16x1x1xf32>
  %dw = cuvil.constant dense<0.5> : tensor<24x1x3x3xf32>
  %e = cuvil.conv2d %x, %w : tensor<1x16x8x8xf32>, tensor<24x16x1x1xf32>
  %r = cuvil.clip %e {min = 0.0 : f64, max = 6.0 : f64} : tensor<1x24x8x8xf32>
  %d = cuvil.conv2d %r, %dw {groups = 24, padding = array<i64: 1, 1, 1, 1>} : tensor<1x24x8x8xf32>, tensor<24x1x3x3xf32>
  %g = cuvil.global_avg_pool %d : tensor<1x24x8x8xf32>
  return %g : tensor<1x24x1x1xf32>
}

// -----

// Winograd writes blocks too (its weights stay OIHW: it transforms them), and
// a SiLU map over one shape runs on them as they are.
// CHECK-LABEL: func.func @winograd_and_map
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%{{.+}}, %{{.+}} : memref<1x8x28x28xf32>, memref<16x8x3x3xf32>) outs(%[[C:.+]], %{{.+}} : memref<1x16x28x28xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>, memref<{{[0-9]+}}xf32>) params {{.*}} algorithm <winograd_f4x3>
// CHECK: cuvil_l2.kernel "map" ins(%[[C]] : memref<1x16x28x28xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>) outs(%[[M:.+]] : memref<1x16x28x28xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
// CHECK: ^bb0(%{{.+}}: memref<1x16x28x28xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>, %{{.+}}: memref<1x16x28x28xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>):
// CHECK: cuvil_l2.ukernel_call "global_max_pool" ins(%[[M]] : {{.*}}) outs(%{{.+}} : memref<1x16x1x1xf32>)
func.func @winograd_and_map(%x: tensor<1x8x28x28xf32>) -> tensor<1x16x1x1xf32> {
  %w = cuvil.constant dense<0.02> : tensor<16x8x3x3xf32>
  %c = cuvil.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x28x28xf32>, tensor<16x8x3x3xf32>
  %s = cuvil.sigmoid %c : tensor<1x16x28x28xf32>
  %m = cuvil.mul %c, %s : tensor<1x16x28x28xf32>, tensor<1x16x28x28xf32>
  %g = cuvil.global_max_pool %m : tensor<1x16x28x28xf32>
  return %g : tensor<1x16x1x1xf32>
}

// -----

// Squeeze-excitation (MobileNetV3): hard-swish and the channel-wise scale
// are elementwise kernels on the blocked activations; the scale's
// [1, C, 1, 1] operand has the same bytes in any layout, so nothing in the
// block needs a reorder. A broadcast along rows (here [1, 16, 8, 1]) has no
// blocked loop: it reads a plain copy of the blocked convolution output (a
// reorder), and writes plain.
// CHECK-LABEL: func.func @squeeze_excitation
// CHECK: cuvil_l2.ukernel_call "conv2d" {{.*}} outs(%[[C:.+]] : memref<1x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>) {{.*}} algorithm <direct_blocked>
// CHECK: cuvil_l2.ukernel_call "hardswish" ins(%[[C]] : {{.*}}) outs(%[[H:.+]] : memref<1x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
// CHECK: cuvil_l2.ukernel_call "global_avg_pool" ins(%[[H]] : {{.*}}) outs(%[[G:.+]] : memref<1x16x1x1xf32>)
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%[[G]], {{.*}}) outs(%[[F:.+]] : memref<1x16x1x1xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
// CHECK: cuvil_l2.ukernel_call "hardsigmoid" ins(%[[F]] : {{.*}}) outs(%[[S:.+]] : memref<1x16x1x1xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
// CHECK: cuvil_l2.ukernel_call "mul" ins(%[[S]], %[[H]] : memref<1x16x1x1xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>, memref<1x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>) outs(%[[M:.+]] : memref<1x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%[[M]], {{.*}}) outs(%{{.+}} : memref<1x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%arg1, {{.*}}) outs(%[[P:.+]] : memref<1x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
// CHECK: cuvil_l2.copy %[[P]], %[[PLAIN:.+]] : memref<1x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>, memref<1x16x8x8xf32>
// CHECK: cuvil_l2.ukernel_call "mul" ins(%[[PLAIN]], %arg2 : memref<1x16x8x8xf32>, memref<1x16x8x1xf32>) outs(%{{.+}} : memref<1x16x8x8xf32>)
func.func @squeeze_excitation(%x: tensor<1x8x8x8xf32>, %rows: tensor<1x16x8x1xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) {
  %w = cuvil.constant dense<0.02> : tensor<16x8x1x1xf32>
  %w1 = cuvil.constant dense<0.1> : tensor<16x16x1x1xf32>
  %c = cuvil.conv2d %x, %w : tensor<1x8x8x8xf32>, tensor<16x8x1x1xf32>
  %h = cuvil.hardswish %c : tensor<1x16x8x8xf32>
  %g = cuvil.global_avg_pool %h : tensor<1x16x8x8xf32>
  %f = cuvil.conv2d %g, %w1 : tensor<1x16x1x1xf32>, tensor<16x16x1x1xf32>
  %s = cuvil.hardsigmoid %f : tensor<1x16x1x1xf32>
  %m = cuvil.mul %s, %h : tensor<1x16x1x1xf32>, tensor<1x16x8x8xf32>
  %o = cuvil.conv2d %m, %w1 : tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>
  %p = cuvil.conv2d %x, %w : tensor<1x8x8x8xf32>, tensor<16x8x1x1xf32>
  %r = cuvil.mul %p, %rows : tensor<1x16x8x8xf32>, tensor<1x16x8x1xf32>
  return %o, %r : tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>
}

// -----

// x.mean([2, 3]) (MNASNet's head) is global pooling on blocks: it writes the
// plain [N, C] and the convolutions before it stay blocked. A mean over C
// reads row-major only: it reads a plain copy of its convolution's output.
// CHECK-LABEL: func.func @spatial_mean
// CHECK: cuvil_l2.ukernel_call "conv2d" {{.*}} outs(%[[C:.+]] : memref<1x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
// CHECK: cuvil_l2.ukernel_call "reduce_mean" ins(%[[C]] : memref<1x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>) outs(%{{.+}} : memref<1x16xf32>)
// CHECK: cuvil_l2.ukernel_call "conv2d" {{.*}} outs(%[[D:.+]] : memref<1x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
// CHECK: cuvil_l2.copy %[[D]], %[[PLAIN:.+]] : {{.*}}, memref<1x16x8x8xf32>
// CHECK: cuvil_l2.ukernel_call "reduce_mean" ins(%[[PLAIN]] : memref<1x16x8x8xf32>)
func.func @spatial_mean(%x: tensor<1x8x8x8xf32>) -> (tensor<1x16xf32>, tensor<1x8x8xf32>) {
  %w = cuvil.constant dense<0.02> : tensor<16x8x1x1xf32>
  %c = cuvil.conv2d %x, %w : tensor<1x8x8x8xf32>, tensor<16x8x1x1xf32>
  %m = cuvil.reduce_mean %c, axes = [2, -1] : tensor<1x16x8x8xf32>
  %d = cuvil.conv2d %x, %w : tensor<1x8x8x8xf32>, tensor<16x8x1x1xf32>
  %n = cuvil.reduce_mean %d, axes = [1] : tensor<1x16x8x8xf32>
  return %m, %n : tensor<1x16xf32>, tensor<1x8x8xf32>
}

// -----

// A fire module (SqueezeNet): the two expand convolutions' outputs and
// their concatenation along C share one blocked class (each piece whole
// blocks); DenseNet's unfolded batch norm on it keeps the layout (its
// statistics are per-channel parameters), and the next convolution reads
// it: no reorder.
// CHECK-LABEL: func.func @fire
// CHECK: cuvil_l2.ukernel_call "conv2d" {{.*}} outs(%[[A:.+]] : memref<1x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
// CHECK: cuvil_l2.ukernel_call "conv2d" {{.*}} outs(%[[B:[^,]+]], %{{.+}} : memref<1x32x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>, {{.*}})
// CHECK: cuvil_l2.ukernel_call "concat" ins(%[[A]], %[[B]] : {{.*}}) outs(%[[C:.+]] : memref<1x48x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
// CHECK: cuvil_l2.ukernel_call "batch_norm" ins(%[[C]], {{.*}}) outs(%[[N:.+]] : memref<1x48x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%[[N]], {{.*}}) outs(%{{.+}} : memref<1x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
// CHECK-NOT: cuvil_l2.copy %{{.*}}NCHW16c{{.*}}NCHW16c
func.func @fire(%x: tensor<1x8x8x8xf32>) -> tensor<1x16x1x1xf32> {
  %w1 = cuvil.constant dense<0.02> : tensor<16x8x1x1xf32>
  %w3 = cuvil.constant dense<0.02> : tensor<32x8x3x3xf32>
  %w = cuvil.constant dense<0.02> : tensor<16x48x1x1xf32>
  %a = cuvil.conv2d %x, %w1 : tensor<1x8x8x8xf32>, tensor<16x8x1x1xf32>
  %b = cuvil.conv2d %x, %w3 {padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x8x8xf32>, tensor<32x8x3x3xf32>
  %c = cuvil.concat(%a, %b) axis = 1 : tensor<1x16x8x8xf32>, tensor<1x32x8x8xf32>
  %s = cuvil.constant dense<0.5> : tensor<48xf32>
  %n = cuvil.batch_norm %c, %s, %s, %s, %s : tensor<1x48x8x8xf32>, tensor<48xf32>, tensor<48xf32>, tensor<48xf32>, tensor<48xf32>
  %d = cuvil.conv2d %n, %w : tensor<1x48x8x8xf32>, tensor<16x48x1x1xf32>
  %g = cuvil.global_avg_pool %d : tensor<1x16x8x8xf32>
  return %g : tensor<1x16x1x1xf32>
}

// -----

// An SSE target (4 lanes) gets no blocks.
// TARGET-LABEL: func.func @sse
// TARGET-NOT: #cuvil_l2.layout
// TARGET: return
module attributes {cuvil.target = #cuvil.target<backend = "x86", vector_bits = 128>} {
func.func @sse(%x: tensor<1x16x4x4xf32>) -> tensor<1x16x1x1xf32> {
  %w = cuvil.constant dense<0.02> : tensor<16x16x1x1xf32>
  %c = cuvil.conv2d %x, %w : tensor<1x16x4x4xf32>, tensor<16x16x1x1xf32>
  %g = cuvil.global_avg_pool %c : tensor<1x16x4x4xf32>
  return %g : tensor<1x16x1x1xf32>
}
}

// -----

// A NEON target (4 lanes, whose config says 4-lane blocks pay) gets NCHW4c:
// a convolution, a depthwise one and a pool on 12 channels, with no reorder
// inside the graph.
// TARGET-LABEL: func.func @neon
// TARGET: cuvil_l2.ukernel_call "conv2d" {{.*}} outs(%[[C:.+]], %{{.+}} : memref<1x12x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW4c">>, {{.*}} algorithm <direct_blocked>
// TARGET: cuvil_l2.ukernel_call "conv2d" ins(%[[C]], {{.*}} outs(%[[D:.+]] : memref<1x12x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW4c">>) {{.*}} algorithm <direct_blocked>
// TARGET: cuvil_l2.ukernel_call "max_pool2d" ins(%[[D]] : {{.*}}) outs(%{{.+}} : memref<1x12x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW4c">>)
// TARGET-NOT: cuvil_l2.copy
// TARGET: cuvil_l2.ukernel_call "global_avg_pool"
module attributes {cuvil.target = #cuvil.target<backend = "aarch64", vector_bits = 128, config = {min_channel_block = 4 : i64}>} {
func.func @neon(%x: tensor<1x3x8x8xf32>) -> tensor<1x12x1x1xf32> {
  %w = cuvil.constant dense<0.02> : tensor<12x3x3x3xf32>
  %c = cuvil.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x3x8x8xf32>, tensor<12x3x3x3xf32>
  %dw = cuvil.constant dense<0.1> : tensor<12x1x3x3xf32>
  %d = cuvil.conv2d %c, %dw {groups = 12 : i64, padding = array<i64: 1, 1, 1, 1>} : tensor<1x12x8x8xf32>, tensor<12x1x3x3xf32>
  %p = cuvil.max_pool2d %d {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x12x8x8xf32>
  %g = cuvil.global_avg_pool %p : tensor<1x12x4x4xf32>
  return %g : tensor<1x12x1x1xf32>
}
}

// -----

// A convolution writing a model output writes a blocked intermediate and a
// reorder into the output when its class can be blocked; one whose class
// cannot (12 channels) writes the output in place, with no copy.
// CHECK-LABEL: func.func @conv_output
// CHECK: cuvil_l2.ukernel_call "conv2d" {{.*}} algorithm <direct_blocked>
// CHECK: %[[T:.+]] = memref.alloc(%{{.+}}) {{.*}} : memref<?x16x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
// CHECK: cuvil_l2.ukernel_call "conv2d" {{.*}} outs(%[[T]] : {{.*}} algorithm <direct_blocked>
// CHECK-NEXT: cuvil_l2.copy %[[T]], %{{.+}} : memref<?x16x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>, memref<?x16x4x4xf32>
func.func @conv_output(%x: tensor<?x16x4x4xf32>) -> tensor<?x16x4x4xf32> {
  %w = cuvil.constant dense<0.02> : tensor<16x16x3x3xf32>
  %c = cuvil.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<?x16x4x4xf32>, tensor<16x16x3x3xf32>
  %r = cuvil.relu %c : tensor<?x16x4x4xf32>
  %w2 = cuvil.constant dense<0.02> : tensor<16x16x1x1xf32>
  %y = cuvil.conv2d %r, %w2 : tensor<?x16x4x4xf32>, tensor<16x16x1x1xf32>
  return %y : tensor<?x16x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @plain_output
// CHECK-NOT: cuvil_l2.copy
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%{{.+}}) outs(%arg2, %{{.+}} : memref<?x12x4x4xf32>, {{.*}})
// CHECK-NOT: cuvil_l2.copy
func.func @plain_output(%x: tensor<?x16x4x4xf32>) -> tensor<?x12x4x4xf32> {
  %w = cuvil.constant dense<0.02> : tensor<12x16x3x3xf32>
  %y = cuvil.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<?x16x4x4xf32>, tensor<12x16x3x3xf32>
  return %y : tensor<?x12x4x4xf32>
}

// -----

// int8: the quantize of a blocked float32 tensor stays in its blocks (an
// elementwise loop), the convolutions read and write NCHW16c, the first
// one's requantized uint8 output included.
// CHECK-LABEL: func.func @int8_chain
// CHECK: cuvil_l2.ukernel_call "quantize" ins(%{{.+}} : memref<?x16x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>) outs(%{{.+}} : memref<?x16x4x4x!quant.uniform<u8:f32, 5.000000e-02:3>, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
// CHECK: cuvil_l2.ukernel_call "quantized_conv2d" {{.*}} outs(%{{.+}} : memref<?x16x4x4x!quant.uniform<u8:f32, 1.000000e-01>, #cuvil_l2.layout<"NCHW" to "NCHW16c">>) {{.*}} algorithm <direct_blocked> epilogue <steps = [relu, quantize]>
// CHECK: cuvil_l2.ukernel_call "quantized_conv2d" {{.*}} algorithm <direct_blocked>
// CHECK: cuvil_l2.ukernel_call "global_avg_pool"
!q = !quant.uniform<u8:f32, 0.05:3>
!r = !quant.uniform<u8:f32, 0.1>
!w = !quant.uniform<i8:f32, 0.5>
func.func @int8_chain(%x: tensor<?x16x4x4xf32>) -> tensor<?x16x1x1xf32> {
  %wf = cuvil.constant dense<0.02> : tensor<16x16x1x1xf32>
  %h = cuvil.conv2d %x, %wf : tensor<?x16x4x4xf32>, tensor<16x16x1x1xf32>
  %q = cuvil.quantize %h : tensor<?x16x4x4xf32> to tensor<?x16x4x4x!q>
  %c = cuvil.constant dense<1> : tensor<16x16x3x3xi8>
  %w = cuvil.storage_cast %c : tensor<16x16x3x3xi8> to tensor<16x16x3x3x!w>
  %y1 = cuvil.quantized_conv2d %q, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<?x16x4x4x!q>, tensor<16x16x3x3x!w>
  %r1 = cuvil.relu %y1 : tensor<?x16x4x4xf32>
  %q1 = cuvil.quantize %r1 : tensor<?x16x4x4xf32> to tensor<?x16x4x4x!r>
  %y2 = cuvil.quantized_conv2d %q1, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<?x16x4x4x!r>, tensor<16x16x3x3x!w>
  %g = cuvil.global_avg_pool %y2 : tensor<?x16x4x4xf32>
  return %g : tensor<?x16x1x1xf32>
}

// -----

// A bfloat16 convolution reads blocks even when its output stays plain
// (12 channels are no multiple of a block): its tiles write blocks it
// unblocks. So the float32
// convolution before it still writes NCHW16c, and the bfloat16 one (its
// cast fused) reads that.
// CHECK-LABEL: func.func @bf16_plain_output
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%arg1, {{.*}}) outs(%[[A:[a-z_0-9]+]], {{.*}} : memref<1x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>, {{.*}}) {{.*}}algorithm <direct_blocked>
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%[[A]], {{.*}} : memref<1x16x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>, memref<12x16x3x3xbf16>) outs(%[[B:[a-z_0-9]+]] : memref<1x12x8x8xf32>) params {acc_type = f32
// CHECK: cuvil_l2.ukernel_call "reshape" ins(%[[B]]
func.func @bf16_plain_output(%x: tensor<1x16x8x8xf32>) -> tensor<1x768xf32> {
  %w = cuvil.constant dense<0.5> : tensor<16x16x3x3xf32>
  %a = cuvil.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>
  %ab = cuvil.cast %a : tensor<1x16x8x8xf32> to tensor<1x16x8x8xbf16>
  %wb = cuvil.constant dense<0.5> : tensor<12x16x3x3xbf16>
  %b = cuvil.conv2d %ab, %wb {acc_type = f32, padding = array<i64: 1, 1, 1, 1>} : tensor<1x16x8x8xbf16>, tensor<12x16x3x3xbf16>
  %r = cuvil.reshape %b, shape = [1, 768] : tensor<1x12x8x8xf32>
  return %r : tensor<1x768xf32>
}
