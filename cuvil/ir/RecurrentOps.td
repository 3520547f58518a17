//===- RecurrentOps.td - level1 recurrent layers -----------*- tablegen -*-===//
//
// ONNX's RNN, GRU and LSTM as the recurrence alone: the importer computes
// the input's gate products for every step and direction as one matmul
// (X @ W^T) before the op, so what remains here is the loop over time, whose
// step is one product of the previous hidden state with the recurrence
// weights and a fused cell. Inference and verification: RecurrentOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IR_RECURRENTOPS_TD
#define CUVIL_IR_RECURRENTOPS_TD

include "cuvil/ir/CuvilBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Operands and attributes every recurrent op shares. `gates` is the number
// of gate blocks of hidden_size values (RNN 1, GRU 3, LSTM 4).
class Cuvil_RecurrentOp<string mnemonic, int gates, string equations,
                        dag extraOperands, dag extraAttrs, dag extraResults,
                        string extraFormat = "">
    : Cuvil_Op<mnemonic, [Pure, AttrSizedOperandSegments,
                          Cuvil_InferTypeOpAdaptor]> {
  let description = !strconcat([{
    Shapes, with T steps, B sequences, D directions (2 if `direction` is
    "bidirectional", else 1), H = `hidden_size` and G gate blocks:
    - `input_gates` [T, B, D * G * H]: X_t @ W^T for every step, direction
      after direction, each direction's gates in ONNX's order; no bias;
    - `recurrence` [D, H, G * H]: ONNX's R transposed per direction;
    - `bias` [D, 2 * G * H]: ONNX's B (Wb then Rb), absent for zero;
    - `sequence_lens` [B]: steps of each sequence (absent: all T); the
      steps past a sequence's length write zeros in `Y` and leave its state;
    - `initial_h` [D, B, H] (absent: zeros).
    Results: `Y` [T, D, B, H], every step's hidden state, and `Y_h`
    [D, B, H], the state after the last step of each sequence (the first,
    for the reverse direction).

    `activations` names ONNX's activation functions (Sigmoid, Tanh, Relu,
    HardSigmoid, LeakyRelu, ThresholdedRelu, ScaledTanh, Affine, Elu,
    Softsign, Softplus), one list per direction, forward first (absent: the
    ONNX defaults); `activation_alpha` and `activation_beta` are consumed in
    order by the functions that take them. `clip` bounds every gate's input
    to [-clip, clip].
  }], equations);
  let arguments = !con(
      (ins Cuvil_FloatTensor:$input_gates, Cuvil_FloatTensor:$recurrence,
           Optional<Cuvil_FloatTensor>:$bias,
           Optional<TensorOf<[I32]>>:$sequence_lens,
           Optional<Cuvil_FloatTensor>:$initial_h),
      extraOperands,
      (ins I64Attr:$hidden_size,
           DefaultValuedStrAttr<StrAttr, "forward">:$direction,
           OptionalAttr<StrArrayAttr>:$activations,
           DefaultValuedOptionalAttr<DenseF64ArrayAttr, "{}">:$activation_alpha,
           DefaultValuedOptionalAttr<DenseF64ArrayAttr, "{}">:$activation_beta,
           OptionalAttr<F64Attr>:$clip),
      extraAttrs);
  let results = !con((outs Cuvil_FloatTensor:$Y, Cuvil_FloatTensor:$Y_h),
                     extraResults);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Gate blocks of hidden_size values.
    static constexpr int64_t kGates = }] # !cast<string>(gates) # [{;
    /// 2 for a bidirectional op, else 1.
    int64_t getNumDirections() {
      return getDirection() == "bidirectional" ? 2 : 1;
    }
  }];
  let assemblyFormat = [{
    $input_gates `,` $recurrence
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`sequence_lens` `(` $sequence_lens^ `:` type($sequence_lens) `)`)?
    (`initial_h` `(` $initial_h^ `:` type($initial_h) `)`)?
  }] # extraFormat # [{
    attr-dict `:` type($input_gates) `,` type($recurrence)
  }];
}

def Cuvil_RnnOp : Cuvil_RecurrentOp<"rnn", 1, [{

    H_t = f(X_t W^T + H_{t-1} R^T + Wb + Rb), f Tanh by default.
  }], (ins), (ins), (outs)> {
  let summary = "a simple recurrent layer (ONNX RNN) over precomputed input gates";
}

def Cuvil_GruOp : Cuvil_RecurrentOp<"gru", 3, [{

    Gates z, r, h (f Sigmoid, g Tanh by default):
      z = f(X W_z^T + H R_z^T + Wb_z + Rb_z)
      r = f(X W_r^T + H R_r^T + Wb_r + Rb_r)
      h = g(X W_h^T + (r * H) R_h^T + Rb_h + Wb_h)        linear_before_reset 0
      h = g(X W_h^T + r * (H R_h^T + Rb_h) + Wb_h)        linear_before_reset 1
      H_t = (1 - z) * h + z * H_{t-1}
  }], (ins), (ins DefaultValuedAttr<BoolAttr, "false">:$linear_before_reset),
      (outs)> {
  let summary = "a gated recurrent unit layer (ONNX GRU) over precomputed input gates";
}

def Cuvil_LstmOp : Cuvil_RecurrentOp<"lstm", 4, [{

    Gates i, o, f, c (f Sigmoid, g and h Tanh by default), with C the cell
    state (`initial_c` [D, B, H], absent: zeros; result `Y_c` [D, B, H]) and
    `peepholes` [D, 3 * H] (P_i, P_o, P_f; absent: zeros):
      i = f(X W_i^T + H R_i^T + P_i * C_{t-1} + Wb_i + Rb_i)
      f = f(X W_f^T + H R_f^T + P_f * C_{t-1} + Wb_f + Rb_f)  (1 - i with
          input_forget)
      c = g(X W_c^T + H R_c^T + Wb_c + Rb_c)
      C_t = f * C_{t-1} + i * c
      o = f(X W_o^T + H R_o^T + P_o * C_t + Wb_o + Rb_o)
      H_t = o * h(C_t)
  }], (ins Optional<Cuvil_FloatTensor>:$initial_c,
           Optional<Cuvil_FloatTensor>:$peepholes),
      (ins DefaultValuedAttr<BoolAttr, "false">:$input_forget),
      (outs Cuvil_FloatTensor:$Y_c), [{
    (`initial_c` `(` $initial_c^ `:` type($initial_c) `)`)?
    (`peepholes` `(` $peepholes^ `:` type($peepholes) `)`)?
  }]> {
  let summary = "a long short-term memory layer (ONNX LSTM) over precomputed input gates";
}

#endif // CUVIL_IR_RECURRENTOPS_TD
