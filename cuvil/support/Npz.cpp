#include "cuvil/support/Npz.h"

#include "cuvil/support/FileUtil.h"
#include "cuvil/support/StatusMacros.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#include <limits>

namespace cuvil {

namespace {

struct DtypeInfo {
  const char *descr, *name;
  int bytes;
};

constexpr DtypeInfo kDtypes[] = {
    {"<f4", "float32", 4}, {"<f8", "float64", 8}, {"<i8", "int64", 8},
    {"<i4", "int32", 4},   {"<i2", "int16", 2},   {"|i1", "int8", 1},
    {"|u1", "uint8", 1},   {"|b1", "bool", 1},
};

uint64_t readLE(absl::string_view bytes, size_t at, int width) {
  uint64_t value = 0;
  for (int i = width - 1; i >= 0; --i)
    value = value << 8 | static_cast<uint8_t>(bytes[at + i]);
  return value;
}

/// The value of `key` in numpy's header dict ("{'descr': '<f4', ...}").
absl::string_view headerValue(absl::string_view header, absl::string_view key) {
  std::string quoted = absl::StrCat("'", key, "':");
  size_t at = header.find(quoted);
  if (at == absl::string_view::npos)
    return {};
  absl::string_view rest =
      absl::StripLeadingAsciiWhitespace(header.substr(at + quoted.size()));
  size_t end = rest.front() == '(' ? rest.find(')') + 1 : rest.find(',');
  return rest.substr(0, end == absl::string_view::npos ? rest.size() : end);
}

} // namespace

int64_t NpyArray::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

absl::StatusOr<NpyArray> parseNpy(absl::string_view bytes,
                                  absl::string_view what) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is not an array numpy.save wrote: ", why));
  };
  if (bytes.size() < 10 || bytes.substr(0, 6) != "\x93NUMPY")
    return bad("no .npy magic");
  int major = static_cast<uint8_t>(bytes[6]);
  if (major < 1 || major > 3)
    return bad(absl::StrCat("format version ", major));
  int lengthBytes = major == 1 ? 2 : 4;
  size_t start = 8 + lengthBytes;
  if (bytes.size() < start)
    return bad("truncated header");
  uint64_t headerLength = readLE(bytes, 8, lengthBytes);
  if (headerLength > bytes.size() - start)
    return bad("truncated header");
  absl::string_view header = bytes.substr(start, headerLength);

  NpyArray array;
  absl::string_view descr = absl::StripPrefix(
      absl::StripSuffix(headerValue(header, "descr"), "'"), "'");
  for (const DtypeInfo &dtype : kDtypes)
    if (descr == dtype.descr) {
      array.dtype = dtype.name;
      array.elementBytes = dtype.bytes;
    }
  if (array.dtype.empty())
    return absl::InvalidArgumentError(absl::StrCat(
        what, " has dtype '", descr,
        "'; calibration arrays are little-endian float32, float64, int64, "
        "int32, int16, int8, uint8 or bool"));
  if (headerValue(header, "fortran_order") != "False")
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is in Fortran order; save numpy.ascontiguousarray(x)"));
  absl::string_view shape = headerValue(header, "shape");
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    return bad("no shape");
  uint64_t elements = 1;
  for (absl::string_view dim :
       absl::StrSplit(shape.substr(1, shape.size() - 2), ',',
                      absl::SkipWhitespace())) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(dim, &value) || value < 0)
      return bad(absl::StrCat("shape ", shape));
    array.shape.push_back(value);
    if (value != 0 && elements > (uint64_t{1} << 56) / value)
      return bad(absl::StrCat("shape ", shape, " is too large"));
    elements *= value;
  }
  absl::string_view data = bytes.substr(start + headerLength);
  if (data.size() != elements * array.elementBytes)
    return bad(absl::StrCat("shape ", shape, " needs ",
                            elements * array.elementBytes, " bytes, it has ",
                            data.size()));
  array.data = std::string(data);
  return array;
}

absl::StatusOr<std::vector<NpyArray>> parseNpz(absl::string_view bytes,
                                               absl::string_view path) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " is not a .npz archive numpy.savez wrote: ", why));
  };
  // The end of central directory record: 22 bytes, then a comment of up
  // to 65535.
  size_t eocd = absl::string_view::npos;
  if (bytes.size() >= 22) {
    size_t lowest = bytes.size() > 22 + 65535 ? bytes.size() - 22 - 65535 : 0;
    for (size_t at = bytes.size() - 21; at-- > lowest;)
      if (readLE(bytes, at, 4) == 0x06054b50) {
        eocd = at;
        break;
      }
  }
  if (eocd == absl::string_view::npos)
    return bad("no zip directory");
  uint64_t entries = readLE(bytes, eocd + 10, 2);
  uint64_t directory = readLE(bytes, eocd + 16, 4);
  if (entries == 0xffff || directory == 0xffffffff) {
    // zip64: a locator just before the record points at the zip64 record.
    if (eocd < 20 || readLE(bytes, eocd - 20, 4) != 0x07064b50)
      return bad("no zip64 locator");
    uint64_t record = readLE(bytes, eocd - 12, 8);
    if (record > bytes.size() || bytes.size() - record < 56 ||
        readLE(bytes, record, 4) != 0x06064b50)
      return bad("bad zip64 directory record");
    entries = readLE(bytes, record + 32, 8);
    directory = readLE(bytes, record + 48, 8);
  }
  std::vector<NpyArray> arrays;
  uint64_t at = directory;
  for (uint64_t i = 0; i < entries; ++i) {
    if (at > bytes.size() || bytes.size() - at < 46 ||
        readLE(bytes, at, 4) != 0x02014b50)
      return bad("truncated zip directory");
    uint64_t method = readLE(bytes, at + 10, 2);
    uint64_t size = readLE(bytes, at + 20, 4); // compressed: as stored
    uint64_t uncompressed = readLE(bytes, at + 24, 4);
    uint64_t nameLength = readLE(bytes, at + 28, 2);
    uint64_t extraLength = readLE(bytes, at + 30, 2);
    uint64_t commentLength = readLE(bytes, at + 32, 2);
    uint64_t local = readLE(bytes, at + 42, 4);
    if (bytes.size() - at - 46 < nameLength + extraLength + commentLength)
      return bad("truncated zip directory");
    std::string name(bytes.substr(at + 46, nameLength));
    // zip64 sizes and offsets, in this order, for fields that overflowed.
    absl::string_view extra = bytes.substr(at + 46 + nameLength, extraLength);
    for (size_t e = 0; e + 4 <= extra.size();) {
      uint64_t id = readLE(extra, e, 2), length = readLE(extra, e + 2, 2);
      if (e + 4 + length > extra.size())
        break;
      if (id == 1) {
        size_t field = e + 4;
        auto take = [&](uint64_t &value) {
          if (value == 0xffffffff && field + 8 <= e + 4 + length) {
            value = readLE(extra, field, 8);
            field += 8;
          }
        };
        take(uncompressed);
        take(size);
        take(local);
      }
      e += 4 + length;
    }
    at += 46 + nameLength + extraLength + commentLength;
    if (method != 0)
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": member '", name,
          "' is compressed; save calibration data with numpy.savez, not "
          "numpy.savez_compressed"));
    if (local > bytes.size() || bytes.size() - local < 30 ||
        readLE(bytes, local, 4) != 0x04034b50)
      return bad(absl::StrCat("member '", name, "' has no local header"));
    uint64_t data = local + 30 + readLE(bytes, local + 26, 2) +
                    readLE(bytes, local + 28, 2);
    if (data > bytes.size() || bytes.size() - data < size)
      return bad(absl::StrCat("member '", name, "' is truncated"));
    ASSIGN_OR_RETURN(NpyArray array,
                     parseNpy(bytes.substr(data, size),
                              absl::StrCat(path, ": '", name, "'")));
    array.name = std::string(absl::StripSuffix(name, ".npy"));
    arrays.push_back(std::move(array));
  }
  return arrays;
}

absl::StatusOr<std::vector<NpyArray>> readNpz(const std::string &path) {
  ASSIGN_OR_RETURN(std::string bytes, readFile(path));
  return parseNpz(bytes, path);
}

} // namespace cuvil
