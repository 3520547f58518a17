//===- ConvertSpectral.cpp - ONNX DFT, STFT and mel filter banks ----------===//
//
// DFT and STFT over a static signal length: the transform is a product with
// constant cosine and sine matrices (computed in double at import time),
// which runs on the GEMM kernels. Complex values are ONNX's trailing
// dimension of 2 (real, imaginary); the real and imaginary parts travel as
// two tensors with the transformed axis last, so that
//   forward  re = xr C + xi S,  im = xi C - xr S,
//   inverse  re = (xr C - xi S) / L,  im = (xi C + xr S) / L,
// with C[t][k] = cos(2 pi t k / L), S[t][k] = sin(2 pi t k / L). A signal
// longer than the DFT length L is cut (rows t >= L are zero), a shorter
// one padded (those rows are simply absent). STFT first gathers its frames
// (one constant index per frame and offset) and applies the window.
// MelWeightMatrix, whose inputs are all sizes and frequencies, is a
// constant computed here.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

#include <cmath>

namespace cuvil::onnx_import {

LogicalResult Importer::convertDft(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  bool inverse = attrInt(node, "inverse", 0), onesided = attrInt(node, "onesided", 0);
  int64_t axis = attrInt(node, "axis", 1);
  axis = axis < 0 ? axis + rank : axis;
  if (!isa<FloatType>(type.getElementType()) || rank < 3 ||
      type.isDynamicDim(rank - 1) || type.getDimSize(rank - 1) > 2)
    return emitError(loc) << "DFT expects a float signal [batch, n..., 1 or 2], "
                          << "got " << type;
  if (axis < 1 || axis >= rank - 1 || type.isDynamicDim(axis))
    return emitError(loc) << "DFT axis " << attrInt(node, "axis", 1)
                          << " must name a static signal dimension of " << type;
  bool complex = type.getDimSize(rank - 1) == 2;
  if (onesided && (complex || inverse))
    return emitError(loc) << "DFT onesided needs a real signal and a forward "
                          << "transform";
  int64_t samples = type.getDimSize(axis), length = samples;
  if (hasInput(node, 1)) {
    FailureOr<SmallVector<int64_t>> given = requireInts(node, 1, "dft_length");
    if (failed(given))
      return failure();
    if (given->size() != 1 || (*given)[0] < 1)
      return emitError(loc) << "DFT expects one positive dft_length, got "
                            << given->size() << " values";
    length = (*given)[0];
  }
  auto ints = [&](ArrayRef<int64_t> v) { return builder.getDenseI64ArrayAttr(v); };
  // The parts, without the trailing dimension, with `axis` moved last.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  auto part = [&](int64_t k) -> FailureOr<Value> {
    FailureOr<Value> s = complexPart(loc, *x, k);
    return failed(s) ? s : create<l1::TransposeOp>(loc, *s, ints(perm));
  };
  FailureOr<Value> re = part(0);
  FailureOr<Value> im = complex ? part(1) : FailureOr<Value>(Value());
  if (failed(re) || failed(im))
    return failure();
  int64_t bins = onesided ? length / 2 + 1 : length;
  if (length > kMaxBuiltElements || samples * bins > kMaxBuiltElements)
    return emitError(loc) << "DFT of length " << length << " over " << samples
                          << " samples needs a larger transform matrix than "
                          << "Cuvil builds at compile time (" << kMaxBuiltElements
                          << " elements)";
  FailureOr<std::pair<Value, Value>> y =
      dftProduct(loc, *re, *im, samples, bins, length, inverse);
  if (failed(y))
    return failure();
  // Back in place, then (re, im) as the trailing dimension.
  SmallVector<int64_t> back(rank - 1);
  for (int64_t d = 0; d < rank - 1; ++d)
    back[perm[d]] = d;
  FailureOr<Value> re2 = create<l1::TransposeOp>(loc, y->first, ints(back));
  FailureOr<Value> im2 = create<l1::TransposeOp>(loc, y->second, ints(back));
  if (failed(re2) || failed(im2))
    return failure();
  return defineResult(node, joinComplex(loc, *re2, *im2));
}

LogicalResult Importer::convertStft(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> signal = getValue(node, 0);
  if (failed(signal))
    return failure();
  auto type = cast<RankedTensorType>(signal->getType());
  if (!isa<FloatType>(type.getElementType()) || type.getRank() != 3 ||
      type.isDynamicDim(1) || type.getDimSize(2) > 2 || type.isDynamicDim(2))
    return emitError(loc) << "STFT expects a float signal [batch, length, 1 or "
                          << "2] of static length, got " << type;
  FailureOr<SmallVector<int64_t>> step = requireInts(node, 1, "frame_step");
  if (failed(step))
    return failure();
  Value window;
  int64_t frameLength = -1;
  if (hasInput(node, 2)) {
    FailureOr<Value> w = getValue(node, 2);
    if (failed(w))
      return failure();
    window = *w;
    auto wType = cast<RankedTensorType>(window.getType());
    if (wType.getRank() != 1 || wType.isDynamicDim(0) ||
        wType.getElementType() != type.getElementType())
      return emitError(loc) << "STFT expects a static 1-D window of "
                            << type.getElementType() << ", got " << wType;
    frameLength = wType.getDimSize(0);
  }
  if (hasInput(node, 3)) {
    FailureOr<SmallVector<int64_t>> given = requireInts(node, 3, "frame_length");
    if (failed(given))
      return failure();
    if (given->size() != 1 || (frameLength >= 0 && (*given)[0] != frameLength))
      return emitError(loc) << "STFT frame_length must be one value, the "
                            << "window's length if there is a window";
    frameLength = (*given)[0];
  }
  int64_t length = type.getDimSize(1);
  bool complex = type.getDimSize(2) == 2, onesided = attrInt(node, "onesided", 1);
  if (step->size() != 1 || (*step)[0] < 1 || frameLength < 1 ||
      frameLength > length)
    return emitError(loc) << "STFT needs a positive frame_step and a frame "
                          << "length (the window's, or frame_length) of 1 to "
                          << length;
  if (onesided && complex)
    return emitError(loc) << "STFT onesided needs a real signal";
  int64_t hop = (*step)[0], frames = 1 + (length - frameLength) / hop;
  if (frames * frameLength > kMaxBuiltElements)
    return emitError(loc) << "STFT of " << frames << " frames of " << frameLength
                          << " samples is larger than Cuvil builds at compile "
                          << "time (" << kMaxBuiltElements << " elements)";
  // Frame f holds samples f * hop .. f * hop + frameLength - 1.
  SmallVector<int64_t> offsets;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t t = 0; t < frameLength; ++t)
      offsets.push_back(f * hop + t);
  Value at = l1::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(
          RankedTensorType::get({frames, frameLength}, builder.getI64Type()),
          ArrayRef<int64_t>(offsets)));
  auto framed = [&](int64_t k) -> FailureOr<Value> {
    FailureOr<Value> s = complexPart(loc, *signal, k);
    s = failed(s) ? s
                  : create<l1::GatherOp>(loc, *s, at, builder.getI64IntegerAttr(1));
    if (succeeded(s) && window)
      s = create<l1::MulOp>(loc, *s, window);
    return s;
  };
  FailureOr<Value> re = framed(0);
  FailureOr<Value> im = complex ? framed(1) : FailureOr<Value>(Value());
  if (failed(re) || failed(im))
    return failure();
  int64_t bins = onesided ? frameLength / 2 + 1 : frameLength;
  FailureOr<std::pair<Value, Value>> y =
      dftProduct(loc, *re, *im, frameLength, bins, frameLength, false);
  if (failed(y))
    return failure();
  return defineResult(node, joinComplex(loc, y->first, y->second));
}

FailureOr<Value> Importer::complexPart(Location loc, Value x, int64_t k) {
  int64_t last = cast<RankedTensorType>(x.getType()).getRank() - 1;
  auto ints = [&](ArrayRef<int64_t> v) { return builder.getDenseI64ArrayAttr(v); };
  FailureOr<Value> s =
      create<l1::SliceOp>(loc, x, ints({k}), ints({k + 1}), ints({last}), ints({1}));
  return failed(s) ? s : create<l1::SqueezeOp>(loc, *s, ints({last}));
}

FailureOr<Value> Importer::joinComplex(Location loc, Value re, Value im) {
  int64_t rank = cast<RankedTensorType>(re.getType()).getRank();
  auto at = builder.getDenseI64ArrayAttr({rank});
  FailureOr<Value> r = create<l1::UnsqueezeOp>(loc, re, at);
  FailureOr<Value> i = create<l1::UnsqueezeOp>(loc, im, at);
  if (failed(r) || failed(i))
    return failure();
  return create<l1::ConcatOp>(loc, ValueRange{*r, *i},
                              builder.getI64IntegerAttr(rank));
}

FailureOr<std::pair<Value, Value>>
Importer::dftProduct(Location loc, Value re, Value im, int64_t rows,
                     int64_t columns, int64_t length, bool inverse) {
  Type element = cast<RankedTensorType>(re.getType()).getElementType();
  auto matrix = [&](bool sine) {
    SmallVector<double> values;
    double scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
    for (int64_t t = 0; t < rows; ++t)
      for (int64_t k = 0; k < columns; ++k) {
        // (t k) mod L keeps the angle small, so that it stays exact.
        double angle = 2 * M_PI * static_cast<double>((t * k) % length) /
                       static_cast<double>(length);
        values.push_back(t >= length ? 0.0
                                     : scale * (sine ? std::sin(angle)
                                                     : std::cos(angle)));
      }
    return l1::ConstantOp::create(
        builder, loc,
        floatElements(RankedTensorType::get({rows, columns}, element), values));
  };
  Value cosine = matrix(false), sine = matrix(true);
  auto product = [&](Value a, Value m) {
    return create<l1::MatmulOp>(loc, a, m, TypeAttr());
  };
  // Forward: re = xr C + xi S, im = xi C - xr S; inverse flips the sines.
  FailureOr<Value> reC = product(re, cosine), reS = product(re, sine);
  if (failed(reC) || failed(reS))
    return failure();
  FailureOr<Value> outRe = reC, outIm = reS;
  if (!im) {
    if (!inverse)
      outIm = create<l1::NegOp>(loc, *reS);
  } else {
    FailureOr<Value> imC = product(im, cosine), imS = product(im, sine);
    if (failed(imC) || failed(imS))
      return failure();
    outRe = inverse ? create<l1::SubOp>(loc, *reC, *imS)
                    : create<l1::AddOp>(loc, *reC, *imS);
    outIm = inverse ? create<l1::AddOp>(loc, *imC, *reS)
                    : create<l1::SubOp>(loc, *imC, *reS);
  }
  if (failed(outRe) || failed(outIm))
    return failure();
  return std::make_pair(*outRe, *outIm);
}

/// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters
/// between mel-spaced spectrogram bins. The bins follow ONNX's reference
/// (its backend test's expected output): the mel range is cut into
/// num_mel_bins + 2 steps, the edges' mels computed in float32, and each
/// edge's bin is floor((dft_length + 1) * hertz / sample_rate).
LogicalResult Importer::convertMelWeightMatrix(const onnx::NodeProto &node,
                                               Location loc) {
  const char *names[] = {"num_mel_bins", "dft_length", "sample_rate",
                         "lower_edge_hertz", "upper_edge_hertz"};
  double in[5];
  for (int i = 0; i < 5; ++i) {
    FailureOr<HostTensor> v = requireHost(node, i, names[i]);
    if (failed(v))
      return failure();
    if (v->numElements() != 1 || v->hasUnknown())
      return emitError(loc) << "MelWeightMatrix expects a scalar " << names[i];
    in[i] = v->at(0);
  }
  // Checked as doubles first: a huge count must not overflow its cast.
  bool counts = llvm::all_of(ArrayRef(in, 3), [](double v) {
    return v >= 1 && v <= double(int64_t(1) << 53);
  });
  int64_t mels = counts ? in[0] : 0, dft = counts ? in[1] : 0,
          rate = counts ? in[2] : 0;
  // Computed in float32 as ONNX's reference does; in range before the cast.
  bool hertz = in[3] >= 0 && in[4] > in[3] &&
               in[4] <= std::numeric_limits<float>::max();
  float lower = hertz ? in[3] : 0, upper = hertz ? in[4] : 0;
  if (!counts || !hertz || !(upper > lower))
    return emitError(loc) << "MelWeightMatrix expects num_mel_bins, dft_length "
                          << "and sample_rate >= 1 and 0 <= lower_edge_hertz "
                          << "< upper_edge_hertz, got "
                          << absl::StrCat(in[0], ", ", in[1], ", ", in[2],
                                          ", ", in[3], ", ", in[4]);
  int64_t bins = dft / 2 + 1;
  if (mels > kMaxBuiltElements / bins)
    return emitError(loc) << "MelWeightMatrix of " << bins << " x " << mels
                          << " exceeds Cuvil's limit of " << kMaxBuiltElements
                          << " elements";
  Type element = toMlirType(
      &context, attrInt(node, "output_datatype", onnx::TensorProto::FLOAT));
  if (!element)
    return emitError(loc) << "MelWeightMatrix output_datatype is not supported";
  float lowMel = 2595.0f * std::log10(1.0f + lower / 700.0f);
  float highMel = 2595.0f * std::log10(1.0f + upper / 700.0f);
  float step = (highMel - lowMel) / static_cast<float>(mels + 2);
  // Each filter's left and center bins are written, its right one is only
  // a bound: all must be known to fit before they become indices.
  SmallVector<int64_t> edge(mels + 2);
  for (int64_t i = 0; i < mels + 2; ++i) {
    double hertz = 700 * (std::pow(10.0, (i * double(step) + lowMel) / 2595) - 1);
    double bin = std::floor((dft + 1) * hertz / rate);
    int64_t last = i == mels + 1 ? bins : bins - 1;
    if (!(bin >= 0 && bin <= double(last)))
      return emitError(loc)
             << "MelWeightMatrix's filter edge " << i << " falls on spectrogram "
             << "bin " << absl::StrCat(bin) << ", past the last one ("
             << last << ") for dft_length " << dft << "; lower upper_edge_hertz ("
             << absl::StrCat(upper) << ") or raise dft_length";
    edge[i] = static_cast<int64_t>(bin);
  }
  std::vector<double> weights(bins * mels, 0.0);
  for (int64_t m = 0; m < mels; ++m) {
    int64_t left = edge[m], center = edge[m + 1], right = edge[m + 2];
    double *column = weights.data() + m;
    if (center == left)
      column[center * mels] = 1;
    for (int64_t j = left; center > left && j <= center; ++j)
      column[j * mels] = double(j - left) / (center - left);
    for (int64_t j = center; j < right; ++j)
      column[j * mels] = double(right - j) / (right - center);
  }
  defineHost(node, 0, HostTensor::of(element, {bins, mels}, weights));
  return success();
}

} // namespace cuvil::onnx_import
