//===- Elementwise.cpp - unary, binary and select kernels as loops --------===//
//
// Each kernel is an expression of its operands' elements, written as one
// loop over the output (numpy broadcasting) that clang vectorizes.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"

#include "absl/strings/str_join.h"

namespace cuvil::cpu::emitter {

using namespace mlir;

namespace {

using Args = ArrayRef<std::string>;
using Expr = std::function<std::string(Args)>;
/// The expression of a unary kernel for a call, or a failure (reported).
using UnaryBuilder = FailureOr<Expr> (*)(const KernelCall &);

/// `(c ? a : b)`.
std::string select(const std::string &c, const std::string &a,
                   const std::string &b) {
  return "(" + c + " ? " + a + " : " + b + ")";
}

/// `x` clamped to [lo, hi].
std::string clamp(const std::string &x, const std::string &lo,
                  const std::string &hi) {
  return "(" + x + " < " + lo + " ? " + lo + " : " + x + " > " + hi + " ? " +
         hi + " : " + x + ")";
}

/// f32 exponentials and erf go through the runtime's cuvil_expf and
/// cuvil_erff, which vectorize (libm's are a call per element).
std::string expName(const KernelCall &call) {
  return call.f == "f" ? "cuvil_expf" : "exp";
}
std::string erfName(const KernelCall &call) {
  return call.f == "f" ? "cuvil_erff" : "erf";
}

FailureOr<Expr> relu(const KernelCall &call) {
  std::string zero = call.lit(0);
  return Expr([=](Args e) { return select(e[0] + " > " + zero, e[0], zero); });
}

FailureOr<Expr> clip(const KernelCall &call) {
  auto minA = dyn_cast_or_null<FloatAttr>(call.op.getParam("min"));
  auto maxA = dyn_cast_or_null<FloatAttr>(call.op.getParam("max"));
  std::string lo = minA ? call.lit(minA.getValueAsDouble()) : "";
  std::string hi = maxA ? call.lit(maxA.getValueAsDouble()) : "";
  return Expr([=](Args e) {
    std::string x = e[0];
    if (!lo.empty())
      x = select(x + " < " + lo, lo, x);
    if (!hi.empty())
      x = select(x + " > " + hi, hi, x);
    return x;
  });
}

FailureOr<Expr> neg(const KernelCall &) {
  return Expr([](Args e) { return "(-" + e[0] + ")"; });
}

FailureOr<Expr> absolute(const KernelCall &call) {
  if (call.isFloat)
    return Expr([f = call.f](Args e) { return "fabs" + f + "(" + e[0] + ")"; });
  return Expr([](Args e) { return select(e[0] + " < 0", "-" + e[0], e[0]); });
}

FailureOr<Expr> convert(const KernelCall &call) {
  if (call.element.isInteger(1))
    return Expr([](Args e) { return "(uint8_t)(" + e[0] + " != 0)"; });
  return Expr([T = call.T](Args e) { return "(" + T + ")(" + e[0] + ")"; });
}

FailureOr<Expr> identity(const KernelCall &) {
  return Expr([](Args e) { return e[0]; });
}

// Float-only functions (checked by floatOnly in `floatUnary`).

Expr sigmoid(const KernelCall &call) {
  std::string one = call.lit(1), exp = expName(call);
  return [=](Args e) {
    return "(" + one + " / (" + one + " + " + exp + "(-" + e[0] + ")))";
  };
}

Expr hyperbolicTangent(const KernelCall &call) {
  return [element = call.element](Args e) { return tanhExpr(e[0], element); };
}

Expr gelu(const KernelCall &call) {
  bool approx = false;
  if (auto mode = dyn_cast_or_null<StringAttr>(call.op.getParam("approximate")))
    approx = mode.getValue() == "tanh";
  std::string one = call.lit(1), half = call.lit(0.5), f = call.f,
              erf = erfName(call);
  std::string c1 = call.lit(0.7978845608028654), c2 = call.lit(0.044715),
              r2 = call.lit(0.7071067811865476);
  return [=](Args e) {
    const std::string &x = e[0];
    return approx ? "(" + half + " * " + x + " * (" + one + " + tanh" + f +
                        "(" + c1 + " * (" + x + " + " + c2 + " * " + x +
                        " * " + x + " * " + x + "))))"
                  : "(" + half + " * " + x + " * (" + one + " + " + erf + "(" +
                        x + " * " + r2 + ")))";
  };
}

Expr silu(const KernelCall &call) {
  std::string one = call.lit(1), exp = expName(call);
  return [=](Args e) {
    return "(" + e[0] + " / (" + one + " + " + exp + "(-" + e[0] + ")))";
  };
}

Expr hardswish(const KernelCall &call) {
  std::string three = call.lit(3), six = call.lit(6), zero = call.lit(0);
  return [=](Args e) {
    return "(" + e[0] + " * " + clamp("(" + e[0] + " + " + three + ")", zero,
                                      six) +
           " / " + six + ")";
  };
}

Expr hardsigmoid(const KernelCall &call) {
  std::string a = call.lit(call.op.getFloatParam("alpha", 1.0 / 6.0)),
              b = call.lit(call.op.getFloatParam("beta", 0.5)),
              zero = call.lit(0), one = call.lit(1);
  return [=](Args e) {
    return clamp("(" + a + " * " + e[0] + " + " + b + ")", zero, one);
  };
}

Expr rsqrt(const KernelCall &call) {
  std::string one = call.lit(1), f = call.f;
  return [=](Args e) { return "(" + one + " / sqrt" + f + "(" + e[0] + "))"; };
}

Expr reciprocal(const KernelCall &call) {
  std::string one = call.lit(1);
  return [=](Args e) { return "(" + one + " / " + e[0] + ")"; };
}

/// `x` if `cond` holds of it, else `other` (`cond` and `other` read `x`).
Expr piecewise(std::function<std::string(const std::string &)> cond,
               std::function<std::string(const std::string &)> other) {
  return [=](Args e) { return select(cond(e[0]), e[0], other(e[0])); };
}

Expr softplus(const KernelCall &call) {
  // max(x, 0) + log1p(exp(-|x|)): no overflow for large x, exact for small.
  std::string zero = call.lit(0), f = call.f, exp = expName(call);
  return [=](Args e) {
    const std::string &x = e[0];
    return "(" + select(x + " > " + zero, x, zero) + " + log1p" + f + "(" +
           exp + "(-fabs" + f + "(" + x + "))))";
  };
}

Expr softsign(const KernelCall &call) {
  std::string one = call.lit(1), f = call.f;
  return [=](Args e) {
    return "(" + e[0] + " / (" + one + " + fabs" + f + "(" + e[0] + ")))";
  };
}

Expr elu(const KernelCall &call) {
  std::string zero = call.lit(0), f = call.f,
              alpha = call.lit(call.op.getFloatParam("alpha", 1.0));
  return piecewise([=](const std::string &x) { return x + " >= " + zero; },
                   [=](const std::string &x) {
                     return "(" + alpha + " * expm1" + f + "(" + x + "))";
                   });
}

Expr celu(const KernelCall &call) {
  double a = call.op.getFloatParam("alpha", 1.0);
  std::string zero = call.lit(0), f = call.f, alpha = call.lit(a),
              inverse = call.lit(1.0 / a);
  return [=](Args e) {
    const std::string &x = e[0];
    std::string negative = "(" + alpha + " * expm1" + f + "(" + x + " * " +
                           inverse + "))";
    return "(" + select(x + " > " + zero, x, zero) + " + " +
           select(negative + " < " + zero, negative, zero) + ")";
  };
}

Expr selu(const KernelCall &call) {
  std::string zero = call.lit(0), f = call.f,
              alpha = call.lit(call.op.getFloatParam(
                  "alpha", 1.67326319217681884765625)),
              gamma = call.lit(call.op.getFloatParam(
                  "gamma", 1.05070102214813232421875));
  Expr inner = piecewise(
      [=](const std::string &x) { return x + " > " + zero; },
      [=](const std::string &x) {
        return "(" + alpha + " * expm1" + f + "(" + x + "))";
      });
  return [=](Args e) { return "(" + gamma + " * " + inner(e) + ")"; };
}

Expr leakyRelu(const KernelCall &call) {
  std::string zero = call.lit(0),
              alpha = call.lit(call.op.getFloatParam("alpha", 0.01));
  return piecewise([=](const std::string &x) { return x + " >= " + zero; },
                   [=](const std::string &x) { return alpha + " * " + x; });
}

Expr thresholdedRelu(const KernelCall &call) {
  std::string zero = call.lit(0),
              alpha = call.lit(call.op.getFloatParam("alpha", 1.0));
  return piecewise([=](const std::string &x) { return x + " > " + alpha; },
                   [=](const std::string &) { return zero; });
}

Expr shrink(const KernelCall &call) {
  double l = call.op.getFloatParam("lambd", 0.5);
  std::string lambd = call.lit(l), negLambd = call.lit(-l), zero = call.lit(0),
              bias = call.lit(call.op.getFloatParam("bias", 0.0));
  return [=](Args e) {
    const std::string &x = e[0];
    return select(x + " < " + negLambd, "(" + x + " + " + bias + ")",
                  select(x + " > " + lambd, "(" + x + " - " + bias + ")",
                         zero));
  };
}

/// A function of <math.h> or the runtime: `name(x)`.
Expr function(std::string name) {
  return [=](Args e) { return name + "(" + e[0] + ")"; };
}

Expr exponential(const KernelCall &call) { return function(expName(call)); }
Expr errorFunction(const KernelCall &call) { return function(erfName(call)); }
Expr roundHalfEven(const KernelCall &call) {
  return function("rint" + call.f); // in the default rounding mode
}

FailureOr<Expr> floatUnary(const KernelCall &call) {
  if (failed(call.floatOnly()))
    return failure();
  static const llvm::StringMap<Expr (*)(const KernelCall &)> formulas = {
      {"sigmoid", sigmoid},
      {"tanh", hyperbolicTangent},
      {"gelu", gelu},
      {"silu", silu},
      {"hardswish", hardswish},
      {"hardsigmoid", hardsigmoid},
      {"rsqrt", rsqrt},
      {"reciprocal", reciprocal},
      {"exp", exponential},
      {"erf", errorFunction},
      {"round", roundHalfEven},
      {"softplus", softplus},
      {"softsign", softsign},
      {"elu", elu},
      {"celu", celu},
      {"selu", selu},
      {"leaky_relu", leakyRelu},
      {"thresholded_relu", thresholdedRelu},
      {"shrink", shrink},
  };
  if (auto formula = formulas.lookup(call.name))
    return formula(call);
  // log, sqrt, the trigonometric and hyperbolic functions, ceil, floor.
  return function(call.name.str() + call.f);
}

FailureOr<Expr> sign(const KernelCall &call) {
  std::string zero = call.lit(0), one = call.lit(1), minusOne = call.lit(-1);
  return Expr([=](Args e) {
    return select(e[0] + " > " + zero, one,
                  select(e[0] + " < " + zero, minusOne, zero));
  });
}

FailureOr<Expr> logicalNot(const KernelCall &) {
  return Expr([](Args e) { return "(!" + e[0] + ")"; });
}

/// is_nan and is_inf read floats and write i1.
FailureOr<Expr> classify(const KernelCall &call) {
  if (!isa<FloatType>(call.ins[0]->type.getElementType()))
    return call.error() << "expects a float input";
  if (call.name == "is_nan")
    return Expr([](Args e) { return "(" + e[0] + " != " + e[0] + ")"; });
  auto flag = [&](StringRef name) {
    auto value = dyn_cast_or_null<BoolAttr>(call.op.getParam(name));
    return !value || value.getValue();
  };
  bool negative = flag("detect_negative"), positive = flag("detect_positive");
  return Expr([=](Args e) {
    std::vector<std::string> tests;
    if (negative)
      tests.push_back(e[0] + " == -INFINITY");
    if (positive)
      tests.push_back(e[0] + " == INFINITY");
    return tests.empty() ? std::string("0")
                         : "(" + absl::StrJoin(tests, " || ") + ")";
  });
}

const llvm::StringMap<UnaryBuilder> &unaryKernels() {
  static const llvm::StringMap<UnaryBuilder> table = {
      {"relu", relu},           {"clip", clip},
      {"neg", neg},             {"abs", absolute},
      {"cast", convert},           {"expand", identity},
      {"sigmoid", floatUnary},  {"tanh", floatUnary},
      {"gelu", floatUnary},     {"silu", floatUnary},
      {"hardswish", floatUnary}, {"hardsigmoid", floatUnary},
      {"exp", floatUnary},      {"log", floatUnary},
      {"sqrt", floatUnary},     {"rsqrt", floatUnary},
      {"reciprocal", floatUnary}, {"erf", floatUnary},
      {"sign", sign},           {"not", logicalNot},
      {"is_nan", classify},     {"is_inf", classify},
  };
  static const llvm::StringMap<UnaryBuilder> all = [] {
    llvm::StringMap<UnaryBuilder> t = table;
    for (const char *name :
         {"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
          "acosh", "atanh", "ceil", "floor", "round", "softplus", "softsign",
          "elu", "celu", "selu", "leaky_relu", "thresholded_relu", "shrink"})
      t[name] = floatUnary;
    return t;
  }();
  return all;
  return table;
}

LogicalResult emitUnary(Emitter &e, const KernelCall &call) {
  FailureOr<Expr> expr = unaryKernels().lookup(call.name)(call);
  if (failed(expr))
    return failure();
  e.emitElementwise(*call.out, {call.ins[0]}, *expr);
  return success();
}

/// C's operator of each binary kernel.
const llvm::StringMap<const char *> &binaryOperators() {
  static const llvm::StringMap<const char *> table = {
      {"add", "+"},         {"sub", "-"},     {"mul", "*"},
      {"div", "/"},         {"equal", "=="},  {"less", "<"},
      {"less_equal", "<="}, {"greater", ">"}, {"greater_equal", ">="},
      {"and", "&"},         {"or", "|"},      {"xor", "^"}};
  return table;
}

/// The integer `a / b` or `a % b` that cannot trap: x86 faults on a zero
/// divisor and on INT_MIN / -1, and a divisor can come from a caller's
/// input. Division by 0 gives 0 (ONNX leaves it undefined); by -1 it
/// negates with wraparound, and the remainder is 0.
std::string safeIntegerDivision(const std::string &a, const std::string &b,
                                 bool remainder) {
  std::string special =
      remainder ? std::string("0") : "(0 - (uint64_t)" + a + ")";
  return "(" + b + " == 0 ? 0 : " + b + " == -1 ? " + special + " : " + a +
         (remainder ? " % " : " / ") + b + ")";
}

LogicalResult emitBinary(Emitter &e, const KernelCall &call) {
  if (call.name == "div" && !call.isFloat) {
    e.emitElementwise(*call.out, {call.ins[0], call.ins[1]}, [](Args x) {
      return safeIntegerDivision(x[0], x[1], /*remainder=*/false);
    });
    return success();
  }
  std::string op = binaryOperators().lookup(call.name);
  e.emitElementwise(*call.out, {call.ins[0], call.ins[1]}, [=](Args x) {
    return "(" + x[0] + " " + op + " " + x[1] + ")";
  });
  return success();
}

LogicalResult emitExtremum(Emitter &e, const KernelCall &call) {
  std::string cmp = call.name == "max" ? ">" : "<";
  e.emitElementwise(*call.out, {call.ins[0], call.ins[1]},
                    [=](Args x) { return extremumExpr(cmp, x[0], x[1]); });
  return success();
}

LogicalResult emitPow(Emitter &e, const KernelCall &call) {
  if (!call.isFloat) {
    // Integer power by squaring; negative exponents truncate to 0 (or stay
    // exact for bases 1 and -1), as numpy does for integers.
    e.emitElementwise(*call.out, {call.ins[0], call.ins[1]},
                      [T = call.T](Args x) {
                        return "(" + T + ")cuvil_ipow((int64_t)" + x[0] +
                               ", (int64_t)" + x[1] + ")";
                      });
    return success();
  }
  e.emitElementwise(*call.out, {call.ins[0], call.ins[1]},
                    [f = call.f](Args x) {
                      return "pow" + f + "(" + x[0] + ", " + x[1] + ")";
                    });
  return success();
}

LogicalResult emitMod(Emitter &e, const KernelCall &call) {
  Expr expr;
  if (call.isFloat) {
    expr = [f = call.f](Args x) {
      return "fmod" + f + "(" + x[0] + ", " + x[1] + ")";
    };
  } else if (call.op.getParam("fmod")) {
    expr = [](Args x) { return safeIntegerDivision(x[0], x[1], true); };
  } else {
    // The divisor's sign: a truncated remainder of the other sign moves
    // by one divisor.
    expr = [](Args x) {
      std::string r = safeIntegerDivision(x[0], x[1], true);
      return "(" + r + " != 0 && (" + r + " < 0) != (" + x[1] + " < 0) ? " +
             r + " + " + x[1] + " : " + r + ")";
    };
  }
  e.emitElementwise(*call.out, {call.ins[0], call.ins[1]}, expr);
  return success();
}

LogicalResult emitBitShift(Emitter &e, const KernelCall &call) {
  std::string width = std::to_string(call.storage.getIntOrFloatBitWidth());
  std::string shift = call.op.getParam("right") ? " >> " : " << ";
  std::string T = call.T;
  // Narrow operands shift as int; the cast drops the bits shifted out.
  e.emitElementwise(*call.out, {call.ins[0], call.ins[1]}, [=](Args x) {
    return select(x[1] + " >= " + width, "(" + T + ")0",
                  "(" + T + ")(" + x[0] + shift + x[1] + ")");
  });
  return success();
}

LogicalResult emitPRelu(Emitter &e, const KernelCall &call) {
  std::string zero = call.lit(0);
  e.emitElementwise(*call.out, {call.ins[0], call.ins[1]}, [=](Args x) {
    return select(x[0] + " < " + zero, "(" + x[0] + " * " + x[1] + ")", x[0]);
  });
  return success();
}

LogicalResult emitWhere(Emitter &e, const KernelCall &call) {
  e.emitElementwise(*call.out, {call.ins[0], call.ins[1], call.ins[2]},
                    [](Args x) { return select(x[0], x[1], x[2]); });
  return success();
}

} // namespace

void addElementwiseKernels(KernelTable &table) {
  for (const auto &entry : unaryKernels())
    table[entry.getKey()] = {emitUnary};
  for (const auto &entry : binaryOperators())
    table[entry.getKey()] = {emitBinary};
  table["max"] = {emitExtremum};
  table["min"] = {emitExtremum};
  table["pow"] = {emitPow};
  table["where"] = {emitWhere};
  table["mod"] = {emitMod};
  table["bit_shift"] = {emitBitShift};
  table["prelu"] = {emitPRelu};
}

} // namespace cuvil::cpu::emitter
