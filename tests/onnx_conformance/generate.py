"""Generates the ONNX backend node tests offline from Debian's python3-onnx.

    /usr/bin/python3 generate.py OUT_DIR

onnx 1.12's generators still use numpy aliases that numpy 1.24 removed
(np.float, np.int, np.bool, np.object); they are restored here first.
"""

import sys

import numpy as np

for alias, value in (("float", float), ("int", int), ("bool", bool),
                     ("object", object)):
    if not hasattr(np, alias):
        setattr(np, alias, value)

from onnx.backend.test.cmd_tools import main  # noqa: E402

if __name__ == "__main__":
    out = sys.argv[1]
    sys.argv = [sys.argv[0], "generate-data", "-o", out]
    main()
