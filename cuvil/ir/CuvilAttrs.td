//===- CuvilAttrs.td - level1 attributes -------------------*- tablegen -*-===//
//
// The device description a module is compiled for. Target-neutral passes
// (cost models) and a target's own passes read it from the IR, so lit tests
// and the driver describe hardware the same way. And the fixed-point types
// a target without floating point computes a layer in.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IR_CUVILATTRS_TD
#define CUVIL_IR_CUVILATTRS_TD

include "cuvil/ir/CuvilBase.td"
include "mlir/IR/AttrTypeBase.td"

// A double in the assembly (`1.1`, `1.2e+10`), with a default: bandwidths,
// seconds, ratios.
// (An APFloat, which attribute storage can hash; read with getDouble.)
class Cuvil_DefaultF64<string value>
    : AttrParameter<"::llvm::APFloat", "a 64-bit float"> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::APFloat> {
    double value;
    if ($_parser.parseFloat(value))
      return ::mlir::failure();
    return ::llvm::APFloat(value);
  }() }];
  let printer = [{ $_printer << ::cuvil::l1::formatDouble($_self) }];
  let comparator = "$_lhs.bitwiseIsEqual($_rhs)";
  let defaultValue = "::llvm::APFloat(" # value # ")";
}

def Cuvil_TargetAttr : AttrDef<Cuvil_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "the device a module is compiled for";
  let description = [{
    Attached to the module as `cuvil.target` by the driver (each target
    resolves its own from the user's options) or written by hand in tests.
    `backend` names the registered target that compiles the module; `triple`
    and `cpu` what it builds for; `features` the ISA extensions the code may
    use. The numbers feed cost models instead of constants in code: vector
    width, caches and cores, sustained bandwidths of one core from memory
    and from its L2, the fixed cost of one kernel call, and the speed-up
    bandwidth-aware batching must predict before it merges kernels.
    `int8_weight_max` bounds the magnitude of int8 weights the quantizer
    writes: 127, or less where the target's int8 dot products would
    saturate on full-range weights (x86 without VNNI: vpmaddubsw sums two
    uint8 x int8 products in int16, exact for |w| <= 64).
    `config` holds what only one backend reads (an FPGA's resource budget),
    which that backend checks.

    ```mlir
    module attributes {cuvil.target = #cuvil.target<backend = "x86",
        triple = "x86_64-linux-gnu", cpu = "x86-64-v3",
        features = ["avx2", "fma"], vector_bits = 256, l2_bytes = 1048576>}
    ```
  }];
  let parameters = (ins
      StringRefParameter<"the registered backend">:$backend,
      StringRefParameter<"the triple built for", "\"\"">:$triple,
      StringRefParameter<"the CPU or device", "\"\"">:$cpu,
      OptionalParameter<"::mlir::ArrayAttr", "ISA features">:$features,
      DefaultValuedParameter<"int64_t", "256">:$vector_bits,
      DefaultValuedParameter<"int64_t", "32768">:$l1_bytes,
      DefaultValuedParameter<"int64_t", "1048576">:$l2_bytes,
      DefaultValuedParameter<"int64_t", "33554432">:$l3_bytes,
      DefaultValuedParameter<"int64_t", "1">:$cores,
      Cuvil_DefaultF64<"12e9">:$memory_bytes_per_second,
      Cuvil_DefaultF64<"60e9">:$l2_bytes_per_second,
      Cuvil_DefaultF64<"1e-6">:$kernel_overhead_seconds,
      Cuvil_DefaultF64<"1.1">:$batching_threshold,
      DefaultValuedParameter<"int64_t", "127">:$int8_weight_max,
      OptionalParameter<"::mlir::DictionaryAttr", "backend-specific">:$config);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether `feature` is among the features.
    bool hasFeature(::llvm::StringRef feature) const;
    /// The features as strings.
    ::llvm::SmallVector<::llvm::StringRef> getFeatureNames() const;
    /// Bytes per second at which a working set of `bytes` streams: from L2
    /// if it fits, else from memory.
    double bandwidthFor(int64_t bytes) const {
      return (bytes <= getL2Bytes() ? getL2BytesPerSecond()
                                    : getMemoryBytesPerSecond())
          .convertToDouble();
    }
    /// The discardable module attribute that holds it.
    static constexpr ::llvm::StringLiteral kAttrName = "cuvil.target";
    /// The module's target, or null.
    static TargetAttr lookup(::mlir::Operation *module);
    /// The target of the module holding `op` (or being it), or the
    /// defaults (backend "generic"): lit tests of target-neutral passes need
    /// not describe hardware.
    static TargetAttr lookupOrDefault(::mlir::Operation *op);
    /// `backend` with every other parameter at its default.
    static TargetAttr getDefault(::mlir::MLIRContext *context,
                                 ::llvm::StringRef backend);
  }];
}

def Cuvil_FixedAttr : AttrDef<Cuvil_Dialect, "Fixed"> {
  let mnemonic = "fixed";
  let summary = "a fixed-point type <W, I> with its rounding and overflow";
  let description = [{
    The quantization design's scheme for hardware without floating point:
    `type` is a power-of-two-scaled `!quant.uniform` (storage `iW` or `uiW`,
    scale 2^-F, zero point 0: Xilinx `ap_fixed<W, W - F>`), and the modes
    say how a value is fitted into it on assignment, as `ap_fixed` /
    `ac_fixed` define them: `rounding` one of TRN, TRN_ZERO, RND, RND_ZERO,
    RND_MIN_INF, RND_INF, RND_CONV; `overflow` one of WRAP, SAT, SAT_ZERO,
    SAT_SYM. The FPGA target's `cuvil-fpga-assign-fixed-point` sets them on
    a layer's op as `cuvil.fixed = {result = ..., weight = ..., bias = ...}`
    and on the model's input.

    ```mlir
    #cuvil.fixed<!quant.uniform<i16:f32, 9.765625E-4>, "TRN", "WRAP">
    ```
  }];
  let parameters = (ins
      "::mlir::quant::UniformQuantizedType":$type,
      StringRefParameter<"the rounding mode">:$rounding,
      StringRefParameter<"the overflow mode">:$overflow);
  let assemblyFormat = "`<` $type `,` $rounding `,` $overflow `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// W, the stored bits.
    int getWidth() const { return getType().getStorageTypeIntegralWidth(); }
    /// F: the scale is 2^-F.
    int getFraction() const;
    bool isSigned() const { return getType().isSigned(); }
  }];
}

#endif // CUVIL_IR_CUVILATTRS_TD
