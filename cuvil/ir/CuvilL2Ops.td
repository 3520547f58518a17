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
    Micro-kernels (GEMM, convolution, ...) are named and chosen per target
    (`sgemm_f32_avx512_16x8`). They read `ins` (buffers and scalars) and
    write `outs` (buffers), hold no state and allocate nothing.
  }];
  let arguments = (ins StrAttr:$kernel, Variadic<AnyType>:$inputs,
                       Variadic<AnyMemRef>:$outputs);
  let assemblyFormat = [{
    $kernel (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    `outs` `(` $outputs `:` type($outputs) `)` attr-dict
  }];
  let hasVerifier = 1;
}

def CuvilL2_EndOp : CuvilL2_Op<"end", [Pure, Terminator,
    HasParent<"KernelOp">]> {
  let summary = "ends a kernel body";
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

#endif // CUVIL_IR_CUVILL2OPS_TD
