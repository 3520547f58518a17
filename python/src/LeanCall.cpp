//===- LeanCall.cpp - cuvil._lean, CompiledModule's common call in C ------===//
//
// The call most users make, contiguous CPU torch tensors or C-contiguous
// numpy arrays of the model's dtypes and shapes, without the interpreter in
// between: the checks, the outputs (torch.empty_like / numpy.empty_like of
// zero-stride templates) and the .so's cuvil_context_run with the GIL
// released. On the quick-start model that is under half of what the same
// steps cost in Python. Anything else returns None, and CompiledModule's
// Python path runs the call or explains what is wrong. Only the CPython API
// (numpy through the buffer protocol): no torch or numpy headers, no
// pybind11.
//
//===----------------------------------------------------------------------===//

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>

namespace {

using RunFn = int (*)(void *, int64_t, void *const *, void *const *);

/// At most this many inputs or outputs go through here (the rest: Python).
constexpr Py_ssize_t kMaxTensors = 64;
/// Nor inputs of more dimensions than this.
constexpr Py_ssize_t kMaxRank = 64;

/// The fields of the per-thread state tuple CompiledModule._lean_state builds.
enum StateField : Py_ssize_t {
  kRun,           // cuvil_context_run's address
  kContext,       // this thread's cuvil_context
  kTensorType,    // torch.Tensor
  kInputs,        // per input: (torch dtype, dims after a dynamic batch or
                  //             all dims, whether the batch is dynamic)
  kMaxBatch,      // the dynamic batch's bound (0: static shapes)
  kTemplates,     // {batch or None: tuple of output templates}
  kMakeTemplates, // callable(batch or None) -> that tuple, stored in kTemplates
  kEmptyLike,     // torch.empty_like
  kContiguous,    // torch.contiguous_format
  kNumpy,         // True: numpy arrays instead (kTensorType numpy.ndarray,
                  // kEmptyLike numpy.empty_like, kContiguous "C")
  kStateSize
};

PyObject *strDtype, *strRequiresGrad, *strIsCpu, *strIsContiguous, *strShape,
    *strDataPtr, *memoryFormatKwnames, *orderKwnames;

/// Whether `object.name` is `expected`; false (and no error) otherwise.
bool attrIs(PyObject *object, PyObject *name, PyObject *expected) {
  PyObject *value = PyObject_GetAttr(object, name);
  bool same = value == expected;
  Py_XDECREF(value);
  return same;
}

/// `object.data_ptr()` as a pointer, or false.
bool pointerFrom(PyObject *object, void **pointer) {
  PyObject *value = PyObject_CallMethodNoArgs(object, strDataPtr);
  if (!value)
    return false;
  *pointer = PyLong_AsVoidPtr(value);
  Py_DECREF(value);
  return !PyErr_Occurred();
}

/// Whether `shape` (`rank` dims) is the spec's; sets *batch from a dynamic
/// batch (and checks it against an earlier input's).
bool shapeMatches(const int64_t *shape, Py_ssize_t rank, PyObject *spec,
                  int64_t *batch) {
  PyObject *dims = PyTuple_GET_ITEM(spec, 1);
  bool dynamic = PyTuple_GET_ITEM(spec, 2) == Py_True;
  Py_ssize_t first = dynamic ? 1 : 0;
  if (rank != PyTuple_GET_SIZE(dims) + first)
    return false;
  for (Py_ssize_t d = 0; d < PyTuple_GET_SIZE(dims); ++d)
    if (shape[d + first] != PyLong_AsLongLong(PyTuple_GET_ITEM(dims, d)))
      return false;
  if (dynamic) {
    if (*batch >= 0 && shape[0] != *batch)
      return false;
    *batch = shape[0];
  }
  return !PyErr_Occurred();
}

/// Checks one torch input against its spec; its data pointer in *pointer.
bool torchInput(PyObject *value, PyObject *spec, int64_t *batch,
                void **pointer) {
  if (!attrIs(value, strDtype, PyTuple_GET_ITEM(spec, 0)) ||
      !attrIs(value, strRequiresGrad, Py_False) ||
      !attrIs(value, strIsCpu, Py_True))
    return false;
  PyObject *contiguous = PyObject_CallMethodNoArgs(value, strIsContiguous);
  bool ok = contiguous == Py_True;
  Py_XDECREF(contiguous);
  if (!ok)
    return false;
  PyObject *shape = PyObject_GetAttr(value, strShape);
  if (!shape || !PyTuple_Check(shape) ||
      PyTuple_GET_SIZE(shape) > kMaxRank) {
    Py_XDECREF(shape);
    return false;
  }
  int64_t dims[kMaxRank];
  Py_ssize_t rank = PyTuple_GET_SIZE(shape);
  for (Py_ssize_t d = 0; d < rank; ++d)
    dims[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
  Py_DECREF(shape);
  return shapeMatches(dims, rank, spec, batch) && pointerFrom(value, pointer);
}

/// Checks one numpy input (a C-contiguous array of the spec's dtype)
/// against its spec, through the buffer protocol; its data in *pointer
/// (valid while the array lives: the caller's inputs hold it).
bool numpyInput(PyObject *value, PyObject *spec, int64_t *batch,
                void **pointer) {
  if (!attrIs(value, strDtype, PyTuple_GET_ITEM(spec, 0)))
    return false;
  Py_buffer view;
  if (PyObject_GetBuffer(value, &view, PyBUF_C_CONTIGUOUS) != 0)
    return false;
  bool ok = view.ndim <= kMaxRank;
  int64_t dims[kMaxRank];
  for (int d = 0; ok && d < view.ndim; ++d)
    dims[d] = view.shape[d];
  ok = ok && shapeMatches(dims, view.ndim, spec, batch);
  *pointer = view.buf;
  PyBuffer_Release(&view);
  return ok;
}

/// A fresh output's data pointer: torch's data_ptr(), or numpy's buffer.
bool outputPointer(PyObject *tensor, bool numpy, void **pointer) {
  if (!numpy)
    return pointerFrom(tensor, pointer);
  Py_buffer view;
  if (PyObject_GetBuffer(tensor, &view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) !=
      0)
    return false;
  *pointer = view.buf;
  PyBuffer_Release(&view);
  return true;
}

/// call(state, inputs) -> output(s), a nonzero status (int), or None.
PyObject *call(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyTuple_Check(args[0]) ||
      PyTuple_GET_SIZE(args[0]) != kStateSize || !PyTuple_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "call(state, inputs): internal misuse");
    return nullptr;
  }
  PyObject *state = args[0], *inputs = args[1];
  PyObject *specs = PyTuple_GET_ITEM(state, kInputs);
  Py_ssize_t count = PyTuple_GET_SIZE(inputs);
  if (count != PyTuple_GET_SIZE(specs) || count > kMaxTensors)
    Py_RETURN_NONE;
  PyTypeObject *tensorType =
      reinterpret_cast<PyTypeObject *>(PyTuple_GET_ITEM(state, kTensorType));
  bool numpy = PyTuple_GET_ITEM(state, kNumpy) == Py_True;
  void *in[kMaxTensors], *out[kMaxTensors];
  int64_t batch = -1;
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject *value = PyTuple_GET_ITEM(inputs, i);
    PyObject *spec = PyTuple_GET_ITEM(specs, i);
    if (Py_TYPE(value) != tensorType ||
        !(numpy ? numpyInput(value, spec, &batch, &in[i])
                : torchInput(value, spec, &batch, &in[i]))) {
      PyErr_Clear();
      Py_RETURN_NONE;
    }
  }
  int64_t maxBatch = PyLong_AsLongLong(PyTuple_GET_ITEM(state, kMaxBatch));
  if (batch >= 0 && (batch < 1 || batch > maxBatch))
    Py_RETURN_NONE;

  PyObject *key = batch >= 0 ? PyLong_FromLongLong(batch) : Py_NewRef(Py_None);
  if (!key)
    return nullptr;
  PyObject *templates =
      PyDict_GetItemWithError(PyTuple_GET_ITEM(state, kTemplates), key);
  if (templates) {
    Py_INCREF(templates);
  } else if (!PyErr_Occurred()) {
    templates =
        PyObject_CallOneArg(PyTuple_GET_ITEM(state, kMakeTemplates), key);
  }
  Py_DECREF(key);
  if (!templates)
    return nullptr;
  Py_ssize_t outputs =
      PyTuple_Check(templates) ? PyTuple_GET_SIZE(templates) : 0;
  if (outputs == 0 || outputs > kMaxTensors) {
    Py_DECREF(templates);
    Py_RETURN_NONE;
  }
  PyObject *results = PyTuple_New(outputs);
  if (!results) {
    Py_DECREF(templates);
    return nullptr;
  }
  PyObject *emptyLike = PyTuple_GET_ITEM(state, kEmptyLike);
  for (Py_ssize_t o = 0; o < outputs; ++o) {
    // empty_like(template, memory_format=contiguous_format) (numpy:
    // order="C"); slot 0 is scratch for the callee
    // (PY_VECTORCALL_ARGUMENTS_OFFSET).
    PyObject *callArgs[3] = {nullptr, PyTuple_GET_ITEM(templates, o),
                             PyTuple_GET_ITEM(state, kContiguous)};
    PyObject *tensor = PyObject_Vectorcall(
        emptyLike, callArgs + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET,
        numpy ? orderKwnames : memoryFormatKwnames);
    if (!tensor || !outputPointer(tensor, numpy, &out[o])) {
      Py_XDECREF(tensor);
      Py_DECREF(results);
      Py_DECREF(templates);
      return nullptr;
    }
    PyTuple_SET_ITEM(results, o, tensor);
  }
  Py_DECREF(templates);

  auto run =
      reinterpret_cast<RunFn>(PyLong_AsVoidPtr(PyTuple_GET_ITEM(state, kRun)));
  void *context = PyLong_AsVoidPtr(PyTuple_GET_ITEM(state, kContext));
  PyThreadState *released = PyEval_SaveThread(); // the GIL, during the model
  int status = run(context, batch >= 0 ? batch : 1, in, out);
  PyEval_RestoreThread(released);
  if (status != 0) {
    Py_DECREF(results);
    return PyLong_FromLong(status);
  }
  if (outputs == 1) {
    PyObject *single = Py_NewRef(PyTuple_GET_ITEM(results, 0));
    Py_DECREF(results);
    return single;
  }
  return results;
}

PyMethodDef methods[] = {
    {"call", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(call)),
     METH_FASTCALL,
     "call(state, inputs): the model's outputs, a nonzero cuvil status, or "
     "None when the inputs need CompiledModule's general path (torch "
     "tensors or numpy arrays, as the state says)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT,
                      "_lean",
                      "CompiledModule's common call, in C.",
                      -1,
                      methods,
                      nullptr,
                      nullptr,
                      nullptr,
                      nullptr};

} // namespace

PyMODINIT_FUNC PyInit__lean() {
  strDtype = PyUnicode_InternFromString("dtype");
  strRequiresGrad = PyUnicode_InternFromString("requires_grad");
  strIsCpu = PyUnicode_InternFromString("is_cpu");
  strIsContiguous = PyUnicode_InternFromString("is_contiguous");
  strShape = PyUnicode_InternFromString("shape");
  strDataPtr = PyUnicode_InternFromString("data_ptr");
  memoryFormatKwnames = Py_BuildValue("(s)", "memory_format");
  orderKwnames = Py_BuildValue("(s)", "order");
  if (!strDtype || !strRequiresGrad || !strIsCpu || !strIsContiguous ||
      !strShape || !strDataPtr || !memoryFormatKwnames || !orderKwnames)
    return nullptr;
  return PyModule_Create(&module);
}
