//===- CuvilL2Base.td - level2 dialect, attributes, types --*- tablegen -*-===//
//
// level2: the last target-independent level. Buffers are memrefs whose
// layout may be a blocked Cuvil layout (NCHW16c) and whose memory space may
// be an on-chip memory (NRAM, BRAM, ...); elements may be fixed point.
// Kernels are regions or calls to named micro-kernels, annotated with tiles,
// loop hints and task splits. All buffers of a function are views into one
// statically planned arena.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IR_CUVILL2BASE_TD
#define CUVIL_IR_CUVILL2BASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/BuiltinTypeInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def CuvilL2_Dialect : Dialect {
  let name = "cuvil_l2";
  let cppNamespace = "::cuvil::l2";
  let summary = "Cuvil level2: buffers, layouts, tiles and kernels";
  let description = [{
    What targets read: x86 takes blocked layouts from `#cuvil_l2.layout`
    and micro-kernel calls; reserved for the FPGA target (issues 21, 22) are
    fixed-point types, on-chip buffers (`#cuvil_l2.space<bram>`),
    `#cuvil_l2.loop_hints` (pipeline II, unroll) and `#cuvil_l2.tile`; for
    the MLU target (issue 23) NRAM/WRAM/SRAM spaces, transfers and
    `#cuvil_l2.task_split`. No pass writes the reserved ones yet; x86 reads
    none of them and refuses the memory spaces and fixed point.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  // A call's params are verified against its level1 op (UKernelCallOp).
  let dependentDialects = ["::cuvil::l1::CuvilDialect"];
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Discardable attribute names this dialect verifies.
    static constexpr ::llvm::StringLiteral kArenaAttrName = "cuvil_l2.arena";
    static constexpr ::llvm::StringLiteral kTileAttrName = "cuvil_l2.tile";
    static constexpr ::llvm::StringLiteral kHintsAttrName = "cuvil_l2.hints";
  }];
}

//===----------------------------------------------------------------------===//
// Memory spaces
//===----------------------------------------------------------------------===//

def CuvilL2_MemorySpace : I32EnumAttr<"MemorySpace", "where a buffer lives", [
    I32EnumAttrCase<"host", 0>,   // main memory (DDR) of a CPU or accelerator
    I32EnumAttrCase<"nram", 1>,   // MLU per-core neuron RAM
    I32EnumAttrCase<"wram", 2>,   // MLU per-core weight RAM
    I32EnumAttrCase<"sram", 3>,   // MLU cluster-shared SRAM
    I32EnumAttrCase<"bram", 4>,   // FPGA block RAM
    I32EnumAttrCase<"uram", 5>,   // FPGA UltraRAM
    I32EnumAttrCase<"lutram", 6>  // FPGA distributed (LUT) RAM
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::cuvil::l2";
}

def CuvilL2_MemorySpaceAttr : EnumAttr<CuvilL2_Dialect, CuvilL2_MemorySpace,
                                       "space"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

def CuvilL2_LayoutAttr : AttrDef<CuvilL2_Dialect, "Layout",
    [DeclareAttrInterfaceMethods<MemRefLayoutAttrInterface, ["verifyLayout"]>]> {
  let mnemonic = "layout";
  let summary = "a plain or blocked data layout, e.g. NCHW -> NCHW16c";
  let description = [{
    `logical` names the buffer's dimensions in index order, one capital
    letter each ("NCHW"). `physical` is the storage order: capital letters for
    whole (or outer, when blocked) dimensions, and `<block><letter>` in lower
    case for an inner block of a dimension ("NCHW16c": channels split into
    C/16 outer blocks with 16 innermost). Blocked dimensions are padded up to
    a multiple of the block. As a memref layout the attribute maps logical
    indices to the physical index space:

    ```mlir
    memref<1x64x56x56xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
    // (n, c, h, w) -> (n, c floordiv 16, h, w, c mod 16)
    ```
  }];
  let parameters = (ins StringRefParameter<"logical dimension names">:$logical,
                        StringRefParameter<"physical order and blocks">:$physical);
  let assemblyFormat = "`<` $logical `to` $physical `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// One physical dimension: logical dimension `dim`, blocked by `block`
    /// when it is an inner block (0 for a whole or outer dimension).
    struct PhysicalDim {
      unsigned dim;
      int64_t block;
    };
    /// The physical dimensions, outermost first.
    ::llvm::SmallVector<PhysicalDim> getPhysicalDims() const;
    /// The block size of logical dimension `dim` (1 if not blocked).
    int64_t getBlockSize(unsigned dim) const;
    /// The physical shape of a buffer with `logicalShape` (dynamic stays
    /// dynamic; blocked dimensions padded to a multiple of the block).
    ::llvm::SmallVector<int64_t>
    getPhysicalShape(::llvm::ArrayRef<int64_t> logicalShape) const;
    /// True if physical order is the logical order without blocks.
    bool isPlain() const;
  }];
}

//===----------------------------------------------------------------------===//
// Tiling and scheduling annotations
//===----------------------------------------------------------------------===//

// `[1, 16, 4]`: a bracketed list, so it can sit inside struct(params).
def CuvilL2_I64ListParameter : ArrayRefParameter<"int64_t", "list of integers"> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::SmallVector<int64_t>> {
    ::llvm::SmallVector<int64_t> values;
    if ($_parser.parseCommaSeparatedList(
            ::mlir::AsmParser::Delimiter::Square,
            [&] { return $_parser.parseInteger(values.emplace_back()); }))
      return ::mlir::failure();
    return values;
  }() }];
  let printer = [{
    $_printer << '[';
    ::llvm::interleaveComma($_self, $_printer);
    $_printer << ']';
  }];
}

def CuvilL2_TileAttr : AttrDef<CuvilL2_Dialect, "Tile"> {
  let mnemonic = "tile";
  let summary = "tile sizes of a kernel's iteration space";
  let description = [{
    `sizes` has one entry per loop of the kernel (0: not tiled);
    `vector_width` is the number of elements per SIMD register the
    innermost tile is vectorized by (0: scalar). Derived from the target
    description (vector width, cache sizes), not from constants in code.
    Reserved for the FPGA and MLU targets (issues 21-23): no pass writes it
    yet, and x86 tiles inside its micro-kernels.
  }];
  let parameters = (ins CuvilL2_I64ListParameter:$sizes,
                        DefaultValuedParameter<"int64_t", "0">:$vector_width);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def CuvilL2_LoopHintsAttr : AttrDef<CuvilL2_Dialect, "LoopHints"> {
  let mnemonic = "loop_hints";
  let summary = "pipelining, unrolling and parallelism hints of a loop";
  let description = [{
    `pipeline_ii`: the initiation interval an HLS tool should pipeline the
    loop at (0: not pipelined). `unroll`: unroll factor (0: leave to the
    target, 1: do not unroll). `parallel`: iterations are independent.
    Reserved for the FPGA target's HLS pragmas (issue 21).
  }];
  let parameters = (ins DefaultValuedParameter<"int64_t", "0">:$pipeline_ii,
                        DefaultValuedParameter<"int64_t", "0">:$unroll,
                        DefaultValuedParameter<"bool", "false">:$parallel);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def CuvilL2_TaskSplitAttr : AttrDef<CuvilL2_Dialect, "TaskSplit"> {
  let mnemonic = "task_split";
  let summary = "how a kernel is split across cores or tasks";
  let description = [{
    The kernel's loop `axis` is divided into `parts` contiguous chunks, one
    per task. Reserved for the MLU target's task split (issue 23); x86
    splits work in its thread pool at run time.
  }];
  let parameters = (ins "int64_t":$axis, "int64_t":$parts);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// The micro-kernel call contract
//===----------------------------------------------------------------------===//

def CuvilL2_Algorithm : I32EnumAttr<"Algorithm",
    "how a micro-kernel computes (a target's choice)", [
    I32EnumAttrCase<"im2col", 0>,         // patches then a matrix product
    I32EnumAttrCase<"winograd_f4x3", 1>,  // Winograd F(4x4, 3x3)
    I32EnumAttrCase<"direct_blocked", 2>  // direct, on channel blocks
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::cuvil::l2";
}

def CuvilL2_AlgorithmAttr : EnumAttr<CuvilL2_Dialect, CuvilL2_Algorithm,
                                     "algorithm"> {
  let assemblyFormat = "`<` $value `>`";
}

def CuvilL2_EpilogueStep : I32EnumAttr<"EpilogueStep",
    "an elementwise step a kernel applies to its results", [
    I32EnumAttrCase<"col_bias", 0>,  // + one value per column (the next input)
    I32EnumAttrCase<"add", 1>,       // + a residual of the output's shape (the next input; a quantized one dequantized)
    I32EnumAttrCase<"relu", 2>,
    I32EnumAttrCase<"clip", 3>,      // to [clip_min, clip_max]
    I32EnumAttrCase<"quantize", 4>,  // to the output's quantized type
    I32EnumAttrCase<"hardswish", 5>,
    I32EnumAttrCase<"hardsigmoid", 6>, // clip(alpha * x + beta, 0, 1)
    I32EnumAttrCase<"sigmoid", 7>,
    I32EnumAttrCase<"silu", 8>
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::cuvil::l2";
}

// `[add, relu]`: a bracketed list, so it can sit inside struct(params).
def CuvilL2_EpilogueStepsParameter
    : ArrayRefParameter<"::cuvil::l2::EpilogueStep", "epilogue steps"> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::SmallVector<::cuvil::l2::EpilogueStep>> {
    ::llvm::SmallVector<::cuvil::l2::EpilogueStep> steps;
    if ($_parser.parseCommaSeparatedList(
            ::mlir::AsmParser::Delimiter::Square, [&]() -> ::mlir::ParseResult {
              ::mlir::FailureOr<::cuvil::l2::EpilogueStep> step =
                  ::mlir::FieldParser<::cuvil::l2::EpilogueStep>::parse($_parser);
              if (::mlir::failed(step))
                return ::mlir::failure();
              steps.push_back(*step);
              return ::mlir::success();
            }))
      return ::mlir::failure();
    return steps;
  }() }];
  let printer = [{
    $_printer << '[';
    ::llvm::interleaveComma($_self, $_printer, [&](::cuvil::l2::EpilogueStep step) {
      $_printer << ::cuvil::l2::stringifyEpilogueStep(step);
    });
    $_printer << ']';
  }];
}

def CuvilL2_EpilogueAttr : AttrDef<CuvilL2_Dialect, "Epilogue"> {
  let mnemonic = "epilogue";
  let summary = "the steps a kernel applies to each block of its output";
  let description = [{
    In order: an optional per-column bias (`col_bias`), an optional residual
    `add` (a residual of a quantized type is added dequantized: an int8
    convolution's 8-bit shortcut), then at most one activation (`relu`, `clip` to its bounds,
    `hardswish`, `hardsigmoid` with its `alpha` and `beta`, `sigmoid`,
    `silu`), then an optional `quantize` into the output buffer's quantized element
    type (8 bits per tensor: `cuvil.quantize`'s arithmetic on the values
    the steps before computed). `col_bias` and `add` each read one more
    input of the call, after the kernel's own, in that order. A kernel
    applies them to each block of output while it is in cache, instead of a
    pass over memory each.

    ```mlir
    epilogue #cuvil_l2.epilogue<steps = [add, clip], clip_min = 0.0 : f64,
                                clip_max = 6.0 : f64>
    ```
  }];
  let parameters = (ins CuvilL2_EpilogueStepsParameter:$steps,
                        OptionalParameter<"::mlir::FloatAttr">:$clip_min,
                        OptionalParameter<"::mlir::FloatAttr">:$clip_max,
                        OptionalParameter<"::mlir::FloatAttr">:$alpha,
                        OptionalParameter<"::mlir::FloatAttr">:$beta);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool has(EpilogueStep step) const {
      return ::llvm::is_contained(getSteps(), step);
    }
    /// Inputs the steps read (col_bias, add), after the kernel's own.
    unsigned getNumExtraInputs() const {
      return has(EpilogueStep::col_bias) + has(EpilogueStep::add);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def CuvilL2_FixedPointType : TypeDef<CuvilL2_Dialect, "FixedPoint",
    [MemRefElementTypeInterface]> {
  let mnemonic = "fixed";
  let summary = "a fixed-point number: `width` bits, `fraction_bits` of them fractional";
  let description = [{
    `!cuvil_l2.fixed<16, 8>` is a signed Q7.8 number (ap_fixed<16, 8> in
    HLS terms has 8 integer bits; here the second parameter counts the
    fractional bits). `!cuvil_l2.fixed<8, 4, unsigned>` is unsigned.
    Reserved for quantization (issue 20) and the FPGA target (issue 21);
    x86 refuses it.
  }];
  let parameters = (ins "unsigned":$width, "unsigned":$fraction_bits,
                        "bool":$is_signed);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bits of the integer type that stores it: 8, 16, 32 or 64.
    unsigned getStorageBits() const;
  }];
}

#endif // CUVIL_IR_CUVILL2BASE_TD
