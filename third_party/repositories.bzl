"""Offline external repositories for Cuvil.

Every repository is a local one over a Debian package (see scripts/packages.txt
for the pinned list) or a shim in third_party/. There is deliberately no
remote repository rule anywhere: CI and users build with no network.
"""

load("//third_party:pkg_config.bzl", "pkg_config_repository")

LLVM_PREFIX = "/usr/lib/llvm-22"

def _shim_repository_impl(ctx):
    # The shim's folder in Cuvil's tree, wherever Cuvil is: this workspace,
    # or a user's local_repository / git_repository of it.
    folder = ctx.path(ctx.attr.workspace_file).dirname
    for entry in folder.readdir():
        ctx.symlink(entry, entry.basename)

_shim_repository = repository_rule(
    implementation = _shim_repository_impl,
    doc = "A repository over one of Cuvil's third_party/ shims.",
    attrs = {"workspace_file": attr.label(allow_single_file = True)},
    local = True,
)

def cuvil_dependencies():
    """Declares every external repository the workspace uses."""

    # Debian's bazel-bootstrap 4.2.3 resolves these names while loading
    # @bazel_tools; Debian's rules_cc is too new for it, so a shim re-exports
    # the native rules instead.
    _shim_repository(
        name = "rules_cc",
        workspace_file = Label("//third_party/rules_cc:WORKSPACE"),
    )
    native.local_repository(name = "rules_java", path = "/usr/share/bazel/rules/java")
    native.local_repository(name = "platforms", path = "/usr/share/bazel/tools/platforms")

    # Bazel 4.2.3 would download @remote_coverage_tools for every test rule;
    # this shim satisfies the implicit dependency offline.
    _shim_repository(
        name = "remote_coverage_tools",
        workspace_file = Label("//third_party/remote_coverage_tools:WORKSPACE"),
    )

    # System protoc + libprotobuf, shaped like upstream's repository so that the
    # native proto_library / cc_proto_library find :protoc and :cc_toolchain.
    _shim_repository(
        name = "com_google_protobuf",
        workspace_file = Label("//third_party/protobuf:WORKSPACE"),
    )

    # LLVM/MLIR 22 (headers, shared libLLVM/libMLIR, tools).
    native.new_local_repository(
        name = "llvm",
        path = LLVM_PREFIX,
        build_file = str(Label("//third_party/llvm:llvm.BUILD")),
    )

    # onnx.proto as shipped by python3-onnx; referenced in place, never copied.
    native.new_local_repository(
        name = "onnx_proto",
        path = "/usr/lib/python3/dist-packages",
        build_file = str(Label("//third_party:onnx_proto.BUILD")),
    )

    # Python 3.11 headers for Debian's /usr/bin/python3 (python3-dev).
    native.new_local_repository(
        name = "python3",
        path = "/usr/include/python3.11",
        build_file = str(Label("//third_party:python3.BUILD")),
    )

    # Libraries with a pkg-config file: link flags come from pkg-config so
    # that Debian's split of e.g. Abseil into many .so files is not restated.
    pkg_config_repository(
        name = "com_google_absl",
        libraries = {
            "base": ["absl_base"],
            "status": ["absl_status", "absl_statusor"],
            "strings": ["absl_strings", "absl_str_format_internal"],
            "flags": ["absl_flags", "absl_flags_parse", "absl_flags_usage"],
            "synchronization": ["absl_synchronization"],
            "time": ["absl_time"],
            "hash": ["absl_hash", "absl_raw_hash_set"],
        },
    )
    pkg_config_repository(
        name = "com_google_googletest",
        libraries = {
            "gtest": ["gtest"],
            "gtest_main": ["gtest_main", "gmock"],
            "gmock": ["gmock"],
        },
    )
    pkg_config_repository(
        name = "com_github_google_benchmark",
        libraries = {
            "benchmark": ["benchmark"],
            # Debian ships no benchmark_main.pc.
            "benchmark_main": ["-lbenchmark_main", "benchmark"],
        },
    )
    pkg_config_repository(
        name = "com_googlesource_code_re2",
        libraries = {"re2": ["re2"]},
    )
    pkg_config_repository(
        name = "com_github_grpc_grpc",
        libraries = {"grpc++": ["grpc++", "protobuf"]},
        binaries = {
            "grpc_cpp_plugin": "/usr/bin/grpc_cpp_plugin",
            "grpc_python_plugin": "/usr/bin/grpc_python_plugin",
        },
    )

    # The serving front ends: HTTP/1.1 (libmicrohttpd) and JSON (nlohmann,
    # header-only).
    pkg_config_repository(
        name = "org_gnu_libmicrohttpd",
        libraries = {"microhttpd": ["libmicrohttpd"]},
    )
    pkg_config_repository(
        name = "com_github_nlohmann_json",
        libraries = {"json": ["nlohmann_json"]},
    )
