//===- ArtifactModule.cpp - cuvil._artifact, a model checked before loading ===//
//
// cuvil.load must know a file is a whole Cuvil model for this machine
// before ctypes dlopens it (which runs its constructors, and faults on a
// truncated file): the same check cuvil-serve runs (cuvil/abi), from the
// file's bytes. Only the CPython API and that library.
//
//===----------------------------------------------------------------------===//

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cuvil/abi/ArtifactCheck.h"

#include <string>

namespace {

/// check(data: bytes, name: str, machine: str = "") -> (abi_version,
/// metadata_json), for this machine or the one named ("aarch64", for a
/// cross-compiled model); raises ValueError with the checker's message.
PyObject *check(PyObject *, PyObject *args) {
  const char *data = nullptr, *name = nullptr, *machineName = "";
  Py_ssize_t size = 0;
  if (!PyArg_ParseTuple(args, "y#s|s", &data, &size, &name, &machineName))
    return nullptr;
  uint16_t machine = *machineName ? cuvil::abi::machineNamed(machineName)
                                  : cuvil::abi::hostMachine();
  if (machine == 0) {
    PyErr_Format(PyExc_ValueError, "unknown machine '%s'", machineName);
    return nullptr;
  }
  absl::StatusOr<cuvil::abi::ArtifactInfo> info;
  Py_BEGIN_ALLOW_THREADS
  info = cuvil::abi::checkArtifact(
      absl::string_view(data, static_cast<size_t>(size)), name, machine);
  Py_END_ALLOW_THREADS
  if (!info.ok()) {
    std::string message(info.status().message());
    PyErr_SetString(PyExc_ValueError, message.c_str());
    return nullptr;
  }
  return Py_BuildValue("(Is#)", info->abiVersion, info->metadataJson.data(),
                       static_cast<Py_ssize_t>(info->metadataJson.size()));
}

PyMethodDef methods[] = {
    {"check", check, METH_VARARGS,
     "check(data, name, machine=''): (abi_version, metadata_json) of a "
     "Cuvil model's bytes, for this machine or the one named (x86-64, "
     "aarch64); ValueError saying what is wrong otherwise."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT,
                      "_artifact",
                      "Checks a compiled model file before it is loaded.",
                      -1,
                      methods,
                      nullptr,
                      nullptr,
                      nullptr,
                      nullptr};

} // namespace

PyMODINIT_FUNC PyInit__artifact() { return PyModule_Create(&module); }
