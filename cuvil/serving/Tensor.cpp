//===- Tensor.cpp - datatypes of the serving core -------------------------===//

#include "cuvil/serving/Tensor.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <string>
#include <vector>
#include <limits>

namespace cuvil::serving {
namespace {

struct TypeInfo {
  DataType type;
  const char *v2;
  const char *abi;
  size_t bytes;
  bool served;
};

constexpr TypeInfo kTypes[] = {
#define CUVIL_DTYPE(name, bytes, c_type, mlir, v2, numpy, torch, served)       \
  {DataType::k##v2, #v2, #name, bytes, served},
#include "cuvil/abi/DTypes.def"
#undef CUVIL_DTYPE
};

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

/// "BOOL, UINT8, ... and FP64": the types the server carries.
std::string servedV2Names() {
  std::vector<std::string> names;
  for (const TypeInfo &entry : kTypes)
    if (entry.served)
      names.push_back(entry.v2);
  std::string last = names.back();
  names.pop_back();
  return absl::StrCat(absl::StrJoin(names, ", "), " and ", last);
}

absl::StatusOr<DataType> parseV2Name(absl::string_view name) {
  for (const TypeInfo &entry : kTypes)
    if (name == entry.v2 && entry.served)
      return entry.type;
  bool known = false;
  for (const TypeInfo &entry : kTypes)
    known |= name == entry.v2;
  for (absl::string_view other : {"UINT16", "UINT32", "UINT64", "BYTES"})
    known |= name == other;
  if (known)
    return absl::InvalidArgumentError(
        absl::StrCat("datatype ", name,
                     " is not supported: compiled models take ",
                     servedV2Names()));
  return absl::InvalidArgumentError(
      absl::StrCat("unknown datatype '", name,
                   "' (the protocol's are BOOL, UINT8..UINT64, INT8..INT64, "
                   "FP16, FP32, FP64, BF16 and BYTES)"));
}

std::optional<DataType> parseAbiName(absl::string_view name) {
  for (const TypeInfo &entry : kTypes)
    if (name == entry.abi && entry.served)
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
