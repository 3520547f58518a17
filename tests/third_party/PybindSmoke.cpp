// A pybind11 extension built by Bazel against Debian's Python headers.
#include <pybind11/pybind11.h>

namespace py = pybind11;

PYBIND11_MODULE(_pybind_smoke, m) {
  m.doc() = "Cuvil build smoke test";
  m.def("add", [](int a, int b) { return a + b; });
  m.def("fail", [] { throw std::invalid_argument("bad input"); });
}
