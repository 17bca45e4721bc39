// What bounds and explains a collective that waits too long: the StallError it becomes, and the watch
// (a backend's stall inspector) that numbers collectives and names the ranks a stalled one waits for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/error.h"

namespace ft {

// Thrown when a collective has not completed within the stall timeout. Whatever threw it (a backend, the
// world) is unusable afterwards (its transport may still hold the abandoned operation); the run should end.
class StallError : public Error {
 public:
  StallError(const std::string& message, std::vector<int> ranks) : Error(message), ranks_(std::move(ranks)) {}
  // The ranks found silent or behind; empty when every rank had started the collective.
  const std::vector<int>& ranks() const { return ranks_; }

 private:
  std::vector<int> ranks_;
};

// begin()/end() bracket each collective; a collective still open after timeout_s() is reported with
// stall_error(). Every rank must bracket the same collectives in the same order.
class CollectiveWatch {
 public:
  virtual ~CollectiveWatch() = default;
  virtual double timeout_s() const = 0;
  // Marks the start of this rank's next collective (`kind` e.g. "all-reduce") of `bytes`, carried by
  // `transport` (e.g. "mpi"); returns its number.
  virtual std::uint64_t begin(const char* kind, std::size_t bytes, const char* transport) = 0;
  // The collective begun last has completed.
  virtual void end() = 0;
  // The StallError for the collective begun last after waiting `waited_s`; `detail` is appended.
  virtual StallError stall_error(double waited_s, const std::string& detail = "") const = 0;
};

}  // namespace ft
