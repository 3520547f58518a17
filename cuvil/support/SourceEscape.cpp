//===- SourceEscape.cpp - model text made safe for generated source -------===//

#include "cuvil/support/SourceEscape.h"

#include "llvm/Support/JSON.h"

namespace cuvil {
namespace {

bool isPrintableAscii(unsigned char c) { return c >= 0x20 && c < 0x7f; }

void appendHexEscape(std::string &out, unsigned char c) {
  static const char kDigits[] = "0123456789abcdef";
  out += "\\x";
  out += kDigits[c >> 4];
  out += kDigits[c & 15];
}

} // namespace

std::string cCommentText(llvm::StringRef text, size_t maxText) {
  bool cut = text.size() > maxText;
  llvm::StringRef quoted = text.take_front(maxText);
  std::string out;
  for (size_t i = 0; i < quoted.size(); ++i) {
    auto c = static_cast<unsigned char>(quoted[i]);
    bool last = i + 1 == quoted.size() && !cut;
    if (!isPrintableAscii(c) || c == '*' || c == '\\' || c == '?' ||
        (c == '/' && last))
      appendHexEscape(out, c);
    else
      out += static_cast<char>(c);
  }
  if (cut)
    out += "...";
  return out;
}

std::string cStringLiteral(llvm::StringRef text, llvm::StringRef indent) {
  // Pieces of at most this many source characters keep lines readable;
  // adjacent literals concatenate, and no escape is split between them.
  constexpr size_t kPiece = 72;
  std::string out = "\"";
  size_t pieceLength = 0;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    std::string unit;
    if (c == '"' || c == '\\' || c == '?') {
      unit = {'\\', static_cast<char>(c)};
    } else if (isPrintableAscii(c)) {
      unit = std::string(1, static_cast<char>(c));
    } else {
      // Octal, always three digits: a hex escape would swallow a following
      // hex digit, a shorter octal one a following octal digit.
      unit = {'\\', static_cast<char>('0' + (c >> 6)),
              static_cast<char>('0' + ((c >> 3) & 7)),
              static_cast<char>('0' + (c & 7))};
    }
    if (pieceLength + unit.size() > kPiece) {
      out += "\"\n";
      out += indent.str();
      out += "\"";
      pieceLength = 0;
    }
    out += unit;
    pieceLength += unit.size();
  }
  return out + "\"";
}

std::string printableText(llvm::StringRef text) {
  std::string out;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t') || c == 0x7f)
      appendHexEscape(out, c);
    else
      out += ch;
  }
  return out;
}

std::string jsonText(llvm::StringRef text) {
  return llvm::json::isUTF8(text) ? text.str() : llvm::json::fixUTF8(text);
}

} // namespace cuvil
