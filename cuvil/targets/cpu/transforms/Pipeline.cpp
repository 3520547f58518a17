//===- Pipeline.cpp - the order of the CPU level2 passes ------------------===//

#include "cuvil/targets/cpu/transforms/Passes.h"

namespace cuvil::cpu {

void registerCpuPasses() {
  // Both CPU targets register them: once is enough.
  static const bool registered = (registerCuvilCpuPasses(), true);
  (void)registered;
}

void buildCpuLevel2Pipeline(mlir::OpPassManager &pm) {
  pm.addPass(createCuvilCpuFuseConvInputCasts());
  pm.addPass(createCuvilCpuSelectKernels());
  pm.addPass(createCuvilCpuPackProductWeights());
  pm.addPass(createCuvilCpuLayoutForests());
  // Layouts first: an int8 convolution's weights are packed for the
  // layouts (and so the kernel) it got.
  pm.addPass(createCuvilCpuAssignLayouts());
  pm.addPass(createCuvilCpuPackQuantizedWeights());
}

} // namespace cuvil::cpu
