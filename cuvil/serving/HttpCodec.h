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
/// the URL and are left empty. `data` is flat or nested exactly as `shape`.
absl::StatusOr<InferRequest> decodeInferRequest(absl::string_view body,
                                                std::optional<size_t> jsonLength);

/// Bytes decodeInferRequest may hold beyond the body: a bound on the parsed
/// JSON (counted from its commas, brackets and colons in one pass) and on
/// the decoded tensors, to reserve before decoding.
uint64_t decodeMemoryBound(absl::string_view body, std::optional<size_t> jsonLength);

/// Bytes encodeInferResponse may hold for `response`: JSON outputs print
/// through a parsed form of up to ~56 bytes an element.
uint64_t encodeMemoryBound(const InferResponse &response, const InferRequest &request);

/// InvalidArgument if `text` starts with a UTF-8 byte order mark (JSON must
/// not: RFC 8259), naming `what`.
absl::Status checkNoByteOrderMark(absl::string_view text, absl::string_view what);

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
