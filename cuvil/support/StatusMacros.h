//===- StatusMacros.h - absl::Status propagation helpers --------*- C++ -*-===//
//
// Debian's Abseil (20220623) ships no status macros; these are the two that
// API-boundary code (driver, file I/O, runtime, Python, serving) uses.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SUPPORT_STATUSMACROS_H
#define CUVIL_SUPPORT_STATUSMACROS_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <utility>

#define CUVIL_STATUS_CONCAT_IMPL(x, y) x##y
#define CUVIL_STATUS_CONCAT(x, y) CUVIL_STATUS_CONCAT_IMPL(x, y)

/// Evaluates `expr` (an absl::Status) and returns it from the enclosing
/// function if it is not OK.
#define RETURN_IF_ERROR(expr)                                                  \
  do {                                                                         \
    ::absl::Status cuvilStatus_ = (expr);                                      \
    if (!cuvilStatus_.ok())                                                    \
      return cuvilStatus_;                                                     \
  } while (false)

/// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status from
/// the enclosing function, otherwise moves the value into `lhs`, which may be
/// a declaration (`ASSIGN_OR_RETURN(auto x, f())`) or an existing lvalue.
#define ASSIGN_OR_RETURN(lhs, rexpr)                                           \
  CUVIL_ASSIGN_OR_RETURN_IMPL(CUVIL_STATUS_CONCAT(cuvilStatusOr_, __LINE__),   \
                              lhs, rexpr)

#define CUVIL_ASSIGN_OR_RETURN_IMPL(statusor, lhs, rexpr)                      \
  auto statusor = (rexpr);                                                     \
  if (!statusor.ok())                                                          \
    return std::move(statusor).status();                                       \
  lhs = std::move(statusor).value()

#endif // CUVIL_SUPPORT_STATUSMACROS_H
