//===- HttpCodec.cpp - Open Inference Protocol JSON bodies ----------------===//

#include "cuvil/serving/HttpCodec.h"

#include "cuvil/support/StatusMacros.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace cuvil::serving {
namespace {

using nlohmann::json;

absl::Status invalid(absl::string_view where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

template <typename T> void appendRaw(std::string &out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

template <typename T>
absl::Status appendElement(const json &value, std::string &out, absl::string_view where) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean())
      return invalid(where, absl::StrCat("BOOL data holds true or false, not ", value.dump()));
    out.push_back(value.get<bool>() ? 1 : 0);
  } else if constexpr (std::is_integral_v<T>) {
    if (value.is_number_unsigned()) {
      uint64_t v = value.get<uint64_t>();
      if (v > static_cast<uint64_t>(std::numeric_limits<T>::max()))
        return invalid(where, absl::StrCat(v, " is out of range for the datatype"));
      appendRaw<T>(out, static_cast<T>(v));
    } else if (value.is_number_integer()) {
      int64_t v = value.get<int64_t>();
      if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          (v > 0 && static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
        return invalid(where, absl::StrCat(v, " is out of range for the datatype"));
      appendRaw<T>(out, static_cast<T>(v));
    } else {
      return invalid(where, absl::StrCat("integer data holds integers, not ", value.dump()));
    }
  } else {
    if (!value.is_number())
      return invalid(where, absl::StrCat("floating-point data holds numbers, not ", value.dump()));
    appendRaw<T>(out, static_cast<T>(value.get<double>()));
  }
  return absl::OkStatus();
}

/// Appends the elements of `data` row-major: a flat array of the elements,
/// or arrays nested exactly as `shape` (each level as long as its dimension,
/// values only at the innermost), never anything in between.
template <typename T>
absl::Status nestedData(const json &data, const std::vector<int64_t> &shape, size_t depth,
                        std::string &out, absl::string_view where) {
  if (depth == shape.size()) {
    if (data.is_array())
      return invalid(where, absl::StrCat("'data' is nested deeper than shape ",
                                         shapeString(shape), " (", shape.size(), " levels)"));
    return appendElement<T>(data, out, where);
  }
  if (!data.is_array())
    return invalid(where, absl::StrCat("nested 'data' must have arrays down to level ",
                                       shape.size(), " for shape ", shapeString(shape),
                                       "; it has a value at level ", depth));
  if (data.size() != static_cast<uint64_t>(shape[depth]))
    return invalid(where, absl::StrCat("nested 'data' has ", data.size(), " entries at level ",
                                       depth, " where shape ", shapeString(shape), " has ",
                                       shape[depth]));
  for (const json &element : data)
    RETURN_IF_ERROR(nestedData<T>(element, shape, depth + 1, out, where));
  return absl::OkStatus();
}

template <typename T>
absl::Status decodeTyped(const json &data, const std::vector<int64_t> &shape, std::string &out,
                         absl::string_view where) {
  if (!data.is_array())
    return invalid(where, "'data' must be an array (flat, or nested as the shape)");
  if (std::none_of(data.begin(), data.end(), [](const json &e) { return e.is_array(); })) {
    for (const json &element : data)
      RETURN_IF_ERROR(appendElement<T>(element, out, where));
    return absl::OkStatus();
  }
  if (shape.size() > 64)
    return invalid(where, "nested 'data' is limited to 64 levels; send it flat");
  return nestedData<T>(data, shape, 0, out, where);
}

absl::Status decodeData(DataType type, const json &data, const std::vector<int64_t> &shape,
                        std::string &out, absl::string_view where) {
  switch (type) {
  case DataType::kBOOL: return decodeTyped<bool>(data, shape, out, where);
  case DataType::kUINT8: return decodeTyped<uint8_t>(data, shape, out, where);
  case DataType::kINT8: return decodeTyped<int8_t>(data, shape, out, where);
  case DataType::kUINT16: return decodeTyped<uint16_t>(data, shape, out, where);
  case DataType::kUINT32: return decodeTyped<uint32_t>(data, shape, out, where);
  case DataType::kUINT64: return decodeTyped<uint64_t>(data, shape, out, where);
  case DataType::kINT16: return decodeTyped<int16_t>(data, shape, out, where);
  case DataType::kINT32: return decodeTyped<int32_t>(data, shape, out, where);
  case DataType::kINT64: return decodeTyped<int64_t>(data, shape, out, where);
  case DataType::kFP32: return decodeTyped<float>(data, shape, out, where);
  case DataType::kFP64: return decodeTyped<double>(data, shape, out, where);
  case DataType::kFP16: // not served: parseV2Name refuses them
  case DataType::kBF16:
    break;
  }
  return absl::InternalError("unhandled datatype");
}

template <typename T> json toJsonArray(const std::string &bytes) {
  json array = json::array();
  size_t count = bytes.size() / sizeof(T);
  array.get_ref<json::array_t &>().reserve(count);
  for (size_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, bytes.data() + i * sizeof(T), sizeof(T));
    if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>)
      array.push_back(static_cast<int>(value));
    else if constexpr (std::is_floating_point_v<T>)
      array.push_back(std::isfinite(value) ? json(static_cast<double>(value)) : json(nullptr));
    else
      array.push_back(value);
  }
  return array;
}

json encodeData(const Tensor &tensor) {
  switch (tensor.datatype) {
  case DataType::kBOOL: {
    json array = json::array();
    for (char c : tensor.data)
      array.push_back(c != 0);
    return array;
  }
  case DataType::kUINT8: return toJsonArray<uint8_t>(tensor.data);
  case DataType::kINT8: return toJsonArray<int8_t>(tensor.data);
  case DataType::kUINT16: return toJsonArray<uint16_t>(tensor.data);
  case DataType::kUINT32: return toJsonArray<uint32_t>(tensor.data);
  case DataType::kUINT64: return toJsonArray<uint64_t>(tensor.data);
  case DataType::kINT16: return toJsonArray<int16_t>(tensor.data);
  case DataType::kINT32: return toJsonArray<int32_t>(tensor.data);
  case DataType::kINT64: return toJsonArray<int64_t>(tensor.data);
  case DataType::kFP32: return toJsonArray<float>(tensor.data);
  case DataType::kFP64: return toJsonArray<double>(tensor.data);
  case DataType::kFP16: // not served: parseV2Name refuses them
  case DataType::kBF16:
    break;
  }
  return json::array();
}

absl::StatusOr<bool> boolParameter(const json &object, const char *name, absl::string_view where) {
  if (!object.contains("parameters"))
    return false;
  const json &parameters = object["parameters"];
  if (!parameters.is_object())
    return invalid(where, "'parameters' must be an object");
  if (!parameters.contains(name))
    return false;
  if (!parameters[name].is_boolean())
    return invalid(where, absl::StrCat("parameter '", name, "' must be true or false"));
  return parameters[name].get<bool>();
}

const json *field(const json &object, const char *name) {
  auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

} // namespace

absl::StatusOr<InferRequest> decodeInferRequest(absl::string_view body,
                                                std::optional<size_t> jsonLength) {
  size_t headerBytes = jsonLength.value_or(body.size());
  if (headerBytes > body.size())
    return absl::InvalidArgumentError(
        absl::StrCat("Inference-Header-Content-Length is ", headerBytes,
                     " but the body has only ", body.size(), " bytes"));
  absl::string_view header = body.substr(0, headerBytes);
  RETURN_IF_ERROR(checkNoByteOrderMark(header, "the request body"));
  json request = json::parse(header.begin(), header.end(), nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded())
    return absl::InvalidArgumentError(
        jsonLength ? "the JSON header (Inference-Header-Content-Length bytes) is not valid JSON"
                   : "the request body is not valid JSON");
  if (!request.is_object())
    return absl::InvalidArgumentError("the request body must be a JSON object");

  InferRequest result;
  if (const json *id = field(request, "id")) {
    if (!id->is_string())
      return absl::InvalidArgumentError("'id' must be a string");
    result.id = id->get<std::string>();
  }
  ASSIGN_OR_RETURN(result.binaryOutputs, boolParameter(request, "binary_data_output", "request"));

  const json *inputs = field(request, "inputs");
  if (!inputs || !inputs->is_array() || inputs->empty())
    return absl::InvalidArgumentError("the request needs a non-empty 'inputs' array");
  size_t binaryCursor = headerBytes;
  for (const json &input : *inputs) {
    if (!input.is_object())
      return absl::InvalidArgumentError("each entry of 'inputs' must be an object");
    const json *name = field(input, "name");
    if (!name || !name->is_string())
      return absl::InvalidArgumentError("an input lacks a string 'name'");
    Tensor tensor;
    tensor.name = name->get<std::string>();
    std::string where = absl::StrCat("input '", tensor.name, "'");
    const json *datatype = field(input, "datatype");
    if (!datatype || !datatype->is_string())
      return invalid(where, "needs a string 'datatype'");
    absl::StatusOr<DataType> type = parseV2Name(datatype->get<std::string>());
    if (!type.ok())
      return invalid(where, type.status().message());
    tensor.datatype = *type;
    const json *shape = field(input, "shape");
    if (!shape || !shape->is_array())
      return invalid(where, "needs a 'shape' array");
    for (const json &dim : *shape) {
      if (!dim.is_number_integer() || dim.get<int64_t>() < 0)
        return invalid(where, absl::StrCat("shape ", shape->dump(),
                                           " must hold non-negative integers"));
      tensor.shape.push_back(dim.get<int64_t>());
    }
    absl::StatusOr<int64_t> count = elementCount(tensor.shape);
    if (!count.ok())
      return invalid(where, count.status().message());

    std::optional<uint64_t> binarySize;
    if (const json *parameters = field(input, "parameters")) {
      if (!parameters->is_object())
        return invalid(where, "'parameters' must be an object");
      if (const json *size = field(*parameters, "binary_data_size")) {
        if (!size->is_number_integer() || size->get<int64_t>() < 0)
          return invalid(where, "binary_data_size must be a non-negative integer");
        binarySize = size->get<uint64_t>();
      }
    }
    const json *data = field(input, "data");
    if (binarySize) {
      if (data)
        return invalid(where, "has both 'data' and binary_data_size");
      if (!jsonLength)
        return invalid(where, "binary_data_size needs the Inference-Header-Content-Length header");
      if (*binarySize > body.size() - binaryCursor)
        return invalid(where, absl::StrCat("binary_data_size is ", *binarySize, " but only ",
                                           body.size() - binaryCursor,
                                           " bytes of binary data remain"));
      tensor.data.assign(body.data() + binaryCursor, *binarySize);
      binaryCursor += *binarySize;
    } else {
      if (!data)
        return invalid(where, "has no 'data' (nor binary_data_size)");
      // Each element takes at least one byte of JSON: a shape the body cannot
      // hold is not worth reserving for.
      if (static_cast<uint64_t>(*count) <= body.size())
        tensor.data.reserve(static_cast<size_t>(*count) * byteSize(tensor.datatype));
      RETURN_IF_ERROR(decodeData(tensor.datatype, *data, tensor.shape, tensor.data, where));
      size_t elements = tensor.data.size() / byteSize(tensor.datatype);
      if (elements != static_cast<uint64_t>(*count))
        return invalid(where, absl::StrCat("'data' has ", elements, " elements but shape ",
                                           shapeString(tensor.shape), " needs ", *count));
    }
    result.inputs.push_back(std::move(tensor));
  }
  if (binaryCursor != body.size())
    return absl::InvalidArgumentError(
        absl::StrCat(body.size() - binaryCursor,
                     " bytes of binary data follow the JSON header but no input claims them"));

  if (const json *outputs = field(request, "outputs")) {
    if (!outputs->is_array())
      return absl::InvalidArgumentError("'outputs' must be an array");
    for (const json &output : *outputs) {
      if (!output.is_object() || !field(output, "name") || !output["name"].is_string())
        return absl::InvalidArgumentError("each entry of 'outputs' needs a string 'name'");
      RequestedOutput requested;
      requested.name = output["name"].get<std::string>();
      ASSIGN_OR_RETURN(requested.binary,
                       boolParameter(output, "binary_data",
                                     absl::StrCat("output '", requested.name, "'")));
      result.outputs.push_back(std::move(requested));
    }
  }
  return result;
}

EncodedResponse encodeInferResponse(const InferResponse &response, const InferRequest &request) {
  json outputs = json::array();
  std::string binary;
  for (const Tensor &tensor : response.outputs) {
    bool asBinary = request.binaryOutputs;
    for (const RequestedOutput &requested : request.outputs)
      if (requested.name == tensor.name)
        asBinary = asBinary || requested.binary;
    json output = {{"name", tensor.name},
                   {"datatype", std::string(v2Name(tensor.datatype))},
                   {"shape", tensor.shape}};
    if (asBinary) {
      output["parameters"] = {{"binary_data_size", tensor.data.size()}};
      binary += tensor.data;
    } else {
      output["data"] = encodeData(tensor);
    }
    outputs.push_back(std::move(output));
  }
  json body = {{"model_name", response.modelName}, {"model_version", response.modelVersion}};
  if (!response.id.empty())
    body["id"] = response.id;
  body["outputs"] = std::move(outputs);
  EncodedResponse encoded;
  encoded.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  if (!binary.empty() ||
      std::any_of(request.outputs.begin(), request.outputs.end(),
                  [](const RequestedOutput &o) { return o.binary; }) ||
      request.binaryOutputs) {
    encoded.jsonLength = encoded.body.size();
    encoded.body += binary;
  }
  return encoded;
}

uint64_t decodeMemoryBound(absl::string_view body, std::optional<size_t> jsonLength) {
  size_t jsonBytes = std::min(jsonLength.value_or(body.size()), body.size());
  // Every JSON value but the first follows a ',', '[', '{' or ':' outside a
  // string. A parsed value is 16 bytes in a vector that may be twice full,
  // an object member a map node more; strings hold at most their text; a
  // decoded element is at most 8 bytes; binary tensors are copied once.
  uint64_t values = 1, stringBytes = 0;
  bool inString = false, escaped = false;
  for (char c : body.substr(0, jsonBytes)) {
    if (inString) {
      ++stringBytes;
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == ',' || c == '[' || c == '{' || c == ':') {
      ++values;
    }
  }
  return values * 48 + stringBytes + (body.size() - jsonBytes);
}

uint64_t encodeMemoryBound(const InferResponse &response, const InferRequest &request) {
  uint64_t bytes = 4096;
  for (const Tensor &tensor : response.outputs) {
    bool asBinary = request.binaryOutputs;
    for (const RequestedOutput &requested : request.outputs)
      asBinary = asBinary || (requested.name == tensor.name && requested.binary);
    // Binary: copied into the body. JSON: a 16-byte parsed value in a
    // vector up to twice full, and up to 24 bytes of text.
    bytes += asBinary ? tensor.data.size()
                      : tensor.data.size() / byteSize(tensor.datatype) * 56;
  }
  return bytes;
}

absl::Status checkNoByteOrderMark(absl::string_view text, absl::string_view what) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF")
    return absl::InvalidArgumentError(absl::StrCat(
        what, " starts with a UTF-8 byte order mark (EF BB BF); send the JSON without one"));
  return absl::OkStatus();
}

std::string errorBody(absl::string_view message) {
  return json({{"error", std::string(message)}}).dump(-1, ' ', false,
                                                      json::error_handler_t::replace);
}

} // namespace cuvil::serving
