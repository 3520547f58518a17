// RUN: cuvil-opt %s --cuvil-lower-to-level2 --split-input-file --verify-diagnostics | FileCheck %s

// Each level1 op becomes a micro-kernel call; constants become globals; the
// returned value is written straight into the output buffer.
// CHECK: memref.global "private" constant @mlp_constant_0 : memref<10x4xf32> = dense<5.000000e-01> {alignment = 64 : i64}
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[BATCH:[a-z0-9]+]]: index {cuvil.name = "batch"}, %[[X:[a-z0-9]+]]: memref<?x10xf32> {cuvil.name = "x"}, %[[Y:[a-z0-9]+]]: memref<?x4xf32> {cuvil.name = "y"})
// CHECK-SAME: attributes {cuvil.num_inputs = 1 : i64, cuvil.num_outputs = 1 : i64}
// CHECK: %[[W:.+]] = memref.get_global @mlp_constant_0 : memref<10x4xf32>
// CHECK: %[[H:.+]] = memref.alloc(%[[BATCH]]) {alignment = 64 : i64} : memref<?x4xf32>
// CHECK: cuvil_l2.ukernel_call "matmul" ins(%[[X]], %[[W]] : memref<?x10xf32>, memref<10x4xf32>) outs(%[[H]] : memref<?x4xf32>)
// CHECK: cuvil_l2.ukernel_call "softmax" ins(%[[H]] : memref<?x4xf32>) outs(%[[Y]] : memref<?x4xf32>) params {axis = 1 : i64}
// CHECK-NEXT: return
func.func @mlp(%x: tensor<?x10xf32> {cuvil.name = "x"}) -> (tensor<?x4xf32> {cuvil.name = "y"}) {
  %w = cuvil.constant dense<0.5> : tensor<10x4xf32>
  %h = cuvil.matmul %x, %w : tensor<?x10xf32>, tensor<10x4xf32>
  %y = cuvil.softmax %h, axis = 1 : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// A reshape to [batch * 8, 4] is sized batch * 8; an input returned as is,
// and a value returned twice, are copied.
// CHECK-LABEL: func.func @sizes_and_copies
// CHECK-SAME: (%[[BATCH:[a-z0-9]+]]: index {cuvil.name = "batch"}, %[[X:[a-z0-9]+]]: memref<?x8x4xf32>, %[[O0:[a-z0-9]+]]: memref<?x4xf32>, %[[O1:[a-z0-9]+]]: memref<?x8x4xf32>, %[[O2:[a-z0-9]+]]: memref<?x4xf32>)
// CHECK: %[[C8:.+]] = arith.constant 8 : index
// CHECK: %[[N:.+]] = arith.muli %[[BATCH]], %[[C8]] : index
// CHECK: %[[R:.+]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?x4xf32>
// CHECK: cuvil_l2.ukernel_call "reshape" ins(%[[X]] : memref<?x8x4xf32>) outs(%[[R]] : memref<?x4xf32>) params {shape = array<i64: -1, 4>}
// CHECK: cuvil_l2.ukernel_call "relu" ins(%[[R]] : memref<?x4xf32>) outs(%[[O0]] : memref<?x4xf32>)
// CHECK: cuvil_l2.copy %[[X]], %[[O1]]
// CHECK: cuvil_l2.copy %[[O0]], %[[O2]]
func.func @sizes_and_copies(%x: tensor<?x8x4xf32>) -> (tensor<?x4xf32>, tensor<?x8x4xf32>, tensor<?x4xf32>) {
  %r = cuvil.reshape %x, shape = [-1, 4] : tensor<?x8x4xf32>
  %y = cuvil.relu %r : tensor<?x4xf32>
  return %y, %x, %y : tensor<?x4xf32>, tensor<?x8x4xf32>, tensor<?x4xf32>
}

// -----

// Optional operands travel as the params' operandSegmentSizes.
// CHECK-LABEL: func.func @layer_norm
// CHECK: cuvil_l2.ukernel_call "layer_norm" {{.*}} params {axis = -1 : i64, epsilon = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 0, 1>}
func.func @layer_norm(%x: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %y = cuvil.layer_norm %x bias %b : tensor<8xf32> : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument #0 of type 'tensor<4x?xf32>' has a dynamic dimension other than the batch (dimension 0)}}
func.func @not_batch(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  return %x : tensor<4x?xf32>
}

// -----

func.func @concat_batch(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'cuvil.concat' op concatenation along the dynamic batch is not supported}}
  %y = cuvil.concat(%x, %x) axis = 0 : tensor<?x4xf32>, tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

func.func @fused(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cuvil.fused_group' op is not supported by the x86 target yet}}
  %y = cuvil.fused_group (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    cuvil.yield %a : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// An epilogue group is one call of its producer: the ops after it become
// the call's epilogue (clip bounds with it), the residual the last input.
// CHECK-LABEL: func.func @epilogue_group
// CHECK-SAME: (%{{.+}}: index {cuvil.name = "batch"}, %[[X:[a-z0-9]+]]: memref<1x4x5x5xf32>, %[[Y:[a-z0-9]+]]: memref<1x4x5x5xf32>)
// CHECK: %[[W:.+]] = memref.get_global
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%[[X]], %[[W]], %[[X]] : memref<1x4x5x5xf32>, memref<4x4x1x1xf32>, memref<1x4x5x5xf32>) outs(%[[Y]] : memref<1x4x5x5xf32>)
// CHECK-SAME: epilogue <steps = [add, clip], clip_min = 0.000000e+00 : f64, clip_max = 6.000000e+00 : f64>
// CHECK-NOT: ukernel_call
func.func @epilogue_group(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %w = cuvil.constant dense<0.5> : tensor<4x4x1x1xf32>
  %y = cuvil.fused_group kind = "epilogue"(%x, %w, %x) : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  ^bb0(%a: tensor<1x4x5x5xf32>, %b: tensor<4x4x1x1xf32>, %r: tensor<1x4x5x5xf32>):
    %c = cuvil.conv2d %a, %b : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>
    %s = cuvil.add %c, %r : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>
    %t = cuvil.clip %s min = 0.0 max = 6.0 : tensor<1x4x5x5xf32>
    cuvil.yield %t : tensor<1x4x5x5xf32>
  }
  return %y : tensor<1x4x5x5xf32>
}

// -----

// The CPU kernels' other activations: hardsigmoid keeps its alpha and
// beta; hardswish, sigmoid and SiLU have none.
// CHECK-LABEL: func.func @epilogue_activations
// CHECK: cuvil_l2.ukernel_call "conv2d"
// CHECK-SAME: epilogue <steps = [hardsigmoid], alpha = 2.000000e-01 : f64, beta = 4.000000e-01 : f64>
// CHECK: cuvil_l2.ukernel_call "conv2d"
// CHECK-SAME: epilogue <steps = [add, silu]>
func.func @epilogue_activations(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %w = cuvil.constant dense<0.5> : tensor<4x4x1x1xf32>
  %y = cuvil.fused_group kind = "epilogue"(%x, %w) : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32> {
  ^bb0(%a: tensor<1x4x5x5xf32>, %b: tensor<4x4x1x1xf32>):
    %c = cuvil.conv2d %a, %b : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>
    %t = cuvil.hardsigmoid %c alpha = 0.2 beta = 0.4 : tensor<1x4x5x5xf32>
    cuvil.yield %t : tensor<1x4x5x5xf32>
  }
  %z = cuvil.fused_group kind = "epilogue"(%y, %w, %x) : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  ^bb0(%a: tensor<1x4x5x5xf32>, %b: tensor<4x4x1x1xf32>, %r: tensor<1x4x5x5xf32>):
    %c = cuvil.conv2d %a, %b : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>
    %s = cuvil.add %c, %r : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>
    %t = cuvil.silu %s : tensor<1x4x5x5xf32>
    cuvil.yield %t : tensor<1x4x5x5xf32>
  }
  return %z : tensor<1x4x5x5xf32>
}

// -----

// An int8 convolution's requantizing group: its quantize is the last
// epilogue step, the output buffer of the 8-bit type.
// CHECK-LABEL: func.func @requantized_group
// CHECK-SAME: %[[Y:[a-z0-9]+]]: memref<1x8x5x5x!quant.uniform<u8:f32, 5.000000e-02>>)
// CHECK: cuvil_l2.ukernel_call "quantized_conv2d" ins({{.+}}) outs(%[[Y]] : memref<1x8x5x5x!quant.uniform<u8:f32, 5.000000e-02>>)
// CHECK-SAME: epilogue <steps = [relu, quantize]>
func.func @requantized_group(%x: tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05>>) -> tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05>> {
  %c = cuvil.constant dense<1> : tensor<8x8x1x1xi8>
  %w = cuvil.storage_cast %c : tensor<8x8x1x1xi8> to tensor<8x8x1x1x!quant.uniform<i8:f32, 0.5>>
  %y = cuvil.fused_group kind = "epilogue"(%x, %w) : (tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05>>, tensor<8x8x1x1x!quant.uniform<i8:f32, 0.5>>) -> tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05>> {
  ^bb0(%a: tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05>>, %b: tensor<8x8x1x1x!quant.uniform<i8:f32, 0.5>>):
    %conv = cuvil.quantized_conv2d %a, %b : tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05>>, tensor<8x8x1x1x!quant.uniform<i8:f32, 0.5>>
    %r = cuvil.relu %conv : tensor<1x8x5x5xf32>
    %q = cuvil.quantize %r : tensor<1x8x5x5xf32> to tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05>>
    cuvil.yield %q : tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05>>
  }
  return %y : tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05>>
}

// -----

// A residual dequantized in the group (an int8 shortcut read as bytes):
// the add's input is the 8-bit buffer itself.
// CHECK-LABEL: func.func @quantized_residual
// CHECK-SAME: %{{[a-z0-9]+}}: memref<1x8x5x5x!quant.uniform<u8:f32, 5.000000e-02:3>>, %[[R:[a-z0-9]+]]: memref<1x8x5x5x!quant.uniform<u8:f32, 5.000000e-02:3>>
// CHECK-NOT: "dequantize"
// CHECK: cuvil_l2.ukernel_call "quantized_conv2d" ins(%{{.+}}, %{{.+}}, %[[R]] : {{.+}}) outs
// CHECK-SAME: epilogue <steps = [add, relu, quantize]>
func.func @quantized_residual(%x: tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05:3>>, %r: tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05:3>>) -> tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05:3>> {
  %c = cuvil.constant dense<1> : tensor<8x8x1x1xi8>
  %w = cuvil.storage_cast %c : tensor<8x8x1x1xi8> to tensor<8x8x1x1x!quant.uniform<i8:f32, 0.5>>
  %y = cuvil.fused_group kind = "epilogue"(%x, %w, %r) : (tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05:3>>, tensor<8x8x1x1x!quant.uniform<i8:f32, 0.5>>, tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05:3>>) -> tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05:3>> {
  ^bb0(%a: tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05:3>>, %b: tensor<8x8x1x1x!quant.uniform<i8:f32, 0.5>>, %s: tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05:3>>):
    %conv = cuvil.quantized_conv2d %a, %b : tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05:3>>, tensor<8x8x1x1x!quant.uniform<i8:f32, 0.5>>
    %d = cuvil.dequantize %s : tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05:3>>
    %sum = cuvil.add %d, %conv : tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>
    %relu = cuvil.relu %sum : tensor<1x8x5x5xf32>
    %q = cuvil.quantize %relu : tensor<1x8x5x5xf32> to tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05:3>>
    cuvil.yield %q : tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05:3>>
  }
  return %y : tensor<1x8x5x5x!quant.uniform<u8:f32, 0.05:3>>
}

// -----

// An epilogue add must add one of the group's inputs (or its dequantize).
func.func @add_of_no_input(%x: tensor<1x4x5x5xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32> {
  %y = cuvil.fused_group kind = "epilogue"(%x, %w) : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32> {
  ^bb0(%a: tensor<1x4x5x5xf32>, %b: tensor<4x4x1x1xf32>):
    %conv = cuvil.conv2d %a, %b : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>
    %r = cuvil.relu %conv : tensor<1x4x5x5xf32>
    // expected-error @+1 {{'cuvil.add' op adds no input of its fused group}}
    %s = cuvil.add %r, %r : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>
    cuvil.yield %s : tensor<1x4x5x5xf32>
  }
  return %y : tensor<1x4x5x5xf32>
}

// -----

// Other groups are not supported by the x86 lowering yet.
func.func @other_group(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cuvil.fused_group' op is not supported by the x86 target yet}}
  %y = cuvil.fused_group kind = "mystery"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r = cuvil.relu %a : tensor<4xf32>
    cuvil.yield %r : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// A map becomes a kernel around a linalg.generic over the buffers: one
// parallel loop per result dimension, broadcast inputs indexed by their
// trailing loops, a stretched size-1 dimension by 0; the region is the map's.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-LABEL: func.func @map
// CHECK-SAME: (%{{.+}}: index {cuvil.name = "batch"}, %[[X:.+]]: memref<?x4x8xf32>, %[[G:.+]]: memref<8xf32>, %[[B:.+]]: memref<4x1xf32>, %[[OUT:.+]]: memref<?x4x8xf32>)
// CHECK: cuvil_l2.kernel "map" ins(%[[X]], %[[G]], %[[B]] : memref<?x4x8xf32>, memref<8xf32>, memref<4x1xf32>) outs(%[[OUT]] : memref<?x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[KX:.+]]: memref<?x4x8xf32>, %[[KG:.+]]: memref<8xf32>, %[[KB:.+]]: memref<4x1xf32>, %[[KO:.+]]: memref<?x4x8xf32>):
// CHECK-NEXT: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[COL]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[KX]], %[[KG]], %[[KB]] : memref<?x4x8xf32>, memref<8xf32>, memref<4x1xf32>) outs(%[[KO]] : memref<?x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[EX:.+]]: f32, %[[EG:.+]]: f32, %[[EB:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[EX]], %[[EG]] : f32
// CHECK-NEXT: %[[A:.+]] = arith.addf %[[M]], %[[EB]] : f32
// CHECK-NEXT: linalg.yield %[[A]] : f32
func.func @map(%x: tensor<?x4x8xf32>, %g: tensor<8xf32>, %b: tensor<4x1xf32>) -> tensor<?x4x8xf32> {
  %y = cuvil.map_reduce ins(%x, %g, %b : tensor<?x4x8xf32>, tensor<8xf32>, tensor<4x1xf32>) -> tensor<?x4x8xf32> {
  ^bb0(%ex: f32, %eg: f32, %eb: f32):
    %m = arith.mulf %ex, %eg : f32
    %a = arith.addf %m, %eb : f32
    cuvil.yield %a : f32
  }
  return %y : tensor<?x4x8xf32>
}

// -----

// Maps with reductions have no x86 lowering yet.
func.func @map_reduce(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cuvil.map_reduce' op with reduction_dims is not supported by the x86 target yet}}
  %y = cuvil.map_reduce ins(%x : tensor<4x8xf32>) reduction_dims = [1] init = 0.0 : f32 -> tensor<4xf32> {
  ^bb0(%e: f32):
    cuvil.yield %e : f32
  } reduce {
  ^bb0(%acc: f32, %v: f32):
    %s = arith.addf %acc, %v : f32
    cuvil.yield %s : f32
  }
  return %y : tensor<4xf32>
}

// -----

// No kernel choice is made here: convolutions and products get no scratch
// and no algorithm (the target's passes add them; for x86,
// cuvil/targets/cpu/transforms/test/select_kernels.mlir).
// CHECK-LABEL: func.func @no_choices
// CHECK-NOT: memref.alloc()
// CHECK: cuvil_l2.ukernel_call "conv2d" ins({{.*}}) outs(%{{.+}} : memref<1x8x28x28xf32>) params {
// CHECK-NOT: algorithm
// CHECK: cuvil_l2.ukernel_call "matmul" ins({{.*}}) outs(%{{.+}} : memref<2x16x40xf32>)
// CHECK-NEXT: return
func.func @no_choices(%x: tensor<1x8x28x28xf32>, %a: tensor<2x16x16xf32>, %b: tensor<16x40xf32>) -> (tensor<1x8x28x28xf32>, tensor<2x16x40xf32>) {
  %w = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  %c = cuvil.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x28x28xf32>, tensor<8x8x3x3xf32>
  %p = cuvil.matmul %a, %b : tensor<2x16x16xf32>, tensor<16x40xf32>
  return %c, %p : tensor<1x8x28x28xf32>, tensor<2x16x40xf32>
}

// -----

// An if writes its result buffer in each branch; returned, that buffer is
// the model's output.
// CHECK-LABEL: func @if_else
// CHECK-SAME: (%{{.+}}: index {{.+}}, %[[C:[^:]+]]: memref<i1>, %[[X:[^:]+]]: memref<4xf32>, %[[OUT:[^:]+]]: memref<4xf32>)
// CHECK: cuvil_l2.if %[[C]] : memref<i1> {
// CHECK:   %[[A:.+]] = memref.alloc() {{.+}} : memref<4xf32>
// CHECK:   cuvil_l2.ukernel_call "relu" ins(%[[X]] : memref<4xf32>) outs(%[[A]] : memref<4xf32>)
// CHECK:   cuvil_l2.copy %[[A]], %[[OUT]]
// CHECK: } else {
// CHECK:   cuvil_l2.copy %[[X]], %[[OUT]]
// CHECK: }
func.func @if_else(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = cuvil.if %c : tensor<i1> -> tensor<4xf32> {
    %a = cuvil.relu %x : tensor<4xf32>
    cuvil.yield %a : tensor<4xf32>
  } else {
    cuvil.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A loop's carried values live in its result buffers: set from the inits
// before it, from the yields at the end of each iteration. Two carried
// values that swap go through a fresh buffer; a scan output's row is
// written at the iteration number first, as the carried value it yields
// (%a, in A) is before the copies change it.
// CHECK-LABEL: func @loop_swap_scan
// CHECK-SAME: (%{{.+}}: index {{.+}}, %[[M:[^:]+]]: memref<i64>, %[[X:[^:]+]]: memref<4xf32>, %[[Y:[^:]+]]: memref<4xf32>, %[[A:[^:]+]]: memref<4xf32>, %[[B:[^:]+]]: memref<4xf32>, %[[S:[^:]+]]: memref<3x4xf32>)
// CHECK: %[[TRUE:.+]] = memref.get_global
// CHECK: %[[COND:.+]] = memref.alloc() {{.+}} : memref<i1>
// CHECK: cuvil_l2.copy %[[TRUE]], %[[COND]]
// CHECK: cuvil_l2.copy %[[X]], %[[A]]
// CHECK: cuvil_l2.copy %[[Y]], %[[B]]
// CHECK: %[[I:.+]] = memref.alloc() {{.+}} : memref<i64>
// CHECK: cuvil_l2.loop max(%[[M]] : memref<i64>) while %[[COND]] : memref<i1> iteration(%[[I]] : memref<i64>) {
// CHECK:   cuvil_l2.insert_row %[[A]], %[[S]][%[[I]]]
// CHECK:   %[[T:.+]] = memref.alloc() {{.+}} : memref<4xf32>
// CHECK:   cuvil_l2.copy %[[B]], %[[T]]
// CHECK:   %[[U:.+]] = memref.alloc() {{.+}} : memref<4xf32>
// CHECK:   cuvil_l2.copy %[[A]], %[[U]]
// CHECK:   cuvil_l2.copy %[[T]], %[[A]]
// CHECK:   cuvil_l2.copy %[[U]], %[[B]]
// CHECK-NEXT: }
func.func @loop_swap_scan(%m: tensor<i64>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32>) {
  %true = cuvil.constant dense<true> : tensor<i1>
  %r:3 = cuvil.loop max(%m : tensor<i64>) while %true : tensor<i1> iter(%x, %y : tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %a: tensor<4xf32>, %b: tensor<4xf32>):
    cuvil.yield %cond, %b, %a, %a : tensor<i1>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  } {scan_rows = 3 : i64}
  return %r#0, %r#1, %r#2 : tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32>
}

// -----

// What a pass attached to a level1 op beside its attributes (a target's
// choice: an FPGA layer's types) stays on the call, outside its params; an
// input's argument attributes stay on its buffer.
// CHECK-LABEL: func.func @carried
// CHECK-SAME: %arg1: memref<1x4xf32> {cuvil.fixed = 1 : i64, cuvil.name = "x"}
// CHECK: cuvil_l2.ukernel_call "softmax"
// CHECK-SAME: params {axis = 1 : i64} {cuvil.fixed = {result = 2 : i64}}
func.func @carried(%x: tensor<1x4xf32> {cuvil.name = "x", cuvil.fixed = 1}) -> tensor<1x4xf32> {
  %y = cuvil.softmax %x, axis = 1 {cuvil.fixed = {result = 2}} : tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}
