//===- HttpCodec.h - Open Inference Protocol JSON bodies --------*- C++ -*-===//
//
// The REST body of an inference request and response: JSON tensors (`data`
// flat or nested, row-major) and the binary tensor extension (a JSON header
// of `Inference-Header-Content-Length` bytes followed by raw tensors named
// by `parameters.binary_data_size`; outputs asked for with
// `parameters.binary_data` or `binary_data_output`).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SERVING_HTTPCODEC_H
#define CUVIL_SERVING_HTTPCODEC_H

#include "cuvil/serving/Tensor.h"

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include <optional>
#include <string>

namespace cuvil::serving {

/// Decodes a request body; `jsonLength` is the Inference-Header-Content-Length
/// header (absent: the body is all JSON). Model name and version come from
/// the URL and are left empty.
absl::StatusOr<InferRequest> decodeInferRequest(absl::string_view body,
                                                std::optional<size_t> jsonLength);

struct EncodedResponse {
  std::string body;
  /// Set when binary outputs follow the JSON header.
  std::optional<size_t> jsonLength;
};

/// Encodes `response` for `request` (which says which outputs go binary).
EncodedResponse encodeInferResponse(const InferResponse &response, const InferRequest &request);

/// `{"error": "<message>"}`.
std::string errorBody(absl::string_view message);

} // namespace cuvil::serving

#endif // CUVIL_SERVING_HTTPCODEC_H
