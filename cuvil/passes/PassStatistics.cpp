//===- PassStatistics.cpp - pass statistics that survive NDEBUG -----------===//

#include "cuvil/passes/PassStatistics.h"

#include "mlir/IR/BuiltinTypes.h"

#include <map>
#include <mutex>

namespace cuvil {
namespace {

std::mutex &registryMutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<mlir::MLIRContext *, std::vector<PassStatistic>> &registry() {
  static std::map<mlir::MLIRContext *, std::vector<PassStatistic>> entries;
  return entries;
}

} // namespace

void addStatistic(mlir::Operation *op, mlir::Pass &pass, mlir::Pass::Statistic &statistic,
                  llvm::StringRef name, uint64_t value) {
  statistic += value;
  std::lock_guard<std::mutex> lock(registryMutex());
  std::vector<PassStatistic> &entries = registry()[op->getContext()];
  std::string passName = pass.getArgument().str();
  for (PassStatistic &entry : entries)
    if (entry.pass == passName && entry.name == name) {
      entry.value += value;
      return;
    }
  entries.push_back({passName, name.str(), value});
}

std::vector<PassStatistic> takeStatistics(mlir::MLIRContext *context) {
  std::lock_guard<std::mutex> lock(registryMutex());
  auto it = registry().find(context);
  if (it == registry().end())
    return {};
  std::vector<PassStatistic> entries = std::move(it->second);
  registry().erase(it);
  return entries;
}

int64_t staticTensorBytes(mlir::Type type) {
  auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
  // Quantized (and other non-scalar) element types are not counted.
  if (!tensor || !tensor.hasStaticShape() ||
      !tensor.getElementType().isIntOrFloat())
    return 0;
  return tensor.getNumElements() *
         static_cast<int64_t>(tensor.getElementTypeBitWidth() / 8);
}

} // namespace cuvil
