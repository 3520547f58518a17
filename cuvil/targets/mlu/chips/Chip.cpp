//===- Chip.cpp - MLU270, MLU290, MLU370 ----------------------------------===//
//
// Sources, cited per chip below:
//  [cncc]    the memory sizes cncc defines per --bang-mlu-arch
//            (__MLU_NRAM_SIZE__, __MLU_WRAM_SIZE__, __MLU_SRAM_SIZE__), as
//            listed by mlu-ops' build.sh (--mlu270/--mlu290/--mlu370 usage).
//  [mlu-ops] Cambricon/mlu-ops kernels/kernel.h: REM_FOR_STACK (128 KB) kept
//            from NRAM and SRAM (MAX_NRAM_SIZE, MAX_SRAM_SIZE); CORE_DIM 4;
//            test/mlu_op_gtest executor.h: IO_BANDWIDTH_MLU270 = 102.4,
//            _MLU290 = 1024, _MLU370 = 307.2 GB/s; vector peaks of 32 fp32
//            and 64 fp16 operations per cycle per core.
//  [driver]  Cambricon's MLU kernel driver (attr/cndrv_attr_mlu*.c,
//            mcu/cndrv_mcu_info.c): clusters, 4 IPU cores per cluster, 1 GHz
//            clocks, tensor-unit MACs per cycle per core (INT8 4096; fp16
//            and fp32 0 on MLU2xx, 1536 and 384 on MLU370), MLU290's HBM
//            at 1228.8 GB/s (mlu-ops' test harness assumes 1024).
// The MLU370 entry is the X4 board's chip (8 clusters). The launch cost is
// an assumption (no public figure): 10 microseconds.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/mlu/chips/Chip.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cuvil::mlu {
namespace {

constexpr int64_t kKiB = 1024;

Chip makeChip(const char *name, const char *arch, int64_t nramKiB,
              int64_t wramKiB, int64_t sramKiB, int clusters,
              double gdramGBps, double vectorFp32PerCycle,
              double tensorFp16MacsPerCycle, std::vector<std::string> sources) {
  const double clock = 1e9, cores = clusters * 4;
  Chip chip;
  chip.name = name;
  chip.arch = arch;
  chip.nramBytes = nramKiB * kKiB;
  chip.wramBytes = wramKiB * kKiB;
  chip.sramBytes = sramKiB * kKiB;
  chip.nramReserveBytes = chip.sramReserveBytes = 128 * kKiB;
  chip.clusters = clusters;
  chip.coresPerCluster = 4;
  chip.gdramBytesPerSecond = gdramGBps * 1e9;
  chip.peakFp32 = vectorFp32PerCycle * cores * clock;
  chip.peakFp16 = 2 * tensorFp16MacsPerCycle * cores * clock;
  chip.peakInt8 = 2 * 4096 * cores * clock;
  chip.launchSeconds = 10e-6;
  chip.sources = std::move(sources);
  return chip;
}

} // namespace

const std::vector<Chip> &getChips() {
  static const std::vector<Chip> chips = {
      makeChip("mlu270", "mtp_270", 512, 1024, 2048, 4, 102.4, 32, 0,
               {"memories: cncc's __MLU_*_SIZE__ for mtp_270 (mlu-ops "
                "build.sh)",
                "4 clusters of 4 cores at 1 GHz, LPDDR4x 102.4 GB/s: "
                "Cambricon driver attr/cndrv_attr_mlu270.c, "
                "mcu/cndrv_mcu_info.c; mlu-ops IO_BANDWIDTH_MLU270"}),
      makeChip("mlu290", "mtp_290", 512, 512, 2048, 16, 1228.8, 32, 0,
               {"memories: cncc's __MLU_*_SIZE__ for mtp_290 (mlu-ops "
                "build.sh)",
                "16 clusters of 4 cores at 1 GHz, HBM2 1228.8 GB/s: "
                "Cambricon driver attr/cndrv_attr_mlu290.c (mlu-ops' test "
                "harness assumes 1024 GB/s)"}),
      makeChip("mlu370", "mtp_372", 768, 1024, 4096, 8, 307.2, 64, 1536,
               {"memories: cncc's __MLU_*_SIZE__ for mtp_372 (mlu-ops "
                "build.sh)",
                "MLU370-X4: 8 clusters of 4 cores at 1 GHz, LPDDR5 307.2 "
                "GB/s: Cambricon driver attr/cndrv_attr_mlu370.c; mlu-ops "
                "IO_BANDWIDTH_MLU370"}),
  };
  return chips;
}

absl::StatusOr<Chip> lookupChip(llvm::StringRef name) {
  std::string wanted = absl::AsciiStrToLower(name.str());
  for (const Chip &chip : getChips())
    if (chip.name == wanted || chip.arch == wanted)
      return chip;
  std::string names;
  for (const Chip &chip : getChips())
    absl::StrAppend(&names, names.empty() ? "" : ", ", chip.name);
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown MLU '", name.str(), "'; --device takes one of ", names,
      " (cuvilc --list-devices --target=mlu)"));
}

std::string describeChips() {
  std::string text = absl::StrFormat(
      "%-8s %-8s %9s %9s %9s %9s %11s %12s %12s\n", "device", "arch", "NRAM",
      "WRAM", "SRAM", "cores", "GDRAM", "fp32 vector", "int8 tensor");
  for (const Chip &chip : getChips())
    absl::StrAppendFormat(&text,
                          "%-8s %-8s %7dKB %7dKB %7dKB %4dx%-4d %7.1fGB/s "
                          "%7.2fTOP/s %7.0fTOP/s\n",
                          chip.name, chip.arch, chip.nramBytes / kKiB,
                          chip.wramBytes / kKiB, chip.sramBytes / kKiB,
                          chip.clusters, chip.coresPerCluster,
                          chip.gdramBytesPerSecond / 1e9, chip.peakFp32 / 1e12,
                          chip.peakInt8 / 1e12);
  text += "\nNRAM and WRAM are per core, SRAM per cluster; 128 KB of NRAM and "
          "SRAM\nstay with cncc (mlu-ops' REM_FOR_STACK). Sources: "
          "cuvil/targets/mlu/chips/Chip.cpp.\n";
  return text;
}

} // namespace cuvil::mlu
