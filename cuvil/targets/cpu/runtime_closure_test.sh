#!/usr/bin/env bash
# Each runtime family with its dependencies (the text a model's C starts
# with) compiles alone: as the portable --emit=c output, with gcc -std=c99
# -pedantic -Wall -Wextra -Werror, and with every SIMD variant, with clang
# -std=c99 as models are built and gcc -Wall -Wextra -Werror. A family that
# uses another it does not depend on fails here (an undeclared function).
#   runtime_closure_test.sh ASSEMBLE_RUNTIME
set -euo pipefail
assemble="$(realpath "$1")"
dir="${TEST_TMPDIR:-$(mktemp -d)}/closure"
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
families="$("$assemble" --list)"
[[ -n "$families" ]]
# (A family of another architecture's helpers, neon, is empty here: the
# typedef keeps its unit from being empty, which C forbids.)
for family in $families; do
  { echo '#define _GNU_SOURCE'; echo 'typedef int cuvil_closure_unit;'
    "$assemble" "$family"; } > "$family.c"
  gcc -std=c99 -pedantic -Wall -Wextra -Werror -c "$family.c" -o "$family.o"
  { echo '#define _GNU_SOURCE'; echo 'typedef int cuvil_closure_unit;'
    "$assemble" --simd "$family"; } > "${family}_simd.c"
  gcc -std=gnu99 -O1 -Wall -Wextra -Werror -c "${family}_simd.c" -o "${family}_simd.o"
  /usr/lib/llvm-22/bin/clang -std=c99 -O1 -c "${family}_simd.c" -o "${family}_clang.o"
  echo "$family: compiles alone"
done
