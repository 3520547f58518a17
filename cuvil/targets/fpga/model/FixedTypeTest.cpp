#include "cuvil/targets/fpga/model/FixedType.h"

#include "cuvil/ir/CuvilDialect.h"

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

namespace cuvil::fpga {
namespace {

FixedType parse(const char *text) {
  absl::StatusOr<FixedType> type = parseFixedType(text);
  EXPECT_TRUE(type.ok()) << text << ": " << type.status().message();
  return type.value_or(FixedType());
}

TEST(FixedTypeTest, ParsesTheSpellingsUsersWrite) {
  FixedType plain = parse("fixed<16,6>");
  EXPECT_EQ(plain.width, 16);
  EXPECT_EQ(plain.integer, 6);
  EXPECT_TRUE(plain.isSigned);
  EXPECT_EQ(plain.rounding, Rounding::TRN);
  EXPECT_EQ(plain.overflow, Overflow::WRAP);
  EXPECT_EQ(parse("ap_fixed<16, 6, AP_RND_CONV, AP_SAT>"),
            (FixedType{16, 6, true, Rounding::RND_CONV, Overflow::SAT}));
  EXPECT_EQ(parse("ap_ufixed<8,0,RND>"),
            (FixedType{8, 0, false, Rounding::RND, Overflow::WRAP}));
  EXPECT_EQ(parse("ac_fixed<10,3,false,AC_RND_ZERO,AC_SAT_SYM>"),
            (FixedType{10, 3, false, Rounding::RND_ZERO, Overflow::SAT_SYM}));
  EXPECT_EQ(parse("fixed<8,3,RND,SAT>").str(), "fixed<8,3,RND,SAT>");
  EXPECT_EQ(parse("ufixed<8,3>").str(), "ufixed<8,3>");
  EXPECT_EQ(parse("fixed<8,3,RND,SAT>").cppType(),
            "cuvil::fixed<8, 3, true, cuvil::Q::RND, cuvil::O::SAT>");
}

TEST(FixedTypeTest, RefusesWhatItCannotMean) {
  for (const char *text : {"fixed<0,0>", "fixed<33,1>", "fixed<16>",
                           "fixed<16,6,ROUND>", "fixed<16,6,RND,CLAMP>",
                           "float<16,6>", "fixed16", "fixed<16,6,RND,SAT,X>",
                           "ac_fixed<8,3,maybe>"}) {
    absl::StatusOr<FixedType> type = parseFixedType(text);
    EXPECT_FALSE(type.ok()) << text;
    if (!type.ok()) {
      EXPECT_NE(type.status().message().find("fixed<W,I>"), std::string::npos);
    }
  }
}

/// The stored integer of fixed<8,4> (quantum 1/16) for value / 32, a tie
/// between two quanta when value is odd.
int64_t quantize(Rounding rounding, int64_t value) {
  FixedType type{8, 4, true, rounding, Overflow::WRAP};
  return type.fromScaled(value, 5);
}

TEST(FixedTypeTest, EveryRoundingModeOnTies) {
  // +2.5 quanta (5/32 = 2.5/16) and -2.5 quanta; +2.75 and -2.75.
  struct Case {
    Rounding rounding;
    int64_t plusTie, minusTie, plusAbove, minusAbove;
  };
  for (const Case &c : std::vector<Case>{
           {Rounding::TRN, 2, -3, 2, -3},
           {Rounding::TRN_ZERO, 2, -2, 2, -2},
           {Rounding::RND, 3, -2, 3, -3},
           {Rounding::RND_ZERO, 2, -2, 3, -3},
           {Rounding::RND_MIN_INF, 2, -3, 3, -3},
           {Rounding::RND_INF, 3, -3, 3, -3},
           {Rounding::RND_CONV, 2, -2, 3, -3}}) {
    SCOPED_TRACE(roundingName(c.rounding));
    EXPECT_EQ(quantize(c.rounding, 5), c.plusTie);
    EXPECT_EQ(quantize(c.rounding, -5), c.minusTie);
    // 2.75 quanta: 11/64 = value 11 at 6 fraction bits.
    FixedType type{8, 4, true, c.rounding, Overflow::WRAP};
    EXPECT_EQ(type.fromScaled(11, 6), c.plusAbove);
    EXPECT_EQ(type.fromScaled(-11, 6), c.minusAbove);
  }
  // RND_CONV rounds 3.5 quanta up to the even 4.
  EXPECT_EQ(quantize(Rounding::RND_CONV, 7), 4);
}

TEST(FixedTypeTest, EveryOverflowMode) {
  auto fit = [](Overflow overflow, bool isSigned, int64_t raw) {
    return FixedType{4, 4, isSigned, Rounding::TRN, overflow}.fromScaled(raw, 0);
  };
  EXPECT_EQ(fit(Overflow::WRAP, true, 9), -7);
  EXPECT_EQ(fit(Overflow::WRAP, true, -9), 7);
  EXPECT_EQ(fit(Overflow::WRAP, false, 17), 1);
  EXPECT_EQ(fit(Overflow::SAT, true, 9), 7);
  EXPECT_EQ(fit(Overflow::SAT, true, -9), -8);
  EXPECT_EQ(fit(Overflow::SAT, false, -3), 0);
  EXPECT_EQ(fit(Overflow::SAT_ZERO, true, 9), 0);
  EXPECT_EQ(fit(Overflow::SAT_ZERO, true, 7), 7);
  EXPECT_EQ(fit(Overflow::SAT_SYM, true, -9), -7);
  EXPECT_EQ(fit(Overflow::SAT_SYM, true, -8), -7);
  EXPECT_EQ(fit(Overflow::SAT_SYM, false, 20), 15);
}

TEST(FixedTypeTest, DoublesConvertExactlyFirst) {
  FixedType type{16, 6, true, Rounding::RND, Overflow::SAT};
  EXPECT_EQ(type.fromDouble(1.5), 1536);
  EXPECT_EQ(type.fromDouble(-0.00048828125), 0);  // -half a quantum: RND up
  EXPECT_EQ(type.fromDouble(-0.00048828126), -1); // just below the tie
  EXPECT_EQ(type.fromDouble(1e30), 32767);
  EXPECT_EQ(type.fromDouble(-1e300), -32768);
  EXPECT_EQ(type.fromDouble(1e-300), 0);
  EXPECT_EQ(type.fromDouble(std::nan("")), 0);
  EXPECT_DOUBLE_EQ(type.toDouble(1536), 1.5);
}

TEST(FixedTypeTest, IsAPowerOfTwoScaledQuantType) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::quant::QuantDialect>();
  mlir::quant::UniformQuantizedType quant =
      parse("fixed<16,6>").toQuantType(&context);
  ASSERT_TRUE(quant);
  EXPECT_EQ(quant.getScale(), 1.0 / 1024);
  EXPECT_EQ(quant.getZeroPoint(), 0);
  EXPECT_EQ(quant.getStorageTypeIntegralWidth(), 16u);
  EXPECT_TRUE(quant.isSigned());
  EXPECT_EQ(quant.getStorageTypeMin(), -32768);
  mlir::quant::UniformQuantizedType unsignedQuant =
      parse("ufixed<8,2>").toQuantType(&context);
  ASSERT_TRUE(unsignedQuant);
  EXPECT_FALSE(unsignedQuant.isSigned());
  EXPECT_EQ(unsignedQuant.getStorageTypeMax(), 255);
}

TEST(FixedTypeTest, RoundTripsThroughTheLevel1Attribute) {
  mlir::MLIRContext context;
  context.loadDialect<l1::CuvilDialect, mlir::quant::QuantDialect>();
  for (const char *text :
       {"fixed<16,6>", "ufixed<8,0,RND_CONV,SAT_SYM>", "fixed<12,-3,RND,SAT>",
        "fixed<4,9,TRN_ZERO,SAT_ZERO>", "ufixed<32,32,RND_MIN_INF>"}) {
    FixedType type = parse(text);
    l1::FixedAttr attr = type.toAttr(&context);
    ASSERT_TRUE(attr) << text;
    EXPECT_EQ(attr.getWidth(), type.width) << text;
    EXPECT_EQ(attr.getFraction(), type.fraction()) << text;
    EXPECT_EQ(FixedType::fromAttr(attr), type) << text;
  }
}

TEST(FixedTypeTest, PrecisionIsATypeOrAuto) {
  absl::StatusOr<Precision> given = parsePrecision("ap_fixed<8,3>");
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->autoWidth, 0);
  EXPECT_EQ(given->type.str(), "fixed<8,3>");
  EXPECT_EQ(parsePrecision("auto")->autoWidth, 16);
  EXPECT_EQ(parsePrecision("auto<10>")->autoWidth, 10);
  for (const char *bad : {"auto<1>", "auto<33>", "auto<x>", "auto<8", "fix"})
    EXPECT_FALSE(parsePrecision(bad).ok()) << bad;
  // auto<W>: the fewest integer bits holding +-maxAbs, RND / SAT.
  EXPECT_EQ(autoFixedType(8, 3.0).str(), "fixed<8,3,RND,SAT>");
  EXPECT_EQ(autoFixedType(8, 4.0).integer, 4); // 4 is not below 2^2
  EXPECT_EQ(autoFixedType(8, 0.75).integer, 1);
  EXPECT_EQ(autoFixedType(8, 0.0).integer, -24);
}

} // namespace
} // namespace cuvil::fpga
