"""What the section benchmarks (trees, FPGA, edge) share: replacing their
own section of RESULTS.md when run alone (`--update`)."""

import pathlib


def update_section(path, heading, lines):
    """Replaces the section starting at `heading` (up to the next "## ")
    with `lines`, or appends them."""
    path = pathlib.Path(path)
    text = path.read_text() if path.exists() else ""
    start = text.find(heading)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
    else:
        end = text.find("\n## ", start + len(heading))
        rest = text[end:] if end >= 0 else "\n"
        text = text[:start] + "\n".join(lines) + rest
    path.write_text(text)
