//===- PlanConfig.cpp - the user's plan options in #cuvil.target ----------===//

#include "cuvil/targets/fpga/transforms/PlanConfig.h"

namespace cuvil::fpga {

llvm::SmallVector<mlir::NamedAttribute> planConfig(mlir::Builder &b,
                                                   const PlanOptions &options) {
  llvm::SmallVector<mlir::NamedAttribute> reuse, strategy;
  for (const auto &[node, factor] : options.layerReuse)
    reuse.push_back(b.getNamedAttr(node, b.getI64IntegerAttr(factor)));
  for (const auto &[node, given] : options.layerStrategy)
    strategy.push_back(
        b.getNamedAttr(node, b.getStringAttr(strategyName(given))));
  llvm::SmallVector<mlir::NamedAttribute> config = {
      b.getNamedAttr("reuse_factor", b.getI64IntegerAttr(options.reuse)),
      b.getNamedAttr("max_utilization",
                     b.getF64FloatAttr(options.maxUtilization)),
      b.getNamedAttr("layer_reuse_factor", b.getDictionaryAttr(reuse)),
      b.getNamedAttr("layer_strategy", b.getDictionaryAttr(strategy)),
  };
  if (options.strategy)
    config.push_back(b.getNamedAttr(
        "strategy", b.getStringAttr(strategyName(*options.strategy))));
  return config;
}

PlanOptions readPlanConfig(mlir::DictionaryAttr config) {
  PlanOptions options;
  if (!config)
    return options;
  if (auto reuse = config.getAs<mlir::IntegerAttr>("reuse_factor"))
    options.reuse = reuse.getInt();
  if (auto share = config.getAs<mlir::FloatAttr>("max_utilization"))
    options.maxUtilization = share.getValueAsDouble();
  if (auto clock = config.getAs<mlir::FloatAttr>("clock_ns"))
    options.clockNs = clock.getValueAsDouble();
  if (auto strategy = config.getAs<mlir::StringAttr>("strategy"))
    options.strategy = parseStrategy(strategy.getValue());
  if (auto layers = config.getAs<mlir::DictionaryAttr>("layer_reuse_factor"))
    for (mlir::NamedAttribute entry : layers)
      if (auto factor = llvm::dyn_cast<mlir::IntegerAttr>(entry.getValue()))
        options.layerReuse[entry.getName().str()] = factor.getInt();
  if (auto layers = config.getAs<mlir::DictionaryAttr>("layer_strategy"))
    for (mlir::NamedAttribute entry : layers)
      if (auto given = llvm::dyn_cast<mlir::StringAttr>(entry.getValue()))
        if (std::optional<Strategy> strategy = parseStrategy(given.getValue()))
          options.layerStrategy[entry.getName().str()] = *strategy;
  return options;
}

} // namespace cuvil::fpga
