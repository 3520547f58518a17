//===- StatusCodes.h - absl::Status to HTTP status --------------*- C++ -*-===//

#ifndef CUVIL_SERVING_STATUSCODES_H
#define CUVIL_SERVING_STATUSCODES_H

#include "absl/status/status.h"

namespace cuvil::serving {

/// The HTTP status Triton answers for an error of this kind.
inline int httpStatus(const absl::Status &status) {
  switch (status.code()) {
  case absl::StatusCode::kOk: return 200;
  case absl::StatusCode::kInvalidArgument:
  case absl::StatusCode::kFailedPrecondition:
  case absl::StatusCode::kOutOfRange:
  case absl::StatusCode::kAlreadyExists: return 400;
  case absl::StatusCode::kNotFound: return 404;
  case absl::StatusCode::kPermissionDenied: return 403;
  case absl::StatusCode::kUnimplemented: return 501;
  case absl::StatusCode::kUnavailable:
  case absl::StatusCode::kResourceExhausted: return 503;
  default: return 500;
  }
}

} // namespace cuvil::serving

#endif // CUVIL_SERVING_STATUSCODES_H
