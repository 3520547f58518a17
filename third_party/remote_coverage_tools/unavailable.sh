#!/bin/sh
echo "bazel coverage is not supported offline in Cuvil" >&2
exit 1
