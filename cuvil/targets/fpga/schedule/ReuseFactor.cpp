//===- ReuseFactor.cpp - valid reuse factors of dense layers --------------===//

#include "cuvil/targets/fpga/schedule/ReuseFactor.h"

#include "absl/strings/str_cat.h"

#include <algorithm>

namespace cuvil::fpga {

bool isValidReuseFactor(int64_t nIn, int64_t nOut, int64_t reuse) {
  int64_t products = nIn * nOut;
  if (nIn < 1 || nOut < 1 || reuse < 1 || products % reuse != 0)
    return false;
  if (reuse < nIn)
    return (products / reuse) % nOut == 0;
  return reuse % nIn == 0;
}

std::vector<int64_t> validReuseFactors(int64_t nIn, int64_t nOut) {
  // Valid factors divide nIn * nOut: walk its divisors in pairs.
  int64_t products = nIn * nOut;
  std::vector<int64_t> valid;
  for (int64_t d = 1; d * d <= products; ++d) {
    if (products % d != 0)
      continue;
    for (int64_t r : {d, products / d})
      if (isValidReuseFactor(nIn, nOut, r) &&
          std::find(valid.begin(), valid.end(), r) == valid.end())
        valid.push_back(r);
  }
  std::sort(valid.begin(), valid.end());
  return valid;
}

absl::StatusOr<ReuseChoice> snapReuseFactor(const std::string &layer,
                                            int64_t nIn, int64_t nOut,
                                            int64_t requested) {
  if (nIn < 1 || nOut < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("layer '", layer, "' has no products (", nIn, " x ",
                     nOut, ")"));
  ReuseChoice choice;
  if (isValidReuseFactor(nIn, nOut, requested)) {
    choice.reuse = requested;
    return choice;
  }
  std::vector<int64_t> valid = validReuseFactors(nIn, nOut);
  auto above = std::lower_bound(valid.begin(), valid.end(), requested);
  int64_t best = above == valid.end() ? valid.back() : *above;
  if (above != valid.begin() &&
      (above == valid.end() || requested - *(above - 1) <= *above - requested))
    best = *(above - 1);
  choice.reuse = best;
  choice.message = absl::StrCat(
      "layer '", layer, "': reuse factor ", requested, " is not valid for ",
      nIn, " inputs and ", nOut, " outputs (a valid one divides the ",
      nIn * nOut, " products, and is a multiple of the inputs or gives a "
      "multiple of the outputs in multipliers); using ", best);
  return choice;
}

int64_t multipliersAt(int64_t nIn, int64_t nOut, int64_t reuse) {
  return (nIn * nOut + reuse - 1) / reuse;
}

absl::StatusOr<int64_t> smallestReuseWithin(const std::string &layer,
                                            int64_t nIn, int64_t nOut,
                                            int64_t budget) {
  for (int64_t reuse : validReuseFactors(nIn, nOut))
    if (multipliersAt(nIn, nOut, reuse) <= budget)
      return reuse;
  return absl::ResourceExhaustedError(absl::StrCat(
      "layer '", layer, "' needs at least ", multipliersAt(nIn, nOut, nIn * nOut),
      " multiplier(s) at any reuse factor; the budget has ", budget));
}

} // namespace cuvil::fpga
