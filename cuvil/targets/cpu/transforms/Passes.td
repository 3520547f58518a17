//===- Passes.td - the x86 target's level2 passes ----------*- tablegen -*-===//
//
// What the x86 target decides on level2 buffers, between the neutral
// lowering (cuvil-lower-to-level2) and memory planning: which algorithm each
// micro-kernel runs and the scratch it needs, weights packed at compile time,
// channel-blocked layouts.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_CPU_TRANSFORMS_PASSES_TD
#define CUVIL_TARGETS_CPU_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CuvilCpuFuseConvInputCasts
    : Pass<"cuvil-cpu-fuse-conv-input-casts", "::mlir::ModuleOp"> {
  let summary = "bfloat16 convolutions read their float32 input and round it";
  let description = [{
    Level2. A `cuvil_l2.ukernel_call` "conv2d" with `acc_type` (bfloat16
    operands summed in float32) whose input is written only by a "cast"
    from float32 reads the cast's source instead: its kernel
    (runtime/bconv) rounds float32 to bfloat16 exactly as the cast does,
    while it converts the image into its scratch on every call. The cast
    and its buffer go when nothing else reads them.
  }];
  let statistics = [
    Statistic<"numFused", "fused", "Input casts fused into bf16 convolutions">,
  ];
  let dependentDialects = [
    "::mlir::memref::MemRefDialect",
    "::cuvil::l2::CuvilL2Dialect",
  ];
}

def CuvilCpuSelectKernels : Pass<"cuvil-cpu-select-kernels", "::mlir::ModuleOp"> {
  let summary = "Choose each micro-kernel's algorithm and give it its scratch";
  let description = [{
    Level2, on the neutral lowering's `cuvil_l2.ukernel_call`s. A 3x3
    stride-1 f32 convolution with at least 28x28 outputs and 8 channels in
    and out runs by Winograd F(4x4, 3x3) (`cuvil.algorithm =
    "winograd_f4x3"`, scratch for the transformed weights, image and
    products); another ungrouped, non-pointwise convolution with a static
    image multiplies im2col patches (scratch [C * KH * KW, OH * OW] with
    positions padded to the strip of 32); a matrix product with static
    K >= 16, N >= 32 and enough rows gets scratch to pack B in strips of 32
    columns; a recurrent layer (rnn, gru, lstm) gets [batch, G * H] floats
    (5 * H for a GRU without linear_before_reset) for each step's products.
    Scratch is an extra output, which memory planning places like any
    buffer.
  }];
  let dependentDialects = [
    "::mlir::memref::MemRefDialect",
    "::cuvil::l2::CuvilL2Dialect",
  ];
}

def CuvilCpuPackProductWeights : Pass<"cuvil-cpu-pack-product-weights", "::mlir::ModuleOp"> {
  let summary = "Pack constant B of matrix products into strips at compile time";
  let description = [{
    Level2. A `cuvil_l2.ukernel_call` "matmul" or "gemm" with packing
    scratch (its second output) and a constant [K, N] f32 B (a linear
    layer's weight) gets B as a new `memref.global` in the layout the
    blocked kernels read, strips of 32 columns ([ceil(N / 32), K, 32], zero
    past column N), the unit attribute `cuvil.packed_b`, and no scratch: the
    run-time pass over B on every call is gone.
  }];
  let statistics = [
    Statistic<"numPacked", "packed", "Product weights packed at compile time">,
  ];
  let dependentDialects = [
    "::mlir::memref::MemRefDialect",
    "::cuvil::l2::CuvilL2Dialect",
  ];
}

def CuvilCpuLayoutForests : Pass<"cuvil-cpu-layout-forests", "::mlir::ModuleOp"> {
  let summary = "Lay tree ensembles out as perfect trees at compile time";
  let description = [{
    Level2. A `cuvil_l2.ukernel_call` "tree_ensemble" whose forest makes
    one comparison (`<` or `<=`) on float32 features, with at most 10
    levels and 64 targets and no zero-as-missing node, reads new globals
    instead of its tables: per tree, node words (the feature, bit 31 set
    when a missing value goes left) and float32 thresholds level by level
    (float64 ones narrowed exactly: the largest float32 at or below for
    `<=`, the smallest at or above for `<`), 2^depth leaves (a shallow
    leaf copied into every leaf under it; float64 leaves and leaves of
    several values only for an AVX-512 target), each tree's target, and
    for an x86 target with AVX2 the thresholds and words again, interleaved
    as one i64 per node (threshold bits low) for the few-rows walks,
    which then read a node with one load. The call is marked
    `cuvil.forest_depth` (the deepest tree's depth) and
    `cuvil.forest_comparison`; runtime/trees/perfect*.c walk it with no
    child table, no leaf test and permutes for the first levels' nodes.
  }];
  let statistics = [
    Statistic<"numLaidOut", "laid-out", "Forests laid out as perfect trees">,
  ];
  let dependentDialects = [
    "::mlir::memref::MemRefDialect",
    "::cuvil::l2::CuvilL2Dialect",
  ];
}

def CuvilCpuPackQuantizedWeights
    : Pass<"cuvil-cpu-pack-quantized-weights", "::mlir::ModuleOp"> {
  let summary = "Pack the int8 weights of quantized products at compile time";
  let description = [{
    Level2, after cuvil-cpu-assign-layouts. A `cuvil_l2.ukernel_call`
    "quantized_matmul" or "quantized_conv2d" whose weights are a constant
    (a global through a storage cast) gets, as new globals, the weights in
    the layout its kernel reads: the qgemm tiles' for products and plain
    convolutions (runtime/qgemm/qgemm.h: strips of 16 columns, k in groups
    of 4), the qconvb tiles' for blocked direct convolutions
    (runtime/qconv/qconv.h; `cuvil.narrow_weights` when vpmaddubsw's
    tiles may take them), floats per channel block for depthwise ones; their
    sums (the activation zero point's correction) and the output scale of
    each column (activation scale times the column's, rounded once to f32).
    The call is marked `packed_b` and gets its scratch (A panels, the
    unfolded or converted image) as a second output where it needs one. A
    quantized product whose weights are not constant is an error: the x86
    target multiplies int8 only against packed weights. A bfloat16 product
    (`acc_type`) likewise: a "matmul"'s [K, N] weights in the bgemm
    strips, a "conv2d"'s OIHW ones for the bconvb tiles and its layouts
    (runtime/bconv/bconv.h), with the converted image as scratch.
  }];
  let statistics = [
    Statistic<"numPacked", "packed", "Quantized weights packed at compile time">,
  ];
  let dependentDialects = [
    "::mlir::memref::MemRefDialect",
    "::cuvil::l2::CuvilL2Dialect",
  ];
}

def CuvilCpuAssignLayouts : Pass<"cuvil-cpu-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "Give convolution activations the channel-blocked layout";
  let description = [{
    Level2. Intermediates that must share a layout (a convolution's output
    and fused residual, a depthwise convolution's input and output, a
    pooling's input and output, the operands of a map without broadcasts)
    form classes. A class that a blockable convolution (f32, static image,
    ungrouped or depthwise, constant weights or Winograd) produces becomes
    `#cuvil_l2.layout<"NCHW" to "NCHW<B>c">` when every member can: a
    [N, C, H, W] intermediate whose every access has a blocked kernel. B is
    the target's 32-bit vector lanes (from `cuvil.target`: 16 for AVX-512,
    8 for AVX2, 4 for NEON), or half of them for a class whose channels are
    multiples of that only (8 on AVX-512; never below the target config's
    `min_channel_block`, 8 by default). Ungrouped convolutions read either layout (plain as blocks of
    one channel); global pooling writes plain [N, C] from blocks; a returned
    value is reordered into the output. So no reorder is ever inserted
    inside the graph: the only ones are `cuvil_l2.copy`s into model outputs.

    Direct convolutions get `cuvil.algorithm = "direct_blocked"` and their
    weights packed at compile time, [OC/B][C/ib][KH][KW][ib][B] (ib: the
    input's block, 1 for a plain input) or [C/B][KH][KW][B] (depthwise);
    ungrouped ones take the zero-padded image as scratch in place of
    im2col's. Winograd keeps its own.
  }];
  let options = [
    Option<"block", "block", "int64_t", "0",
           "Channels per block (0: the target's 32-bit vector lanes; no "
           "blocking below the target's min_channel_block, 8 unless its "
           "config says)">,
  ];
  let statistics = [
    Statistic<"numBlocked", "blocked", "Buffers given the blocked layout">,
    Statistic<"numPacked", "packed", "Convolution weights packed into blocks">,
    Statistic<"numReorders", "reorders", "Layout reorders (copies into model outputs)">,
  ];
  let dependentDialects = [
    "::mlir::memref::MemRefDialect",
    "::cuvil::l2::CuvilL2Dialect",
  ];
}

#endif // CUVIL_TARGETS_CPU_TRANSFORMS_PASSES_TD
