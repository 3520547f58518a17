// An artifact checks, before running any of its code, every ISA feature it
// was built for: here the VNNI and BF16 extensions (cpuid leaf 7 ECX, and
// leaf 7 subleaf 1 EAX), with the OS's saving of the vector registers.
// RUN: cuvilc --quiet --emit=c --cpu=sapphirerapids %s | FileCheck %s
// RUN: cuvilc --quiet --emit=c --cpu=alderlake %s | FileCheck %s --check-prefix=ADL
// RUN: cuvilc --quiet --emit=c --cpu=x86-64-v3 %s | FileCheck %s --check-prefix=V3

func.func @scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = cuvil.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// CHECK: #define CUVIL_CHECK_CPU_FEATURES(ok, r1, r7, r71, xcr0)
// CHECK-DAG: ok &= (r7[1] >> 16) & 1; /* avx512f */
// CHECK-DAG: ok &= (r7[2] >> 11) & 1; /* avx512vnni */
// CHECK-DAG: ok &= (r71[0] >> 4) & 1; /* avxvnni */
// CHECK-DAG: ok &= (r71[0] >> 5) & 1; /* avx512bf16 */
// CHECK-DAG: ok &= (xcr0 & 0xe6) == 0xe6; /* and ZMM state */
// CHECK: } while (0)
// CHECK: cuvil_cpuid(7, 1, r71);

// AVX-VNNI without AVX-512.
// ADL: #define CUVIL_CHECK_CPU_FEATURES
// ADL-NOT: avx512
// ADL: ok &= (r71[0] >> 4) & 1; /* avxvnni */
// ADL-NOT: avx512
// ADL: } while (0)

// V3: #define CUVIL_CHECK_CPU_FEATURES
// V3-NOT: vnni
// V3-NOT: avx512
// V3: } while (0)
