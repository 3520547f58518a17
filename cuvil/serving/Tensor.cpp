//===- Tensor.cpp - datatypes of the serving core -------------------------===//

#include "cuvil/serving/Tensor.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <array>
#include <limits>

namespace cuvil::serving {
namespace {

struct TypeInfo {
  DataType type;
  const char *v2;
  const char *abi;
  size_t bytes;
};

constexpr std::array<TypeInfo, 8> kTypes = {{
    {DataType::kBool, "BOOL", "bool", 1},
    {DataType::kUint8, "UINT8", "uint8", 1},
    {DataType::kInt8, "INT8", "int8", 1},
    {DataType::kInt16, "INT16", "int16", 2},
    {DataType::kInt32, "INT32", "int32", 4},
    {DataType::kInt64, "INT64", "int64", 8},
    {DataType::kFp32, "FP32", "float32", 4},
    {DataType::kFp64, "FP64", "float64", 8},
}};

const TypeInfo &info(DataType type) {
  for (const TypeInfo &entry : kTypes)
    if (entry.type == type)
      return entry;
  return kTypes[0];
}

} // namespace

absl::string_view v2Name(DataType type) { return info(type).v2; }
absl::string_view abiName(DataType type) { return info(type).abi; }
size_t byteSize(DataType type) { return info(type).bytes; }

absl::StatusOr<DataType> parseV2Name(absl::string_view name) {
  for (const TypeInfo &entry : kTypes)
    if (name == entry.v2)
      return entry.type;
  for (absl::string_view known : {"UINT16", "UINT32", "UINT64", "FP16", "BF16", "BYTES"})
    if (name == known)
      return absl::InvalidArgumentError(absl::StrCat(
          "datatype ", name, " is not supported: compiled models take BOOL, "
          "UINT8, INT8, INT16, INT32, INT64, FP32 and FP64"));
  return absl::InvalidArgumentError(
      absl::StrCat("unknown datatype '", name,
                   "' (the protocol's are BOOL, UINT8..UINT64, INT8..INT64, "
                   "FP16, FP32, FP64, BF16 and BYTES)"));
}

std::optional<DataType> parseAbiName(absl::string_view name) {
  for (const TypeInfo &entry : kTypes)
    if (name == entry.abi)
      return entry.type;
  return std::nullopt;
}

absl::StatusOr<int64_t> elementCount(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", shapeString(shape), " has a negative dimension"));
    // Bounded so that a byte count (up to 8 bytes an element) cannot overflow.
    if (dim != 0 && count > (int64_t{1} << 56) / dim)
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", shapeString(shape), " is too large"));
    count *= dim;
  }
  return count;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

} // namespace cuvil::serving
