//===- Passes.td - Cuvil passes ----------------------------*- tablegen -*-===//

#ifndef CUVIL_PASSES_PASSES_TD
#define CUVIL_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def CuvilFoldPads : Pass<"cuvil-fold-pads", "::mlir::func::FuncOp"> {
  let summary = "Fold zero pads into the convolutions and average pools "
                "that read them";
  let description = [{
    A constant-zero `cuvil.pad` of H and W only before a `cuvil.conv2d`, or
    before a `cuvil.avg_pool2d` that counts padding (or has none; not in
    ceil mode), becomes the op's own `padding` (the pool then counts it).
    Exporters write Inception's padded average pools and TensorFlow's SAME
    convolutions this way.
  }];
  let statistics = [
    Statistic<"numFolded", "folded", "Pads folded into windows">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilFoldBatchNorm : Pass<"cuvil-fold-batch-norm", "::mlir::func::FuncOp"> {
  let summary = "Fold inference batch norm into the preceding convolution";
  let description = [{
    A `cuvil.batch_norm` whose input is a `cuvil.conv2d` used only by it,
    with constant f32 weights and statistics, becomes new convolution
    weights and bias: W' = W * s, b' = (b - mean) * s + bias with
    s = scale / sqrt(variance + epsilon), computed in double.
  }];
  let statistics = [
    Statistic<"numFolded", "folded", "Batch norms folded into convolutions">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilPrepackWeights : Pass<"cuvil-prepack-weights", "::mlir::func::FuncOp"> {
  let summary = "Store constant weights in the layout the kernels read";
  let description = [{
    Permutes constant operands at compile time: a `cuvil.gemm` with
    `trans_b` and a constant B (torch.nn.Linear weights) gets B transposed
    and `trans_b` dropped, and a `cuvil.transpose` of a constant becomes
    the transposed constant. The old constants are left for DCE.
  }];
  let statistics = [
    Statistic<"numPrepacked", "prepacked", "Constants stored in a new layout">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilMarkQuantizationCandidates
    : Pass<"cuvil-mark-quantization-candidates", "::mlir::func::FuncOp"> {
  let summary = "Choose the float ops post-training int8 quantization converts";
  let description = [{
    Marks each linear layer that level1 can compute in integers (a
    `cuvil.matmul` or `cuvil.gemm` with constant f32 weights [K, N], K at
    most 65536; a `cuvil.conv2d`, grouped or not, with constant weights,
    C/G * KH * KW at most 65536, a depthwise window at most 512 taps) with
    `cuvil.calibration_point = i`, numbered in program order: calibration
    observes its activation (the lhs, the input) there. Ops the user keeps
    in float32 (`keep-fp32`: a node name, a module path such as `fc1` of a
    node `/fc1/Gemm`, or an op kind such as `Gemm` or `conv2d`) and
    products without an integer form (run-time weights, a transposed
    activation) are left unmarked, with a warning saying why.
  }];
  let options = [
    ListOption<"keepFp32", "keep-fp32", "std::string",
               "Node names, module paths or op kinds to keep in float32">,
    Option<"groupedConvolutions", "grouped-convolutions", "bool", "true",
           "Mark grouped, depthwise and dilated convolutions too (false: "
           "the target's int8 convolutions have no groups or dilation; "
           "those stay float32, with a note)">,
  ];
  let statistics = [
    Statistic<"numMarked", "marked", "Ops marked for int8 quantization">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilQuantizeProducts
    : Pass<"cuvil-quantize-products", "::mlir::func::FuncOp"> {
  let summary = "Quantize the linear layers calibration gave ranges";
  let description = [{
    A `cuvil.matmul` or `cuvil.gemm` with `cuvil.activation_range =
    array<f64: lo, hi>` (calibration's range of its activation) becomes
    the QDQ form of an int8 layer: the activation quantized per tensor,
    asymmetric uint8 over [min(lo, 0), max(hi, 0)]; the constant weights
    quantized per output column, symmetric int8 (scale max|w| / 127,
    rounded half to even); the gemm's alpha folded into the weights and its
    bias added in float32. `cuvil-fold-quantized-products` then turns it
    into a `cuvil.quantized_matmul`. A marked op that cannot be quantized
    is an error.

    With `power-of-two` (fixed point, as Cambricon MLU2xx's tensor unit
    takes it: a value is its integer times 2^position), the activation is
    symmetric int8 per tensor and the weights symmetric int8 per tensor,
    each scale the smallest power of two that holds its largest magnitude
    (zero point 0): the same types, whose scales are exact powers of two.
  }];
  let options = [
    Option<"powerOfTwo", "power-of-two", "bool", "false",
           "Symmetric int8 per tensor with power-of-two scales">,
  ];
  let statistics = [
    Statistic<"numQuantized", "quantized", "Ops quantized from calibration">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilQuantizeIO : Pass<"cuvil-quantize-io", "::mlir::func::FuncOp"> {
  let summary = "Take and return quantized tensors instead of float32";
  let description = [{
    Integer I/O (`cuvilc --integer-io`): each float32 input and output of
    the function becomes a tensor of a per-tensor `!quant.uniform` type,
    which the C ABI passes as its 8-bit storage and the artifact's metadata
    describes (scale, zero point). An input takes the type the model
    quantizes it to (its first `cuvil.quantize` user, which then goes), or
    else the uint8 type of calibration's range of it
    (`cuvil.io_range = array<f64: lo, hi>` on the argument); its other
    users read it dequantized. An output that is a `cuvil.dequantize`
    returns the quantized value itself; otherwise it is quantized to the
    uint8 type of its calibrated range (a result's `cuvil.io_range`), which
    cuvil-fuse-epilogues can fold into the last int8 layer. Inputs and
    outputs of other element types stay as they are. A float32 input or
    output with no type to take is an error naming it.
  }];
  let statistics = [
    Statistic<"numInputs", "inputs", "Inputs taken quantized">,
    Statistic<"numOutputs", "outputs", "Outputs returned quantized">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilConvertProductsToBf16
    : Pass<"cuvil-convert-products-to-bf16", "::mlir::func::FuncOp"> {
  let summary = "Compute linear layers and convolutions on bfloat16 values, "
                "summed in float32";
  let description = [{
    Each linear layer (a `cuvil.matmul` or `cuvil.gemm` of a float32
    activation by constant float32 weights) becomes a `cuvil.matmul` with
    `acc_type = f32` of the activation cast to bfloat16 and the weights
    stored in bfloat16 ([K, N], rounded to nearest even, a gemm's alpha
    folded in), then its bias added in float32. An ungrouped
    `cuvil.conv2d` by constant weights becomes one with `acc_type = f32` of
    its input cast to bfloat16 and bfloat16 OIHW weights, its float32 bias
    kept inside. What stays float32 gets a warning saying why: what the
    user keeps (`keep-fp32`, as for int8), grouped and depthwise
    convolutions, run-time weights.
  }];
  let options = [
    ListOption<"keepFp32", "keep-fp32", "std::string",
               "Node names, module paths or op kinds to keep in float32">,
  ];
  let statistics = [
    Statistic<"numConverted", "converted", "Products converted to bfloat16">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilConvertProductsToF16
    : Pass<"cuvil-convert-products-to-f16", "::mlir::func::FuncOp"> {
  let summary = "Compute linear layers and convolutions in float16 "
                "arithmetic";
  let description = [{
    On a target with float16 arithmetic (`#cuvil.target` feature
    `fullfp16`: aarch64 CPUs with +fp16), each linear layer (a
    `cuvil.matmul` or `cuvil.gemm` of a float32 activation by constant
    float32 weights) becomes a float16 `cuvil.matmul` (no `acc_type`: its
    sums are float16 too, a chain of fused multiply-adds) of the activation
    cast to float16 by the weights stored in float16 ([K, N], rounded to
    nearest even, a gemm's alpha folded in), cast back to float32, then its
    bias added in float32. An ungrouped `cuvil.conv2d` by constant weights
    becomes a float16 one without bias, cast back, its bias added after. What
    stays float32 gets a warning saying why: what the user keeps
    (`keep-fp32`), grouped and depthwise convolutions, run-time weights;
    everything, with one warning, on a target without float16 arithmetic.
  }];
  let options = [
    ListOption<"keepFp32", "keep-fp32", "std::string",
               "Node names, module paths or op kinds to keep in float32">,
  ];
  let statistics = [
    Statistic<"numConverted", "converted", "Products converted to float16">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilFoldQuantizedProducts
    : Pass<"cuvil-fold-quantized-products", "::mlir::func::FuncOp"> {
  let summary = "Multiply quantized operands in integers";
  let description = [{
    A `cuvil.matmul` of two `cuvil.dequantize` results (a QDQ graph's
    activation and weights) becomes one `cuvil.quantized_matmul` of the
    quantized values, which targets compute with integer kernels: 8-bit
    activations quantized per tensor, symmetric int8 weights [K, N] per
    tensor or per column. A `cuvil.gemm` of dequantized operands (ONNX's
    nn.Linear) folds the same way when alpha and beta are 1: weights
    [N, K] under trans_b, per tensor or per output channel, are transposed
    at compile time, and the bias becomes an add after the product. A
    product of dequantized values that does not qualify stays in float32,
    with a warning saying why.
  }];
  let statistics = [
    Statistic<"numFolded", "folded", "Products folded into integer ones">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilHoistQuantize
    : Pass<"cuvil-hoist-quantize", "::mlir::func::FuncOp"> {
  let summary = "Quantize before max pooling, not after";
  let description = [{
    `cuvil.quantize` of a `cuvil.max_pool2d` result, per tensor, moves
    before the pool, which then pools the 8-bit values: quantizing is
    monotonic, so the result is the same (a NaN aside: the float pool skips
    it, the quantized one pools its zero point). The quantize then follows
    the op producing the pool's input, where an int8 convolution's epilogue
    takes it in. Other float uses of the pool (not quantizes) then read
    the pooled 8-bit values dequantized: within half a step of the float
    pool, the value the int8 model has there.
  }];
  let statistics = [
    Statistic<"numHoisted", "hoisted", "Quantizes moved before max pools">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilQuantizeResiduals
    : Pass<"cuvil-quantize-residuals", "::mlir::func::FuncOp"> {
  let summary = "Residual shortcuts of int8 convolutions read their 8-bit "
                "tensor";
  let description = [{
    Where an int8 convolution's output is added to a float32 tensor `y`
    that is also quantized to 8 bits per tensor (`q = cuvil.quantize y`,
    the next layer's input), the add takes `cuvil.dequantize q` instead of
    `y`: ResNet's and MobileNetV2's shortcuts. Then `y` often has no user
    but its quantize, so the block's last convolution writes the bytes in
    its epilogue, and (with cuvil-fuse-epilogues' `quantized-residuals`)
    the next block's convolution reads the shortcut as bytes: the float32
    tensor between blocks, written once and read twice, is gone. The
    shortcut is then rounded to the 8-bit grid like every other
    activation, as in PyTorch's quantized ResNet (whose add takes 8-bit
    operands). It changes what the graph computes, so the pipeline runs it
    only where Cuvil chose the quantization (`--quantize=int8`), for
    targets whose int8 convolutions read such residuals
    (TargetBackend::quantizedResiduals); never on an imported QDQ graph.
  }];
  let statistics = [
    Statistic<"numShortcuts", "shortcuts",
              "Residual adds that read a quantized tensor">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilRaiseLayerNorm : Pass<"cuvil-raise-layer-norm", "::mlir::func::FuncOp"> {
  let summary = "Replace decomposed layer norms by cuvil.layer_norm";
  let description = [{
    ONNX before opset 17 spells nn.LayerNorm as ReduceMean, Sub, Pow (or a
    product), ReduceMean, Add of epsilon, Sqrt, Div, then an optional Mul by
    gamma and Add of beta. When the two means reduce the same trailing axes
    with keepdims, the element type is f32 and every intermediate is used
    only inside the pattern, the ops become one `cuvil.layer_norm` over
    those axes; gamma and beta of the normalized shape become its scale and
    bias. Runs after canonicalization (which turns Pow(d, 2) into d * d).
  }];
  let statistics = [
    Statistic<"numRaised", "raised", "Decomposed layer norms replaced">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilBatchNormToAffine
    : Pass<"cuvil-batch-norm-to-affine", "::mlir::func::FuncOp"> {
  let summary = "Make batch norms with constant statistics x * s + t";
  let description = [{
    A `cuvil.batch_norm` on a static-channel f32 tensor whose scale, bias,
    mean and variance are constants becomes `cuvil.mul` by
    s = scale / sqrt(variance + epsilon) and `cuvil.add` of
    t = bias - mean * s, [C, 1, ...] constants computed in double. Run
    after cuvil-fold-batch-norm (which absorbs the norms that follow a
    convolution) on targets that fuse elementwise maps: the norm and the
    activation after it become one pass over the tensor.
  }];
  let statistics = [
    Statistic<"numRewritten", "rewritten", "Batch norms made affine maps">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilRaiseActivations
    : Pass<"cuvil-raise-activations", "::mlir::func::FuncOp"> {
  let summary = "Replace x * sigmoid(x) by cuvil.silu and x * "
                "hardsigmoid(x) by cuvil.hardswish";
  let description = [{
    ONNX spells nn.SiLU as Mul(x, Sigmoid(x)), and nn.Hardswish before
    opset 14 as Mul(x, HardSigmoid(x)) with alpha 1/6 and beta 1/2. Each
    such product whose gate has no other user, on operands of the
    product's type, becomes `cuvil.silu` or `cuvil.hardswish`, so that
    x's producer has one user and cuvil-fuse-epilogues can take the
    activation into a convolution's epilogue. (A HardSigmoid of other
    parameters is left alone.)
  }];
  let statistics = [
    Statistic<"numRaised", "raised", "Gated products replaced">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilMarkSampleParallel
    : Pass<"cuvil-mark-sample-parallel", "::mlir::func::FuncOp"> {
  let summary = "Mark functions whose batch may run as chunks of samples";
  let description = [{
    A function of a module with a dynamic batch (`cuvil.max_batch` of 2 or
    more) gets the unit attribute `cuvil.sample_parallel` when every op
    computes each sample of the batch (dimension 0) from that sample alone
    and from batch-independent values (SampleSeparability.h: convolutions,
    pooling and norms of their input, row-wise products by weights,
    elementwise ops, reshapes, reductions and concatenations along other
    axes, ...), and, in mode `auto`, when one sample does at least
    `min-reuse` multiply-adds per byte of the weights it reads: a target
    may then give each thread a chunk of the batch and its own workspace,
    every chunk reading all the weights. The default, a multiply-add per
    ten weight bytes, marks every network with products (a 512-wide MLP
    reuses each byte a quarter of a time per sample) and leaves tables read
    without arithmetic (tree ensembles). Mode `on` marks every separable
    function and makes any other an error naming the op that mixes samples;
    `off` marks none.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"auto\"",
           "auto (when the weight reuse pays), on, off">,
    Option<"minReuse", "min-reuse", "double", /*default=*/"0.1",
           "Multiply-adds per weight byte of one sample that make auto mark">,
  ];
  let statistics = [
    Statistic<"numMarked", "marked", "Functions marked sample-parallel">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilBatchParallelConvs : Pass<"cuvil-batch-parallel-convs", "::mlir::func::FuncOp"> {
  let summary = "Merge convolutions that read the same tensor when it pays";
  let description = [{
    Bandwidth-aware batching. Convolutions of one input with the same
    geometry (kernel size, strides, padding, dilations, groups = 1) and
    constant weights, each followed by the same activation or by none,
    become one convolution over the concatenated weights and biases (built
    at compile time), the shared activation, and a `cuvil.split` along the
    channels into the branches' results: an Inception block's parallel 1x1
    convolutions read their input once. Whether it pays is decided per
    group by the memory-traffic model in BatchingCostModel.h with the
    bandwidths, cache sizes, per-kernel overhead and threshold of the
    module's `cuvil.target` description.
  }];
  let statistics = [
    Statistic<"numMerged", "merged", "Groups of parallel convolutions merged">,
    Statistic<"numConvsMerged", "convs-merged", "Convolutions merged into batched ones">,
    Statistic<"numRejected", "rejected", "Groups the cost model kept apart">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilFuseEpilogues : Pass<"cuvil-fuse-epilogues", "::mlir::func::FuncOp"> {
  let summary = "Fuse elementwise epilogues into the convolution producing them";
  let description = [{
    Wraps a `cuvil.conv2d` (or a linear layer: an unscaled 2-D `cuvil.gemm`
    whose bias has one value per column, or a `cuvil.matmul` by a [K, N]
    weight with its broadcast bias `cuvil.add`) and the elementwise ops that
    consume its result alone into one `cuvil.fused_group kind = "epilogue"`:
    first an optional
    residual `cuvil.add` of a tensor of the same type, then an optional
    activation among `activations` (the target's kernels': `cuvil.relu`,
    `cuvil.clip`, and on CPUs `cuvil.hardswish`, `cuvil.hardsigmoid`,
    `cuvil.sigmoid`, `cuvil.silu`; an int8 producer's only relu and clip).
    That is the order the x86 kernel applies them in, to each block of
    output while it is still in cache, instead of three passes over memory
    (ResNet's conv + add + relu, MobileNet's conv + relu6, MobileNetV3's
    conv + hardswish, EfficientNet's conv + SiLU).
  }];
  let options = [
    ListOption<"activations", "activations", "std::string",
               "Activations the target's kernels apply in an epilogue "
               "(default: relu, clip)">,
    Option<"quantizedResiduals", "quantized-residuals", "bool", "false",
           "An int8 convolution's residual may be the dequantize of an "
           "8-bit tensor quantized per tensor: the group reads the bytes "
           "(TargetBackend::quantizedResiduals)">,
    Option<"requantize", "requantize", "bool", "true",
           "An int8 product's group may end in the quantize of the next "
           "int8 layer's input, writing 8-bit values "
           "(TargetBackend::Int8Form::requantizingEpilogues)">,
  ];
  let statistics = [
    Statistic<"numGroups", "groups", "Fused groups formed">,
    Statistic<"numOpsFused", "ops-fused", "Epilogue ops fused into a producer">,
    Statistic<"bytesSaved", "bytes-saved",
              "Intermediate tensor bytes no longer written (static shapes)">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
}

def CuvilFuseElementwise : Pass<"cuvil-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse chains of float elementwise ops into one map";
  let description = [{
    Replaces each maximal group of f32/f64 elementwise ops (arithmetic,
    activations, exp/log/sqrt/erf, ...) that share one result type by a
    `cuvil.map_reduce` without reductions, whose scalar region (arith and
    math ops) computes one output element: one loop nest and no
    intermediate tensors instead of one pass over memory per op (ONNX's
    decomposed GELU, SiLU as sigmoid * x, scale-and-shift). A producer joins
    a group only when all its users are in it; splat constants become
    scalar constants. Runs after cuvil-fuse-epilogues, which takes the ops a
    convolution or matrix product can apply itself.
  }];
  let statistics = [
    Statistic<"numMaps", "maps", "Elementwise groups fused into one map">,
    Statistic<"numOpsFused", "ops-fused", "Elementwise ops fused into maps">,
    Statistic<"bytesSaved", "bytes-saved",
              "Intermediate tensor bytes no longer written (static shapes)">,
  ];
  let dependentDialects = ["::cuvil::l1::CuvilDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def CuvilLowerToLevel2 : Pass<"cuvil-lower-to-level2", "::mlir::ModuleOp"> {
  let summary = "Bufferize level1 into level2 micro-kernel calls";
  let description = [{
    Turns each level1 function into a level2 function over buffers:
    `(batch: index, inputs..., outputs...) -> ()`. Every level1 op becomes a
    `cuvil_l2.ukernel_call` named after it (attributes carried over);
    intermediates are `memref.alloc`s (placed in the arena by
    `cuvil-plan-memory`), constants `memref.global`s, and the values a
    function returns are written straight into its output buffers. A
    `cuvil.map_reduce` map becomes a `cuvil_l2.kernel "map"` whose body is a
    `linalg.generic` over the buffers (broadcasts as indexing maps) with the
    map's scalar region.

    Dynamic dimensions must be multiples of the batch (the only run-time
    dimension Cuvil supports); each gets its size as `batch * k`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::cuvil::l2::CuvilL2Dialect",
  ];
}

def CuvilPlanMemory : Pass<"cuvil-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Place every intermediate buffer in one workspace arena";
  let description = [{
    Replaces the `memref.alloc`s of each level2 function by `cuvil_l2.view`s
    of one arena, a new last argument marked `{cuvil_l2.arena}`. Buffers
    whose lifetimes do not overlap share bytes: greedy placement, largest
    first, at the lowest 64-byte-aligned offset free for its lifetime.
    Dynamic sizes are planned at the bound `cuvil.max_batch` (module
    attribute; 1 if absent).

    Records on the function: `cuvil.arena_bytes`, `cuvil.intermediate_bytes`
    (the sum of all intermediates) and `cuvil.live_bytes_bound` (the most
    bytes simultaneously live, a lower bound for any plan).
  }];
  let dependentDialects = ["::cuvil::l2::CuvilL2Dialect"];
}

#endif // CUVIL_PASSES_PASSES_TD
