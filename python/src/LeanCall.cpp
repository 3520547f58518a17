//===- LeanCall.cpp - cuvil._lean, CompiledModule's common call in C ------===//
//
// The call most users make, contiguous CPU torch tensors of the model's
// dtypes and shapes, without the interpreter in between: the checks, the
// outputs (torch.empty_like of zero-stride templates) and the .so's
// cuvil_context_run with the GIL released. On the quick-start model that is
// under half of what the same steps cost in Python. Anything else returns
// None, and CompiledModule's Python path runs the call or explains what is
// wrong. Only the CPython API: no torch headers, no pybind11.
//
//===----------------------------------------------------------------------===//

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>

namespace {

using RunFn = int (*)(void *, int64_t, void *const *, void *const *);

/// At most this many inputs or outputs go through here (the rest: Python).
constexpr Py_ssize_t kMaxTensors = 64;

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
  kStateSize
};

PyObject *strDtype, *strRequiresGrad, *strIsCpu, *strIsContiguous, *strShape,
    *strDataPtr, *memoryFormatKwnames;

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

/// Checks one input against its spec; sets *batch from a dynamic batch.
bool inputMatches(PyObject *value, PyObject *spec, int64_t *batch) {
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
  if (!shape || !PyTuple_Check(shape)) {
    Py_XDECREF(shape);
    return false;
  }
  PyObject *dims = PyTuple_GET_ITEM(spec, 1);
  bool dynamic = PyTuple_GET_ITEM(spec, 2) == Py_True;
  Py_ssize_t rank = PyTuple_GET_SIZE(dims) + (dynamic ? 1 : 0);
  ok = PyTuple_GET_SIZE(shape) == rank;
  for (Py_ssize_t d = 0; ok && d < PyTuple_GET_SIZE(dims); ++d)
    ok = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d + (dynamic ? 1 : 0))) ==
         PyLong_AsLongLong(PyTuple_GET_ITEM(dims, d));
  if (ok && dynamic) {
    int64_t got = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, 0));
    ok = *batch < 0 || got == *batch;
    *batch = got;
  }
  Py_DECREF(shape);
  return ok && !PyErr_Occurred();
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
  void *in[kMaxTensors], *out[kMaxTensors];
  int64_t batch = -1;
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject *value = PyTuple_GET_ITEM(inputs, i);
    if (Py_TYPE(value) != tensorType ||
        !inputMatches(value, PyTuple_GET_ITEM(specs, i), &batch) ||
        !pointerFrom(value, &in[i])) {
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
    // empty_like(template, memory_format=contiguous_format); slot 0 is
    // scratch for the callee (PY_VECTORCALL_ARGUMENTS_OFFSET).
    PyObject *callArgs[3] = {nullptr, PyTuple_GET_ITEM(templates, o),
                             PyTuple_GET_ITEM(state, kContiguous)};
    PyObject *tensor = PyObject_Vectorcall(emptyLike, callArgs + 1,
                                           1 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                           memoryFormatKwnames);
    if (!tensor || !pointerFrom(tensor, &out[o])) {
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
     "None when the inputs need CompiledModule's general path."},
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
  if (!strDtype || !strRequiresGrad || !strIsCpu || !strIsContiguous ||
      !strShape || !strDataPtr || !memoryFormatKwnames)
    return nullptr;
  return PyModule_Create(&module);
}
