"""Build macros shared by every Cuvil package."""

# -Werror applies to project code only; external headers come in with -isystem.
CUVIL_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    # LLVM style: unused parameters are common in overrides.
    "-Wno-unused-parameter",
    # libstdc++ 12's std::stable_sort calls get_temporary_buffer, which clang
    # reports as deprecated (C++17) inside our instantiations.
    "-Wno-deprecated-declarations",
]

def cuvil_cc_library(name, copts = [], **kwargs):
    """A cc_library with the project's warning flags."""
    native.cc_library(name = name, copts = CUVIL_COPTS + copts, **kwargs)

def cuvil_cc_binary(name, copts = [], **kwargs):
    """A cc_binary with the project's warning flags."""
    native.cc_binary(name = name, copts = CUVIL_COPTS + copts, **kwargs)

def cuvil_cc_test(name, copts = [], deps = [], **kwargs):
    """A googletest cc_test with the project's warning flags and gtest_main."""
    native.cc_test(
        name = name,
        copts = CUVIL_COPTS + copts,
        deps = deps + ["@com_google_googletest//:gtest_main"],
        **kwargs
    )
