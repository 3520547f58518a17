//===- ConvertDet.cpp - ONNX Det as pivoted elimination ------------------===//
//
// Det of [..., n, n] by Gaussian elimination with partial pivoting (the LU
// factorization numpy's det calls in LAPACK), unrolled over the n columns
// since n is static. Each step works on the trailing [B, m, m] block:
//   p = argmax |M[:, :, 0]|, rows 0 and p swapped by a gather (a swap
//   flips the sign), det *= the pivot M[:, 0, 0], and
//   M <- M[1:, 1:] - M[1:, 0] / pivot * M[0, 1:].
// A zero pivot means the whole column is zero: the determinant is 0, and
// the step divides by 1 instead, so no inf or NaN reaches later steps.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

namespace cuvil::onnx_import {

/// Steps are unrolled: beyond this the import would grow a long graph.
constexpr int64_t kMaxDetOrder = 128;

/// The elimination's level1 ops on one [B, m, m] block at a time.
class DetLowering {
public:
  DetLowering(Importer &importer, Location loc, Type element)
      : im(importer), b(importer.builder), loc(loc), element(element) {}

  /// The determinant of each of the B matrices of `m`, as [B, 1, 1].
  FailureOr<Value> run(Value m, int64_t n) {
    Value det;
    for (int64_t size = n; size >= 1; --size) {
      FailureOr<std::pair<Value, Value>> swapped = pivotRows(m, size);
      if (failed(swapped))
        return failure();
      FailureOr<Value> pivot = block(swapped->first, 0, 1, 0, 1);
      FailureOr<Value> signed_ =
          failed(pivot) ? pivot
                        : im.create<l1::MulOp>(loc, *pivot, swapped->second);
      if (failed(signed_))
        return failure();
      FailureOr<Value> product =
          det ? im.create<l1::MulOp>(loc, det, *signed_) : signed_;
      if (failed(product))
        return failure();
      det = *product;
      if (size == 1)
        break;
      FailureOr<Value> rest = eliminate(swapped->first, *pivot, size);
      if (failed(rest))
        return failure();
      m = *rest;
    }
    return det;
  }

private:
  /// `m`'s block [rows r0..r1) x [columns c0..c1) of every matrix.
  FailureOr<Value> block(Value m, int64_t r0, int64_t r1, int64_t c0,
                         int64_t c1) {
    return im.create<l1::SliceOp>(loc, m, b.getDenseI64ArrayAttr({r0, c0}),
                                  b.getDenseI64ArrayAttr({r1, c1}),
                                  b.getDenseI64ArrayAttr({1, 2}),
                                  b.getDenseI64ArrayAttr({1, 1}));
  }

  Value constant(DenseElementsAttr value) {
    return l1::ConstantOp::create(b, loc, value);
  }

  /// `m` with row 0 and the row of its first column's largest magnitude
  /// swapped, and the swap's sign (+1 or -1, [B, 1, 1]).
  FailureOr<std::pair<Value, Value>> pivotRows(Value m, int64_t size) {
    FailureOr<Value> column = block(m, 0, size, 0, 1);
    FailureOr<Value> magnitude =
        failed(column) ? column : im.create<l1::AbsOp>(loc, *column);
    FailureOr<Value> p =
        failed(magnitude)
            ? magnitude
            : im.create<l1::ArgMaxOp>(loc, *magnitude, b.getI64IntegerAttr(1),
                                      b.getUnitAttr(), UnitAttr());
    if (failed(p))
      return failure();
    // Row r of the result reads row idx[r]: p for 0, 0 for p, else r.
    Value rows = constant(iotaAlong(b, 3, 1, size));
    Type i64 = b.getI64Type();
    Value zero = im.scalarConstant(loc, i64, 0);
    SmallVector<bool> top(size, false);
    top[0] = true;
    Value isTop = constant(DenseElementsAttr::get(
        RankedTensorType::get({1, size, 1}, b.getI1Type()), ArrayRef(top)));
    FailureOr<Value> isPivot = im.create<l1::EqualOp>(loc, rows, *p);
    FailureOr<Value> others =
        failed(isPivot) ? isPivot
                        : im.create<l1::WhereOp>(loc, *isPivot, zero, rows);
    FailureOr<Value> index =
        failed(others) ? others
                       : im.create<l1::WhereOp>(loc, isTop, *p, *others);
    FailureOr<Value> wide =
        failed(index) ? index
                      : im.create<l1::ExpandOp>(
                            loc, *index, b.getDenseI64ArrayAttr({1, 1, size}));
    FailureOr<Value> swapped =
        failed(wide) ? wide
                     : im.create<l1::GatherElementsOp>(loc, m, *wide,
                                                       b.getI64IntegerAttr(1));
    FailureOr<Value> stayed =
        failed(swapped) ? swapped : im.create<l1::EqualOp>(loc, *p, zero);
    FailureOr<Value> sign =
        failed(stayed)
            ? stayed
            : im.create<l1::WhereOp>(loc, *stayed,
                                     im.scalarConstant(loc, element, 1),
                                     im.scalarConstant(loc, element, -1));
    if (failed(sign))
      return failure();
    return std::make_pair(*swapped, *sign);
  }

  /// The Schur complement of the pivot: the next, [B, m-1, m-1] block.
  FailureOr<Value> eliminate(Value m, Value pivot, int64_t size) {
    Value zero = im.scalarConstant(loc, element, 0);
    FailureOr<Value> singular = im.create<l1::EqualOp>(loc, pivot, zero);
    FailureOr<Value> divisor =
        failed(singular)
            ? singular
            : im.create<l1::WhereOp>(loc, *singular,
                                     im.scalarConstant(loc, element, 1), pivot);
    FailureOr<Value> top = block(m, 0, 1, 1, size),
                     left = block(m, 1, size, 0, 1),
                     rest = block(m, 1, size, 1, size);
    if (failed(divisor) || failed(top) || failed(left) || failed(rest))
      return failure();
    FailureOr<Value> factor = im.create<l1::DivOp>(loc, *left, *divisor);
    FailureOr<Value> update =
        failed(factor) ? factor : im.create<l1::MulOp>(loc, *factor, *top);
    return failed(update) ? update : im.create<l1::SubOp>(loc, *rest, *update);
  }

  Importer &im;
  OpBuilder &b;
  Location loc;
  Type element;
};

LogicalResult Importer::convertDet(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  if (rank < 2 || !isa<FloatType>(type.getElementType()))
    return emitError(loc) << "Det expects floating-point matrices [..., n, n], "
                          << "got " << type;
  int64_t n = type.getDimSize(rank - 1);
  if (ShapedType::isDynamic(n) || type.getDimSize(rank - 2) != n)
    return emitError(loc) << "Det expects square matrices of a static size, "
                          << "got " << type;
  if (n < 1 || n > kMaxDetOrder)
    return emitError(loc) << "Det supports matrices of order 1 to "
                          << kMaxDetOrder << " (its steps are unrolled), got "
                          << n;
  ArrayRef<int64_t> batch = type.getShape().drop_back(2);
  if (llvm::count_if(batch, ShapedType::isDynamic) > 1)
    return emitError(loc) << "Det supports at most one dynamic batch dim, got "
                          << type;
  int64_t count = 1;
  for (int64_t d : batch)
    count *= ShapedType::isDynamic(d) ? 1 : d;
  if (llvm::any_of(batch, ShapedType::isDynamic))
    count = -1;
  // Half precision eliminates in float32: products of 11-bit mantissas
  // would lose the determinant's low digits at every step.
  Type element = type.getElementType();
  Type work = element.getIntOrFloatBitWidth() < 32 ? builder.getF32Type()
                                                   : element;
  Value m = *x;
  if (work != element)
    m = l1::CastOp::create(builder, loc, type.clone(work), m).getResult();
  FailureOr<Value> matrices = create<l1::ReshapeOp>(
      loc, m, builder.getDenseI64ArrayAttr({count, n, n}));
  if (failed(matrices))
    return failure();
  FailureOr<Value> det = DetLowering(*this, loc, work).run(*matrices, n);
  if (failed(det))
    return failure();
  FailureOr<Value> result = create<l1::ReshapeOp>(
      loc, *det,
      builder.getDenseI64ArrayAttr(SmallVector<int64_t>(
          llvm::map_range(batch, [](int64_t d) {
            return ShapedType::isDynamic(d) ? int64_t(-1) : d;
          }))));
  if (succeeded(result) && work != element)
    result = l1::CastOp::create(
                 builder, loc,
                 cast<RankedTensorType>(result->getType()).clone(element),
                 *result)
                 .getResult();
  return defineResult(node, result);
}

} // namespace cuvil::onnx_import
