//===- ElementwiseOps.td - level1 elementwise ops ----------*- tablegen -*-===//
//
// Arithmetic, comparisons, logic, select, math functions and activations:
// each output element is a function of the elements at the same (broadcast)
// index. Their inference is in ElementwiseOps.cpp; cuvil-fuse-elementwise
// computes chains of them as one map (its `scalarize` holds the formulas).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IR_ELEMENTWISEOPS_TD
#define CUVIL_IR_ELEMENTWISEOPS_TD

include "cuvil/ir/CuvilBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Every op of this file: an output element depends only on the input
// elements at its (numpy broadcast) index (cuvil::l1::BroadcastElementwise).
def Cuvil_BroadcastElementwise : NativeOpTrait<"BroadcastElementwise"> {
  let cppNamespace = "::cuvil::l1";
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops (numpy broadcasting)
//===----------------------------------------------------------------------===//

class Cuvil_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Cuvil_Op<mnemonic, !listconcat(traits, [Pure, Cuvil_InferTypeOpAdaptor,
                                              Cuvil_BroadcastElementwise])> {
  let arguments = (ins Cuvil_Tensor:$lhs, Cuvil_Tensor:$rhs);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)
  }];
  let description = [{
    Elementwise with numpy broadcasting: shapes are aligned at the trailing
    dimension and a dimension of size 1 stretches. Operands must have the same
    element type.
  }];
}

def Cuvil_AddOp : Cuvil_BinaryOp<"add", [Commutative]> {
  let summary = "elementwise addition";
  let hasFolder = 1;
}
def Cuvil_SubOp : Cuvil_BinaryOp<"sub"> {
  let summary = "elementwise subtraction";
}
def Cuvil_MulOp : Cuvil_BinaryOp<"mul", [Commutative]> {
  let summary = "elementwise multiplication";
  let hasFolder = 1;
}
def Cuvil_DivOp : Cuvil_BinaryOp<"div"> {
  let summary = "elementwise division (truncating for integers)";
}
def Cuvil_PowOp : Cuvil_BinaryOp<"pow"> {
  let summary = "elementwise power";
  // pow(x, 2) -> x * x (decomposed norms square a difference).
  let hasCanonicalizeMethod = 1;
}
def Cuvil_MaxOp : Cuvil_BinaryOp<"max", [Commutative]> {
  let summary = "elementwise maximum";
}
def Cuvil_MinOp : Cuvil_BinaryOp<"min", [Commutative]> {
  let summary = "elementwise minimum";
}

class Cuvil_CompareOp<string mnemonic, list<Trait> traits = []>
    : Cuvil_BinaryOp<mnemonic, traits> {
  let results = (outs RankedTensorOf<[I1]>:$result);
  let description = [{
    Elementwise comparison with numpy broadcasting; the result is `i1`.
  }];
}

def Cuvil_EqualOp : Cuvil_CompareOp<"equal", [Commutative]> {
  let summary = "elementwise ==";
}
def Cuvil_LessOp : Cuvil_CompareOp<"less"> {
  let summary = "elementwise <";
}
def Cuvil_LessEqualOp : Cuvil_CompareOp<"less_equal"> {
  let summary = "elementwise <=";
}
def Cuvil_GreaterOp : Cuvil_CompareOp<"greater"> {
  let summary = "elementwise >";
}
def Cuvil_GreaterEqualOp : Cuvil_CompareOp<"greater_equal"> {
  let summary = "elementwise >=";
}

def Cuvil_WhereOp : Cuvil_Op<"where", [Pure, Cuvil_InferTypeOpAdaptor,
                                       Cuvil_BroadcastElementwise]> {
  let summary = "elementwise select with three-way broadcasting";
  let arguments = (ins RankedTensorOf<[I1]>:$condition, Cuvil_Tensor:$true_value,
                       Cuvil_Tensor:$false_value);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:`
    type($condition) `,` type($true_value) `,` type($false_value)
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

class Cuvil_UnaryOp<string mnemonic, list<Trait> traits = [],
                    dag extraArgs = (ins), string extraFormat = "">
    : Cuvil_Op<mnemonic, !listconcat(traits, [Pure, Cuvil_InferTypeOpAdaptor,
                                              Cuvil_BroadcastElementwise])> {
  let arguments = !con((ins Cuvil_Tensor:$input), extraArgs);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input " # extraFormat # " attr-dict `:` type($input)";
  // Ops whose math is only defined on floats set this (checked in inference).
  bit floatOnly = 1;
  let extraClassDeclaration = [{
    static constexpr bool kFloatOnly = }] # !if(floatOnly, "true", "false") # [{;
  }];
}

def Cuvil_ReluOp : Cuvil_UnaryOp<"relu"> {
  let summary = "max(x, 0)";
  let floatOnly = 0;
}
def Cuvil_ClipOp : Cuvil_UnaryOp<"clip", [],
    (ins OptionalAttr<F64Attr>:$min, OptionalAttr<F64Attr>:$max),
    "(`min` `=` $min^)? (`max` `=` $max^)?"> {
  let summary = "clamp to [min, max] (relu6 is clip min = 0, max = 6)";
  let floatOnly = 0;
  let hasVerifier = 1;
}
def Cuvil_SigmoidOp : Cuvil_UnaryOp<"sigmoid"> { let summary = "1 / (1 + exp(-x))"; }
def Cuvil_TanhOp : Cuvil_UnaryOp<"tanh"> { let summary = "hyperbolic tangent"; }
def Cuvil_GeluOp : Cuvil_UnaryOp<"gelu", [],
    (ins DefaultValuedAttr<StrAttr, "\"none\"">:$approximate),
    "(`approximate` `=` $approximate^)?"> {
  let summary = "GELU, exact (erf) or tanh-approximated";
  let hasVerifier = 1;
}
def Cuvil_SiluOp : Cuvil_UnaryOp<"silu"> { let summary = "x * sigmoid(x)"; }
def Cuvil_HardSwishOp : Cuvil_UnaryOp<"hardswish"> {
  let summary = "x * relu6(x + 3) / 6";
}
def Cuvil_HardSigmoidOp : Cuvil_UnaryOp<"hardsigmoid", [],
    (ins DefaultValuedAttr<F64Attr, "1.0 / 6.0">:$alpha,
         DefaultValuedAttr<F64Attr, "0.5">:$beta),
    "(`alpha` `=` $alpha^)? (`beta` `=` $beta^)?"> {
  let summary = "max(0, min(1, alpha * x + beta))";
}
def Cuvil_ExpOp : Cuvil_UnaryOp<"exp"> { let summary = "e^x"; }
def Cuvil_LogOp : Cuvil_UnaryOp<"log"> { let summary = "natural logarithm"; }
def Cuvil_SqrtOp : Cuvil_UnaryOp<"sqrt"> { let summary = "square root"; }
def Cuvil_RsqrtOp : Cuvil_UnaryOp<"rsqrt"> { let summary = "1 / sqrt(x)"; }
def Cuvil_ReciprocalOp : Cuvil_UnaryOp<"reciprocal"> { let summary = "1 / x"; }
def Cuvil_ErfOp : Cuvil_UnaryOp<"erf"> { let summary = "Gauss error function"; }
def Cuvil_NegOp : Cuvil_UnaryOp<"neg"> {
  let summary = "-x";
  let floatOnly = 0;
}
def Cuvil_AbsOp : Cuvil_UnaryOp<"abs"> {
  let summary = "|x|";
  let floatOnly = 0;
}

def Cuvil_CastOp : Cuvil_Op<"cast", [Pure, Cuvil_BroadcastElementwise]> {
  let summary = "element type conversion (shape unchanged)";
  let description = [{
    Converts each element: float<->float rounds to nearest even, float->int
    truncates toward zero, int->i1 is `!= 0`.
  }];
  let arguments = (ins Cuvil_Tensor:$input);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Math functions and activations (float only)
//===----------------------------------------------------------------------===//

// The functions of <math.h> by the same names.
def Cuvil_SinOp : Cuvil_UnaryOp<"sin"> { let summary = "sine"; }
def Cuvil_CosOp : Cuvil_UnaryOp<"cos"> { let summary = "cosine"; }
def Cuvil_TanOp : Cuvil_UnaryOp<"tan"> { let summary = "tangent"; }
def Cuvil_AsinOp : Cuvil_UnaryOp<"asin"> { let summary = "arcsine"; }
def Cuvil_AcosOp : Cuvil_UnaryOp<"acos"> { let summary = "arccosine"; }
def Cuvil_AtanOp : Cuvil_UnaryOp<"atan"> { let summary = "arctangent"; }
def Cuvil_SinhOp : Cuvil_UnaryOp<"sinh"> { let summary = "hyperbolic sine"; }
def Cuvil_CoshOp : Cuvil_UnaryOp<"cosh"> { let summary = "hyperbolic cosine"; }
def Cuvil_AsinhOp : Cuvil_UnaryOp<"asinh"> {
  let summary = "inverse hyperbolic sine";
}
def Cuvil_AcoshOp : Cuvil_UnaryOp<"acosh"> {
  let summary = "inverse hyperbolic cosine";
}
def Cuvil_AtanhOp : Cuvil_UnaryOp<"atanh"> {
  let summary = "inverse hyperbolic tangent";
}
def Cuvil_CeilOp : Cuvil_UnaryOp<"ceil"> { let summary = "round up"; }
def Cuvil_FloorOp : Cuvil_UnaryOp<"floor"> { let summary = "round down"; }
def Cuvil_RoundOp : Cuvil_UnaryOp<"round"> {
  let summary = "round to nearest, halves to even (ONNX Round)";
}
def Cuvil_SoftplusOp : Cuvil_UnaryOp<"softplus"> {
  let summary = "log(1 + exp(x))";
}
def Cuvil_SoftsignOp : Cuvil_UnaryOp<"softsign"> {
  let summary = "x / (1 + |x|)";
}
def Cuvil_EluOp : Cuvil_UnaryOp<"elu", [],
    (ins DefaultValuedAttr<F64Attr, "1.0">:$alpha),
    "(`alpha` `=` $alpha^)?"> {
  let summary = "x if x >= 0, else alpha * (exp(x) - 1)";
}
def Cuvil_CeluOp : Cuvil_UnaryOp<"celu", [],
    (ins DefaultValuedAttr<F64Attr, "1.0">:$alpha),
    "(`alpha` `=` $alpha^)?"> {
  let summary = "max(0, x) + min(0, alpha * (exp(x / alpha) - 1))";
  let hasVerifier = 1;
}
def Cuvil_SeluOp : Cuvil_UnaryOp<"selu", [],
    (ins DefaultValuedAttr<F64Attr, "1.67326319217681884765625">:$alpha,
         DefaultValuedAttr<F64Attr, "1.05070102214813232421875">:$gamma),
    "(`alpha` `=` $alpha^)? (`gamma` `=` $gamma^)?"> {
  let summary = "gamma * (x if x > 0, else alpha * (exp(x) - 1))";
}
def Cuvil_LeakyReluOp : Cuvil_UnaryOp<"leaky_relu", [],
    (ins DefaultValuedAttr<F64Attr, "0.01">:$alpha),
    "(`alpha` `=` $alpha^)?"> {
  let summary = "x if x >= 0, else alpha * x";
}
def Cuvil_ThresholdedReluOp : Cuvil_UnaryOp<"thresholded_relu", [],
    (ins DefaultValuedAttr<F64Attr, "1.0">:$alpha),
    "(`alpha` `=` $alpha^)?"> {
  let summary = "x if x > alpha, else 0";
}
def Cuvil_ShrinkOp : Cuvil_UnaryOp<"shrink", [],
    (ins DefaultValuedAttr<F64Attr, "0.5">:$lambd,
         DefaultValuedAttr<F64Attr, "0.0">:$bias),
    "(`lambd` `=` $lambd^)? (`bias` `=` $bias^)?"> {
  let summary = "x + bias if x < -lambd, x - bias if x > lambd, else 0";
  let hasVerifier = 1;
}
def Cuvil_SignOp : Cuvil_UnaryOp<"sign"> {
  let summary = "-1, 0 or 1 (0 for NaN)";
  let floatOnly = 0;
}

def Cuvil_PReluOp : Cuvil_BinaryOp<"prelu"> {
  let summary = "x if x >= 0, else slope * x (the slope broadcasts)";
  let arguments = (ins Cuvil_Tensor:$input, Cuvil_Tensor:$slope);
  let assemblyFormat = [{
    $input `,` $slope attr-dict `:` type($input) `,` type($slope)
  }];
}

//===----------------------------------------------------------------------===//
// Float classification
//===----------------------------------------------------------------------===//

class Cuvil_ClassifyOp<string mnemonic, dag extraArgs = (ins),
                       string extraFormat = "">
    : Cuvil_Op<mnemonic, [Pure, Cuvil_InferTypeOpAdaptor,
                          Cuvil_BroadcastElementwise]> {
  let arguments = !con((ins Cuvil_FloatTensor:$input), extraArgs);
  let results = (outs RankedTensorOf<[I1]>:$result);
  let assemblyFormat = "$input " # extraFormat # " attr-dict `:` type($input)";
}

def Cuvil_IsNanOp : Cuvil_ClassifyOp<"is_nan"> { let summary = "x is NaN"; }
def Cuvil_IsInfOp : Cuvil_ClassifyOp<"is_inf",
    (ins DefaultValuedAttr<BoolAttr, "true">:$detect_negative,
         DefaultValuedAttr<BoolAttr, "true">:$detect_positive),
    "(`detect_negative` `=` $detect_negative^)? "
    "(`detect_positive` `=` $detect_positive^)?"> {
  let summary = "x is an infinity (of the signs asked for)";
}

//===----------------------------------------------------------------------===//
// Logic (on i1) and remainder
//===----------------------------------------------------------------------===//

class Cuvil_LogicalOp<string mnemonic, list<Trait> traits = []>
    : Cuvil_BinaryOp<mnemonic, traits> {
  let arguments = (ins RankedTensorOf<[I1]>:$lhs, RankedTensorOf<[I1]>:$rhs);
  let results = (outs RankedTensorOf<[I1]>:$result);
}
def Cuvil_AndOp : Cuvil_LogicalOp<"and", [Commutative]> {
  let summary = "elementwise logical and";
}
def Cuvil_OrOp : Cuvil_LogicalOp<"or", [Commutative]> {
  let summary = "elementwise logical or";
}
def Cuvil_XorOp : Cuvil_LogicalOp<"xor", [Commutative]> {
  let summary = "elementwise logical exclusive or";
}
def Cuvil_NotOp : Cuvil_UnaryOp<"not"> {
  let summary = "elementwise logical negation";
  let arguments = (ins RankedTensorOf<[I1]>:$input);
  let results = (outs RankedTensorOf<[I1]>:$result);
  let floatOnly = 0;
}

def Cuvil_ModOp : Cuvil_Op<"mod", [Pure, Cuvil_InferTypeOpAdaptor,
                                   Cuvil_BroadcastElementwise]> {
  let summary = "elementwise remainder (ONNX Mod)";
  let description = [{
    With `fmod` the remainder has the sign of the dividend (C's `fmod`, `%`);
    without, integer remainders have the sign of the divisor (Python's `%`).
    Floats need `fmod`, as in ONNX. An integer remainder by 0 is 0 (ONNX
    leaves it undefined; a compiled model must not trap).
  }];
  let arguments = (ins Cuvil_Tensor:$lhs, Cuvil_Tensor:$rhs, UnitAttr:$fmod);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`fmod` $fmod^)? attr-dict `:` type($lhs) `,` type($rhs)
  }];
  let hasVerifier = 1;
}

def Cuvil_BitShiftOp : Cuvil_Op<"bit_shift", [Pure, Cuvil_InferTypeOpAdaptor,
                                              Cuvil_BroadcastElementwise]> {
  let summary = "elementwise shift of unsigned integers (ONNX BitShift)";
  let description = [{
    `lhs` shifted left by `rhs` bits, or right with `right`; bits shifted
    out are lost, and a shift by the element width or more gives 0 (C
    leaves it undefined; a compiled model must not depend on that).
  }];
  let arguments = (ins Cuvil_Tensor:$lhs, Cuvil_Tensor:$rhs, UnitAttr:$right);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`right` $right^)? attr-dict `:` type($lhs) `,` type($rhs)
  }];
  let hasVerifier = 1;
}

#endif // CUVIL_IR_ELEMENTWISEOPS_TD
