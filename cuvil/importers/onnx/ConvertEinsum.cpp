//===- ConvertEinsum.cpp - ONNX Einsum as transposes, sums and matmuls -----===//
//
// An Einsum equation becomes ops Cuvil already runs fast, operand by
// operand, left to right (the way numpy's and PyTorch's einsum contract):
//  - a label repeated in one operand (a diagonal) multiplies by an identity
//    mask over its two axes and sums one away;
//  - a label no later operand and not the output needs is summed away;
//  - two operands contract as one batched matmul: labels in both that are
//    still needed are the batch, labels in both that are not are summed by
//    the product, each side's own labels are M and N (groups of several
//    merged by reshapes);
//  - the result is transposed into the output's order.
// "..." stands for the same broadcast dimensions in every term, aligned on
// the right; the implicit output (no "->") is "..." and then the labels
// that appear once, in alphabetical order.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>

namespace cuvil::onnx_import {

namespace {

/// A term's labels: letters as themselves, the i-th dimension of "..."
/// counted from its right end as kEllipsis + i.
using Labels = SmallVector<int, 8>;
constexpr int kEllipsis = 1000;

struct Equation {
  SmallVector<Labels> inputs;
  Labels output;
};

/// Parses one term of `ranks[i]`'s operand, or the output (rank -1: "..."
/// takes `ellipsis` dimensions).
FailureOr<Labels> parseTerm(StringRef term, int64_t rank, int64_t ellipsis,
                            std::string &error) {
  Labels labels;
  size_t dots = term.find("...");
  StringRef before = dots == StringRef::npos ? term : term.take_front(dots);
  StringRef after =
      dots == StringRef::npos ? StringRef() : term.drop_front(dots + 3);
  for (StringRef part : {before, after})
    if (!llvm::all_of(part, [](char c) { return llvm::isAlpha(c); })) {
      error = "has a term '" + term.str() + "' with a character that is not "
              "a letter or one '...'";
      return failure();
    }
  int64_t letters = static_cast<int64_t>(before.size() + after.size());
  int64_t spread = dots == StringRef::npos ? 0
                   : rank < 0            ? ellipsis
                                         : rank - letters;
  if (rank >= 0 && (spread < 0 || (dots == StringRef::npos && spread != 0) ||
                    letters + spread != rank)) {
    error = "has a term '" + term.str() + "' for an operand of rank " +
            std::to_string(rank);
    return failure();
  }
  for (char c : before)
    labels.push_back(c);
  for (int64_t i = spread - 1; i >= 0; --i)
    labels.push_back(kEllipsis + static_cast<int>(i));
  for (char c : after)
    labels.push_back(c);
  return labels;
}

FailureOr<Equation> parseEquation(std::string text, ArrayRef<int64_t> ranks,
                                  std::string &error) {
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  StringRef equation(text);
  auto [lhs, rhs] = equation.split("->");
  bool explicitOutput = equation.contains("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != ranks.size()) {
    error = "has " + std::to_string(terms.size()) + " input terms for " +
            std::to_string(ranks.size()) + " inputs";
    return failure();
  }
  Equation eq;
  int64_t ellipsis = 0;
  for (auto [term, rank] : llvm::zip(terms, ranks)) {
    FailureOr<Labels> labels = parseTerm(term, rank, 0, error);
    if (failed(labels))
      return failure();
    for (int label : *labels)
      if (label >= kEllipsis)
        ellipsis = std::max<int64_t>(ellipsis, label - kEllipsis + 1);
    eq.inputs.push_back(*labels);
  }
  if (explicitOutput) {
    FailureOr<Labels> out = parseTerm(rhs, -1, ellipsis, error);
    if (failed(out))
      return failure();
    eq.output = *out;
    for (int label : eq.output) {
      bool known = llvm::any_of(eq.inputs, [&](const Labels &in) {
        return llvm::is_contained(in, label);
      });
      if (!known || llvm::count(eq.output, label) > 1) {
        error = "has an output term '" + rhs.str() +
                "' whose labels are not each in an input exactly once there";
        return failure();
      }
    }
    return eq;
  }
  for (int64_t i = ellipsis - 1; i >= 0; --i)
    eq.output.push_back(kEllipsis + static_cast<int>(i));
  std::map<int, int> counts;
  for (const Labels &in : eq.inputs)
    for (int label : in)
      if (label < kEllipsis)
        ++counts[label];
  for (auto [label, count] : counts)
    if (count == 1)
      eq.output.push_back(label);
  return eq;
}

/// One operand on the way: its value and the label of each dimension.
struct Term {
  Value value;
  Labels labels;
};

} // namespace

/// The Einsum steps of one node; each failure has been reported.
class EinsumLowering {
public:
  EinsumLowering(Importer &importer, Location loc)
      : im(importer), loc(loc) {}

  /// Removes a repeated label: x * I over its two axes, summed over one.
  FailureOr<Term> takeDiagonals(Term t) {
    for (size_t q = 0; q < t.labels.size(); ++q) {
      auto first = llvm::find(t.labels, t.labels[q]);
      size_t p = first - t.labels.begin();
      if (p == q)
        continue;
      auto type = cast<RankedTensorType>(t.value.getType());
      int64_t n = type.getDimSize(p);
      if (ShapedType::isDynamic(n) || n != type.getDimSize(q))
        return emitError(loc) << "Einsum takes a diagonal over equal static "
                              << "dimensions, got " << type;
      SmallVector<int64_t> shape(type.getRank(), 1);
      shape[p] = shape[q] = n;
      Type element = type.getElementType();
      SmallVector<Attribute> ones;
      for (int64_t i = 0; i < n * n; ++i) {
        bool diagonal = i / n == i % n;
        ones.push_back(isa<FloatType>(element)
                           ? Attribute(im.builder.getFloatAttr(element, diagonal))
                           : Attribute(im.builder.getIntegerAttr(element, diagonal)));
      }
      Value mask = l1::ConstantOp::create(
          im.builder, loc,
          DenseElementsAttr::get(RankedTensorType::get(shape, element), ones));
      FailureOr<Value> masked = im.create<l1::MulOp>(loc, t.value, mask);
      if (failed(masked))
        return failure();
      t.value = *masked;
      FailureOr<Term> summed = sumAway(t, {t.labels[q]}, q);
      if (failed(summed))
        return failure();
      t = *summed;
      q = 0;
    }
    return t;
  }

  /// Sums over the dimensions whose labels are in `gone` (or only position
  /// `only`, when given).
  FailureOr<Term> sumAway(Term t, ArrayRef<int> gone,
                          std::optional<size_t> only = std::nullopt) {
    SmallVector<int64_t> axes;
    Labels kept;
    for (auto [i, label] : llvm::enumerate(t.labels)) {
      bool drop = only ? i == *only : llvm::is_contained(gone, label);
      if (drop)
        axes.push_back(static_cast<int64_t>(i));
      else
        kept.push_back(label);
    }
    if (axes.empty())
      return t;
    FailureOr<Value> r = im.create<l1::ReduceSumOp>(
        loc, t.value, im.builder.getDenseI64ArrayAttr(axes), UnitAttr());
    if (failed(r))
      return failure();
    return Term{*r, kept};
  }

  FailureOr<Term> transpose(Term t, const Labels &order) {
    if (order == t.labels)
      return t;
    SmallVector<int64_t> perm;
    for (int label : order)
      perm.push_back(llvm::find(t.labels, label) - t.labels.begin());
    FailureOr<Value> r = im.create<l1::TransposeOp>(
        loc, t.value, im.builder.getDenseI64ArrayAttr(perm));
    if (failed(r))
      return failure();
    return Term{*r, order};
  }

  /// Reshapes to `sizes` (dimension sizes, dynamic ones as -1), which may
  /// hold one dynamic size.
  FailureOr<Value> reshape(Value v, ArrayRef<int64_t> sizes) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape;
    for (int64_t s : sizes)
      shape.push_back(ShapedType::isDynamic(s) ? -1 : s);
    if (llvm::count(shape, -1) > 1)
      return emitError(loc) << "Einsum cannot merge or split dimensions of "
                            << type << " with more than one dynamic size";
    if (type.getShape() == ArrayRef<int64_t>(sizes))
      return v;
    return im.create<l1::ReshapeOp>(loc, v, im.builder.getDenseI64ArrayAttr(shape));
  }

  /// The product of the sizes of `labels` in `t` (dynamic if any is).
  int64_t groupSize(const Term &t, ArrayRef<int> labels) {
    auto type = cast<RankedTensorType>(t.value.getType());
    int64_t size = 1;
    for (int label : labels) {
      int64_t d = type.getDimSize(llvm::find(t.labels, label) - t.labels.begin());
      if (ShapedType::isDynamic(d))
        return ShapedType::kDynamic;
      size *= d;
    }
    return size;
  }

  /// `a` times `b` summed over their shared labels outside `needed`.
  FailureOr<Term> contract(Term a, Term b, const Labels &needed) {
    Labels batch, contracted, aOnly, bOnly;
    for (int label : a.labels) {
      bool inB = llvm::is_contained(b.labels, label);
      bool keep = llvm::is_contained(needed, label);
      (inB ? (keep ? batch : contracted) : aOnly).push_back(label);
    }
    for (int label : b.labels)
      if (!llvm::is_contained(a.labels, label))
        bOnly.push_back(label);
    FailureOr<Term> at = transpose(a, concat(batch, aOnly, contracted));
    FailureOr<Term> bt = transpose(b, concat(batch, contracted, bOnly));
    if (failed(at) || failed(bt))
      return failure();
    auto batchSizes = [&](const Term &t) {
      SmallVector<int64_t> sizes;
      auto type = cast<RankedTensorType>(t.value.getType());
      for (size_t i = 0; i < batch.size(); ++i)
        sizes.push_back(type.getDimSize(i));
      return sizes;
    };
    SmallVector<int64_t> aShape = batchSizes(*at), bShape = batchSizes(*bt);
    aShape.append({groupSize(*at, aOnly), groupSize(*at, contracted)});
    bShape.append({groupSize(*bt, contracted), groupSize(*bt, bOnly)});
    FailureOr<Value> lhs = reshape(at->value, aShape);
    FailureOr<Value> rhs = reshape(bt->value, bShape);
    if (failed(lhs) || failed(rhs))
      return failure();
    FailureOr<Value> product =
        im.create<l1::MatmulOp>(loc, *lhs, *rhs, TypeAttr());
    if (failed(product))
      return failure();
    auto productType = cast<RankedTensorType>(product->getType());
    SmallVector<int64_t> outShape(
        productType.getShape().take_front(batch.size()));
    for (const auto &[t, group] : {std::pair(&*at, &aOnly), std::pair(&*bt, &bOnly)}) {
      auto type = cast<RankedTensorType>(t->value.getType());
      for (int label : *group)
        outShape.push_back(
            type.getDimSize(llvm::find(t->labels, label) - t->labels.begin()));
    }
    FailureOr<Value> result = reshape(*product, outShape);
    if (failed(result))
      return failure();
    return Term{*result, concat(batch, aOnly, bOnly)};
  }

private:
  static Labels concat(const Labels &x, const Labels &y, const Labels &z) {
    Labels all(x);
    all.append(y.begin(), y.end());
    all.append(z.begin(), z.end());
    return all;
  }

  Importer &im;
  Location loc;
};

LogicalResult Importer::convertEinsum(const onnx::NodeProto &node,
                                      Location loc) {
  SmallVector<Term> terms;
  SmallVector<int64_t> ranks;
  for (int i = 0; i < node.input_size(); ++i) {
    FailureOr<Value> v = getValue(node, i);
    if (failed(v))
      return failure();
    terms.push_back({*v, {}});
    ranks.push_back(cast<RankedTensorType>(v->getType()).getRank());
  }
  if (terms.empty())
    return emitError(loc) << "Einsum needs at least one input";
  std::string equation = attrString(node, "equation", ""), error;
  FailureOr<Equation> eq = parseEquation(equation, ranks, error);
  if (failed(eq))
    return emitError(loc) << "Einsum equation '" << equation << "' " << error;
  EinsumLowering lowering(*this, loc);
  for (auto [term, labels] : llvm::zip(terms, eq->inputs)) {
    term.labels = labels;
    FailureOr<Term> t = lowering.takeDiagonals(term);
    if (failed(t))
      return failure();
    term = *t;
  }
  // Left to right. Before each product, each side sums away the labels
  // neither the other side nor anything later needs.
  auto without = [](const Labels &labels, const Labels &keep) {
    Labels gone;
    for (int label : labels)
      if (!llvm::is_contained(keep, label))
        gone.push_back(label);
    return gone;
  };
  Term acc = terms.front();
  for (size_t i = 1; i < terms.size(); ++i) {
    Labels later = eq->output;
    for (size_t j = i + 1; j < terms.size(); ++j)
      later.append(terms[j].labels.begin(), terms[j].labels.end());
    Labels forA = later, forB = later;
    forA.append(terms[i].labels.begin(), terms[i].labels.end());
    forB.append(acc.labels.begin(), acc.labels.end());
    FailureOr<Term> a = lowering.sumAway(acc, without(acc.labels, forA));
    FailureOr<Term> b = lowering.sumAway(terms[i], without(terms[i].labels, forB));
    if (failed(a) || failed(b))
      return failure();
    FailureOr<Term> next = lowering.contract(*a, *b, later);
    if (failed(next))
      return failure();
    acc = *next;
  }
  FailureOr<Term> summed = lowering.sumAway(acc, without(acc.labels, eq->output));
  if (failed(summed))
    return failure();
  acc = *summed;
  FailureOr<Term> out = lowering.transpose(acc, eq->output);
  if (failed(out))
    return failure();
  define(node, 0, out->value);
  return success();
}

} // namespace cuvil::onnx_import
