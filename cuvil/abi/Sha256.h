//===- Sha256.h - SHA-256 of a byte string ----------------------*- C++ -*-===//
//
// FIPS 180-4 SHA-256, for checking a model file against the hash its
// config.json records (no crypto library is a dependency of the server).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_ABI_SHA256_H
#define CUVIL_ABI_SHA256_H

#include "absl/strings/string_view.h"

#include <array>
#include <cstdint>
#include <string>

namespace cuvil::abi {

std::array<uint8_t, 32> sha256(absl::string_view bytes);

/// The digest as 64 lowercase hexadecimal digits (what `sha256sum` prints).
std::string sha256Hex(absl::string_view bytes);

} // namespace cuvil::abi

#endif // CUVIL_ABI_SHA256_H
