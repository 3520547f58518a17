//===- AllTargets.h - the targets of this build -----------------*- C++ -*-===//
//
// The driver, cuvilc, cuvil-opt and the Python extension see targets only
// through this registry; no code outside a target's folder names it.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_ALLTARGETS_H
#define CUVIL_TARGETS_ALLTARGETS_H

#include "cuvil/targets/Target.h"

namespace cuvil {

/// The registry holding every target of this build (AllTargets.cpp).
const TargetRegistry &getAllTargets();

} // namespace cuvil

#endif // CUVIL_TARGETS_ALLTARGETS_H
