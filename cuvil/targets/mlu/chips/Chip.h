//===- Chip.h - the Cambricon MLUs Cuvil plans for -------------*- C++ -*-===//
//
// A chip is data: its on-chip memories, its cores and clusters, its memory
// bandwidth and peak rates, with the sources of every figure (Chip.cpp).
// The planner sizes tiles from it, the emulator gets its arena sizes from
// it, and the report's roofline reads its rates.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_MLU_CHIPS_CHIP_H
#define CUVIL_TARGETS_MLU_CHIPS_CHIP_H

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil::mlu {

struct Chip {
  std::string name; // "mlu270": what --device takes
  std::string arch; // "mtp_270": cncc --bang-mlu-arch
  /// Per core (NRAM, WRAM) and per cluster (SRAM).
  int64_t nramBytes = 0, wramBytes = 0, sramBytes = 0;
  /// What the toolchain keeps for the stack and its own use, not planned
  /// into (mlu-ops' MAX_NRAM_SIZE and MAX_SRAM_SIZE leave the same).
  int64_t nramReserveBytes = 0, sramReserveBytes = 0;
  int clusters = 0, coresPerCluster = 0;
  /// Off-chip (GDRAM) bandwidth, bytes per second.
  double gdramBytesPerSecond = 0;
  /// Peak rates of the whole chip, operations per second (a multiply-add
  /// is two): the vector unit's fp32 and the tensor unit's fp16 and int8.
  double peakFp32 = 0, peakFp16 = 0, peakInt8 = 0;
  /// A kernel launch's fixed cost, seconds (the roofline's floor).
  double launchSeconds = 0;
  std::vector<std::string> sources;

  int cores() const { return clusters * coresPerCluster; }
  int64_t nramBudget() const { return nramBytes - nramReserveBytes; }
  int64_t sramBudget() const { return sramBytes - sramReserveBytes; }
};

/// Every chip of this build.
const std::vector<Chip> &getChips();

/// The chip `name` (case-insensitive; "MLU270" or "mtp_270"), or an error
/// listing those there are.
absl::StatusOr<Chip> lookupChip(llvm::StringRef name);

/// A table of the chips, for --list-devices.
std::string describeChips();

} // namespace cuvil::mlu

#endif // CUVIL_TARGETS_MLU_CHIPS_CHIP_H
