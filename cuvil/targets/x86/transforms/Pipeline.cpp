//===- Pipeline.cpp - the order of the x86 level2 passes ------------------===//

#include "cuvil/targets/x86/transforms/Passes.h"

namespace cuvil::x86 {

void registerX86Passes() { registerCuvilX86Passes(); }

void buildX86Level2Pipeline(mlir::OpPassManager &pm) {
  pm.addPass(createCuvilX86FuseConvInputCasts());
  pm.addPass(createCuvilX86SelectKernels());
  pm.addPass(createCuvilX86PackProductWeights());
  pm.addPass(createCuvilX86LayoutForests());
  // Layouts first: an int8 convolution's weights are packed for the
  // layouts (and so the kernel) it got.
  pm.addPass(createCuvilX86AssignLayouts());
  pm.addPass(createCuvilX86PackQuantizedWeights());
}

} // namespace cuvil::x86
