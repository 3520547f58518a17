//===- cpu_has.h - whether this CPU runs a variant, for tests -*- C++ -*-===//
//
// The runtime's tests and benchmarks run every micro-kernel variant the
// machine can: a variant's features (its .inc line, space separated) as
// __builtin_cpu_supports names. An unknown name is not run.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_RUNTIME_CPU_HAS_H
#define CUVIL_RUNTIME_CPU_HAS_H

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
