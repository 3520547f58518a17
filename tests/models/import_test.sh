#!/usr/bin/env bash
# Exports a reference model to ONNX with PyTorch and imports it with cuvilc:
# the import must succeed, verify, and keep the model's input/output shapes.
#   import_test.sh MODEL CUVILC EXPORT_SCRIPT [--dynamic-batch]
set -euo pipefail
model="$1" cuvilc="$2" export_script="$3"
shift 3
dir="${TEST_TMPDIR:-$(mktemp -d)}"
/usr/bin/python3 "$export_script" "$model" "$dir/$model.onnx" --opset 14 "$@" \
  > "$dir/export.log" 2>&1 || { cat "$dir/export.log"; exit 1; }
"$cuvilc" --quiet --emit=mlir-level1 "$dir/$model.onnx" -o "$dir/$model.mlir"
signature="$(grep -m1 'func.func' "$dir/$model.mlir" | sed 's/) {$/)/')"
echo "$signature"
ops="$(grep -o 'cuvil\.[a-z_0-9]*' "$dir/$model.mlir" | grep -v 'cuvil\.name' | sort | uniq -c)"
echo "$ops"
case "$model" in
  transformer_encoder_layer) want_in="128x512xf32" want_out="128x512xf32" ;;
  *) want_in="3x224x224xf32" want_out="1000xf32" ;;
esac
batch="1x"
[[ "${1:-}" == "--dynamic-batch" ]] && batch="?x"
if [[ "$signature" != *"tensor<$batch$want_in>"*"-> (tensor<$batch$want_out>"* ]]; then
  echo "FAIL: expected tensor<$batch$want_in> -> tensor<$batch$want_out>" >&2
  exit 1
fi
