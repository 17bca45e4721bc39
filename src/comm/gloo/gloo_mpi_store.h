// A Gloo rendezvous store backed by MPI: the ranks exchange their transport addresses through the
// world communicator instead of a file system, Redis or a TCP key-value server.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>

#include "runtime/mpi_check.h"

namespace ft {

// Gloo's connectFullMesh makes the same sequence of set() calls on every rank before it reads other
// ranks' keys, so set() is collective here: an MPI_Allgatherv of every rank's (key, value) that fills
// a local map. get() and wait() are then local lookups; a missing key is an error (it would mean the
// ranks disagree on the rendezvous), never a wait. Use from one thread, on every rank alike.
class GlooMpiStore final : public gloo::rendezvous::Store {
 public:
  explicit GlooMpiStore(MPI_Comm comm);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  MPI_Comm comm_;
  std::map<std::string, std::vector<char>> entries_;
};

}  // namespace ft
