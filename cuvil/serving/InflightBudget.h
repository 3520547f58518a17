//===- InflightBudget.h - bytes the server holds for requests ---*- C++ -*-===//
//
// One budget for the whole server (--max-inflight-bytes): REST bodies are
// reserved as they are announced or arrive, gRPC messages when they reach the
// service, and every answer's output tensors before the model runs. A
// reservation that does not fit is refused (503: retry later), so many large
// concurrent requests cannot take the server's memory, whatever each one's
// size limit.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SERVING_INFLIGHTBUDGET_H
#define CUVIL_SERVING_INFLIGHTBUDGET_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

#include <atomic>
#include <cstdint>
#include <utility>

namespace cuvil::serving {

class InflightBudget;

/// Bytes held against a budget, given back when this goes away.
class Reservation {
public:
  Reservation() = default;
  Reservation(Reservation &&other) noexcept { *this = std::move(other); }
  Reservation &operator=(Reservation &&other) noexcept;
  ~Reservation() { reset(); }

  /// Holds `bytes` more (see InflightBudget::reserve for the errors).
  absl::Status grow(uint64_t bytes, absl::string_view what);
  /// Gives back what it holds (it may grow again).
  void reset();
  uint64_t bytes() const { return bytes_; }

private:
  friend class InflightBudget;
  InflightBudget *budget_ = nullptr;
  uint64_t bytes_ = 0;
};

class InflightBudget {
public:
  explicit InflightBudget(uint64_t limit) : limit_(limit) {}

  /// `bytes` held until the reservation goes away, or why not: Unavailable
  /// when other requests hold the rest (a retry may succeed), InvalidArgument
  /// when `bytes` alone is above the limit. `what` names the request part.
  absl::StatusOr<Reservation> reserve(uint64_t bytes, absl::string_view what) {
    Reservation reservation;
    reservation.budget_ = this;
    absl::Status status = reservation.grow(bytes, what);
    if (!status.ok())
      return status;
    return reservation;
  }

  uint64_t limit() const { return limit_; }
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  /// Reservations refused because the budget was in use.
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

private:
  friend class Reservation;

  absl::Status take(uint64_t bytes, uint64_t alreadyHeld, absl::string_view what) {
    if (bytes > limit_ - alreadyHeld)
      return absl::InvalidArgumentError(
          absl::StrCat(what, " needs ", alreadyHeld + bytes, " bytes, above the server's limit of ",
                       limit_, " bytes in flight (--max-inflight-bytes)"));
    uint64_t used = used_.load(std::memory_order_relaxed);
    do {
      if (bytes > limit_ - used) {
        refused_.fetch_add(1, std::memory_order_relaxed);
        return absl::UnavailableError(absl::StrCat(
            "the server holds ", used, " bytes of requests in flight and ", what, " needs ",
            bytes, " more, above its limit of ", limit_,
            " (--max-inflight-bytes); retry later"));
      }
    } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
    return absl::OkStatus();
  }
  void give(uint64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }

  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> refused_{0};
};

inline Reservation &Reservation::operator=(Reservation &&other) noexcept {
  reset();
  budget_ = other.budget_;
  bytes_ = other.bytes_;
  other.budget_ = nullptr;
  other.bytes_ = 0;
  return *this;
}

inline absl::Status Reservation::grow(uint64_t bytes, absl::string_view what) {
  if (!budget_ || bytes == 0)
    return absl::OkStatus();
  absl::Status status = budget_->take(bytes, bytes_, what);
  if (status.ok())
    bytes_ += bytes;
  return status;
}

inline void Reservation::reset() {
  if (budget_ && bytes_)
    budget_->give(bytes_);
  bytes_ = 0;
}

} // namespace cuvil::serving

#endif // CUVIL_SERVING_INFLIGHTBUDGET_H
