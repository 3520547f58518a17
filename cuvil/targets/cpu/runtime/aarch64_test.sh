#!/usr/bin/env bash
# The runtime's unit tests (each family's gtest, and the C tests) built for
# aarch64-linux-gnu by clang and lld against Debian's arm64 cross C and C++
# libraries (googletest from its source), then run under qemu-aarch64 on two
# CPUs: `max`, which has every extension (the NEON and dot-product
# variants run), and a Cortex-A72 (NEON without the dot product: the tests
# see its variants are not for it). scripts/bootstrap installs all of it.
#   aarch64_test.sh SOURCE...   (the runtime's sources, tests and headers)
set -euo pipefail
clang=/usr/lib/llvm-22/bin/clang
sysroot=/usr/aarch64-linux-gnu
gtest=/usr/src/googletest/googletest
for tool in "$clang" "$clang++" /usr/bin/qemu-aarch64 "$sysroot/lib/libc.so.6" \
    "$gtest/src/gtest-all.cc"; do
  [[ -e "$tool" ]] || { echo "missing $tool: run scripts/bootstrap" >&2; exit 1; }
done
root="$PWD"
out="${TEST_TMPDIR:-$(mktemp -d)}/aarch64"
rm -rf "$out" && mkdir -p "$out"
cc=("$clang" --target=aarch64-linux-gnu -I"$root" -DCUVIL_ENABLE_SIMD_KERNELS
    -D_GNU_SOURCE -O2 -Wall -Wextra -Werror)
cxx=("$clang++" --target=aarch64-linux-gnu -std=c++17 -I"$root"
     -I"$gtest/include" -DCUVIL_ENABLE_SIMD_KERNELS -O1)
link=(-fuse-ld=lld -lpthread -lm)

# The kernels as the .so build compiles them (every variant), one archive.
kernels=() gtests=() ctests=()
for src in "$@"; do
  case "$src" in
    *Test.cpp) gtests+=("$src") ;;
    */abi/entry_test.c) ctests+=("$src") ;;
    *_test.c) ctests+=("$src") ;;
    */abi/entry.c) ;;
    *.c) kernels+=("$src") ;;
  esac
done
for src in "${kernels[@]}"; do
  "${cc[@]}" -std=gnu99 -c "$src" -o "$out/$(basename "${src%.c}").o"
done
/usr/lib/llvm-22/bin/llvm-ar rcs "$out/libkernels.a" "$out"/*.o
"${cxx[@]}" -I"$gtest" -c "$gtest/src/gtest-all.cc" -o "$out/gtest-all.o"
"${cxx[@]}" -c "$gtest/src/gtest_main.cc" -o "$out/gtest_main.o"

binaries=()
for src in "${gtests[@]}"; do
  bin="$out/$(basename "${src%.cpp}")"
  "${cxx[@]}" "$src" "$out/gtest-all.o" "$out/gtest_main.o" \
    "$out/libkernels.a" "${link[@]}" -o "$bin"
  binaries+=("$bin")
done
for src in "${ctests[@]}"; do
  bin="$out/$(basename "${src%.c}")"
  case "$src" in
    */abi/entry_test.c)
      # entry.c as artifacts build it, the emitter's macros from
      # check_model.h, around the test's stand-in model.
      "${cc[@]}" -std=gnu99 -include \
        cuvil/targets/cpu/runtime/abi/check_model.h -c \
        cuvil/targets/cpu/runtime/abi/entry.c -o "$out/entry.o"
      "${cc[@]}" -std=gnu99 "$src" "$out/entry.o" "${link[@]}" -o "$bin" ;;
    *) "${cc[@]}" -std=c99 "$src" "$out/libkernels.a" "${link[@]}" -o "$bin" ;;
  esac
  binaries+=("$bin")
done

failed=0
for bin in "${binaries[@]}"; do
  for cpu in max cortex-a72; do
    if qemu-aarch64 -L "$sysroot" -cpu "$cpu" "$bin" > "$bin.$cpu.log" 2>&1; then
      echo "PASS $(basename "$bin") on $cpu"
    else
      echo "FAIL $(basename "$bin") on $cpu:"; cat "$bin.$cpu.log"; failed=1
    fi
  done
done
exit $failed
