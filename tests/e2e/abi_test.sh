#!/usr/bin/env bash
# The artifact's claims, checked on a real .so:
#  - readelf: NEEDED is libc (and libm) only;
#  - nm: only the ABI symbols are exported;
#  - a C program with only model.h links it and passes abi_test.c (errors,
#    contexts, 8 threads, no allocation), natively and under helgrind;
#  - --external-weights: same results, a clean error without the file;
#  - misuse the ABI detects (abi_misuse_test.c: destroyed and shared
#    contexts, thread counts), natively;
#  - --emit=c output compiles with gcc -std=c99 -pedantic -Wall -Werror.
#   abi_test.sh CUVILC MAKE_MODEL_PY ABI_TEST_C ABI_MISUSE_TEST_C
set -euo pipefail
cuvilc="$(realpath "$1")" make_model="$(realpath "$2")" abi_test_c="$(realpath "$3")"
abi_misuse_test_c="$(realpath "$4")"
dir="${TEST_TMPDIR:-$(mktemp -d)}/abi"
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"

/usr/bin/python3 "$make_model" mlp mlp.onnx
"$cuvilc" --quiet --max-batch=4 --cpu=x86-64-v2 mlp.onnx -o model.so
test -f model.h

needed="$(/usr/lib/llvm-22/bin/llvm-readelf -d model.so | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')"
echo "NEEDED: $needed"
for lib in $needed; do
  case "$lib" in
    libc.so.6|libm.so.6|libpthread.so.0) ;;
    *) echo "FAIL: model.so depends on $lib" >&2; exit 1 ;;
  esac
done

exports="$(/usr/lib/llvm-22/bin/llvm-nm -D --defined-only model.so | awk '{print $3}' | sort | tr '\n' ' ')"
expected="cuvil_context_create cuvil_context_destroy cuvil_context_error cuvil_context_max_threads cuvil_context_run cuvil_model_metadata cuvil_model_num_inputs cuvil_model_num_outputs cuvil_model_run cuvil_model_workspace_size cuvil_status_message "
if [[ "$exports" != "$expected" ]]; then
  echo "FAIL: exported symbols are: $exports" >&2
  exit 1
fi

cp "$abi_test_c" abi_test.c
gcc -std=c99 -Wall -Wextra -Werror -pedantic -O1 abi_test.c -I. -L. -l:model.so \
  -Wl,-rpath,"$dir" -lpthread -o abi_test
./abi_test
# The same 8-thread run under helgrind: no data race in the model.
valgrind --tool=helgrind --error-exitcode=9 --quiet ./abi_test

cp "$abi_misuse_test_c" abi_misuse_test.c
gcc -std=c99 -Wall -Wextra -Werror -pedantic -O1 abi_misuse_test.c -I. -L. -l:model.so \
  -Wl,-rpath,"$dir" -lpthread -o abi_misuse_test
./abi_misuse_test

# --external-weights: the .so maps model_ext.weights.bin when loaded; the
# results are the embedded model's; without the file, calls fail cleanly.
"$cuvilc" --quiet --external-weights --max-batch=4 --cpu=x86-64-v2 mlp.onnx -o model_ext.so
test -s model_ext.weights.bin
/usr/bin/python3 - <<'PY'
import ctypes, json, os, shutil
import numpy as np

def run(path):
    lib = ctypes.CDLL(os.path.abspath(path))
    lib.cuvil_model_workspace_size.restype = ctypes.c_size_t
    lib.cuvil_model_metadata.restype = ctypes.c_char_p
    x = np.linspace(-1, 1, 40, dtype=np.float32).reshape(4, 10)
    y = np.zeros((4, 16), np.float32)
    ws = np.zeros(lib.cuvil_model_workspace_size(), np.uint8)
    status = lib.cuvil_model_run(ctypes.c_int64(4), (ctypes.c_void_p * 1)(x.ctypes.data),
                                 (ctypes.c_void_p * 1)(y.ctypes.data),
                                 ctypes.c_void_p(ws.ctypes.data), ctypes.c_size_t(ws.size))
    return status, y, json.loads(lib.cuvil_model_metadata())["weights"]

status, embedded, meta = run("model.so")
assert status == 0 and meta["storage"] == "embedded", (status, meta)
status, external, meta = run("model_ext.so")
assert status == 0 and meta["storage"] == "external", (status, meta)
assert np.array_equal(embedded, external)
shutil.copy("model_ext.so", "orphan.so")  # no orphan.weights.bin beside it
status, _, _ = run("orphan.so")
assert status == 6, status  # CUVIL_ERROR_WEIGHTS_UNAVAILABLE
print("external weights: identical results; a missing file gives status 6")
PY

"$cuvilc" --quiet --emit=c --cpu=x86-64-v2 mlp.onnx -o single.c
gcc -std=c99 -pedantic -Wall -Werror -c single.c -o single.o
echo "emit=c compiles with gcc -std=c99 -pedantic -Wall -Werror"
