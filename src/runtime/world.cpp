// MPI start-up and the small host-side collectives used outside the gradient path.
// The world communicator is a duplicate of MPI_COMM_WORLD so library traffic never mixes with user tags.
#include "runtime/world.h"

#include <unistd.h>

#include <cstdio>
#include <numeric>

namespace ft {

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return cat("MPI error ", code);
  return std::string(text, length);
}

World::World(int* argc, char*** argv) {
  int initialized = 0;
  FT_CHECK_MPI(MPI_Initialized(&initialized));
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    FT_CHECK_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
    owns_mpi_ = true;
  } else {
    FT_CHECK_MPI(MPI_Query_thread(&provided));
  }
  thread_multiple_ = provided == MPI_THREAD_MULTIPLE;
  FT_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
  describe();
}

World::World(MPI_Comm parent) {
  int provided = MPI_THREAD_SINGLE;
  FT_CHECK_MPI(MPI_Query_thread(&provided));
  thread_multiple_ = provided == MPI_THREAD_MULTIPLE;
  FT_CHECK_MPI(MPI_Comm_dup(parent, &comm_));
  describe();
}

void World::describe() {
  // Errors come back as return codes so FT_CHECK_MPI can name the call instead of MPI aborting silently.
  FT_CHECK_MPI(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  FT_CHECK_MPI(MPI_Comm_rank(comm_, &rank_));
  FT_CHECK_MPI(MPI_Comm_size(comm_, &size_));

  MPI_Comm local;
  FT_CHECK_MPI(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local));
  FT_CHECK_MPI(MPI_Comm_rank(local, &local_rank_));
  FT_CHECK_MPI(MPI_Comm_size(local, &local_size_));
  FT_CHECK_MPI(MPI_Comm_free(&local));
  int leader = local_rank_ == 0 ? 1 : 0;
  FT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_SUM, comm_));
  node_count_ = leader;

  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  hostname_ = host;
}

World::~World() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_mpi_ && !finalized) MPI_Finalize();
}

std::vector<std::string> World::allgather(const std::string& mine) const {
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(size_);
  FT_CHECK_MPI(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_));
  std::vector<int> offsets(size_, 0);
  std::partial_sum(lengths.begin(), lengths.end() - 1, offsets.begin() + 1);
  std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
  FT_CHECK_MPI(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(),
                              offsets.data(), MPI_CHAR, comm_));
  std::vector<std::string> out(size_);
  for (int r = 0; r < size_; ++r) out[r] = all.substr(offsets[r], lengths[r]);
  return out;
}

std::string World::broadcast(const std::string& value, int root) const {
  unsigned long long length = value.size();
  FT_CHECK_MPI(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, root, comm_));
  std::string out = rank_ == root ? value : std::string(length, '\0');
  broadcast_bytes(out.data(), out.size(), root);
  return out;
}

void World::broadcast_bytes(void* data, std::size_t bytes, int root) const {
  auto* p = static_cast<char*>(data);
  constexpr std::size_t kChunk = 1u << 30;  // MPI counts are int
  for (std::size_t off = 0; off < bytes; off += kChunk) {
    const int n = static_cast<int>(std::min(kChunk, bytes - off));
    FT_CHECK_MPI(MPI_Bcast(p + off, n, MPI_BYTE, root, comm_));
  }
}

void World::allreduce_sum(double* values, int count) const {
  FT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, comm_));
}

void World::allreduce_max(double* values, int count) const {
  FT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_MAX, comm_));
}

double World::allreduce_sum(double value) const {
  allreduce_sum(&value, 1);
  return value;
}

double World::allreduce_max(double value) const {
  allreduce_max(&value, 1);
  return value;
}

void World::barrier() const { FT_CHECK_MPI(MPI_Barrier(comm_)); }

void World::abort(const std::string& message, int code) const {
  std::fprintf(stderr, "fusetrain: rank %d (%s): error: %s\n", rank_, hostname_.c_str(), message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace ft
