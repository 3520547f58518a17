#!/bin/sh
# The system protoc (Debian protobuf-compiler), as the label Bazel's native
# proto rules expect.
exec /usr/bin/protoc "$@"
