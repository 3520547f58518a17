//===- ListingTarget.h - a minimal target for tests -------------*- C++ -*-===//

#ifndef CUVIL_TARGETS_TEST_LISTINGTARGET_H
#define CUVIL_TARGETS_TEST_LISTINGTARGET_H

#include "cuvil/targets/Target.h"

namespace cuvil::testing {

/// Adds the "listing" target (ListingTarget.cpp).
void registerListingTarget(TargetRegistry &registry);

} // namespace cuvil::testing

#endif // CUVIL_TARGETS_TEST_LISTINGTARGET_H
