//===- Interpreter.cpp - a design's outputs, computed exactly -------------===//

#include "cuvil/targets/fpga/plan/Interpreter.h"

#include <algorithm>

namespace cuvil::fpga {

namespace {

Wide shiftLeft(Wide value, int bits) { return value * (static_cast<Wide>(1) << bits); }

/// floor(value * 2^bits) of a non-negative value (bits may be negative).
Wide scaleFloor(Wide value, int bits) {
  return bits >= 0 ? shiftLeft(value, bits) : value >> -bits;
}

std::vector<int64_t> dense(const LayerPlan &plan, const std::vector<int64_t> &x) {
  const Layer &layer = *plan.layer;
  int fx = plan.input.fraction(), fw = plan.weight.fraction();
  int fb = plan.bias.fraction(), fa = fx + fw > fb ? fx + fw : fb;
  std::vector<int64_t> y(layer.nOut);
  for (int64_t j = 0; j < layer.nOut; ++j) {
    Wide acc = shiftLeft(plan.bias.fromDouble(layer.bias[j]), fa - fb);
    for (int64_t i = 0; i < layer.nIn; ++i) {
      Wide w = plan.weight.fromDouble(layer.weights[i * layer.nOut + j]);
      acc += shiftLeft(static_cast<Wide>(x[i]) * w, fa - fx - fw);
    }
    int64_t value = plan.result.fromScaled(acc, fa);
    y[j] = layer.relu ? std::max<int64_t>(value, 0) : value;
  }
  return y;
}

std::vector<int64_t> conv(const LayerPlan &plan, const std::vector<int64_t> &x) {
  const Layer &layer = *plan.layer;
  const Window &w = layer.window;
  int fx = plan.input.fraction(), fw = plan.weight.fraction();
  int fb = plan.bias.fraction(), fa = fx + fw > fb ? fx + fw : fb;
  std::vector<int64_t> y(layer.nOut);
  for (int64_t co = 0; co < w.outChannels; ++co)
    for (int64_t oh = 0; oh < w.outHeight; ++oh)
      for (int64_t ow = 0; ow < w.outWidth; ++ow) {
        Wide acc = shiftLeft(plan.bias.fromDouble(layer.bias[co]), fa - fb);
        for (int64_t ci = 0; ci < w.channels; ++ci)
          for (int64_t kh = 0; kh < w.kernelH; ++kh)
            for (int64_t kw = 0; kw < w.kernelW; ++kw) {
              int64_t ih = oh * w.strideH - w.padTop + kh;
              int64_t iw = ow * w.strideW - w.padLeft + kw;
              if (ih < 0 || ih >= w.height || iw < 0 || iw >= w.width)
                continue; // zero padding
              int64_t k = (ci * w.kernelH + kh) * w.kernelW + kw;
              Wide wq = plan.weight.fromDouble(
                  layer.weights[k * w.outChannels + co]);
              acc += shiftLeft(
                  static_cast<Wide>(x[(ci * w.height + ih) * w.width + iw]) * wq,
                  fa - fx - fw);
            }
        int64_t value = plan.result.fromScaled(acc, fa);
        y[(co * w.outHeight + oh) * w.outWidth + ow] =
            layer.relu ? std::max<int64_t>(value, 0) : value;
      }
  return y;
}

std::vector<int64_t> maxPool(const LayerPlan &plan,
                             const std::vector<int64_t> &x) {
  const Window &w = plan.layer->window;
  std::vector<int64_t> y(plan.layer->nOut);
  for (int64_t c = 0; c < w.channels; ++c)
    for (int64_t oh = 0; oh < w.outHeight; ++oh)
      for (int64_t ow = 0; ow < w.outWidth; ++ow) {
        int64_t m = x[(c * w.height + oh * w.strideH) * w.width + ow * w.strideW];
        for (int64_t kh = 0; kh < w.kernelH; ++kh)
          for (int64_t kw = 0; kw < w.kernelW; ++kw)
            m = std::max(m, x[(c * w.height + oh * w.strideH + kh) * w.width +
                              ow * w.strideW + kw]);
        y[(c * w.outHeight + oh) * w.outWidth + ow] =
            plan.result.fromScaled(m, plan.input.fraction());
      }
  return y;
}

std::vector<int64_t> softmax(const LayerPlan &plan, const std::vector<int64_t> &x) {
  const SoftmaxTables &t = *plan.softmax;
  int fx = plan.input.fraction();
  int64_t m = *std::max_element(x.begin(), x.end());
  std::vector<Wide> e(x.size());
  Wide sum = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    Wide k = scaleFloor(static_cast<Wide>(m) - x[i], t.indexFraction - fx);
    e[i] = t.exp[std::min<Wide>(k, t.entries - 1)];
    sum += e[i];
  }
  int fe = t.expType.fraction();
  Wide j = scaleFloor(sum, t.invBits - t.sumLog2 - fe);
  Wide inv = t.inv[std::min<Wide>(j, (1 << t.invBits) - 1)];
  std::vector<int64_t> y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = plan.result.fromScaled(e[i] * inv, fe + t.invType.fraction());
  return y;
}

} // namespace

std::vector<int64_t> interpretDesign(const DesignPlan &design,
                                     const std::vector<double> &sample) {
  std::vector<int64_t> values;
  for (double v : sample)
    values.push_back(design.input.fromDouble(v));
  for (const LayerPlan &plan : design.layers) {
    switch (plan.layer->kind) {
    case LayerKind::Dense:
      values = dense(plan, values);
      break;
    case LayerKind::Relu:
      for (int64_t &v : values)
        v = plan.result.fromScaled(std::max<int64_t>(v, 0),
                                   plan.input.fraction());
      break;
    case LayerKind::Softmax:
      values = softmax(plan, values);
      break;
    case LayerKind::Conv2d:
      values = conv(plan, values);
      break;
    case LayerKind::MaxPool2d:
      values = maxPool(plan, values);
      break;
    }
  }
  return values;
}

} // namespace cuvil::fpga
