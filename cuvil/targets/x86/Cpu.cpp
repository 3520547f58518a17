//===- Cpu.cpp - the x86 CPU a model is built for -------------------------===//

#include "cuvil/targets/x86/Cpu.h"

#include "absl/strings/str_cat.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/X86TargetParser.h"

#include <unistd.h>

namespace cuvil::x86 {
namespace {

/// Features worth checking at run time (what the code generator may use).
constexpr const char *kCheckedFeatures[] = {
    "sse3",     "ssse3",    "sse4.1",   "sse4.2",  "popcnt", "avx",
    "avx2",     "fma",      "f16c",     "bmi",     "bmi2",   "avx512f",
    "avx512dq", "avx512cd", "avx512bw", "avx512vl", "avx512vnni",
    "avxvnni",  "avx512bf16"};

std::vector<std::string> checkedFeatures(llvm::ArrayRef<llvm::StringRef> all) {
  std::vector<std::string> result;
  for (const char *f : kCheckedFeatures)
    if (llvm::is_contained(all, llvm::StringRef(f)))
      result.push_back(f);
  return result;
}

/// cpuid checks per feature name: the registers of a leaf (entry.c's r1:
/// leaf 1, r7: leaf 7, r71: leaf 7 subleaf 1), register index (eax 0, ebx
/// 1, ecx 2, edx 3), bit.
struct FeatureBit {
  const char *name;
  const char *leaf;
  unsigned reg, bit;
};
constexpr FeatureBit kFeatureBits[] = {
    {"sse3", "r1", 2, 0},        {"ssse3", "r1", 2, 9},
    {"fma", "r1", 2, 12},        {"sse4.1", "r1", 2, 19},
    {"sse4.2", "r1", 2, 20},     {"popcnt", "r1", 2, 23},
    {"avx", "r1", 2, 28},        {"f16c", "r1", 2, 29},
    {"bmi", "r7", 1, 3},         {"avx2", "r7", 1, 5},
    {"bmi2", "r7", 1, 8},        {"avx512f", "r7", 1, 16},
    {"avx512dq", "r7", 1, 17},   {"avx512cd", "r7", 1, 28},
    {"avx512bw", "r7", 1, 30},   {"avx512vl", "r7", 1, 31},
    {"avx512vnni", "r7", 2, 11}, {"avxvnni", "r71", 0, 4},
    {"avx512bf16", "r71", 0, 5},
};

/// CUVIL_CHECK_CPU_FEATURES for entry.c: one test per feature the code was
/// built for, and that the OS saves the vector registers they need.
std::string cpuChecksMacro(const std::vector<std::string> &features) {
  std::vector<std::string> checks;
  bool needsAvx = false, needsAvx512 = false;
  for (const std::string &f : features) {
    for (const FeatureBit &bit : kFeatureBits) {
      if (f != bit.name)
        continue;
      checks.push_back(llvm::formatv("ok &= ({0}[{1}] >> {2}) & 1; /* {3} */",
                                     bit.leaf, bit.reg, bit.bit, bit.name)
                           .str());
      needsAvx |= f.rfind("avx", 0) == 0 || f == "fma" || f == "f16c";
      needsAvx512 |= f.rfind("avx512", 0) == 0;
    }
  }
  if (needsAvx)
    checks.push_back("ok &= (xcr0 & 0x6) == 0x6; /* the OS saves YMM state */");
  if (needsAvx512)
    checks.push_back("ok &= (xcr0 & 0xe6) == 0xe6; /* and ZMM state */");
  std::string macro = "#define CUVIL_CHECK_CPU_FEATURES(ok, r1, r7, r71, xcr0) \\\n"
                      "  do { \\\n";
  for (const std::string &check : checks)
    macro += "    " + check + " \\\n";
  return macro + "  } while (0)\n";
}

} // namespace

absl::StatusOr<ResolvedCpu> resolveCpu(const std::string &cpu) {
  ResolvedCpu target;
  if (cpu == "native") {
    target.march = llvm::sys::getHostCPUName().str();
    std::vector<llvm::StringRef> names;
    llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
    for (auto &entry : host)
      if (entry.getValue())
        names.push_back(entry.getKey());
    target.features = checkedFeatures(names);
    if (target.march == "generic" || target.march.empty())
      target.march = "x86-64";
    // Host features are what the compile machine has; build for them.
    return target;
  }
  llvm::SmallVector<llvm::StringRef, 32> names;
  if (!llvm::X86::parseArchX86(cpu) && cpu != "x86-64")
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown --cpu '", cpu,
        "'; use native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4 or an LLVM "
        "CPU name such as znver4 or skylake-avx512"));
  llvm::X86::getFeaturesForCPU(cpu, names);
  // The list leaves out what its features imply (x86-64-v4 names avx512bw,
  // not the avx512f it needs): close it.
  llvm::StringMap<bool> implied;
  for (llvm::StringRef name : names)
    llvm::X86::updateImpliedFeatures(name, true, implied);
  for (auto &entry : implied)
    if (entry.getValue() && !llvm::is_contained(names, entry.getKey()))
      names.push_back(entry.getKey());
  target.march = cpu;
  target.features = checkedFeatures(names);
  return target;
}

l1::TargetAttr describeCpu(mlir::MLIRContext *context, const ResolvedCpu &cpu,
                           bool native) {
  auto has = [&](const char *feature) {
    return llvm::is_contained(cpu.features, feature);
  };
  int64_t vectorBits = has("avx512f") ? 512 : has("avx2") || has("avx") ? 256 : 128;
  // The attribute's defaults are typical server-core values; a native build
  // reads the compiling machine's caches and cores instead.
  l1::TargetAttr defaults = l1::TargetAttr::getDefault(context, "x86");
  int64_t l1 = defaults.getL1Bytes(), l2 = defaults.getL2Bytes(),
          l3 = defaults.getL3Bytes(), cores = defaults.getCores();
  if (native) {
    auto query = [](int name, int64_t fallback) {
      long value = ::sysconf(name);
      return value > 0 ? static_cast<int64_t>(value) : fallback;
    };
    l1 = query(_SC_LEVEL1_DCACHE_SIZE, l1);
    l2 = query(_SC_LEVEL2_CACHE_SIZE, l2);
    l3 = query(_SC_LEVEL3_CACHE_SIZE, l3);
    cores = query(_SC_NPROCESSORS_ONLN, cores);
  }
  mlir::Builder b(context);
  llvm::SmallVector<mlir::Attribute> features;
  for (const std::string &f : cpu.features)
    features.push_back(b.getStringAttr(f));
  // AVX2 without VNNI multiplies int8 on vpmaddubsw, whose int16 pair sums
  // are exact for weights of magnitude <= 64 (runtime/qconv/qconvb.inc).
  bool narrowInt8 = has("avx2") && !has("avx512vnni") && !has("avxvnni");
  return l1::TargetAttr::get(
      context, "x86", "x86_64-linux-gnu", cpu.march, b.getArrayAttr(features),
      vectorBits, l1, l2, l3, cores, defaults.getMemoryBytesPerSecond(),
      defaults.getL2BytesPerSecond(), defaults.getKernelOverheadSeconds(),
      defaults.getBatchingThreshold(), narrowInt8 ? 64 : 127,
      mlir::DictionaryAttr());
}

cpu::CpuTarget cpuTargetOf(l1::TargetAttr target) {
  cpu::CpuTarget cpu;
  cpu.name = "x86";
  cpu.triple = "x86_64-linux-gnu";
  cpu.cpu = target.getCpu().str();
  for (llvm::StringRef f : target.getFeatureNames())
    cpu.features.push_back(f.str());
  cpu.modelFlags = {"-march=" + cpu.cpu};
  cpu.entryFlags = {"-march=x86-64"};
  cpu.cpuCheckMacro = cpuChecksMacro(cpu.features);
  return cpu;
}

} // namespace cuvil::x86
