//===- ConvertElementwise.cpp - elementwise ONNX ops ----------------------===//
//
// Identity, unary and binary arithmetic (folded on host tensors for shape
// math), Where, Clip, HardSigmoid, Gelu, Cast.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>
#include <functional>

namespace cuvil::onnx_import {

//===----------------------------------------------------------------------===//
// Converters
//===----------------------------------------------------------------------===//

LogicalResult Importer::convertIdentity(const onnx::NodeProto &node,
                                        Location loc) {
  if (node.op_type() == "Dropout") {
    // Inference: Dropout is the identity, and its mask is all true. A
    // training_mode input known to be true asks for training semantics,
    // which are the same at ratio 0 (nothing is dropped or rescaled).
    const HostTensor *ratio = getHost(node, 1);
    bool keepsAll = ratio && ratio->numElements() == 1 && ratio->at(0) == 0;
    if (const HostTensor *training = getHost(node, 2);
        training && training->numElements() == 1 && training->at(0) != 0 &&
        !keepsAll)
      return emitError(loc) << "Dropout in training mode is not supported; "
                               "Cuvil compiles models for inference";
    if (node.output_size() > 1 && !node.output(1).empty()) {
      FailureOr<RankedTensorType> type = getType(node, 0);
      if (failed(type))
        return failure();
      if (!type->hasStaticShape())
        return emitError(loc) << "Dropout's mask output needs a static shape";
      auto maskType =
          RankedTensorType::get(type->getShape(), builder.getI1Type());
      Value mask = l1::ConstantOp::create(
          builder, loc, DenseElementsAttr::get(maskType, true));
      define(node, 1, mask);
    }
  }
  ValueEntry copy = *lookup(node.input(0));
  if (node.output_size() > 0)
    values[node.output(0)] = copy;
  return success();
}

const llvm::StringMap<Importer::UnaryMaker> &Importer::getUnaryMakers() {
  using Node = const onnx::NodeProto &;
  static const llvm::StringMap<UnaryMaker> makers = {
      {"Relu", makeUnary<l1::ReluOp>},
      {"Sigmoid", makeUnary<l1::SigmoidOp>},
      {"Tanh", makeUnary<l1::TanhOp>},
      {"Exp", makeUnary<l1::ExpOp>},
      {"Log", makeUnary<l1::LogOp>},
      {"Sqrt", makeUnary<l1::SqrtOp>},
      {"Reciprocal", makeUnary<l1::ReciprocalOp>},
      {"Neg", makeUnary<l1::NegOp>},
      {"Abs", makeUnary<l1::AbsOp>},
      {"Erf", makeUnary<l1::ErfOp>},
      {"HardSwish", makeUnary<l1::HardSwishOp>},
      {"Sin", makeUnary<l1::SinOp>},
      {"Cos", makeUnary<l1::CosOp>},
      {"Tan", makeUnary<l1::TanOp>},
      {"Asin", makeUnary<l1::AsinOp>},
      {"Acos", makeUnary<l1::AcosOp>},
      {"Atan", makeUnary<l1::AtanOp>},
      {"Sinh", makeUnary<l1::SinhOp>},
      {"Cosh", makeUnary<l1::CoshOp>},
      {"Asinh", makeUnary<l1::AsinhOp>},
      {"Acosh", makeUnary<l1::AcoshOp>},
      {"Atanh", makeUnary<l1::AtanhOp>},
      {"Ceil", makeUnary<l1::CeilOp>},
      {"Floor", makeUnary<l1::FloorOp>},
      {"Round", makeUnary<l1::RoundOp>},
      {"Softplus", makeUnary<l1::SoftplusOp>},
      {"Softsign", makeUnary<l1::SoftsignOp>},
      {"Sign", makeUnary<l1::SignOp>},
      {"Not", makeUnary<l1::NotOp>},
      {"IsNaN", makeUnary<l1::IsNanOp>},
      {"IsInf",
       [](Importer &im, Node node, Location loc, Value x) {
         return im.create<l1::IsInfOp>(
             loc, x,
             im.builder.getBoolAttr(im.attrInt(node, "detect_negative", 1)),
             im.builder.getBoolAttr(im.attrInt(node, "detect_positive", 1)));
       }},
      {"Elu",
       [](Importer &im, Node node, Location loc, Value x) {
         return im.create<l1::EluOp>(loc, x, im.f64Attr(node, "alpha", 1.0));
       }},
      {"Celu",
       [](Importer &im, Node node, Location loc, Value x) {
         return im.create<l1::CeluOp>(loc, x, im.f64Attr(node, "alpha", 1.0));
       }},
      {"Selu",
       [](Importer &im, Node node, Location loc, Value x) {
         return im.create<l1::SeluOp>(
             loc, x, im.f64Attr(node, "alpha", 1.67326319217681884765625),
             im.f64Attr(node, "gamma", 1.05070102214813232421875));
       }},
      {"LeakyRelu",
       [](Importer &im, Node node, Location loc, Value x) {
         return im.create<l1::LeakyReluOp>(loc, x,
                                           im.f64Attr(node, "alpha", 0.01));
       }},
      {"ThresholdedRelu",
       [](Importer &im, Node node, Location loc, Value x) {
         return im.create<l1::ThresholdedReluOp>(
             loc, x, im.f64Attr(node, "alpha", 1.0));
       }},
      {"Shrink",
       [](Importer &im, Node node, Location loc, Value x) {
         return im.create<l1::ShrinkOp>(loc, x, im.f64Attr(node, "lambd", 0.5),
                                        im.f64Attr(node, "bias", 0.0));
       }},
      {"HardSigmoid",
       [](Importer &im, Node node, Location loc, Value x) {
         return im.create<l1::HardSigmoidOp>(loc, x,
                                             im.f64Attr(node, "alpha", 0.2),
                                             im.f64Attr(node, "beta", 0.5));
       }},
      {"Gelu",
       [](Importer &im, Node node, Location loc, Value x) {
         return im.create<l1::GeluOp>(loc, x,
                                      im.builder.getStringAttr(im.attrString(
                                          node, "approximate", "none")));
       }},
  };
  return makers;
}

static double roundTo(Type type, double value);

/// Arithmetic on a few host floats (a Range's element count computed by
/// its ONNX function: ceil, relu), in the tensor's precision.
static std::optional<HostTensor> foldFloatUnary(StringRef op,
                                                const HostTensor &x) {
  std::function<double(double)> f;
  if (op == "Neg")
    f = [](double v) { return -v; };
  else if (op == "Abs")
    f = [](double v) { return std::abs(v); };
  else if (op == "Ceil")
    f = [](double v) { return std::ceil(v); };
  else if (op == "Floor")
    f = [](double v) { return std::floor(v); };
  else if (op == "Relu")
    f = [](double v) { return v > 0 ? v : (v == v ? 0.0 : v); };
  if (!f || x.numElements() > 64)
    return std::nullopt;
  HostTensor result = x;
  for (double &v : result.floats)
    v = roundTo(result.elementType, f(v));
  return result;
}

/// Shape arithmetic on host integer tensors: -x, |x|, sign(x); unknown
/// entries (run-time dimensions) stay unknown.
static std::optional<HostTensor> foldUnary(StringRef op, const HostTensor &x) {
  if (x.isFloat())
    return foldFloatUnary(op, x);
  if (op != "Neg" && op != "Abs" && op != "Sign")
    return std::nullopt;
  HostTensor result = x;
  for (int64_t &v : result.ints) {
    if (v == kUnknown)
      continue;
    v = op == "Neg" ? -v : op == "Abs" ? std::abs(v) : (v > 0) - (v < 0);
  }
  return result;
}

LogicalResult Importer::convertUnary(const onnx::NodeProto &node,
                                     Location loc) {
  if (const HostTensor *host = getHost(node, 0))
    if (std::optional<HostTensor> folded = foldUnary(node.op_type(), *host)) {
      defineHost(node, 0, std::move(*folded));
      return success();
    }
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  UnaryMaker make = getUnaryMakers().lookup(node.op_type());
  return defineResult(node, make(*this, node, loc, *x));
}

/// `value` rounded to the float type `type`.
static double roundTo(Type type, double value) {
  return toFloatElement(type, value).convertToDouble();
}

/// Float shape arithmetic (sizes scaled by a factor, as exporters write
/// interpolation and window sizes): +, -, *, / of small float tensors of one
/// type, each result rounded to that type as the run-time op would give it
/// (double holds every float16 / bfloat16 / float32 product exactly enough
/// for that).
static std::optional<HostTensor>
foldFloatBinary(StringRef op, const HostTensor &lhs, const HostTensor &rhs) {
  bool lhsScalar = lhs.numElements() == 1, rhsScalar = rhs.numElements() == 1;
  if (!lhs.elementType.isF64() && !lhs.elementType.isF32() &&
      !lhs.elementType.isF16() && !lhs.elementType.isBF16())
    return std::nullopt;
  HostTensor result;
  result.elementType = lhs.elementType;
  result.shape = lhsScalar && !rhsScalar ? rhs.shape : lhs.shape;
  int64_t n = std::max(lhs.numElements(), rhs.numElements());
  for (int64_t i = 0; i < n; ++i) {
    double a = lhs.floats[lhsScalar ? 0 : i], b = rhs.floats[rhsScalar ? 0 : i];
    double r;
    if (op == "Add")
      r = a + b;
    else if (op == "Sub")
      r = a - b;
    else if (op == "Mul")
      r = a * b;
    else if (op == "Div")
      r = a / b;
    else
      return std::nullopt;
    result.floats.push_back(roundTo(result.elementType, r));
  }
  return result;
}

std::optional<HostTensor> Importer::foldBinary(StringRef op,
                                               const HostTensor &lhs,
                                               const HostTensor &rhs) {
  // Shape arithmetic only: tensors of one type with equal shapes or a
  // scalar.
  if (lhs.elementType != rhs.elementType)
    return std::nullopt;
  bool lhsScalar = lhs.numElements() == 1, rhsScalar = rhs.numElements() == 1;
  if (lhs.shape != rhs.shape && !lhsScalar && !rhsScalar)
    return std::nullopt;
  if (lhs.isFloat())
    return foldFloatBinary(op, lhs, rhs);
  HostTensor result;
  result.elementType =
      op == "Equal" ? Builder(&context).getI1Type() : lhs.elementType;
  result.shape = lhsScalar && !rhsScalar ? rhs.shape : lhs.shape;
  int64_t n = std::max(lhs.numElements(), rhs.numElements());
  for (int64_t i = 0; i < n; ++i) {
    int64_t a = lhs.ints[lhsScalar ? 0 : i], b = rhs.ints[rhsScalar ? 0 : i];
    if (a == kUnknown || b == kUnknown) {
      // An unknown dimension is positive: it never equals -1 or 0, which
      // is what exported shape code compares against.
      int64_t known = a == kUnknown ? b : a;
      if (op == "Equal" && known != kUnknown && known < 1) {
        result.ints.push_back(0);
        continue;
      }
      result.ints.push_back(kUnknown);
      continue;
    }
    if (op == "Add")
      result.ints.push_back(a + b);
    else if (op == "Equal")
      result.ints.push_back(a == b);
    else if (op == "Sub")
      result.ints.push_back(a - b);
    else if (op == "Mul")
      result.ints.push_back(a * b);
    else if (op == "Div" && b != 0)
      result.ints.push_back(a / b);
    else
      return std::nullopt;
  }
  return result;
}

LogicalResult Importer::convertBinary(const onnx::NodeProto &node,
                                      Location loc) {
  const std::string &op = node.op_type();
  const HostTensor *lhsHost = getHost(node, 0), *rhsHost = getHost(node, 1);
  if (lhsHost && rhsHost &&
      (lhsHost->hasUnknown() || rhsHost->hasUnknown() ||
       lhsHost->numElements() <= 64)) {
    if (std::optional<HostTensor> folded = foldBinary(op, *lhsHost, *rhsHost)) {
      defineHost(node, 0, std::move(*folded));
      return success();
    }
  }
  FailureOr<Value> lhs = getValue(node, 0), rhs = getValue(node, 1);
  if (failed(lhs) || failed(rhs))
    return failure();
  FailureOr<Value> r = failure();
  if (op == "Add")
    r = create<l1::AddOp>(loc, *lhs, *rhs);
  else if (op == "Sub")
    r = create<l1::SubOp>(loc, *lhs, *rhs);
  else if (op == "Mul")
    r = create<l1::MulOp>(loc, *lhs, *rhs);
  else if (op == "Div")
    r = create<l1::DivOp>(loc, *lhs, *rhs);
  else if (op == "Pow") {
    // ONNX allows a different exponent type; level1 does not promote.
    Value exponent = *rhs;
    auto lhsType = cast<RankedTensorType>(lhs->getType());
    auto rhsType = cast<RankedTensorType>(rhs->getType());
    if (lhsType.getElementType() != rhsType.getElementType())
      exponent = l1::CastOp::create(
          builder, loc, rhsType.clone(lhsType.getElementType()), *rhs);
    r = create<l1::PowOp>(loc, *lhs, exponent);
  } else if (op == "Equal")
    r = create<l1::EqualOp>(loc, *lhs, *rhs);
  else if (op == "Less")
    r = create<l1::LessOp>(loc, *lhs, *rhs);
  else if (op == "LessOrEqual")
    r = create<l1::LessEqualOp>(loc, *lhs, *rhs);
  else if (op == "Greater")
    r = create<l1::GreaterOp>(loc, *lhs, *rhs);
  else if (op == "GreaterOrEqual")
    r = create<l1::GreaterEqualOp>(loc, *lhs, *rhs);
  else if (op == "And")
    r = create<l1::AndOp>(loc, *lhs, *rhs);
  else if (op == "Or")
    r = create<l1::OrOp>(loc, *lhs, *rhs);
  else if (op == "Xor")
    r = create<l1::XorOp>(loc, *lhs, *rhs);
  return defineResult(node, r);
}

LogicalResult Importer::convertMod(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> lhs = getValue(node, 0), rhs = getValue(node, 1);
  if (failed(lhs) || failed(rhs))
    return failure();
  UnitAttr fmod = attrInt(node, "fmod", 0) ? builder.getUnitAttr() : UnitAttr();
  return defineResult(node, create<l1::ModOp>(loc, *lhs, *rhs, fmod));
}

LogicalResult Importer::convertBitShift(const onnx::NodeProto &node,
                                        Location loc) {
  FailureOr<Value> lhs = getValue(node, 0), rhs = getValue(node, 1);
  if (failed(lhs) || failed(rhs))
    return failure();
  std::string direction = attrString(node, "direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return emitError(loc) << "BitShift direction must be 'LEFT' or 'RIGHT', "
                          << "got '" << direction << "'";
  UnitAttr right = direction == "RIGHT" ? builder.getUnitAttr() : UnitAttr();
  return defineResult(node, create<l1::BitShiftOp>(loc, *lhs, *rhs, right));
}

LogicalResult Importer::convertPRelu(const onnx::NodeProto &node,
                                     Location loc) {
  FailureOr<Value> x = getValue(node, 0), slope = getValue(node, 1);
  if (failed(x) || failed(slope))
    return failure();
  return defineResult(node, create<l1::PReluOp>(loc, *x, *slope));
}

LogicalResult Importer::convertVariadic(const onnx::NodeProto &node,
                                        Location loc) {
  if (node.input_size() == 0)
    return emitError(loc) << node.op_type() << " needs at least one input";
  FailureOr<Value> acc = getValue(node, 0);
  if (failed(acc))
    return failure();
  for (int i = 1; i < node.input_size(); ++i) {
    FailureOr<Value> next = getValue(node, i);
    if (failed(next))
      return failure();
    if (node.op_type() == "Max")
      acc = create<l1::MaxOp>(loc, *acc, *next);
    else if (node.op_type() == "Min")
      acc = create<l1::MinOp>(loc, *acc, *next);
    else
      acc = create<l1::AddOp>(loc, *acc, *next);
    if (failed(acc))
      return failure();
  }
  if (node.op_type() == "Mean" && node.input_size() > 1) {
    Type element = getElementTypeOrSelf(acc->getType());
    if (!isa<FloatType>(element))
      return emitError(loc)
             << "Mean expects floating-point inputs, got " << element;
    acc = create<l1::DivOp>(loc, *acc,
                            scalarConstant(loc, element, node.input_size()));
    if (failed(acc))
      return failure();
  }
  define(node, 0, *acc);
  return success();
}

LogicalResult Importer::convertWhere(const onnx::NodeProto &node,
                                     Location loc) {
  // Selecting between shape vectors (x.expand(n, -1, -1) exports this way).
  const HostTensor *condHost = getHost(node, 0), *xHost = getHost(node, 1),
                   *yHost = getHost(node, 2);
  if (condHost && xHost && yHost && !condHost->isFloat() && !xHost->isFloat() &&
      !yHost->isFloat() && !llvm::is_contained(condHost->ints, kUnknown)) {
    std::initializer_list<const HostTensor *> all = {condHost, xHost, yHost};
    int64_t n = 1;
    for (const HostTensor *t : all)
      n = std::max(n, t->numElements());
    auto at = [&](const HostTensor *t, int64_t i) {
      return t->ints[t->numElements() == 1 ? 0 : i];
    };
    bool shapesOk = llvm::all_of(all, [&](const HostTensor *t) {
      return t->numElements() == 1 || t->numElements() == n;
    });
    if (shapesOk) {
      HostTensor result;
      result.elementType = xHost->elementType;
      result.shape = {n};
      for (const HostTensor *t : all)
        if (t->numElements() == n)
          result.shape = t->shape;
      for (int64_t i = 0; i < n; ++i)
        result.ints.push_back(at(condHost, i) ? at(xHost, i) : at(yHost, i));
      defineHost(node, 0, std::move(result));
      return success();
    }
  }
  FailureOr<Value> c = getValue(node, 0), x = getValue(node, 1),
                   y = getValue(node, 2);
  if (failed(c) || failed(x) || failed(y))
    return failure();
  FailureOr<Value> r = create<l1::WhereOp>(loc, *c, *x, *y);
  return defineResult(node, r);
}

LogicalResult Importer::convertClip(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FloatAttr minAttr, maxAttr;
  if (opset < 11) {
    if (attr(node, "min"))
      minAttr = builder.getF64FloatAttr(attrFloat(node, "min", 0));
    if (attr(node, "max"))
      maxAttr = builder.getF64FloatAttr(attrFloat(node, "max", 0));
  } else {
    for (int i : {1, 2}) {
      if (!hasInput(node, i))
        continue;
      FailureOr<HostTensor> bound =
          requireHost(node, i, i == 1 ? "minimum" : "maximum");
      if (failed(bound))
        return failure();
      if (bound->numElements() != 1)
        return emitError(loc) << "Clip expects scalar bounds";
      (i == 1 ? minAttr : maxAttr) = builder.getF64FloatAttr(bound->at(0));
    }
  }
  FailureOr<Value> r = create<l1::ClipOp>(loc, *x, minAttr, maxAttr);
  return defineResult(node, r);
}

/// Shape values cast at import time: between integer types (unknown
/// dimensions stay unknown), and between small float and integer tensors
/// (float to integer truncates; NaN and values out of int64 are left to the
/// run-time cast).
static std::optional<HostTensor> foldCast(const HostTensor &host,
                                          Type element) {
  HostTensor result;
  result.elementType = element;
  result.shape = host.shape;
  bool toFloat = isa<FloatType>(element);
  if (!host.isFloat() && !toFloat) {
    result.ints = host.ints;
    if (element.isInteger(1))
      for (int64_t &v : result.ints)
        if (v != kUnknown)
          v = v != 0;
    return result;
  }
  if (host.numElements() > 64 || host.hasUnknown() ||
      (!toFloat && !isa<IntegerType>(element)))
    return std::nullopt;
  for (int64_t i = 0; i < host.numElements(); ++i) {
    double v = host.at(i);
    if (toFloat) {
      result.floats.push_back(roundTo(element, v));
      continue;
    }
    if (element.isInteger(1)) {
      result.ints.push_back(v != 0); // NaN too, as Cast's bool is x != 0
      continue;
    }
    if (!(std::abs(v) < 9.2e18))
      return std::nullopt;
    result.ints.push_back(static_cast<int64_t>(v));
  }
  return result;
}

LogicalResult Importer::convertCast(const onnx::NodeProto &node, Location loc) {
  Type element;
  if (node.op_type() == "CastLike") {
    FailureOr<RankedTensorType> like = getType(node, 1);
    if (failed(like))
      return failure();
    element = like->getElementType();
  } else {
    int64_t to = attrInt(node, "to", 0);
    element = toMlirType(&context, to);
    if (!element)
      return emitError(loc)
             << "Cast to " << onnxTypeName(to) << " is not supported";
  }
  if (const HostTensor *host = getHost(node, 0)) {
    if (std::optional<HostTensor> folded = foldCast(*host, element)) {
      defineHost(node, 0, std::move(*folded));
      return success();
    }
  }
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  define(node, 0,
         type.getElementType() == element
             ? *x
             : l1::CastOp::create(builder, loc, type.clone(element), *x)
                   .getResult());
  return success();
}

} // namespace cuvil::onnx_import
