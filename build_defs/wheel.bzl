"""py_wheel: a Python wheel built by the project's own rule.

rules_python is not available offline; this rule writes the wheel with
build_defs/build_wheel.py (zip, dist-info with METADATA, WHEEL, RECORD with
sha256 hashes, entry_points.txt), deterministically, under Debian's
/usr/bin/python3.
"""

def _py_wheel_impl(ctx):
    name = "%s-%s-%s-%s-%s.whl" % (
        ctx.attr.distribution,
        ctx.attr.version,
        ctx.attr.python_tag,
        ctx.attr.abi_tag,
        ctx.attr.platform_tag,
    )
    wheel = ctx.actions.declare_file(name)
    args = ctx.actions.args()
    args.add("--output", wheel)
    args.add("--distribution", ctx.attr.distribution)
    args.add("--version", ctx.attr.version)
    args.add("--tag", "%s-%s-%s" % (ctx.attr.python_tag, ctx.attr.abi_tag, ctx.attr.platform_tag))
    args.add("--summary", ctx.attr.summary)
    args.add("--requires-python", ctx.attr.requires_python)
    if ctx.file.description:
        args.add("--description", ctx.file.description)
    for requirement in ctx.attr.requires:
        args.add("--requires", requirement)
    for entry_point, target in ctx.attr.console_scripts.items():
        args.add("--console-script", "%s=%s" % (entry_point, target))
    inputs = []
    for target, destination in ctx.attr.files.items():
        files = target.files.to_list()
        if len(files) != 1:
            fail("%s must be one file, got %d" % (target.label, len(files)))
        args.add("--file", "%s=%s" % (destination, files[0].path))
        inputs.append(files[0])
    if ctx.file.description:
        inputs.append(ctx.file.description)
    ctx.actions.run(
        executable = "/usr/bin/python3",
        arguments = [ctx.file._builder.path, args],
        inputs = inputs + [ctx.file._builder],
        outputs = [wheel],
        mnemonic = "PyWheel",
        progress_message = "Building wheel %s" % name,
    )
    return [DefaultInfo(files = depset([wheel]))]

py_wheel = rule(
    implementation = _py_wheel_impl,
    doc = "A binary wheel of prebuilt files at chosen paths.",
    attrs = {
        "distribution": attr.string(mandatory = True),
        "version": attr.string(mandatory = True),
        "python_tag": attr.string(mandatory = True),
        "abi_tag": attr.string(mandatory = True),
        "platform_tag": attr.string(mandatory = True),
        "summary": attr.string(default = ""),
        "description": attr.label(allow_single_file = True),
        "requires_python": attr.string(default = ""),
        "requires": attr.string_list(doc = "Requires-Dist entries."),
        "console_scripts": attr.string_dict(doc = "name -> module:function"),
        "files": attr.label_keyed_string_dict(
            allow_files = True,
            doc = "file -> its path in the wheel",
        ),
        "_builder": attr.label(
            default = "//build_defs:build_wheel.py",
            allow_single_file = True,
        ),
    },
)
