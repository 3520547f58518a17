"""Runs the system mlir-tblgen (LLVM 22) on .td files at build time.

Generated files land in bazel-bin and are never committed.
"""

def gentbl(name, td_file, outs, td_srcs = [], deps = [], **kwargs):
    """Generates `outs` from `td_file` and wraps them in a header-only library.

    Args:
      name: the cc_library holding the generated files (as textual headers).
      td_file: the main .td file.
      outs: list of (flags, output file) pairs, one mlir-tblgen run each.
      td_srcs: other .td files `td_file` includes.
      deps: cc deps of the generated library.
      **kwargs: passed to the cc_library.
    """
    srcs = [td_file] + td_srcs + ["@llvm//:mlir_td_files"]

    # .td files include ours by their path in Cuvil's tree, which is the
    # execution root here and external/<name> in a workspace that uses Cuvil.
    repository = native.repository_name().lstrip("@")
    root = "external/" + repository if repository else "."
    for flags, out in outs:
        native.genrule(
            name = "%s_%s_genrule" % (name, out.replace("/", "_").replace(".", "_")),
            srcs = srcs,
            outs = [out],
            tools = ["@llvm//:bin/mlir-tblgen"],
            cmd = ("$(location @llvm//:bin/mlir-tblgen) %s " % flags) +
                  "-I external/llvm/include -I %s -I $(GENDIR)/%s " % (root, root) +
                  "$(location %s) -o $@" % td_file,
        )
    native.cc_library(
        name = name,
        textual_hdrs = [out for _, out in outs],
        deps = deps,
        **kwargs
    )
