//===- Cpu.cpp - the 64-bit Arm CPU a model is built for ------------------===//

#include "cuvil/targets/aarch64/Cpu.h"

#include "absl/strings/str_cat.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TargetParser/AArch64TargetParser.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace cuvil::aarch64 {
namespace {

/// The hwcap bit Linux reports for each feature of a CPU that the code
/// generator may use in a model's code (arch/arm64 uapi hwcap.h; glibc's
/// bits/hwcap.h): the word (entry.c's hwcap: AT_HWCAP, hwcap2: AT_HWCAP2)
/// and bit, by LLVM's feature names. A CPU's other features (the crypto
/// extensions, which the model is built without, and system ones such as
/// ssbs or dit) are neither used nor checked: a Raspberry Pi 4's
/// Cortex-A72 lacks the crypto extensions, and runs the model.
struct HwcapBit {
  const char *feature;
  const char *word;
  unsigned bit;
};
constexpr HwcapBit kHwcapBits[] = {
    {"fp-armv8", "hwcap", 0},   {"neon", "hwcap", 1},
    {"crc", "hwcap", 7},        {"lse", "hwcap", 8},
    {"fullfp16", "hwcap", 10},  {"rdm", "hwcap", 12},
    {"jsconv", "hwcap", 13},    {"complxnum", "hwcap", 14},
    {"rcpc", "hwcap", 15},      {"dotprod", "hwcap", 20},
    {"sve", "hwcap", 22},       {"fp16fml", "hwcap", 23},
    {"rcpc-immo", "hwcap", 26}, {"sve2", "hwcap2", 1},
    {"i8mm", "hwcap2", 13},     {"bf16", "hwcap2", 14},
};

const HwcapBit *hwcapOf(llvm::StringRef feature) {
  for (const HwcapBit &bit : kHwcapBits)
    if (feature == bit.feature)
      return &bit;
  return nullptr;
}

/// CUVIL_CHECK_CPU_FEATURES for entry.c: one test per feature the code was
/// built for.
std::string hwcapChecksMacro(const std::vector<std::string> &features) {
  std::string macro = "#define CUVIL_CHECK_CPU_FEATURES(ok, hwcap, hwcap2) \\\n"
                      "  do { \\\n";
  for (const std::string &f : features)
    if (const HwcapBit *bit = hwcapOf(f))
      macro += llvm::formatv("    ok &= ({0} >> {1}) & 1; /* {2} */ \\\n",
                             bit->word, bit->bit, bit->feature)
                   .str();
  return macro + "  } while (0)\n";
}

/// The checked features of an LLVM CPU (its default extensions).
std::vector<std::string> featuresOf(const llvm::AArch64::CpuInfo &info) {
  llvm::AArch64::ExtensionSet extensions;
  extensions.addCPUDefaults(info);
  std::vector<llvm::StringRef> names;
  extensions.toLLVMFeatureList(names);
  std::vector<std::string> features;
  for (llvm::StringRef name : names)
    if (name.consume_front("+") && hwcapOf(name))
      features.push_back(name.str());
  return features;
}

/// L1 data and L2 bytes per core of the CPUs edge boards carry (their
/// technical reference manuals' usual configurations); others get those
/// of a Cortex-A72.
std::pair<int64_t, int64_t> cachesOf(llvm::StringRef cpu) {
  if (cpu == "cortex-a53" || cpu == "cortex-a55")
    return {32 << 10, 256 << 10};
  if (cpu == "cortex-a76" || cpu == "cortex-a77" || cpu == "cortex-a78")
    return {64 << 10, 512 << 10};
  if (cpu == "neoverse-n1" || cpu == "neoverse-n2")
    return {64 << 10, 1 << 20};
  return {32 << 10, 512 << 10};
}

} // namespace

absl::StatusOr<ResolvedCpu> resolveCpu(const std::string &cpu) {
  std::string name = cpu;
  if (name == "native")
    name = llvm::Triple(llvm::sys::getProcessTriple()).isAArch64()
               ? llvm::sys::getHostCPUName().str()
               : "generic";
  if (name == "generic")
    return ResolvedCpu{"generic", {"fp-armv8", "neon"}};
  std::optional<llvm::AArch64::CpuInfo> info = llvm::AArch64::parseCpu(name);
  if (!info)
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown --cpu '", cpu,
        "' for aarch64; use generic (any armv8-a) or an LLVM CPU name such as "
        "cortex-a53, cortex-a72, cortex-a76 or neoverse-n1"));
  return ResolvedCpu{std::string(info->Name), featuresOf(*info)};
}

l1::TargetAttr describeCpu(mlir::MLIRContext *context, const ResolvedCpu &cpu) {
  l1::TargetAttr defaults = l1::TargetAttr::getDefault(context, "aarch64");
  mlir::Builder b(context);
  llvm::SmallVector<mlir::Attribute> features;
  for (const std::string &f : cpu.features)
    features.push_back(b.getStringAttr(f));
  auto [l1, l2] = cachesOf(cpu.mcpu);
  // NEON's 4 float lanes are a block worth its kernels (x86 blocks from 8).
  mlir::DictionaryAttr config = b.getDictionaryAttr(
      {b.getNamedAttr("min_channel_block", b.getI64IntegerAttr(4))});
  return l1::TargetAttr::get(
      context, "aarch64", "aarch64-linux-gnu", cpu.mcpu,
      b.getArrayAttr(features), /*vectorBits=*/128, l1, l2,
      defaults.getL3Bytes(), /*cores=*/4,
      /*memoryBytesPerSecond=*/llvm::APFloat(8e9),
      /*l2BytesPerSecond=*/llvm::APFloat(30e9),
      defaults.getKernelOverheadSeconds(),
      defaults.getBatchingThreshold(), /*int8WeightMax=*/127, config);
}

cpu::CpuTarget cpuTargetOf(l1::TargetAttr target) {
  cpu::CpuTarget cpu;
  cpu.name = "aarch64";
  cpu.triple = "aarch64-linux-gnu";
  cpu.cpu = target.getCpu().str();
  for (llvm::StringRef f : target.getFeatureNames())
    cpu.features.push_back(f.str());
  // Without the crypto extensions, which no kernel uses and some boards'
  // CPUs lack (they are not checked).
  cpu.modelFlags = {"-mcpu=" + cpu.cpu + "+nocrypto"};
  // armv8-a, which every 64-bit Arm Linux CPU runs.
  cpu.entryFlags = {"-mcpu=generic"};
  cpu.cpuCheckMacro = hwcapChecksMacro(cpu.features);
  return cpu;
}

} // namespace cuvil::aarch64
