//===- MluTarget.h - Cambricon MLUs through BANG C and CNRT -----*- C++ -*-===//

#ifndef CUVIL_TARGETS_MLU_MLUTARGET_H
#define CUVIL_TARGETS_MLU_MLUTARGET_H

#include "cuvil/targets/Target.h"

namespace cuvil::mlu {

/// Adds the `mlu` target: --device picks the chip (mlu270, mlu290,
/// mlu370), cuvil-mlu-plan-kernels plans each layer on it, --emit=mlu
/// writes the project folder (kernels.mlu, host.cpp, model.h, weights,
/// CMakeLists.txt, the emulator build, the report).
void registerMluTarget(TargetRegistry &registry);

} // namespace cuvil::mlu

#endif // CUVIL_TARGETS_MLU_MLUTARGET_H
