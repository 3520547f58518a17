//===- ReuseFactor.h - how many cycles a dense layer shares a multiplier -*- C++ -*-===//
//
// A dense layer of nIn inputs and nOut outputs has nIn * nOut products; at
// reuse factor R each multiplier computes R of them, one a cycle, so the
// layer needs nIn * nOut / R multipliers and starts a new input every R
// cycles. R is valid, as hls4ml's users know it, when it divides the
// products evenly and the products of one multiplier do not straddle an
// output unevenly:
//   R divides nIn * nOut;
//   R < nIn: the multipliers, ceil(nIn * nOut / R), are a multiple of nOut;
//   R >= nIn: R is a multiple of nIn.
// An invalid R is snapped to the nearest valid one (the smaller on a tie),
// with a message naming the layer.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_SCHEDULE_REUSEFACTOR_H
#define CUVIL_TARGETS_FPGA_SCHEDULE_REUSEFACTOR_H

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil::fpga {

bool isValidReuseFactor(int64_t nIn, int64_t nOut, int64_t reuse);

/// The valid reuse factors of a dense layer, ascending (1 and nIn * nOut
/// are always among them).
std::vector<int64_t> validReuseFactors(int64_t nIn, int64_t nOut);

struct ReuseChoice {
  int64_t reuse = 1;
  /// Why `reuse` is not what was asked ("" when it is).
  std::string message;
};

/// `requested` if valid, else the nearest valid factor and a message.
/// InvalidArgument for a layer with no products.
absl::StatusOr<ReuseChoice> snapReuseFactor(const std::string &layer,
                                            int64_t nIn, int64_t nOut,
                                            int64_t requested);

/// Multipliers the layer needs at a valid reuse factor.
int64_t multipliersAt(int64_t nIn, int64_t nOut, int64_t reuse);

/// The smallest valid reuse factor whose multipliers fit `budget`, or
/// ResourceExhausted (naming the layer and the fewest it could use).
absl::StatusOr<int64_t> smallestReuseWithin(const std::string &layer,
                                            int64_t nIn, int64_t nOut,
                                            int64_t budget);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_SCHEDULE_REUSEFACTOR_H
