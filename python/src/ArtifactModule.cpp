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

/// check(data: bytes, name: str) -> (abi_version, metadata_json); raises
/// ValueError with the checker's message.
PyObject *check(PyObject *, PyObject *args) {
  const char *data = nullptr, *name = nullptr;
  Py_ssize_t size = 0;
  if (!PyArg_ParseTuple(args, "y#s", &data, &size, &name))
    return nullptr;
  absl::StatusOr<cuvil::abi::ArtifactInfo> info;
  Py_BEGIN_ALLOW_THREADS
  info = cuvil::abi::checkArtifact(
      absl::string_view(data, static_cast<size_t>(size)), name);
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
     "check(data, name): (abi_version, metadata_json) of a Cuvil model's "
     "bytes; ValueError saying what is wrong otherwise."},
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
