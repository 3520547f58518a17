//===- Npz.h - numpy .npy / .npz arrays --------------------------*- C++ -*-===//
//
// Calibration data comes as numpy's own files: `numpy.savez(path, x=...)`
// writes a zip archive of .npy arrays, one per model input. Only what
// numpy writes is read: stored (uncompressed) zip members, zip64 or not,
// and little-endian C-order arrays of the dtypes Cuvil's models take.
// Everything else is refused with what to do.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SUPPORT_NPZ_H
#define CUVIL_SUPPORT_NPZ_H

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil {

struct NpyArray {
  /// The member's name without ".npy" (numpy.savez's keyword).
  std::string name;
  /// numpy's name of the dtype: float32, float64, int64, int32, int16, int8,
  /// uint8 or bool.
  std::string dtype;
  int elementBytes = 0;
  std::vector<int64_t> shape;
  /// The elements, C order, little-endian.
  std::string data;

  int64_t numElements() const;
};

/// Parses one .npy file (`what` names it in errors).
absl::StatusOr<NpyArray> parseNpy(absl::string_view bytes,
                                  absl::string_view what);

/// The arrays of a .npz archive held in `bytes`, in archive order.
absl::StatusOr<std::vector<NpyArray>> parseNpz(absl::string_view bytes,
                                               absl::string_view path);

/// parseNpz of the file at `path`.
absl::StatusOr<std::vector<NpyArray>> readNpz(const std::string &path);

} // namespace cuvil

#endif // CUVIL_SUPPORT_NPZ_H
