//===- Tensor.h - tensors and requests of the serving core ------*- C++ -*-===//
//
// The protocol-neutral form of an inference request and response. The REST
// and gRPC front ends decode into these and encode from them, so both run the
// same validation, batching and model code (and answer bit for bit alike).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SERVING_TENSOR_H
#define CUVIL_SERVING_TENSOR_H

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cuvil::serving {

/// The element types of the C ABI (cuvil/abi/DTypes.def), by their Open
/// Inference Protocol names; the server carries those marked served.
enum class DataType {
#define CUVIL_DTYPE(name, bytes, c_type, mlir, v2, numpy, torch, served) k##v2,
#include "cuvil/abi/DTypes.def"
#undef CUVIL_DTYPE
};

/// The Open Inference Protocol name ("FP32") of `type`.
absl::string_view v2Name(DataType type);
/// The metadata name ("float32") of `type`, as the .so's JSON spells it.
absl::string_view abiName(DataType type);
size_t byteSize(DataType type);

/// Parses a protocol datatype. Names the protocol defines but no compiled
/// model takes (FP16, BYTES, ...) are InvalidArgument with that reason;
/// anything else is an unknown datatype.
absl::StatusOr<DataType> parseV2Name(absl::string_view name);
std::optional<DataType> parseAbiName(absl::string_view name);

/// Number of elements of `shape`, or an error for negative dimensions or an
/// overflowing product.
absl::StatusOr<int64_t> elementCount(const std::vector<int64_t> &shape);

std::string shapeString(const std::vector<int64_t> &shape);

struct Tensor {
  std::string name;
  DataType datatype = DataType::kFP32;
  std::vector<int64_t> shape;
  /// Dense row-major elements (bool is one byte, 0 or 1).
  std::string data;
};

struct RequestedOutput {
  std::string name;
  /// REST binary extension: answer this output as raw bytes.
  bool binary = false;
};

struct InferRequest {
  std::string modelName;
  /// Empty: the newest loaded version.
  std::string modelVersion;
  std::string id;
  std::vector<Tensor> inputs;
  /// Empty: every output.
  std::vector<RequestedOutput> outputs;
  /// REST: `parameters.binary_data_output`.
  bool binaryOutputs = false;
};

struct InferResponse {
  std::string modelName;
  std::string modelVersion;
  std::string id;
  std::vector<Tensor> outputs;
};

} // namespace cuvil::serving

#endif // CUVIL_SERVING_TENSOR_H
