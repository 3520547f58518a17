"""The `cuvilc` console entry point of the wheel: the C++ command line."""

import sys


def main():
    from cuvil import _C
    sys.exit(_C.cuvilc_main(["cuvilc"] + sys.argv[1:]))


if __name__ == "__main__":
    main()
