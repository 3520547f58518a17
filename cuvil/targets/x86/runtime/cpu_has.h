//===- cpu_has.h - whether this CPU runs a variant, for tests -*- C++ -*-===//
//
// The runtime's tests and benchmarks run every micro-kernel variant the
// machine can: a variant's features (its .inc line, space separated) as
// __builtin_cpu_supports names. An unknown name is not run.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_RUNTIME_CPU_HAS_H
#define CUVIL_RUNTIME_CPU_HAS_H

#include <cpuid.h>
#include <sstream>
#include <string>

namespace cuvil::runtime_testing {

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
