//===- FixedType.cpp - fixed-point types of a design ----------------------===//

#include "cuvil/targets/fpga/model/FixedType.h"

#include "cuvil/support/StatusMacros.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

namespace cuvil::fpga {

namespace {

const char *const kRoundingNames[] = {"TRN",         "TRN_ZERO", "RND",
                                      "RND_ZERO",    "RND_MIN_INF",
                                      "RND_INF",     "RND_CONV"};
const char *const kOverflowNames[] = {"WRAP", "SAT", "SAT_ZERO", "SAT_SYM"};

Wide pow2(int n) { return static_cast<Wide>(1) << n; }

/// floor(value / 2^shift), moved up by one where `rounding` says, from the
/// bits shifted out: `half` (the first) and `rest` (any other).
Wide shiftRound(Wide value, int shift, Rounding rounding) {
  if (shift <= 0)
    return value * pow2(-shift);
  Wide floor;
  bool half, rest;
  if (shift > 120) {
    floor = value < 0 ? -1 : 0;
    half = value < 0;
    rest = value != 0;
  } else {
    floor = value >> shift;
    Wide dropped = value - floor * pow2(shift);
    half = (dropped >> (shift - 1)) & 1;
    rest = (dropped & (pow2(shift - 1) - 1)) != 0;
  }
  bool negative = value < 0;
  bool up = false;
  switch (rounding) {
  case Rounding::TRN: break;
  case Rounding::TRN_ZERO: up = negative && (half || rest); break;
  case Rounding::RND: up = half; break;
  case Rounding::RND_ZERO: up = half && (negative || rest); break;
  case Rounding::RND_MIN_INF: up = half && rest; break;
  case Rounding::RND_INF: up = half && (!negative || rest); break;
  case Rounding::RND_CONV: up = half && ((floor & 1) || rest); break;
  }
  return floor + up;
}

template <typename Enum, size_t N>
std::optional<Enum> parseMode(llvm::StringRef text, const char *const (&names)[N]) {
  std::string upper = absl::AsciiStrToUpper(text.trim().str());
  absl::string_view name = upper;
  if (!absl::ConsumePrefix(&name, "AP_"))
    absl::ConsumePrefix(&name, "AC_");
  for (size_t i = 0; i < N; ++i)
    if (name == names[i])
      return static_cast<Enum>(i);
  return std::nullopt;
}

} // namespace

const char *roundingName(Rounding rounding) {
  return kRoundingNames[static_cast<int>(rounding)];
}
const char *overflowName(Overflow overflow) {
  return kOverflowNames[static_cast<int>(overflow)];
}

Wide FixedType::maxRaw() const {
  return isSigned ? pow2(width - 1) - 1 : pow2(width) - 1;
}
Wide FixedType::minRaw() const { return isSigned ? -pow2(width - 1) : 0; }

std::string FixedType::str() const {
  std::string text = absl::StrCat(isSigned ? "fixed<" : "ufixed<", width, ",",
                                  integer);
  if (rounding != Rounding::TRN || overflow != Overflow::WRAP)
    absl::StrAppend(&text, ",", roundingName(rounding));
  if (overflow != Overflow::WRAP)
    absl::StrAppend(&text, ",", overflowName(overflow));
  return text + ">";
}

std::string FixedType::cppType() const {
  return absl::StrCat("cuvil::fixed<", width, ", ", integer, ", ",
                      isSigned ? "true" : "false", ", cuvil::Q::",
                      roundingName(rounding), ", cuvil::O::",
                      overflowName(overflow), ">");
}

int64_t FixedType::fromScaled(Wide raw, int frac) const {
  Wide value = shiftRound(raw, frac - fraction(), rounding);
  Wide max = maxRaw(), min = minRaw();
  switch (overflow) {
  case Overflow::WRAP: {
    Wide low = value & (pow2(width) - 1);
    if (isSigned && low > max)
      low -= pow2(width);
    return static_cast<int64_t>(low);
  }
  case Overflow::SAT_ZERO:
    return value > max || value < min ? 0 : static_cast<int64_t>(value);
  case Overflow::SAT_SYM:
    if (isSigned)
      min += 1;
    [[fallthrough]];
  case Overflow::SAT:
    return static_cast<int64_t>(value > max ? max : value < min ? min : value);
  }
  return 0;
}

int64_t FixedType::fromDouble(double value) const {
  if (std::isnan(value) || value == 0)
    return 0;
  if (std::isinf(value))
    return fromScaled(value > 0 ? pow2(100) : -pow2(100), 0);
  int exponent;
  double mantissa = std::frexp(value, &exponent);
  Wide m = static_cast<Wide>(std::ldexp(mantissa, 53));
  int frac = 53 - exponent;
  // Below every quantum by far, or beyond every range: the first bits
  // decide alone (shiftRound handles any shift; a huge value saturates).
  if (frac < -60)
    return fromScaled(value > 0 ? pow2(100) : -pow2(100), 0);
  return fromScaled(m, frac);
}

double FixedType::toDouble(int64_t raw) const {
  return std::ldexp(static_cast<double>(raw), -fraction());
}

mlir::quant::UniformQuantizedType
FixedType::toQuantType(mlir::MLIRContext *context) const {
  if (width > 32)
    return nullptr;
  unsigned flags = isSigned ? mlir::quant::QuantizationFlags::Signed : 0;
  return mlir::quant::UniformQuantizedType::get(
      flags, mlir::IntegerType::get(context, width),
      mlir::Float32Type::get(context), std::ldexp(1.0, -fraction()),
      /*zeroPoint=*/0, static_cast<int64_t>(minRaw()),
      static_cast<int64_t>(maxRaw()));
}

l1::FixedAttr FixedType::toAttr(mlir::MLIRContext *context) const {
  return l1::FixedAttr::get(context, toQuantType(context),
                            roundingName(rounding), overflowName(overflow));
}

FixedType FixedType::fromAttr(l1::FixedAttr attr) {
  FixedType type;
  type.width = attr.getWidth();
  type.integer = type.width - attr.getFraction();
  type.isSigned = attr.isSigned();
  type.rounding = *parseMode<Rounding>(attr.getRounding(), kRoundingNames);
  type.overflow = *parseMode<Overflow>(attr.getOverflow(), kOverflowNames);
  return type;
}

FixedType autoFixedType(int width, double maxAbs) {
  int integer = -24;
  while (std::ldexp(1.0, integer - 1) <= maxAbs && integer < 64)
    ++integer;
  return FixedType{width, integer, true, Rounding::RND, Overflow::SAT};
}

bool FixedType::operator==(const FixedType &other) const {
  return width == other.width && integer == other.integer &&
         isSigned == other.isSigned && rounding == other.rounding &&
         overflow == other.overflow;
}

absl::StatusOr<FixedType> parseFixedType(llvm::StringRef text) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad fixed-point type '", text.str(), "': ", why,
        "; write fixed<W,I> or fixed<W,I,ROUNDING,OVERFLOW> (also ufixed, "
        "ap_fixed, ap_ufixed, ac_fixed), W from 1 to 32, rounding TRN, "
        "TRN_ZERO, RND, RND_ZERO, RND_MIN_INF, RND_INF or RND_CONV, "
        "overflow WRAP, SAT, SAT_ZERO or SAT_SYM"));
  };
  llvm::StringRef body = text.trim();
  size_t open = body.find('<');
  if (open == llvm::StringRef::npos || !body.ends_with(">"))
    return bad("no <...>");
  std::string kind = absl::AsciiStrToLower(body.substr(0, open).trim().str());
  std::vector<std::string> args = absl::StrSplit(
      absl::string_view(body.data() + open + 1, body.size() - open - 2), ',');
  FixedType type;
  type.isSigned = kind == "fixed" || kind == "ap_fixed" || kind == "ac_fixed";
  if (!type.isSigned && kind != "ufixed" && kind != "ap_ufixed")
    return bad(absl::StrCat("unknown kind '", kind, "'"));
  size_t next = 2;
  if (args.size() < 2 ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(args[0]), &type.width) ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(args[1]), &type.integer))
    return bad("W and I must be integers");
  if (type.width < 1 || type.width > 32)
    return bad("W must be 1 to 32");
  if (type.integer < -32 || type.integer > 64)
    return bad("I must be -32 to 64");
  if (kind == "ac_fixed" && args.size() > 2) {
    std::string sign = absl::AsciiStrToLower(absl::StripAsciiWhitespace(args[2]));
    if (sign != "true" && sign != "false")
      return bad("ac_fixed's third parameter is true or false (signed)");
    type.isSigned = sign == "true";
    next = 3;
  }
  if (args.size() > next + 2)
    return bad("too many parameters");
  if (args.size() > next) {
    std::optional<Rounding> rounding =
        parseMode<Rounding>(args[next], kRoundingNames);
    if (!rounding)
      return bad(absl::StrCat("unknown rounding mode '", args[next], "'"));
    type.rounding = *rounding;
  }
  if (args.size() > next + 1) {
    std::optional<Overflow> overflow =
        parseMode<Overflow>(args[next + 1], kOverflowNames);
    if (!overflow)
      return bad(absl::StrCat("unknown overflow mode '", args[next + 1], "'"));
    type.overflow = *overflow;
  }
  return type;
}

absl::StatusOr<Precision> parsePrecision(llvm::StringRef text) {
  Precision precision;
  if (text != "auto" && !text.starts_with("auto<")) {
    ASSIGN_OR_RETURN(precision.type, parseFixedType(text));
    return precision;
  }
  precision.autoWidth = 16;
  if (text != "auto" &&
      (!text.ends_with(">") ||
       !absl::SimpleAtoi(absl::string_view(text.data() + 5, text.size() - 6),
                         &precision.autoWidth) ||
       precision.autoWidth < 2 || precision.autoWidth > 32))
    return absl::InvalidArgumentError("auto<W> takes a width W from 2 to 32");
  return precision;
}

} // namespace cuvil::fpga
