//===- cpu_has.h - whether this CPU runs a variant, for tests -*- C++ -*-===//
//
// The runtime's tests and benchmarks run every micro-kernel variant the
// machine can: a variant's features (its .inc line, space separated), from
// cpuid on x86-64 (as __builtin_cpu_supports names them) and from the
// kernel's hwcaps on aarch64. An unknown name is not run.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_RUNTIME_CPU_HAS_H
#define CUVIL_RUNTIME_CPU_HAS_H

#include <sstream>
#include <string>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

namespace cuvil::runtime_testing {

#if defined(__aarch64__)
inline bool cpuHasFeature(const std::string &f) {
  // Linux's arm64 hwcap bits (asm/hwcap.h).
  unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  if (f == "neon")
    return hwcap >> 1 & 1;
  if (f == "fullfp16")
    return hwcap >> 10 & 1;
  if (f == "dotprod")
    return hwcap >> 20 & 1;
  if (f == "i8mm")
    return hwcap2 >> 13 & 1;
  return false;
}
#else
inline bool cpuHasFeature(const std::string &f) {
  __builtin_cpu_init();
  if (f == "avx2")
    return __builtin_cpu_supports("avx2");
  if (f == "fma")
    return __builtin_cpu_supports("fma");
  if (f == "avx512f")
    return __builtin_cpu_supports("avx512f");
  if (f == "avx512bw")
    return __builtin_cpu_supports("avx512bw");
  if (f == "avx512vnni")
    return __builtin_cpu_supports("avx512vnni");
  if (f == "avxvnni") {
    // GCC 12's __builtin_cpu_supports does not know it: cpuid leaf 7.1
    // EAX bit 4 (the OS's AVX state is checked with avx2).
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx2") &&
           __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax >> 4 & 1);
  }
  if (f == "avx512bf16") {
    // cpuid leaf 7.1 EAX bit 5, as for avxvnni.
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx512f") &&
           __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax >> 5 & 1);
  }
  return false;
}
#endif

inline bool cpuHas(const std::string &features) {
  std::istringstream in(features);
  std::string f;
  while (in >> f)
    if (!cpuHasFeature(f))
      return false;
  return true;
}

} // namespace cuvil::runtime_testing

#endif // CUVIL_RUNTIME_CPU_HAS_H
