//===- Recurrent.cpp - rnn, gru and lstm as a loop over time --------------===//
//
// The input's gate products arrive computed (the importer's one matmul over
// every step). Each direction runs its steps in order: one product of the
// previous hidden states of the whole batch with R^T (cuvil_matmul_f32,
// [B, H] @ [H, G*H], into the call's scratch), then one fused loop over
// the batch and the hidden units that adds the input gates, the biases and
// peepholes, applies the activations and updates the state in place in the
// Y_h (and Y_c) outputs. A GRU without linear_before_reset needs r before
// its candidate's product, so its step is two products and two loops.
// Steps past a sequence's length write zeros and keep the state.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"

#include "cuvil/ir/CuvilOps.h"

#include <optional>

namespace cuvil::cpu::emitter {

using namespace mlir;

namespace {

/// `x` (a C float lvalue or expression read once per use) through one of
/// ONNX's activation functions.
std::string activationExpr(const cuvil::l1::RecurrentActivation &a,
                           const std::string &x, Type f32) {
  auto lit = [&](double v) { return floatLiteral(v); };
  const std::string &n = a.name;
  if (n == "Sigmoid")
    return "(1.0f / (1.0f + cuvil_expf(-" + x + ")))";
  if (n == "Tanh")
    return tanhExpr(x, f32);
  if (n == "Relu")
    return "(" + x + " > 0.0f ? " + x + " : 0.0f)";
  if (n == "HardSigmoid")
    return "fminf(fmaxf(" + lit(a.alpha) + " * " + x + " + " + lit(a.beta) +
           ", 0.0f), 1.0f)";
  if (n == "LeakyRelu")
    return "(" + x + " >= 0.0f ? " + x + " : " + lit(a.alpha) + " * " + x +
           ")";
  if (n == "ThresholdedRelu")
    return "(" + x + " > " + lit(a.alpha) + " ? " + x + " : 0.0f)";
  if (n == "ScaledTanh")
    return "(" + lit(a.alpha) + " * " +
           tanhExpr("(" + lit(a.beta) + " * " + x + ")", f32) + ")";
  if (n == "Affine")
    return "(" + lit(a.alpha) + " * " + x + " + " + lit(a.beta) + ")";
  if (n == "Elu")
    return "(" + x + " >= 0.0f ? " + x + " : " + lit(a.alpha) +
           " * (cuvil_expf(" + x + ") - 1.0f))";
  if (n == "Softsign")
    return "(" + x + " / (1.0f + fabsf(" + x + ")))";
  // Softplus: max(x, 0) + log1p(exp(-|x|)), no overflow for large x.
  return "(fmaxf(" + x + ", 0.0f) + log1pf(cuvil_expf(-fabsf(" + x + "))))";
}

/// What one recurrent call's loops read and write, by C name.
struct Recurrence {
  std::string kind; // "rnn", "gru" or "lstm"
  Type f32;
  int64_t gates = 1, hidden = 0, directions = 1;
  bool reverseOnly = false, linearBeforeReset = false, inputForget = false;
  std::optional<double> clip;
  SmallVector<cuvil::l1::RecurrentActivation> activations;
  // Dimensions (C expressions).
  std::string T, B;
  // Buffers ("" when absent).
  std::string x, rT, bias, lens, h0, c0, peep, y, yh, yc, scratch;
};

/// The optional operands' presence, from the level1 op's segment sizes.
FailureOr<Recurrence> readCall(const KernelCall &call) {
  Recurrence r;
  r.kind = call.name.str();
  r.f32 = call.element;
  r.gates = r.kind == "lstm" ? 4 : r.kind == "gru" ? 3 : 1;
  r.hidden = call.op.getIntParam("hidden_size", 0);
  auto direction = dyn_cast_or_null<StringAttr>(call.op.getParam("direction"));
  std::string dir = direction ? direction.getValue().str() : "forward";
  r.directions = dir == "bidirectional" ? 2 : 1;
  r.reverseOnly = dir == "reverse";
  r.linearBeforeReset = call.op.getIntParam("linear_before_reset", 0) != 0;
  r.inputForget = call.op.getIntParam("input_forget", 0) != 0;
  if (auto clip = dyn_cast_or_null<FloatAttr>(call.op.getParam("clip")))
    r.clip = clip.getValueAsDouble();
  auto doubles = [&](StringRef name) {
    auto a = dyn_cast_or_null<DenseF64ArrayAttr>(call.op.getParam(name));
    return a ? SmallVector<double>(a.asArrayRef()) : SmallVector<double>();
  };
  std::string error;
  FailureOr<SmallVector<cuvil::l1::RecurrentActivation>> activations =
      cuvil::l1::resolveRecurrentActivations(
          r.kind, dyn_cast_or_null<ArrayAttr>(call.op.getParam("activations")),
          doubles("activation_alpha"), doubles("activation_beta"),
          r.directions, error);
  if (failed(activations))
    return call.error() << error;
  r.activations = *activations;

  auto segments =
      dyn_cast_or_null<DenseI32ArrayAttr>(call.op.getParam("operandSegmentSizes"));
  if (!segments)
    return call.error() << "lacks its operand segment sizes";
  std::string *slots[] = {&r.x, &r.rT, &r.bias, &r.lens, &r.h0, &r.c0, &r.peep};
  size_t next = 0;
  for (auto [i, count] : llvm::enumerate(segments.asArrayRef()))
    if (count == 1 && i < std::size(slots) && next < call.ins.size())
      *slots[i] = call.ins[next++]->name;
  ValueRange outs = call.op.getOutputs();
  size_t results = r.kind == "lstm" ? 3 : 2;
  if (outs.size() != results + 1)
    return call.error() << "expects its results and a scratch output, got "
                        << outs.size() << " outputs";
  r.T = call.ins[0]->dims[0];
  r.B = call.ins[0]->dims[1];
  return r;
}

class RecurrenceWriter {
public:
  RecurrenceWriter(Emitter &e, const Recurrence &r) : e(e), c(e.c), r(r) {
    H = std::to_string(r.hidden);
    GH = std::to_string(r.gates * r.hidden);
    D = std::to_string(r.directions);
  }

  void emit() {
    for (int64_t d = 0; d < r.directions; ++d)
      emitDirection(d);
  }

private:
  Emitter &e;
  CWriter &c;
  const Recurrence &r;
  std::string H, GH, D;
  Type f32 = r.f32;

  void loop(const std::string &var, const std::string &bound) {
    c.open("for (int64_t " + var + " = 0; " + var + " < " + bound + "; ++" +
           var + ")");
  }

  const cuvil::l1::RecurrentActivation &act(int64_t d, int i) const {
    size_t per = r.activations.size() / r.directions;
    return r.activations[d * per + i];
  }

  /// `const float name = <gate g's input for unit j of row b>`, clipped.
  void gateInput(const std::string &name, int64_t g, const std::string &j,
                 const std::string &gx, const std::string &gp,
                 const std::string &extra = "") {
    std::string off = std::to_string(g * r.hidden);
    std::string v = gx + "[" + off + " + " + j + "]";
    if (!gp.empty())
      v += " + " + gp + "[" + off + " + " + j + "]";
    if (!r.bias.empty())
      v += " + wb[" + off + " + " + j + "] + rb[" + off + " + " + j + "]";
    if (!extra.empty())
      v += " + " + extra;
    if (r.clip)
      v = "fminf(fmaxf(" + v + ", " + floatLiteral(-*r.clip) + "), " +
          floatLiteral(*r.clip) + ")";
    c.line("const float " + name + " = " + v + ";");
  }

  /// The previous states' product with R^T columns [col, col + n) into
  /// `out` ([B, n]).
  void product(const std::string &a, int64_t col, int64_t n,
               const std::string &out) {
    c.line("cuvil_matmul_f32(pool, NULL, 1, " + r.B + ", " +
           std::to_string(n) + ", " + H + ", " + a + ", 0, " + H +
           ", 1, rt + " + std::to_string(col) + ", 0, " + GH + ", 1, " + out +
           ", NULL);");
  }

  void emitDirection(int64_t d) {
    bool reverse = r.reverseOnly || d == 1;
    std::string ds = std::to_string(d);
    c.open();
    c.line("/* direction " + ds + (reverse ? " (reverse)" : "") + " */");
    c.line("float *hs = " + r.yh + " + " + ds + " * " + r.B + " * " + H + ";");
    if (r.kind == "lstm")
      c.line("float *cs = " + r.yc + " + " + ds + " * " + r.B + " * " + H +
             ";");
    c.line("const float *rt = " + r.rT + " + " + ds + " * " + H + " * " + GH +
           ";");
    if (!r.bias.empty()) {
      c.line("const float *wb = " + r.bias + " + " + ds + " * 2 * " + GH + ";");
      c.line("const float *rb = wb + " + GH + ";");
    }
    if (!r.peep.empty())
      c.line("const float *pi = " + r.peep + " + " + ds + " * 3 * " + H +
             ", *po = pi + " + H + ", *pf = pi + 2 * " + H + ";");
    // The states start as the initial ones, or zeros.
    std::string i = e.tmp();
    loop(i, r.B + " * " + H);
    std::string at = ds + " * " + r.B + " * " + H + " + " + i;
    c.line("hs[" + i + "] = " + (r.h0.empty() ? "0.0f" : r.h0 + "[" + at + "]") +
           ";");
    if (r.kind == "lstm")
      c.line("cs[" + i + "] = " +
             (r.c0.empty() ? "0.0f" : r.c0 + "[" + at + "]") + ";");
    c.close();
    std::string s = e.tmp();
    loop(s, r.T);
    c.line("const int64_t t = " +
           (reverse ? r.T + " - 1 - " + s : s) + ";");
    if (r.kind == "gru" && !r.linearBeforeReset)
      emitGruTwoProductStep(d);
    else
      emitStep(d);
    c.close();
    c.close();
  }

  /// Opens the loop over rows b: `gx` its input gates and `y` its output
  /// row; a row past its sequence's length writes zeros (when `zero`) and
  /// is skipped.
  void openRow(int64_t d, bool zero) {
    std::string ds = std::to_string(d);
    loop("b", r.B);
    c.line("const float *gx = " + r.x + " + (t * " + r.B + " + b) * " + D +
           " * " + GH + " + " + ds + " * " + GH + ";");
    c.line("float *y = " + r.y + " + ((t * " + D + " + " + ds + ") * " + r.B +
           " + b) * " + H + ";");
    if (!r.lens.empty()) {
      c.open("if (t >= " + r.lens + "[b])");
      if (zero)
        c.line("memset(y, 0, sizeof(float) * " + H + ");");
      c.line("continue;");
      c.close();
    }
  }

  /// One step with one product: RNN, LSTM, GRU with linear_before_reset.
  void emitStep(int64_t d) {
    c.line("float *p = " + r.scratch + ";");
    product("hs", 0, r.gates * r.hidden, "p");
    openRow(d, true);
    c.line("const float *gp = p + b * " + GH + ";");
    c.line("float *h = hs + b * " + H + ";");
    if (r.kind == "lstm")
      c.line("float *cell = cs + b * " + H + ";");
    loop("j", H);
    if (r.kind == "rnn") {
      gateInput("a", 0, "j", "gx", "gp");
      c.line("h[j] = " + activationExpr(act(d, 0), "a", f32) + ";");
    } else if (r.kind == "gru") {
      emitGruUnit(d, "gp[" + std::to_string(2 * r.hidden) + " + j]" +
                         (r.bias.empty() ? "" : " + rb[" +
                                                    std::to_string(
                                                        2 * r.hidden) +
                                                    " + j]"));
    } else {
      emitLstmUnit(d);
    }
    c.line("y[j] = h[j];");
    c.close();
    c.close();
  }

  /// z, r and the candidate of one GRU unit; `recurrent` is the candidate's
  /// recurrent term before the reset gate scales it (linear_before_reset).
  void emitGruUnit(int64_t d, const std::string &recurrent) {
    gateInput("az", 0, "j", "gx", "gp");
    gateInput("ar", 1, "j", "gx", "gp");
    c.line("const float z = " + activationExpr(act(d, 0), "az", f32) + ";");
    c.line("const float rr = " + activationExpr(act(d, 0), "ar", f32) + ";");
    gateCandidate(d, "rr * (" + recurrent + ")");
    c.line("h[j] = (1.0f - z) * hc + z * h[j];");
  }

  /// `const float hc = g(x_h + Wb_h + extra)`: the GRU candidate.
  void gateCandidate(int64_t d, const std::string &extra) {
    std::string off = std::to_string(2 * r.hidden);
    std::string v = "gx[" + off + " + j]";
    if (!r.bias.empty())
      v += " + wb[" + off + " + j]";
    v += " + " + extra;
    if (r.clip)
      v = "fminf(fmaxf(" + v + ", " + floatLiteral(-*r.clip) + "), " +
          floatLiteral(*r.clip) + ")";
    c.line("const float ah = " + v + ";");
    c.line("const float hc = " + activationExpr(act(d, 1), "ah", f32) + ";");
  }

  void emitLstmUnit(int64_t d) {
    bool peep = !r.peep.empty();
    gateInput("ai", 0, "j", "gx", "gp", peep ? "pi[j] * cell[j]" : "");
    c.line("const float ig = " + activationExpr(act(d, 0), "ai", f32) + ";");
    if (r.inputForget) {
      c.line("const float fg = 1.0f - ig;");
    } else {
      gateInput("af", 2, "j", "gx", "gp", peep ? "pf[j] * cell[j]" : "");
      c.line("const float fg = " + activationExpr(act(d, 0), "af", f32) + ";");
    }
    gateInput("ac", 3, "j", "gx", "gp");
    c.line("const float cg = " + activationExpr(act(d, 1), "ac", f32) + ";");
    c.line("const float cn = fg * cell[j] + ig * cg;");
    gateInput("ao", 1, "j", "gx", "gp", peep ? "po[j] * cn" : "");
    c.line("const float og = " + activationExpr(act(d, 0), "ao", f32) + ";");
    c.line("cell[j] = cn;");
    c.line("h[j] = og * " + activationExpr(act(d, 2), "cn", f32) + ";");
  }

  /// A GRU step without linear_before_reset: z and r from the first
  /// product, then the product of r * H with R_h^T for the candidate.
  void emitGruTwoProductStep(int64_t d) {
    std::string H2 = std::to_string(2 * r.hidden);
    // Scratch rows: [2H products | H z | H r*H | H candidate products].
    c.line("float *p = " + r.scratch + ", *zs = p + " + r.B + " * " + H2 +
           ", *rh = zs + " + r.B + " * " + H + ", *ph = rh + " + r.B + " * " +
           H + ";");
    product("hs", 0, 2 * r.hidden, "p");
    openRow(d, true);
    c.line("const float *gp = p + b * " + H2 + ";");
    c.line("const float *h = hs + b * " + H + ";");
    loop("j", H);
    gateInput("az", 0, "j", "gx", "gp");
    gateInput("ar", 1, "j", "gx", "gp");
    c.line("zs[b * " + H + " + j] = " + activationExpr(act(d, 0), "az", f32) +
           ";");
    c.line("rh[b * " + H + " + j] = " +
           activationExpr(act(d, 0), "ar", f32) + " * h[j];");
    c.close();
    c.close();
    product("rh", 2 * r.hidden, r.hidden, "ph");
    openRow(d, false);
    c.line("float *h = hs + b * " + H + ";");
    loop("j", H);
    gateCandidate(d, "ph[b * " + H + " + j]" +
                         (r.bias.empty() ? "" : " + rb[" + H2 + " + j]"));
    c.line("const float z = zs[b * " + H + " + j];");
    c.line("h[j] = (1.0f - z) * hc + z * h[j];");
    c.line("y[j] = h[j];");
    c.close();
    c.close();
  }
};

LogicalResult emitRecurrent(Emitter &e, const KernelCall &call) {
  FailureOr<Recurrence> r = readCall(call);
  if (failed(r))
    return failure();
  ValueRange outs = call.op.getOutputs();
  r->y = e.buffer(outs[0]).name;
  r->yh = e.buffer(outs[1]).name;
  if (r->kind == "lstm")
    r->yc = e.buffer(outs[2]).name;
  r->scratch = e.buffer(outs.back()).name;
  RecurrenceWriter(e, *r).emit();
  return success();
}

} // namespace

void addRecurrentKernels(KernelTable &table) {
  for (const char *name : {"rnn", "gru", "lstm"})
    table[name] = {emitRecurrent, /*f32Only=*/true};
}

} // namespace cuvil::cpu::emitter
