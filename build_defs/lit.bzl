"""lit tests as Bazel targets: one sh_test per test file.

Every file the glob finds becomes its own test target, so a failure names the
file and reruns alone; the runner then checks that lit really executed that
file (not skipped as unsupported or excluded by suffix), which is the guard
against a test that silently never runs.
"""

# Tools every lit test may call, beyond the per-package ones.
_LIT_TOOLS = [
    "@llvm//:bin/FileCheck",
    "@llvm//:bin/not",
    "@llvm//:bin/count",
]

def glob_lit_tests(
        name = "lit_tests",
        srcs = None,
        exclude = [],
        tools = [],
        data = [],
        tags = [],
        size = "small"):
    """Creates `<file>.test` for each lit file plus a test_suite `name`.

    Args:
      name: name of the test_suite collecting every generated test.
      srcs: test files; defaults to every *.mlir file in the package.
      exclude: files left out of the default glob (e.g. inputs of other tests).
      tools: executables the RUN lines call (e.g. //tools:cuvil-opt); their
        directories are put first on PATH.
      data: extra files the tests read; a RUN line finds them under
        %{cuvil_root}, the workspace root.
      tags: tags for every generated test.
      size: Bazel test size.
    """
    if srcs == None:
        srcs = native.glob(["*.mlir"], exclude = exclude)
    if not srcs:
        fail("glob_lit_tests(%s) found no test files in %s" % (name, native.package_name()))
    all_tools = tools + _LIT_TOOLS
    tests = []
    for src in srcs:
        test_name = src + ".test"
        native.sh_test(
            name = test_name,
            srcs = ["//build_defs:lit_runner.sh"],
            args = ["$(location %s)" % src] +
                   ["$(location %s)" % t for t in all_tools],
            data = [src, "@llvm//:bin/lit", "@llvm//:lit_sources"] + all_tools + data,
            tags = tags,
            size = size,
        )
        tests.append(test_name)
    native.test_suite(name = name, tests = tests, tags = tags)
