"""Resources from Yosys's `stat -json` of a synthesized design, counted the
way the report counts them (and Vivado's utilization report does): LUTs
include LUTs used as shift registers and as distributed RAM, a RAMB36 is
two 18 Kb blocks."""

import json

# LUTs in each distributed-RAM or shift-register primitive.
_LUTS_IN = {"SRL16E": 1, "SRLC32E": 1, "RAM16X1S": 1, "RAM32X1S": 1,
            "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4, "RAM32X1D": 2,
            "RAM64X1D": 2, "RAM128X1D": 4, "RAM32M": 4, "RAM64M": 4,
            "RAM32M16": 8, "RAM64M8": 8, "INV": 1}
_FFS = ("FDRE", "FDSE", "FDCE", "FDPE", "FDRE_1", "FDSE_1", "FDCE_1", "FDPE_1")


def xilinx_resources(stat_path):
    cells = json.loads(open(stat_path).read())["design"]["num_cells_by_type"]
    lut = sum(n for name, n in cells.items() if name.startswith("LUT"))
    lut += sum(n * _LUTS_IN.get(name, 0) for name, n in cells.items())
    return {"LUT": lut,
            "FF": sum(cells.get(name, 0) for name in _FFS),
            "DSP": cells.get("DSP48E2", 0),
            "BRAM_18K": cells.get("RAMB18E2", 0) + 2 * cells.get("RAMB36E2", 0),
            "cells": cells}


def intel_resources(stat_path):
    cells = json.loads(open(stat_path).read())["design"]["num_cells_by_type"]
    return {"LUT": sum(n for name, n in cells.items() if "LUT" in name),
            "FF": sum(n for name, n in cells.items() if "FF" in name),
            "DSP": sum(n for name, n in cells.items() if "MUL" in name),
            "BRAM": sum(n for name, n in cells.items() if "M10K" in name or "M20K" in name),
            "cells": cells}
