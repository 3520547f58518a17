//===- Device.h - the FPGA parts Cuvil schedules for ------------*- C++ -*-===//
//
// A device is data, not code: one JSON file per part under
// cuvil/targets/fpga/devices (embedded in the compiler at build time), with
// its resource budget, its multiplier block, its memories and a timing
// model, and the sources of every figure. `cuvilc --list-devices` prints
// them; the scheduler and the estimators read only this struct.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_DEVICE_DEVICE_H
#define CUVIL_TARGETS_FPGA_DEVICE_DEVICE_H

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil::fpga {

struct Device {
  std::string name;   // "xczu9eg": what --device takes
  std::string part;   // the full part number a vendor tool takes
  std::string vendor; // "xilinx" or "intel"
  std::string family;
  /// The HLS flow whose project is written: "vitis" or "oneapi".
  std::string flow;

  /// The budget the scheduler fits designs into. Xilinx parts count LUTs,
  /// block RAMs of 18 Kb and UltraRAMs; Intel parts ALMs and M20Ks.
  int64_t lut = 0, alm = 0, ff = 0, dsp = 0;
  int64_t bram18k = 0, uram = 0, m20k = 0;

  /// The hard multiplier: one block multiplies a_bits x b_bits (signed),
  /// registered over latencyCycles.
  std::string multiplierBlock;
  int multiplierABits = 0, multiplierBBits = 0, multiplierLatency = 1;

  /// Memories: bits and widest port of a block RAM (or M20K), UltraRAM
  /// bits and width, and the deepest array kept in LUTs (LUTRAM / MLAB).
  int64_t bramBits = 0, bramMaxWidth = 0;
  int64_t uramBits = 0, uramWidth = 0;
  int64_t lutramMaxDepth = 64;

  /// Timing model: the default clock period, the delay of one LUT level
  /// with its routing, and a carry chain's delay per bit.
  double clockNs = 5.0, logicLevelNs = 0.35, carryNsPerBit = 0.015;

  /// Where each figure comes from (data sheets, the product spec).
  std::vector<std::string> sources;
  std::string budgetSource;
  /// The vendor's own figures where the budget differs, as text.
  std::string vendorFigures;

  bool isIntel() const { return vendor == "intel"; }
  /// Logic in LUT-equivalents: the LUTs, or two per ALM (an ALM holds two
  /// fracturable 6-input functions).
  int64_t logicLuts() const { return lut ? lut : 2 * alm; }
  /// The memory blocks of the budget: 18 Kb BRAMs or M20Ks.
  int64_t memoryBlocks() const { return isIntel() ? m20k : bram18k; }
  const char *memoryBlockName() const { return isIntel() ? "M20K" : "BRAM_18K"; }
};

/// Reads one device file; errors name the file and the field.
absl::StatusOr<Device> parseDevice(llvm::StringRef json,
                                   llvm::StringRef fileName);

/// Every device of this build, by name.
const std::vector<Device> &getDevices();

/// The device `name` (case-insensitive, or its full part number), or an
/// error listing those there are.
absl::StatusOr<Device> lookupDevice(llvm::StringRef name);

/// A table of the devices and their budgets, for --list-devices.
std::string describeDevices();

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_DEVICE_DEVICE_H
