//===- TargetDescription.cpp - what the passes know of the hardware -------===//

#include "cuvil/targets/TargetDescription.h"

#include "mlir/IR/Builders.h"

#include <algorithm>

#include <unistd.h>

namespace cuvil {

mlir::DictionaryAttr TargetDescription::toAttribute(mlir::MLIRContext *context) const {
  mlir::Builder b(context);
  return b.getDictionaryAttr({
      b.getNamedAttr("vector_bits", b.getI64IntegerAttr(vectorBits)),
      b.getNamedAttr("l1_bytes", b.getI64IntegerAttr(l1Bytes)),
      b.getNamedAttr("l2_bytes", b.getI64IntegerAttr(l2Bytes)),
      b.getNamedAttr("l3_bytes", b.getI64IntegerAttr(l3Bytes)),
      b.getNamedAttr("cores", b.getI64IntegerAttr(cores)),
      b.getNamedAttr("memory_bytes_per_second", b.getF64FloatAttr(memoryBytesPerSecond)),
      b.getNamedAttr("l2_bytes_per_second", b.getF64FloatAttr(l2BytesPerSecond)),
      b.getNamedAttr("kernel_overhead_seconds", b.getF64FloatAttr(kernelOverheadSeconds)),
      b.getNamedAttr("batching_threshold", b.getF64FloatAttr(batchingThreshold)),
  });
}

TargetDescription TargetDescription::fromAttribute(mlir::DictionaryAttr attr) {
  TargetDescription d;
  if (!attr)
    return d;
  auto integer = [&](llvm::StringRef name, int64_t &field) {
    if (auto value = attr.getAs<mlir::IntegerAttr>(name))
      field = value.getInt();
  };
  auto real = [&](llvm::StringRef name, double &field) {
    if (auto value = attr.getAs<mlir::FloatAttr>(name))
      field = value.getValueAsDouble();
    else if (auto value = attr.getAs<mlir::IntegerAttr>(name))
      field = static_cast<double>(value.getInt());
  };
  integer("vector_bits", d.vectorBits);
  integer("l1_bytes", d.l1Bytes);
  integer("l2_bytes", d.l2Bytes);
  integer("l3_bytes", d.l3Bytes);
  integer("cores", d.cores);
  real("memory_bytes_per_second", d.memoryBytesPerSecond);
  real("l2_bytes_per_second", d.l2BytesPerSecond);
  real("kernel_overhead_seconds", d.kernelOverheadSeconds);
  real("batching_threshold", d.batchingThreshold);
  return d;
}

TargetDescription TargetDescription::forModule(mlir::ModuleOp module) {
  return fromAttribute(module->getAttrOfType<mlir::DictionaryAttr>(kTargetAttrName));
}

TargetDescription describeX86Target(const std::vector<std::string> &features, bool native) {
  TargetDescription d;
  auto has = [&](const char *feature) {
    return std::find(features.begin(), features.end(), feature) != features.end();
  };
  d.vectorBits = has("avx512f") ? 512 : has("avx2") || has("avx") ? 256 : 128;
  if (native) {
    auto query = [](int name, int64_t fallback) {
      long value = ::sysconf(name);
      return value > 0 ? static_cast<int64_t>(value) : fallback;
    };
    d.l1Bytes = query(_SC_LEVEL1_DCACHE_SIZE, d.l1Bytes);
    d.l2Bytes = query(_SC_LEVEL2_CACHE_SIZE, d.l2Bytes);
    d.l3Bytes = query(_SC_LEVEL3_CACHE_SIZE, d.l3Bytes);
    d.cores = query(_SC_NPROCESSORS_ONLN, d.cores);
  }
  return d;
}

} // namespace cuvil
