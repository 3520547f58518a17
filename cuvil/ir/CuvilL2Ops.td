//===- CuvilL2Ops.td - level2 ops --------------------------*- tablegen -*-===//

#ifndef CUVIL_IR_CUVILL2OPS_TD
#define CUVIL_IR_CUVILL2OPS_TD

include "cuvil/ir/CuvilL2Base.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class CuvilL2_Op<string mnemonic, list<Trait> traits = []>
    : Op<CuvilL2_Dialect, mnemonic, traits>;

def CuvilL2_ViewOp : CuvilL2_Op<"view", [Pure]> {
  let summary = "a buffer at a fixed byte offset of the workspace arena";
  let description = [{
    Memory planning turns every intermediate into a view of one arena (a
    1-D `i8` memref the caller provides): buffers whose lifetimes do not
    overlap share bytes. The offset is static and 64-byte aligned. Dynamic
    dimensions (a dynamic batch) take their runtime size as an operand and a
    compile-time bound, which the arena was planned for.

    ```mlir
    %b = cuvil_l2.view %arena[4096] (%n) bounds [16]
           : memref<1048576xi8> to memref<?x64x8x8xf32>
    ```
  }];
  let arguments = (ins MemRefRankOf<[I8], [1]>:$arena, I64Attr:$offset,
                       Variadic<Index>:$sizes,
                       OptionalAttr<DenseI64ArrayAttr>:$bounds);
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = [{
    $arena `[` $offset `]` (`(` $sizes^ `)` `bounds` $bounds)? attr-dict `:`
    type($arena) `to` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Alignment of every view, in bytes (a cache line; AVX-512 loads).
    static constexpr int64_t kAlignment = 64;
  }];
}

def CuvilL2_CopyOp : CuvilL2_Op<"copy",
    [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "copy between buffers of different layouts or memory spaces";
  let description = [{
    A layout reorder (NCHW to NCHW16c) when the layouts differ, a transfer
    (DMA) when the memory spaces differ, or both. Source and destination
    have the same logical shape and element type.
  }];
  let arguments = (ins AnyMemRef:$source, AnyMemRef:$target);
  let assemblyFormat = [{
    $source `,` $target attr-dict `:` type($source) `,` type($target)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isReorder();
    bool isTransfer();
  }];
}

def CuvilL2_UKernelCallOp : CuvilL2_Op<"ukernel_call",
    [AttrSizedOperandSegments,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "a call to a named micro-kernel";
  let description = [{
    Micro-kernels (GEMM, convolution, ...) are named and chosen per target.
    They read `ins` (buffers) and write `outs` (buffers), hold no state and
    allocate nothing. The contract, typed and verified:

    - `params`: the kernel's parameters. A call the neutral lowering made is
      named after its level1 op (`conv2d` for `cuvil.conv2d`), and its
      params are that op's attributes (strides, padding, ...,
      `operandSegmentSizes` for optional operands): they must verify as
      that op's, so level1's definition is the schema.
    - `algorithm`: how a target chose to compute it (`#cuvil_l2.algorithm`);
      its scratch, when it needs one, is the last output.
    - `epilogue`: elementwise steps applied to the results
      (`#cuvil_l2.epilogue`); the inputs they read come last.
    - `packed_b`: a matrix product's B is packed at compile time in the
      layout its kernel reads.

    ```mlir
    cuvil_l2.ukernel_call "conv2d" ins(%x, %w, %r : ...) outs(%y, %s : ...)
        params {groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>}
        algorithm #cuvil_l2.algorithm<winograd_f4x3>
        epilogue #cuvil_l2.epilogue<steps = [add, relu]>
    ```
  }];
  let arguments = (ins StrAttr:$kernel, Variadic<AnyType>:$inputs,
                       Variadic<AnyMemRef>:$outputs,
                       OptionalAttr<DictionaryAttr>:$params,
                       OptionalAttr<CuvilL2_AlgorithmAttr>:$algorithm,
                       OptionalAttr<CuvilL2_EpilogueAttr>:$epilogue,
                       UnitAttr:$packed_b);
  let assemblyFormat = [{
    $kernel (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    `outs` `(` $outputs `:` type($outputs) `)`
    (`params` $params^)? (`algorithm` $algorithm^)?
    (`epilogue` $epilogue^)? (`packed_b` $packed_b^)? attr-dict
  }];
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$kernel, "::mlir::ValueRange":$inputs,
                   "::mlir::ValueRange":$outputs), [{
      build($_builder, $_state, $_builder.getStringAttr(kernel), inputs,
            outputs, nullptr, nullptr, nullptr, nullptr);
    }]>
  ];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The parameter `name`, or null.
    ::mlir::Attribute getParam(::llvm::StringRef name) {
      return getParamsAttr() ? getParamsAttr().get(name) : ::mlir::Attribute();
    }
    /// Parameter `name` as an integer, integers or a float (a missing or
    /// empty one: `fallback`).
    int64_t getIntParam(::llvm::StringRef name, int64_t fallback);
    ::llvm::SmallVector<int64_t>
    getIntsParam(::llvm::StringRef name,
                 ::llvm::ArrayRef<int64_t> fallback = {});
    double getFloatParam(::llvm::StringRef name, double fallback);
    /// A copy of this call, with its params, algorithm, epilogue and
    /// packed_b, at the builder's point on other buffers; this call is left
    /// for the caller to erase.
    UKernelCallOp cloneWith(::mlir::OpBuilder &builder,
                            ::mlir::ValueRange inputs,
                            ::mlir::ValueRange outputs);
    /// The inputs the kernel itself reads (before the epilogue's).
    ::mlir::OperandRange getKernelInputs();
  }];
}

def CuvilL2_EndOp : CuvilL2_Op<"end", [Pure, Terminator,
    ParentOneOf<["KernelOp", "IfOp", "LoopOp"]>]> {
  let summary = "ends a kernel body or a control-flow region";
  let assemblyFormat = "attr-dict";
}

def CuvilL2_KernelOp : CuvilL2_Op<"kernel", [IsolatedFromAbove,
    AttrSizedOperandSegments, SingleBlockImplicitTerminator<"EndOp">]> {
  let summary = "a kernel region over buffers, with its schedule";
  let description = [{
    The body receives the `ins` then the `outs` as block arguments and
    computes with loops (scf) over them. `tile`, `hints` and `split` carry
    the schedule chosen for the target.

    ```mlir
    cuvil_l2.kernel "relu" ins(%x : memref<64xf32>) outs(%y : memref<64xf32>)
        tile = #cuvil_l2.tile<sizes = [16], vector_width = 16> {
    ^bb0(%in: memref<64xf32>, %out: memref<64xf32>):
      ...
    }
    ```
  }];
  let arguments = (ins StrAttr:$name, Variadic<AnyType>:$inputs,
                       Variadic<AnyMemRef>:$outputs,
                       OptionalAttr<CuvilL2_TileAttr>:$tile,
                       OptionalAttr<CuvilL2_LoopHintsAttr>:$hints,
                       OptionalAttr<CuvilL2_TaskSplitAttr>:$split);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $name (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    `outs` `(` $outputs `:` type($outputs) `)`
    (`tile` `=` $tile^)? (`hints` `=` $hints^)? (`split` `=` $split^)?
    attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Control flow over buffers (level1's cuvil.if and cuvil.loop, lowered)
//===----------------------------------------------------------------------===//

def CuvilL2_IfOp : CuvilL2_Op<"if", [RecursiveMemoryEffects,
    NoRegionArguments, SingleBlockImplicitTerminator<"EndOp">]> {
  let summary = "runs `then` if the one i1 of `condition` is set, else `else`";
  let description = [{
    The branches write the if's results into buffers allocated before it
    (level1's yields become copies).

    ```mlir
    cuvil_l2.if %c : memref<i1> {
      cuvil_l2.copy %a, %r : memref<4xf32>, memref<4xf32>
    } else {
      cuvil_l2.copy %b, %r : memref<4xf32>, memref<4xf32>
    }
    ```
  }];
  let arguments = (ins MemRefOf<[I1]>:$condition);
  let regions = (region SizedRegion<1>:$then_region,
                        SizedRegion<1>:$else_region);
  let assemblyFormat = [{
    $condition `:` type($condition) $then_region `else` $else_region
    attr-dict
  }];
  let hasVerifier = 1;
}

def CuvilL2_LoopOp : CuvilL2_Op<"loop", [RecursiveMemoryEffects,
    NoRegionArguments, AttrSizedOperandSegments,
    SingleBlockImplicitTerminator<"EndOp">]> {
  let summary = "runs its body while a trip count and a condition allow";
  let description = [{
    `for (i = 0; (no max_trip_count || i < *max_trip_count) && *condition;
    ++i) { *iteration = i; body }`: the body computes on buffers and writes
    the next condition and the carried values into the buffers they live in
    (level1's yields become copies), and each scan output's row with
    `cuvil_l2.insert_row`. Buffers used by the body stay live for the whole
    loop (cuvil-plan-memory).

    ```mlir
    cuvil_l2.loop max(%m : memref<i64>) while %c : memref<i1>
        iteration(%i : memref<i64>) {
      ...
    }
    ```
  }];
  let arguments = (ins Optional<MemRefOf<[I64]>>:$max_trip_count,
                       MemRefOf<[I1]>:$condition,
                       Optional<MemRefOf<[I64]>>:$iteration);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`max` `(` $max_trip_count^ `:` type($max_trip_count) `)`)?
    `while` $condition `:` type($condition)
    (`iteration` `(` $iteration^ `:` type($iteration) `)`)? $body attr-dict
  }];
  let hasVerifier = 1;
}

def CuvilL2_InsertRowOp : CuvilL2_Op<"insert_row",
    [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "copies a buffer into row `*index` of another";
  let description = [{
    `target` has one more dimension than `source`, in front; row
    `*index` (an i64 buffer) of it receives `source`. An index outside the
    target's rows writes nothing: a loop's scan output never overflows.
  }];
  let arguments = (ins AnyMemRef:$source, AnyMemRef:$target,
                       MemRefOf<[I64]>:$index);
  let assemblyFormat = [{
    $source `,` $target `[` $index `]` attr-dict `:` type($source) `,`
    type($target) `,` type($index)
  }];
  let hasVerifier = 1;
}

#endif // CUVIL_IR_CUVILL2OPS_TD
