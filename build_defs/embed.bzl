"""Text files compiled in as C++ raw strings."""

def cuvil_embed_strings(name, files, header, namespace, out):
    """A genrule writing `out`: `extern const char SYMBOL[]` for each
    `files` entry (label -> SYMBOL), holding the file's text. A file that
    holds the raw string's delimiter fails the build instead of ending its
    string early."""
    labels = sorted(files.keys())
    cmd = ["set -e"]
    for label in labels:
        cmd.append("if grep -q ')cuvil_embed' $(location %s); then echo '%s contains the raw string delimiter' >&2; exit 1; fi" % (label, label))
    cmd.append("(")
    cmd.append("echo '#include \"%s\"'" % header)
    cmd.append("echo 'namespace %s {'" % namespace)
    for label in labels:
        cmd.append("echo 'extern const char %s[] = R\"cuvil_embed('" % files[label])
        cmd.append("cat $(location %s)" % label)
        cmd.append("echo ')cuvil_embed\";'")
    cmd.append("echo '}'")
    cmd.append(") > $@")
    native.genrule(
        name = name,
        srcs = labels,
        outs = [out],
        cmd = "\n".join(cmd),
    )
