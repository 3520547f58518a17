"""Shim for @rules_cc on Debian's bazel-bootstrap 4.2.3.

Debian's bazel-rules-cc is newer than Bazel 4.2.3 understands; the C++ rules
are native in this Bazel, so this re-exports them under the usual names.
"""

cc_binary = native.cc_binary
cc_import = native.cc_import
cc_library = native.cc_library
cc_proto_library = native.cc_proto_library
cc_test = native.cc_test
cc_toolchain = native.cc_toolchain
cc_toolchain_suite = native.cc_toolchain_suite
fdo_prefetch_hints = native.fdo_prefetch_hints
fdo_profile = native.fdo_profile
objc_import = native.objc_import
objc_library = native.objc_library
