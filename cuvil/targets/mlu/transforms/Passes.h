//===- Passes.h - the MLU target's level2 passes ----------------*- C++ -*-===//

#ifndef CUVIL_TARGETS_MLU_TRANSFORMS_PASSES_H
#define CUVIL_TARGETS_MLU_TRANSFORMS_PASSES_H

#include "cuvil/ir/CuvilL2Dialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace cuvil::mlu {

#define GEN_PASS_DECL
#include "cuvil/targets/mlu/transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cuvil/targets/mlu/transforms/Passes.h.inc"

} // namespace cuvil::mlu

#endif // CUVIL_TARGETS_MLU_TRANSFORMS_PASSES_H
