"""Cuvil: an ahead-of-time compiler for AI inference.

    compiled = cuvil.compile(model, input_signature=[("x", torch.float32,
                             (1, 10))])
    y = compiled(x)              # torch in, torch out; numpy in, numpy out
    compiled.save("model.so")    # + model.h: a .so needing only libc
    model = cuvil.load("model.so")

cuvil.load and calling a compiled model need numpy only; compiling needs
torch for torch models (capture) and runs the C++ compiler in cuvil._C.
"""

from cuvil import onnx_ml, quantization
from cuvil._compile import compile  # noqa: A001 - the API's name
from cuvil._errors import CompileError, LoadError
from cuvil._fpga import FpgaDesign, VerilogDesign
from cuvil._mlu import MluProject
from cuvil._runtime import CompiledModule, CrossCompiledModule, load
from cuvil._version import __version__

__all__ = ["CompileError", "CompiledModule", "CrossCompiledModule",
           "FpgaDesign", "LoadError", "MluProject",
           "VerilogDesign", "compile", "load",
           "onnx_ml", "quantization", "__version__"]
