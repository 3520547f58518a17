//===- CExpr.cpp - C expressions of buffers, types and values -------------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"

#include "cuvil/ir/Quantization.h"

#include "absl/strings/str_join.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace cuvil::cpu::emitter {

using namespace mlir;

std::string joinProduct(const std::vector<std::string> &terms) {
  int64_t constant = 1;
  std::vector<std::string> symbolic;
  for (const std::string &t : terms) {
    int64_t v;
    if (llvm::to_integer(t, v))
      constant *= v;
    else
      symbolic.push_back(t);
  }
  if (constant == 0)
    return "0";
  if (constant != 1 || symbolic.empty())
    symbolic.push_back(std::to_string(constant));
  return symbolic.size() == 1 ? symbolic[0]
                              : "(" + absl::StrJoin(symbolic, "*") + ")";
}

std::string joinSum(const std::vector<std::string> &terms) {
  return terms.empty() ? std::string("0") : absl::StrJoin(terms, " + ");
}

namespace {

/// The C ABI's row (cuvil/abi/DTypes.def) of an element type.
struct DTypeRow {
  const char *name;
  const char *cType;
  const char *mlir;
};

constexpr DTypeRow kDTypes[] = {
#define CUVIL_DTYPE(name, bytes, c_type, mlir, v2, numpy, torch, served)       \
  {#name, #c_type, #mlir},
#include "cuvil/abi/DTypes.def"
#undef CUVIL_DTYPE
};

const DTypeRow *dtypeRow(Type type) {
  std::string spelled;
  llvm::raw_string_ostream(spelled) << type;
  for (const DTypeRow &row : kDTypes)
    if (spelled == row.mlir)
      return &row;
  return nullptr;
}

/// `value` with enough digits to read back the same double.
std::string decimal(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.17g", value);
  if (text.find_first_of(".eE") == std::string::npos)
    text += ".0";
  return text;
}

} // namespace

std::string cType(Type type) {
  const DTypeRow *row = dtypeRow(l1::storageElementType(type));
  return row ? row->cType : "";
}

std::string dtypeName(Type type) {
  // A per-tensor quantized tensor crosses the ABI as its storage (integer
  // I/O), its scale and zero point in the metadata; per-axis ones do not.
  if (isa<quant::UniformQuantizedPerAxisType>(type))
    return "unknown";
  const DTypeRow *row = dtypeRow(l1::storageElementType(type));
  return row ? row->name : "unknown";
}

int64_t elementBytes(Type type) {
  type = l1::storageElementType(type);
  if (type.isInteger(1))
    return 1;
  return type.getIntOrFloatBitWidth() / 8;
}

std::string literal(double value, Type type) {
  if (std::isnan(value))
    return type.isF32() ? "NAN" : "(double)NAN";
  if (std::isinf(value))
    return std::string(value < 0 ? "-" : "") +
           (type.isF32() ? "INFINITY" : "(double)INFINITY");
  if (isa<FloatType>(type))
    return type.isF32() ? "(float)" + decimal(value) : decimal(value);
  return "(" + cType(type) + ")" + std::to_string(static_cast<int64_t>(value));
}

std::string floatLiteral(double value) {
  if (std::isinf(value))
    return value < 0 ? "-INFINITY" : "INFINITY";
  return "(float)" + decimal(value);
}

std::string mathSuffix(Type type) { return type.isF32() ? "f" : ""; }

std::string tanhExpr(const std::string &x, Type type) {
  if (!type.isF32())
    return "tanh(" + x + ")";
  std::string one = literal(1, type), two = literal(2, type);
  return "(" + one + " - " + two + " / (cuvil_expf(" + two + " * " + x +
         ") + " + one + "))";
}

std::string extremumExpr(const std::string &cmp, const std::string &x,
                         const std::string &y) {
  return "(" + x + " " + cmp + " " + y + " || " + x + " != " + x + " ? " + x +
         " : " + y + ")";
}

std::string load(const Buffer &b, const std::string &element) {
  Type t = b.type.getElementType();
  if (t.isF16())
    return "cuvil_h2f(" + element + ")";
  if (t.isBF16())
    return "cuvil_bf2f(" + element + ")";
  return element;
}

std::string store(const Buffer &b, const std::string &value) {
  Type t = b.type.getElementType();
  if (t.isF16())
    return "cuvil_f2h(" + value + ")";
  if (t.isBF16())
    return "cuvil_f2bf(" + value + ")";
  return value;
}

std::vector<std::string> strides(const Buffer &b) {
  std::vector<std::string> result(b.dims.size());
  std::vector<std::string> suffix;
  for (int i = static_cast<int>(b.dims.size()) - 1; i >= 0; --i) {
    result[i] = joinProduct(suffix);
    suffix.insert(suffix.begin(), b.dims[i]);
  }
  return result;
}

std::string dimsRange(const Buffer &b, size_t from, size_t to) {
  return joinProduct(
      std::vector<std::string>(b.dims.begin() + from, b.dims.begin() + to));
}

std::string bytes(const Buffer &b) {
  return joinProduct(
      {numel(b), std::to_string(elementBytes(b.type.getElementType()))});
}

} // namespace cuvil::cpu::emitter
