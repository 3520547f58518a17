//===- CuvilOps.td - level1 ops ----------------------------*- tablegen -*-===//
//
// Result types are never written in the assembly: each op infers them from
// its operands and attributes (Cuvil_InferTypeOpAdaptor), and the same inference is
// the verifier's source of truth, so builders, the parser and the verifier
// agree by construction.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IR_CUVILOPS_TD
#define CUVIL_IR_CUVILOPS_TD

include "cuvil/ir/CuvilAttrs.td"
include "cuvil/ir/CuvilBase.td"
include "mlir/Dialect/Quant/IR/QuantBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Quantized values are tensors of upstream `!quant.uniform` types, per
// tensor or per axis; a power-of-two scale is fixed point. Only the
// quantization ops (below) and max pooling, which commutes with a
// monotonic quantize, take or give them: every other op computes on plain
// element types.
def Cuvil_QuantizedTensor : RankedTensorOf<[quant_QuantizedType]>;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Cuvil_ConstantOp : Cuvil_Op<"constant",
    [ConstantLike, Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "a constant tensor (weights are dense resources)";
  let description = [{
    Importers store weights as `dense_resource` blobs so that a model's
    parameters are never printed inline in bulk; small constants (scalars,
    shapes) may be `dense`.

    ```mlir
    %w = cuvil.constant dense_resource<conv1_weight> : tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

include "cuvil/ir/ElementwiseOps.td"

//===----------------------------------------------------------------------===//
// Linear algebra and convolution
//===----------------------------------------------------------------------===//

def Cuvil_MatmulOp : Cuvil_Op<"matmul", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "numpy matmul: batched, broadcasting, 1-D operands promoted";
  let description = [{
    With `acc_type` (a float wider than the operands': bf16 or f16 operands,
    f32 sums), the products are summed in that type and the result has it:
    a reduced-precision product, as `cuvil-convert-products-to-bf16` makes.
  }];
  let arguments = (ins Cuvil_Tensor:$lhs, Cuvil_Tensor:$rhs,
                       OptionalAttr<TypeAttr>:$acc_type);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)
  }];
}

def Cuvil_GemmOp : Cuvil_Op<"gemm", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "alpha * op(A) @ op(B) + beta * C (linear layers)";
  let description = [{
    ONNX Gemm: A is MxK (KxM when `trans_a`), B is KxN (NxK when `trans_b`,
    the layout of `torch.nn.Linear` weights), C broadcasts to MxN. With
    `acc_type`, as `cuvil.matmul`: A and B narrower floats, C and the
    result of `acc_type`.
  }];
  let arguments = (ins Cuvil_FloatTensor:$a, Cuvil_FloatTensor:$b,
                       Optional<Cuvil_FloatTensor>:$c,
                       UnitAttr:$trans_a, UnitAttr:$trans_b,
                       DefaultValuedAttr<F64Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F64Attr, "1.0">:$beta,
                       OptionalAttr<TypeAttr>:$acc_type);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $a `,` $b (`,` $c^)? attr-dict `:` type($a) `,` type($b) (`,` type($c)^)?
  }];
}

def Cuvil_Conv2dOp : Cuvil_Op<"conv2d", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "2-D convolution, NCHW input, OIHW weight";
  let description = [{
    `padding` is [top, left, bottom, right]; `groups` = C_in gives a
    depthwise convolution. Unset `strides`/`dilations` mean 1, unset
    `padding` means 0. With `acc_type`, as `cuvil.matmul`: input and weight
    narrower floats (bf16), the products summed in `acc_type` (f32), which
    the bias and the result have.
  }];
  let arguments = (ins Cuvil_FloatTensor:$input, Cuvil_FloatTensor:$weight,
                       Optional<Cuvil_FloatTensor>:$bias,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$strides,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$padding,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$groups,
                       OptionalAttr<TypeAttr>:$acc_type);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)?
  }];
  let extraClassDeclaration = [{
    /// Attributes with their defaults applied.
    ::llvm::SmallVector<int64_t, 2> getStridesOrDefault();
    ::llvm::SmallVector<int64_t, 4> getPaddingOrDefault();
    ::llvm::SmallVector<int64_t, 2> getDilationsOrDefault();
  }];
}

def Cuvil_ConvTranspose2dOp : Cuvil_Op<"conv_transpose2d",
    [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "2-D transposed convolution, NCHW input, [C_in, O/groups, KH, KW] weight";
  let description = [{
    The gradient of `cuvil.conv2d` with respect to its input, as ONNX
    ConvTranspose: output size (in - 1) * stride + (kernel - 1) * dilation +
    1 + output_padding - padding_begin - padding_end. `padding` is [top,
    left, bottom, right]; unset attributes mean 1 (strides, dilations) or 0.
  }];
  let arguments = (ins Cuvil_FloatTensor:$input, Cuvil_FloatTensor:$weight,
                       Optional<Cuvil_FloatTensor>:$bias,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$strides,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$padding,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$dilations,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$output_padding,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)?
  }];
}

//===----------------------------------------------------------------------===//
// Normalization, softmax, reductions
//===----------------------------------------------------------------------===//

class Cuvil_SoftmaxBase<string mnemonic> : Cuvil_Op<mnemonic,
    [Pure, Cuvil_InferTypeOpAdaptor]> {
  let arguments = (ins Cuvil_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = "$input `,` `axis` `=` $axis attr-dict `:` type($input)";
}
def Cuvil_SoftmaxOp : Cuvil_SoftmaxBase<"softmax"> {
  let summary = "softmax along one axis";
}
def Cuvil_LogSoftmaxOp : Cuvil_SoftmaxBase<"log_softmax"> {
  let summary = "log(softmax) along one axis, computed stably";
}

class Cuvil_ReduceOp<string mnemonic> : Cuvil_Op<mnemonic,
    [Pure, Cuvil_InferTypeOpAdaptor]> {
  let arguments = (ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdims);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $input `,` `axes` `=` $axes (`keepdims` $keepdims^)? attr-dict `:`
    type($input)
  }];
  let description = [{
    Reduces over `axes` (distinct, negative counts from the end, at least
    one). With `keepdims` the reduced dimensions stay with size 1.
  }];
}
def Cuvil_ReduceSumOp : Cuvil_ReduceOp<"reduce_sum"> { let summary = "sum over axes"; }
def Cuvil_ReduceMeanOp : Cuvil_ReduceOp<"reduce_mean"> { let summary = "mean over axes"; }
def Cuvil_ReduceMaxOp : Cuvil_ReduceOp<"reduce_max"> { let summary = "maximum over axes"; }
def Cuvil_ReduceMinOp : Cuvil_ReduceOp<"reduce_min"> { let summary = "minimum over axes"; }
def Cuvil_ReduceProdOp : Cuvil_ReduceOp<"reduce_prod"> { let summary = "product over axes"; }

def Cuvil_CumSumOp : Cuvil_Op<"cumsum", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "running sums along an axis (ONNX CumSum)";
  let description = [{
    Element i along `axis` is the sum of elements 0..i (0..i-1 with
    `exclusive`; from the end with `reverse`).
  }];
  let arguments = (ins Cuvil_Tensor:$input, I64Attr:$axis, UnitAttr:$exclusive,
                       UnitAttr:$reverse);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $input `,` `axis` `=` $axis (`exclusive` $exclusive^)? (`reverse` $reverse^)?
    attr-dict `:` type($input)
  }];
}

class Cuvil_ArgReduceOp<string mnemonic> : Cuvil_Op<mnemonic,
    [Pure, Cuvil_InferTypeOpAdaptor]> {
  let arguments = (ins Cuvil_Tensor:$input, I64Attr:$axis, UnitAttr:$keepdims,
                       UnitAttr:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = [{
    $input `,` `axis` `=` $axis (`keepdims` $keepdims^)?
    (`select_last_index` $select_last_index^)? attr-dict `:` type($input)
  }];
  let description = [{
    The i64 index along `axis` of the first extreme element (the last with
    `select_last_index`), as ONNX ArgMax / ArgMin; `keepdims` as in the
    reductions.
  }];
}
def Cuvil_ArgMaxOp : Cuvil_ArgReduceOp<"arg_max"> {
  let summary = "index of the maximum along an axis";
}
def Cuvil_ArgMinOp : Cuvil_ArgReduceOp<"arg_min"> {
  let summary = "index of the minimum along an axis";
}

def Cuvil_LayerNormOp : Cuvil_Op<"layer_norm",
    [Pure, Cuvil_InferTypeOpAdaptor, AttrSizedOperandSegments]> {
  let summary = "layer normalization over the dimensions from `axis` on";
  let arguments = (ins Cuvil_FloatTensor:$input,
                       Optional<Cuvil_FloatTensor>:$scale,
                       Optional<Cuvil_FloatTensor>:$bias,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`scale` $scale^ `:` type($scale))? (`bias` $bias^ `:` type($bias))?
    attr-dict `:` type($input)
  }];
}

def Cuvil_BatchNormOp : Cuvil_Op<"batch_norm", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "inference batch normalization over channel dimension 1";
  let arguments = (ins Cuvil_FloatTensor:$input, Cuvil_FloatTensor:$scale,
                       Cuvil_FloatTensor:$bias, Cuvil_FloatTensor:$mean,
                       Cuvil_FloatTensor:$variance,
                       DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:`
    type($input) `,` type($scale) `,` type($bias) `,` type($mean) `,`
    type($variance)
  }];
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

class Cuvil_Pool2dOp<string mnemonic, dag extraArgs = (ins),
                     Type tensor = Cuvil_FloatTensor> : Cuvil_Op<mnemonic,
    [Pure, Cuvil_InferTypeOpAdaptor]> {
  let arguments = !con((ins tensor:$input,
                            DenseI64ArrayAttr:$kernel_shape,
                            DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$strides,
                            DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$padding,
                            DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$dilations,
                            UnitAttr:$ceil_mode), extraArgs);
  let results = (outs tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let description = [{
    NCHW pooling window `kernel_shape`; `padding` is [top, left, bottom,
    right]; `ceil_mode` rounds the output size up, as PyTorch does, without
    starting a window in the right/bottom padding.
  }];
}
def Cuvil_MaxPool2dOp : Cuvil_Pool2dOp<"max_pool2d", (ins),
    AnyTypeOf<[Cuvil_FloatTensor, Cuvil_QuantizedTensor]>> {
  let summary = "2-D max pooling, of float or quantized values";
  let description = [{
    NCHW pooling window `kernel_shape`; `padding` is [top, left, bottom,
    right]; `ceil_mode` rounds the output size up, as PyTorch does, without
    starting a window in the right/bottom padding. A quantized input
    (per tensor only) gives the same type: the max of its stored integers,
    padding being the storage minimum.
  }];
  let hasVerifier = 1;
}
def Cuvil_MaxPool2dIndicesOp : Cuvil_Op<"max_pool2d_indices",
    [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "where 2-D max pooling finds each maximum (ONNX's Indices)";
  let description = [{
    The window of `cuvil.max_pool2d` with the same attributes; each output
    is the index of its window's first largest element in the flattened
    input: ((n * C + c) * H + h) * W + w, or ((n * C + c) * W + w) * H + h
    with `column_major` (ONNX's storage_order 1). A window of NaNs gives
    the first one's index.
  }];
  let arguments = (ins Cuvil_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$strides,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$padding,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$dilations,
                       UnitAttr:$ceil_mode, UnitAttr:$column_major);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}
def Cuvil_AvgPool2dOp : Cuvil_Pool2dOp<"avg_pool2d", (ins UnitAttr:$count_include_pad)> {
  let summary = "2-D average pooling";
}

class Cuvil_GlobalPoolOp<string mnemonic> : Cuvil_Op<mnemonic,
    [Pure, Cuvil_InferTypeOpAdaptor]> {
  let arguments = (ins Cuvil_FloatTensor:$input);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}
def Cuvil_GlobalAvgPoolOp : Cuvil_GlobalPoolOp<"global_avg_pool"> {
  let summary = "mean over all spatial dims: NxCxHxW -> NxCx1x1";
}
def Cuvil_GlobalMaxPoolOp : Cuvil_GlobalPoolOp<"global_max_pool"> {
  let summary = "max over all spatial dims: NxCxHxW -> NxCx1x1";
}

def Cuvil_AdaptiveAvgPool2dOp : Cuvil_Op<"adaptive_avg_pool2d",
    [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "PyTorch adaptive average pooling to `output_size` (NCHW)";
  let arguments = (ins Cuvil_FloatTensor:$input, DenseI64ArrayAttr:$output_size);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` `output_size` `=` $output_size attr-dict `:` type($input)
  }];
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Cuvil_ReshapeOp : Cuvil_Op<"reshape", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "reshape to `shape`; one -1 entry is inferred";
  let arguments = (ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input `,` `shape` `=` $shape attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Cuvil_FlattenOp : Cuvil_Op<"flatten", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "collapse to 2-D around `axis` (ONNX Flatten)";
  let arguments = (ins Cuvil_Tensor:$input, DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Cuvil_TransposeOp : Cuvil_Op<"transpose", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "permute dimensions: result dim i is input dim perm[i]";
  let arguments = (ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input `,` `perm` `=` $perm attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Cuvil_ConcatOp : Cuvil_Op<"concat", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "concatenate along `axis`";
  let arguments = (ins Variadic<Cuvil_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    `(` $inputs `)` `axis` `=` $axis attr-dict `:` type($inputs)
  }];
  let hasFolder = 1;
}

def Cuvil_SplitOp : Cuvil_Op<"split", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "split along `axis` into pieces of `sizes`";
  let arguments = (ins Cuvil_Tensor:$input, I64Attr:$axis,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Cuvil_Tensor>:$results);
  let assemblyFormat = [{
    $input `,` `axis` `=` $axis `,` `sizes` `=` $sizes attr-dict `:` type($input)
  }];
}

def Cuvil_SliceOp : Cuvil_Op<"slice", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "strided slice (ONNX Slice semantics, constant bounds)";
  let description = [{
    For each `axes[i]`: start `starts[i]`, end `ends[i]` (exclusive), step
    `steps[i]` (non-zero; negative walks backwards). Negative bounds count
    from the end; out-of-range bounds are clamped, as in ONNX and numpy.
  }];
  let arguments = (ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$axes,
                       DenseI64ArrayAttr:$steps);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Cuvil_PadOp : Cuvil_Op<"pad", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "pad with a constant, by reflection or by edge replication";
  let description = [{
    `pads` holds all begin amounts then all end amounts (ONNX order).
  }];
  let arguments = (ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<StrAttr, "\"constant\"">:$mode,
                       DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input `,` `pads` `=` $pads attr-dict `:` type($input)";
}

def Cuvil_GatherOp : Cuvil_Op<"gather", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "gather slices of `data` along `axis` at `indices`";
  let arguments = (ins Cuvil_Tensor:$data, Cuvil_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` type($data) `,` type($indices)
  }];
}

def Cuvil_SqueezeOp : Cuvil_Op<"squeeze", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "remove size-1 dimensions `axes`";
  let arguments = (ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input `,` `axes` `=` $axes attr-dict `:` type($input)";
}

def Cuvil_UnsqueezeOp : Cuvil_Op<"unsqueeze", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "insert size-1 dimensions at `axes` of the result";
  let arguments = (ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input `,` `axes` `=` $axes attr-dict `:` type($input)";
}

def Cuvil_ExpandOp : Cuvil_Op<"expand", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "broadcast to `shape` (numpy rules, ONNX Expand)";
  let arguments = (ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input `,` `shape` `=` $shape attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Quantization (verifiers in Quantization.cpp)
//===----------------------------------------------------------------------===//

// Quantized values: Cuvil_QuantizedTensor (defined at the top).

def Cuvil_QuantizeOp : Cuvil_Op<"quantize", [Pure]> {
  let summary = "float to a quantized type: saturate(round(x / scale) + zp)";
  let description = [{
    Rounds half to even (ONNX QuantizeLinear) and saturates to the storage
    range of the result's `!quant.uniform` type; a NaN becomes the zero
    point. Per-axis types take each element's scale and zero point from its
    index along the axis. The input's element type is the type's expressed
    type.

    ```mlir
    %q = cuvil.quantize %x : tensor<?x16xf32> to tensor<?x16x!quant.uniform<i8:f32, 0.05:-3>>
    ```
  }];
  let arguments = (ins Cuvil_FloatTensor:$input);
  let results = (outs Cuvil_QuantizedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

def Cuvil_DequantizeOp : Cuvil_Op<"dequantize", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "a quantized type to float: (q - zp) * scale";
  let description = [{
    Computed in the expressed type (ONNX DequantizeLinear), which is the
    result's element type.

    ```mlir
    %x = cuvil.dequantize %q : tensor<16x!quant.uniform<u8:f32, 0.1:128>>
    ```
  }];
  let arguments = (ins Cuvil_QuantizedTensor:$input);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Cuvil_RequantizeOp : Cuvil_Op<"requantize", [Pure]> {
  let summary = "one quantized type to another";
  let description = [{
    Exactly `quantize(dequantize(q))` in the expressed type: what a
    dequantize / quantize pair computes, as one op.

    ```mlir
    %r = cuvil.requantize %q : tensor<8x!quant.uniform<i32:f32, 0.001>> to tensor<8x!quant.uniform<i8:f32, 0.05>>
    ```
  }];
  let arguments = (ins Cuvil_QuantizedTensor:$input);
  let results = (outs Cuvil_QuantizedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

def Cuvil_QuantizedMatmulOp : Cuvil_Op<"quantized_matmul",
    [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "matmul of dequantized operands, accumulated exactly";
  let description = [{
    `matmul(dequantize(lhs), dequantize(rhs))` with the sum computed in
    integers: (lhs - zp) * rhs summed exactly (int32), then scaled by the
    lhs scale times the rhs column's, in the expressed type. The lhs is
    quantized per tensor to 8 bits ([..., M, K], its leading dimensions
    rows too); the rhs is [K, N], int8, symmetric (zero points 0), per
    tensor or per column (axis 1). `cuvil-fold-quantized-products` forms it
    from QDQ graphs; K is at most 65536 (so every sum fits in int32).

    ```mlir
    %y = cuvil.quantized_matmul %a, %w : tensor<?x64x!quant.uniform<u8:f32, 0.02:128>>, tensor<64x10x!quant.uniform<i8:f32:1, {...}>>
    ```
  }];
  let arguments = (ins Cuvil_QuantizedTensor:$lhs, Cuvil_QuantizedTensor:$rhs);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)
  }];
}

def Cuvil_QuantizedConv2dOp : Cuvil_Op<"quantized_conv2d",
    [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "conv2d of dequantized operands, accumulated exactly";
  let description = [{
    `conv2d(dequantize(input), dequantize(weight)) + bias`, with the sums
    computed in integers: (input - zp) * weight summed exactly (int32), then
    scaled by the input scale times the output channel's weight scale, in
    the expressed type, and the bias added. The input is NCHW, quantized per
    tensor to 8 bits; padding reads its zero point (a real zero). The
    weight is OIHW int8, symmetric, per tensor or per output channel (axis
    0). Each output sums C/G * KH * KW products, at most 65536; a
    depthwise one (groups = C, weight [C, 1, KH, KW]) has at most 512 taps,
    so that a float32 sum of its products is exact too.
    `cuvil-fold-quantized-products` forms it from QDQ graphs.

    ```mlir
    %y = cuvil.quantized_conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>} : tensor<1x3x8x8x!quant.uniform<u8:f32, 0.02:128>>, tensor<16x3x3x3x!quant.uniform<i8:f32:0, {...}>>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Cuvil_QuantizedTensor:$input, Cuvil_QuantizedTensor:$weight,
                       Optional<Cuvil_FloatTensor>:$bias,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$strides,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$padding,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)?
  }];
  let extraClassDeclaration = [{
    /// Attributes with their defaults applied.
    ::llvm::SmallVector<int64_t, 2> getStridesOrDefault();
    ::llvm::SmallVector<int64_t, 4> getPaddingOrDefault();
    ::llvm::SmallVector<int64_t, 2> getDilationsOrDefault();
  }];
}

def Cuvil_StorageCastOp : Cuvil_Op<"storage_cast", [Pure]> {
  let summary = "an integer tensor as a quantized one, or back (same bits)";
  let description = [{
    Reinterprets the stored integers: between `tensor<..xi8>` and
    `tensor<..x!quant.uniform<i8:...>>` (or `ui8` and `u8` storage). How
    integer model inputs, outputs and weights meet quantized values.

    ```mlir
    %q = cuvil.storage_cast %w : tensor<16x3xi8> to tensor<16x3x!quant.uniform<i8:f32:0, {...}>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Tree ensembles (verifier in TreeEnsemble.cpp)
//===----------------------------------------------------------------------===//

def Cuvil_TreeEnsembleOp : Cuvil_Op<"tree_ensemble",
    [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "a forest of decision trees summed per target";
  let description = [{
    The decision forests of XGBoost, LightGBM, scikit-learn and ONNX-ML's
    TreeEnsemble* in one form. `input` is [batch, features]; the result is
    [batch, targets] of the leaves' element type, which is also the type the
    sums are accumulated in, tree by tree in order, from `base_values`.

    - `nodes` [N, 3] i32, one row per node: (feature, left, flags). A branch
      compares `input[row, feature]` with `thresholds[node]` in the
      thresholds' element type and goes to `left` when the comparison holds,
      to `left + 1` otherwise; a node's children come after it in the
      table, so every walk ends. A leaf has flags 0 and holds its row of
      `leaves` in the feature column.
    - flags: bits 0-2 the comparison (1 `<`, 2 `<=`, 3 `>`, 4 `>=`, 5 `==`,
      6 `!=`; 0 a leaf); bit 3: a missing value (NaN, or `missing_value`)
      goes left rather than right; bit 4: a value within 1e-35 (as float32)
      of zero is missing at this node too (LightGBM's zero missing type).
      Comparison 7 is a categorical split: the row goes left when its
      value, truncated to an integer c (-1 < value < 2^31, as LightGBM
      truncates; 0 <= value with bit 5 set, as XGBoost checks; anything
      else goes right), is in the node's set: bit c % 32 of word c / 32 of
      the set the threshold points at in `categories`, where a set is its
      word count followed by its words.
    - `trees` [T, 2] i32: each tree's root node and the first target its
      leaf rows add to (a leaf row of V values adds to V targets from it).
    - `leaves` [L, V]: the values (float32 for XGBoost, float64 for
      scikit-learn and LightGBM).
    - `categories` (only with categorical splits) [W] i32: the sets.
    - `aggregate`: "sum" (the result is base + the trees' sum, summed from
      the base value) or "average" (base + the trees' sum, summed from
      zero, divided by the number of trees: random forests).
    - `post_transform`: "none" (margins), "logistic" (1 / (1 + e^-m) of
      each target), "softmax" (over the targets) or "exp" (of each).

    The importers renumber trees into this table (breadth first), so the
    table is also the layout the kernels walk.
  }];
  let arguments = (ins Cuvil_Tensor:$input, TensorOf<[I32]>:$nodes,
                       Cuvil_Tensor:$thresholds, TensorOf<[I32]>:$trees,
                       Cuvil_Tensor:$leaves,
                       Optional<TensorOf<[I32]>>:$categories,
                       DenseF64ArrayAttr:$base_values,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$post_transform,
                       OptionalAttr<F64Attr>:$missing_value,
                       DefaultValuedAttr<StrAttr, "\"sum\"">:$aggregate);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $nodes `,` $thresholds `,` $trees `,` $leaves
    (`categories` `(` $categories^ `:` type($categories) `)`)? attr-dict `:`
    type($input) `,` type($nodes) `,` type($thresholds) `,` type($trees) `,`
    type($leaves)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fusion targets
//===----------------------------------------------------------------------===//

def Cuvil_YieldOp : Cuvil_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["MapReduceOp", "FusedGroupOp", "IfOp", "LoopOp"]>]> {
  let summary = "terminates a cuvil region, yielding its values";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>];
}

def Cuvil_MapReduceOp : Cuvil_Op<"map_reduce", [Pure,
    SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects]> {
  let summary = "a generic fused map-then-reduce over broadcast inputs";
  let description = [{
    The `map` region receives one scalar per input (inputs broadcast to a
    common iteration shape, numpy rules) and yields one scalar. When
    `reduction_dims` is non-empty, the `reduce` region folds mapped scalars
    into an accumulator that starts at `init`: it receives (accumulator,
    value) and yields the new accumulator. With no reduction dims the op is
    a pure elementwise map, and `init` and `reduce` are absent.

    ```mlir
    // sum((a - b)^2) over dim 1
    %r = cuvil.map_reduce ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>)
           reduction_dims = [1] init = 0.0 : f32 -> tensor<4xf32> {
      ^bb0(%x: f32, %y: f32):
        %d = arith.subf %x, %y : f32
        %s = arith.mulf %d, %d : f32
        cuvil.yield %s : f32
    } reduce {
      ^bb0(%acc: f32, %v: f32):
        %n = arith.addf %acc, %v : f32
        cuvil.yield %n : f32
    }
    ```
  }];
  let arguments = (ins Variadic<Cuvil_Tensor>:$inputs,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$reduction_dims,
                       OptionalAttr<TypedAttrInterface>:$init,
                       UnitAttr:$keepdims);
  let results = (outs Cuvil_Tensor:$result);
  let regions = (region SizedRegion<1>:$map, AnyRegion:$reduce);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)`
    (`reduction_dims` `=` $reduction_dims^)? (`init` `=` $init^)?
    (`keepdims` $keepdims^)? attr-dict `->` type($result) $map
    (`reduce` $reduce^)?
  }];
  let hasRegionVerifier = 1;
}

def Cuvil_FusedGroupOp : Cuvil_Op<"fused_group", [IsolatedFromAbove,
    SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects]> {
  let summary = "a subgraph of level1 ops to be generated as one kernel";
  let description = [{
    Fusion wraps the ops it decided to generate together; the block arguments
    stand for the group's operands and `cuvil.yield` gives its results. The
    optional `kind` names the fusion pattern (e.g. "conv_epilogue").
  }];
  // Quantized inputs: an int8 product and its float32 epilogue; a
  // quantized result: an int8 convolution requantizing its output.
  let arguments = (ins
      Variadic<AnyTypeOf<[Cuvil_Tensor, Cuvil_QuantizedTensor]>>:$inputs,
      OptionalAttr<StrAttr>:$kind);
  let results = (outs
      Variadic<AnyTypeOf<[Cuvil_Tensor, Cuvil_QuantizedTensor]>>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`kind` `=` $kind^)? `(` $inputs `)` attr-dict-with-keyword `:`
    functional-type($inputs, $results) $body
  }];
  let hasRegionVerifier = 1;
}

include "cuvil/ir/IndexingOps.td"
include "cuvil/ir/RecurrentOps.td"
include "cuvil/ir/ControlFlowOps.td"

#endif // CUVIL_IR_CUVILOPS_TD
