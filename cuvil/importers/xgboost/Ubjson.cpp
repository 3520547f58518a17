//===- Ubjson.cpp - UBJSON documents as JSON text -------------------------===//

#include "cuvil/importers/xgboost/Ubjson.h"

#include "absl/strings/str_cat.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace cuvil {

namespace {

constexpr int kMaxDepth = 64;

class Writer {
public:
  explicit Writer(absl::string_view in) : in(in) {}

  absl::Status document() {
    if (absl::Status s = value(next(), 0); !s.ok())
      return s;
    return pos == in.size() ? absl::OkStatus()
                            : fail("bytes after the document");
  }
  std::string out;

private:
  absl::Status fail(const std::string &what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("not a UBJSON document: ", what, " at byte ", pos));
  }
  char next() { return pos < in.size() ? in[pos++] : '\0'; }
  bool take(size_t n, const char *&bytes) {
    if (in.size() - pos < n)
      return false;
    bytes = in.data() + pos;
    pos += n;
    return true;
  }
  /// A big-endian number of `n` bytes.
  bool raw(size_t n, uint64_t &bits) {
    const char *bytes;
    if (!take(n, bytes))
      return false;
    bits = 0;
    for (size_t i = 0; i < n; ++i)
      bits = bits << 8 | static_cast<uint8_t>(bytes[i]);
    return true;
  }
  /// An integer of type `marker`.
  bool integer(char marker, int64_t &v) {
    uint64_t bits;
    switch (marker) {
    case 'i':
      if (!raw(1, bits)) return false;
      v = static_cast<int8_t>(bits);
      return true;
    case 'U':
      if (!raw(1, bits)) return false;
      v = static_cast<uint8_t>(bits);
      return true;
    case 'I':
      if (!raw(2, bits)) return false;
      v = static_cast<int16_t>(bits);
      return true;
    case 'l':
      if (!raw(4, bits)) return false;
      v = static_cast<int32_t>(bits);
      return true;
    case 'L':
      if (!raw(8, bits)) return false;
      v = static_cast<int64_t>(bits);
      return true;
    default:
      return false;
    }
  }
  absl::Status count(int64_t &n) {
    if (!integer(next(), n) || n < 0 || uint64_t(n) > in.size())
      return fail("a bad length");
    return absl::OkStatus();
  }
  void real(double v, int digits) {
    if (std::isnan(v)) {
      out += "NaN";
    } else if (std::isinf(v)) {
      out += v > 0 ? "Infinity" : "-Infinity";
    } else {
      char text[40];
      std::snprintf(text, sizeof text, "%.*g", digits, v);
      out += text;
    }
  }
  /// `n` bytes as a JSON string.
  void quoted(const char *bytes, size_t n) {
    out.push_back('"');
    for (size_t i = 0; i < n; ++i) {
      unsigned char c = bytes[i];
      if (c == '"' || c == '\\') {
        out.push_back('\\');
        out.push_back(c);
      } else if (c < 0x20) {
        char escape[8];
        std::snprintf(escape, sizeof escape, "\\u%04x", c);
        out += escape;
      } else {
        out.push_back(c);
      }
    }
    out.push_back('"');
  }
  absl::Status string() {
    int64_t n;
    if (absl::Status s = count(n); !s.ok())
      return s;
    const char *bytes;
    if (!take(n, bytes))
      return fail("a truncated string");
    quoted(bytes, n);
    return absl::OkStatus();
  }
  absl::Status value(char marker, int depth) {
    int64_t i;
    uint64_t bits;
    switch (marker) {
    case 'Z':
      out += "null";
      return absl::OkStatus();
    case 'T':
      out += "true";
      return absl::OkStatus();
    case 'F':
      out += "false";
      return absl::OkStatus();
    case 'i':
    case 'U':
    case 'I':
    case 'l':
    case 'L':
      if (!integer(marker, i))
        return fail("a truncated integer");
      absl::StrAppend(&out, i);
      return absl::OkStatus();
    case 'd': {
      if (!raw(4, bits))
        return fail("a truncated float32");
      uint32_t word = static_cast<uint32_t>(bits);
      float f;
      std::memcpy(&f, &word, 4);
      real(f, 9);
      return absl::OkStatus();
    }
    case 'D': {
      if (!raw(8, bits))
        return fail("a truncated float64");
      double d;
      std::memcpy(&d, &bits, 8);
      real(d, 17);
      return absl::OkStatus();
    }
    case 'C': {
      const char *c;
      if (!take(1, c))
        return fail("a truncated char");
      quoted(c, 1);
      return absl::OkStatus();
    }
    case 'S':
    case 'H':
      return string();
    case '[':
    case '{':
      if (depth >= kMaxDepth)
        return fail("nesting deeper than 64");
      return container(marker == '{', depth + 1);
    default:
      return fail(absl::StrCat("an unknown type marker ",
                               static_cast<int>(static_cast<uint8_t>(marker))));
    }
  }
  absl::Status container(bool object, int depth) {
    char type = 0;
    int64_t n = -1;
    if (pos < in.size() && in[pos] == '$') {
      ++pos;
      type = next();
      if (pos >= in.size() || in[pos] != '#')
        return fail("a typed container without a count");
    }
    if (pos < in.size() && in[pos] == '#') {
      ++pos;
      if (absl::Status s = count(n); !s.ok())
        return s;
    }
    out.push_back(object ? '{' : '[');
    for (int64_t k = 0;; ++k) {
      if (n >= 0 && k == n)
        break;
      if (n < 0) {
        if (pos >= in.size())
          return fail("an unterminated container");
        if (in[pos] == (object ? '}' : ']')) {
          ++pos;
          break;
        }
      }
      if (k > 0)
        out.push_back(',');
      if (object) {
        if (absl::Status s = string(); !s.ok())
          return s;
        out.push_back(':');
      }
      if (absl::Status s = value(type ? type : next(), depth); !s.ok())
        return s;
    }
    out.push_back(object ? '}' : ']');
    return absl::OkStatus();
  }

  absl::string_view in;
  size_t pos = 0;
};

} // namespace

absl::StatusOr<std::string> ubjsonToJson(absl::string_view bytes) {
  Writer writer(bytes);
  if (absl::Status s = writer.document(); !s.ok())
    return s;
  return std::move(writer.out);
}

} // namespace cuvil
