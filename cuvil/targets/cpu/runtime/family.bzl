"""The runtime's kernel families: C libraries, and the list the assembler reads.

A family is a dict: name (its folder), deps (the families it calls, listed
before it), cc_deps (what it includes of every artifact's own files,
math/scalar.h's :scalar, which the assembled text puts first), hdrs (its
API), srcs, textual_hdrs (its X-macro variant lists) and linkopts. The same list gives each family its Bazel libraries and
generates families.inc, from which cuvil::cpu::assembleRuntime pastes a
model's families in dependency order: one declaration of the graph.
"""

# Each family is compiled as models compile it, in three configurations:
#  "":          with the SIMD variants (the .so build; tests link these);
#  "_c99":      reference kernels only, the --emit=c build, as C99 -pedantic;
#  "_dispatch": SIMD, with sgemm4 and dwconv chosen when a benchmark starts.
# `defines` reach dependents, so a test sees the variants its library has.
_CONFIGS = {
    "": (["-std=gnu99"], ["CUVIL_ENABLE_SIMD_KERNELS"]),
    "_c99": (["-std=c99", "-pedantic"], []),
    "_dispatch": (["-std=gnu99"], [
        "CUVIL_ENABLE_SIMD_KERNELS",
        "CUVIL_SGEMM4_RUNTIME_DISPATCH",
    ]),
}

def cuvil_runtime_family(family):
    """The family's cc_library in each configuration (name, name_c99, ...)."""
    for suffix, (std, defines) in _CONFIGS.items():
        native.cc_library(
            name = family["name"] + suffix,
            srcs = family.get("srcs", []),
            hdrs = family["hdrs"],
            textual_hdrs = family.get("textual_hdrs", []),
            copts = std + ["-Wall", "-Wextra", "-Werror"],
            defines = defines,
            linkopts = family.get("linkopts", []),
            deps = [":arch"] + family.get("cc_deps", []) +
                   [":" + d + suffix for d in family.get("deps", [])],
        )

def cuvil_runtime_families_inc(name, families):
    """Writes families.inc: CUVIL_RUNTIME_FAMILY(name, "deps", "files")."""
    seen = {}
    lines = []
    for family in families:
        for dep in family.get("deps", []):
            if dep not in seen:
                fail("family %s depends on %s, which is not listed before it" %
                     (family["name"], dep))
        seen[family["name"]] = True
        lines.append('CUVIL_RUNTIME_FAMILY(%s, "%s", "%s")' % (
            family["name"],
            " ".join(family.get("deps", [])),
            " ".join(family["hdrs"] + family.get("srcs", [])),
        ))
    native.genrule(
        name = name,
        outs = ["families.inc"],
        cmd = "cat > $@ <<'EOF'\n" +
              "/* Generated from FAMILIES in cuvil/targets/cpu/runtime/BUILD:\n" +
              " * CUVIL_RUNTIME_FAMILY(name, depends, files), in dependency\n" +
              " * order; files are the headers, then the sources, under\n" +
              " * runtime/. */\n" +
              "\n".join(lines) + "\nEOF\n",
    )
