//===- VerilogModules.cpp - one Verilog module per layer ------------------===//

#include "cuvil/targets/fpga/rtl/VerilogModules.h"

#include "cuvil/targets/fpga/rtl/VerilogText.h"

namespace cuvil::fpga {

std::string layerModule(const RtlLayer &layer, const std::string &romFile,
                        Resources &tally, std::string &core) {
  const Layer &model = *layer.plan->layer;
  rtl::ModulePorts dense =
      rtl::corePorts(layer, model.productsIn(), model.productsOut());
  core.clear();
  switch (model.kind) {
  case LayerKind::Dense:
    if (!layer.in.pixels)
      return rtl::denseModule(layer, rtl::layerPorts(layer), romFile, tally);
    core = rtl::denseModule(layer, dense, romFile, tally);
    return rtl::gatherModule(layer, tally);
  case LayerKind::Conv2d:
    core = rtl::denseModule(layer, dense, romFile, tally);
    return rtl::windowModule(layer, tally);
  case LayerKind::MaxPool2d:
    core = rtl::poolCoreModule(layer, tally);
    return rtl::windowModule(layer, tally);
  case LayerKind::Softmax:
    return rtl::softmaxModule(layer, tally);
  case LayerKind::Relu:
    return rtl::reluModule(layer, tally);
  }
  return "";
}

std::string weightRomFile(const RtlLayer &layer) {
  return "rtl/" + layer.plan->id + "_weights.hex";
}

std::string weightRomHex(const RtlLayer &rtl) {
  const LayerPlan &plan = *rtl.plan;
  int64_t nOut = plan.layer->productsOut(), p = rtl.products;
  int ww = plan.weight.width;
  int64_t bits = p * nOut * ww;
  std::string out;
  for (int64_t k = 0; k < plan.reuse; ++k) {
    std::vector<bool> word(bits, false);
    for (int64_t q = 0; q < p; ++q)
      for (int64_t j = 0; j < nOut; ++j) {
        uint64_t w = static_cast<uint64_t>(rtl.weights[(k * p + q) * nOut + j]);
        for (int b = 0; b < ww; ++b)
          word[(q * nOut + j) * ww + b] = (w >> b) & 1;
      }
    out += rtl::hexDigits(word) + "\n";
  }
  return out;
}

} // namespace cuvil::fpga
