"""Writes a wheel (PEP 427) from prebuilt files; used by wheel.bzl.

Deterministic: entries sorted, fixed timestamps, fixed permissions (0755
for shared objects, 0644 otherwise), so that the same inputs give the same
bytes (and a remote cache hit).
"""

import argparse
import base64
import hashlib
import zipfile

EPOCH = (1980, 1, 1, 0, 0, 0)


def record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--output", required=True)
    parser.add_argument("--distribution", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--summary", default="")
    parser.add_argument("--description")
    parser.add_argument("--requires-python", default="")
    parser.add_argument("--requires", action="append", default=[])
    parser.add_argument("--console-script", action="append", default=[])
    parser.add_argument("--file", action="append", default=[],
                        help="DESTINATION=SOURCE")
    args = parser.parse_args()

    entries = {}
    for spec in args.file:
        destination, source = spec.split("=", 1)
        if destination in entries:
            parser.error(f"{destination} is given twice")
        with open(source, "rb") as f:
            entries[destination] = f.read()

    dist_info = f"{args.distribution}-{args.version}.dist-info"
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {args.distribution}",
        f"Version: {args.version}",
    ]
    if args.summary:
        metadata.append(f"Summary: {args.summary}")
    if args.requires_python:
        metadata.append(f"Requires-Python: {args.requires_python}")
    metadata += [f"Requires-Dist: {r}" for r in args.requires]
    body = ""
    if args.description:
        metadata.append("Description-Content-Type: text/markdown")
        with open(args.description, encoding="utf-8") as f:
            body = "\n" + f.read()
    entries[f"{dist_info}/METADATA"] = ("\n".join(metadata) + "\n" + body).encode()
    python_tag, abi_tag, platform_tag = args.tag.split("-")
    entries[f"{dist_info}/WHEEL"] = (
        "Wheel-Version: 1.0\n"
        "Generator: cuvil build_defs/build_wheel.py\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {python_tag}-{abi_tag}-{platform_tag}\n").encode()
    if args.console_script:
        lines = ["[console_scripts]"] + [
            " = ".join(s.split("=", 1)) for s in sorted(args.console_script)]
        entries[f"{dist_info}/entry_points.txt"] = ("\n".join(lines) + "\n").encode()

    record_name = f"{dist_info}/RECORD"
    record = [f"{name},{record_hash(data)},{len(data)}"
              for name, data in sorted(entries.items())]
    record.append(f"{record_name},,")
    entries[record_name] = ("\n".join(record) + "\n").encode()

    # dist-info last, as PEP 427 recommends.
    order = sorted(entries, key=lambda n: (n.startswith(dist_info), n))
    with zipfile.ZipFile(args.output, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name in order:
            info = zipfile.ZipInfo(name, EPOCH)
            mode = 0o755 if name.endswith(".so") else 0o644
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, entries[name])


if __name__ == "__main__":
    main()
