//===- FixedType.h - fixed-point types of a design --------------*- C++ -*-===//
//
// The compiler's view of a fixed-point type <W, I> with its rounding and
// overflow modes: parsed from what users write (hls4ml's and the vendors'
// spellings), printed as the generated code's cuvil::fixed type, and as the
// level1 quantization design's #cuvil.fixed: a power-of-two-scaled
// !quant.uniform<iW:f32, 2^-F> with the modes beside it (the quant type
// has no place for them).
//
// Conversions here are exact integer arithmetic with the documented
// semantics of Xilinx ap_fixed / Intel ac_fixed (the same rules as
// hls/cuvil_fixed.h, written separately: the interpreter that computes a
// design's expected outputs checks the generated code, not itself).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_MODEL_FIXEDTYPE_H
#define CUVIL_TARGETS_FPGA_MODEL_FIXEDTYPE_H

#include "cuvil/ir/CuvilAttrs.h"

#include "absl/status/statusor.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"

#include <cstdint>
#include <string>

namespace cuvil::fpga {

enum class Rounding { TRN, TRN_ZERO, RND, RND_ZERO, RND_MIN_INF, RND_INF, RND_CONV };
enum class Overflow { WRAP, SAT, SAT_ZERO, SAT_SYM };

const char *roundingName(Rounding rounding);
const char *overflowName(Overflow overflow);

/// Exact arithmetic wide enough for a layer's sums (|value| < 2^120).
using Wide = __int128;

struct FixedType {
  int width = 16;
  /// Integer bits, the sign included (may exceed the width or be negative).
  int integer = 6;
  bool isSigned = true;
  Rounding rounding = Rounding::TRN;
  Overflow overflow = Overflow::WRAP;

  int fraction() const { return width - integer; }
  Wide maxRaw() const;
  Wide minRaw() const;

  /// "fixed<16,6>", with the modes when they are not TRN / WRAP
  /// ("ufixed<8,0,RND,SAT>").
  std::string str() const;
  /// The generated code's type: "cuvil::fixed<16, 6, true, cuvil::Q::RND,
  /// cuvil::O::SAT>".
  std::string cppType() const;

  /// The stored integer of this type for the exact value raw * 2^-frac:
  /// quantized by `rounding`, then fitted by `overflow`.
  int64_t fromScaled(Wide raw, int frac) const;
  /// The stored integer for a double, converted exactly first (NaN is 0).
  int64_t fromDouble(double value) const;
  /// The value of a stored integer.
  double toDouble(int64_t raw) const;

  /// The level1 quantization design's type: iW (or uiW) storage, scale
  /// 2^-F, zero point 0. Null for types the quant dialect cannot express
  /// (wider than 32 bits).
  mlir::quant::UniformQuantizedType toQuantType(mlir::MLIRContext *context) const;

  /// The level1 attribute #cuvil.fixed<type, "ROUNDING", "OVERFLOW">.
  l1::FixedAttr toAttr(mlir::MLIRContext *context) const;
  static FixedType fromAttr(l1::FixedAttr attr);

  bool operator==(const FixedType &other) const;
  bool operator!=(const FixedType &other) const { return !(*this == other); }
};

/// --precision=auto<W>: the signed W-bit RND / SAT type with the fewest
/// integer bits holding +-maxAbs.
FixedType autoFixedType(int width, double maxAbs);

/// A model's precision as users write it: a fixed-point type, or auto /
/// auto<W> (autoWidth W, 16 for auto).
struct Precision {
  FixedType type;
  int autoWidth = 0;
};

/// Parses a precision; errors say what it takes.
absl::StatusOr<Precision> parsePrecision(llvm::StringRef text);

/// Parses fixed<W,I[,Q[,O]]>, ufixed<...>, ap_fixed<W,I[,AP_Q[,AP_O]]>,
/// ap_ufixed<...> and ac_fixed<W,I[,S[,AC_Q[,AC_O]]]>. Modes may be
/// written with or without their AP_ / AC_ prefix. W is 1 to 32.
absl::StatusOr<FixedType> parseFixedType(llvm::StringRef text);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_MODEL_FIXEDTYPE_H
