// The aarch64 target: NEON variants chosen by the CPU, NCHW4c blocks, the
// load-time check of exactly the features code generation may use (from
// the hwcaps; never the crypto extensions), and the portable C on the
// reference kernels.
// RUN: cuvilc --quiet --target=aarch64-linux-gnu --cpu=cortex-a76 --emit=c %s -o %t.a76.c
// RUN: FileCheck %s < %t.a76.c
// RUN: cuvilc --quiet --target=aarch64 --cpu=generic --emit=c %s -o %t.generic.c
// RUN: FileCheck %s --check-prefix=GENERIC < %t.generic.c
// RUN: cuvilc --quiet --target=aarch64-linux-gnu --emit=mlir-level2 %s | FileCheck %s --check-prefix=LEVEL2
// RUN: cuvilc --quiet --target=aarch64-linux-gnu --cpu=cortex-a76 %s -o %t.so
// RUN: llvm-readelf -h %t.so | FileCheck %s --check-prefix=ELF

func.func @conv(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x1x1xf32> {
  %w = cuvil.constant dense<0.05> : tensor<8x8x3x3xf32>
  %c = cuvil.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>
  %r = cuvil.relu %c : tensor<1x8x6x6xf32>
  %g = cuvil.global_avg_pool %r : tensor<1x8x6x6xf32>
  return %g : tensor<1x8x1x1xf32>
}

// --emit=c keeps to the reference kernels; the metadata names the target.
// CHECK-NOT: #define CUVIL_ENABLE_SIMD_KERNELS
// CHECK: #define CUVIL_CONVB cuvil_convb_reference
// CHECK: \"triple\":\"aarch64-linux-gnu\"
// CHECK: #define CUVIL_CPU_MESSAGE "this CPU lacks an instruction set the model was compiled for (cortex-a76
// CHECK: #define CUVIL_CHECK_CPU_FEATURES(ok, hwcap, hwcap2)
// CHECK-DAG: ok &= (hwcap >> 1) & 1; /* neon */
// CHECK-DAG: ok &= (hwcap >> 8) & 1; /* lse */
// CHECK-DAG: ok &= (hwcap >> 10) & 1; /* fullfp16 */
// CHECK-DAG: ok &= (hwcap >> 20) & 1; /* dotprod */
// CHECK-DAG: ok &= (hwcap >> 15) & 1; /* rcpc */
// CHECK-NOT: aes
// CHECK-NOT: sha2
// CHECK: } while (0)
// CHECK: unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);

// GENERIC: #define CUVIL_CHECK_CPU_FEATURES(ok, hwcap, hwcap2)
// GENERIC-NEXT: do {
// GENERIC-NEXT: ok &= (hwcap >> 0) & 1; /* fp-armv8 */
// GENERIC-NEXT: ok &= (hwcap >> 1) & 1; /* neon */
// GENERIC-NEXT: } while (0)

// LEVEL2: module attributes {cuvil.target = #cuvil.target<backend = "aarch64", triple = "aarch64-linux-gnu", cpu = "generic", features = ["fp-armv8", "neon"], vector_bits = 128
// LEVEL2-SAME: config = {min_channel_block = 4 : i64}
// LEVEL2: ukernel_call "conv2d" {{.*}} outs(%{{.+}}, %{{.+}} : memref<1x8x6x6xf32, #cuvil_l2.layout<"NCHW" to "NCHW4c">>, {{.*}} algorithm <direct_blocked> epilogue <steps = [relu]>

// ELF: Machine: AArch64
