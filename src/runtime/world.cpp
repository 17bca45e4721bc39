// MPI start-up and the small host-side collectives used outside the gradient path.
// The world communicator is a duplicate of MPI_COMM_WORLD so library traffic never mixes with user tags.
#include "runtime/world.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "runtime/host_name.h"
#include "runtime/poll_backoff.h"

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

  hostname_ = host_name();
}

// A request abandoned on a timeout completes if the missing ranks arrive late; it must not be pending
// at MPI_Finalize, so shut-down gives it a short grace period (the job normally aborts instead).
World::~World() {
  PollBackoff grace(abandoned_.empty() ? 0.0 : 5.0);
  for (auto& [request, buffer] : abandoned_) {
    int done = 0;
    while (MPI_Test(&request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done && !grace.expired()) grace.pause();
    if (!done) std::fprintf(stderr, "fusetrain: rank %d: warning: a stalled collective is still pending at shut-down\n", rank_);
  }
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_mpi_ && !finalized) MPI_Finalize();
}

void World::require_usable() const {
  FT_REQUIRE(failure_.empty(), "the MPI world is unusable after an earlier failure: ", failure_);
}

void World::complete(const char* kind, std::size_t bytes, MPI_Request request, std::shared_ptr<void> buffer,
                     std::chrono::microseconds spin) const {
  const double timeout_s = watch_ ? watch_->timeout_s() : timeout_s_;
  if (watch_) watch_->begin(kind, bytes, "mpi");
  PollBackoff wait(timeout_s > 0 ? timeout_s : 1e9, spin);  // unbounded: 30 years
  for (;;) {
    int done = 0;
    FT_CHECK_MPI(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) break;
    if (wait.expired()) {
      abandoned_.emplace_back(request, std::move(buffer));
      char waited[32];
      std::snprintf(waited, sizeof waited, "%.1f s", wait.elapsed_s());
      StallError error = watch_ ? watch_->stall_error(wait.elapsed_s())
                                : StallError(cat(kind, " (", bytes, " B, mpi) waited ", waited, " on rank ", rank_,
                                                 ": some rank has not joined it (dead, hung or on another path)"),
                                             {});
      failure_ = error.what();
      throw error;
    }
    wait.pause();
  }
  if (watch_) watch_->end();
}

std::vector<std::string> World::allgather(const std::string& mine) const {
  require_usable();
  auto lengths = std::make_shared<std::vector<int>>(size_);
  (*lengths)[rank_] = static_cast<int>(mine.size());
  MPI_Request request;
  FT_CHECK_MPI(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, lengths->data(), 1, MPI_INT, comm_, &request));
  complete("all-gather", sizeof(int) * size_, request, lengths);
  std::vector<int> offsets(size_, 0);
  std::partial_sum(lengths->begin(), lengths->end() - 1, offsets.begin() + 1);
  auto all = std::make_shared<std::string>(static_cast<std::size_t>(offsets.back() + lengths->back()), '\0');
  all->replace(offsets[rank_], mine.size(), mine);
  FT_CHECK_MPI(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all->data(), lengths->data(), offsets.data(),
                               MPI_CHAR, comm_, &request));
  complete("all-gather", all->size(), request, all);
  std::vector<std::string> out(size_);
  for (int r = 0; r < size_; ++r) out[r] = all->substr(offsets[r], (*lengths)[r]);
  return out;
}

std::string World::broadcast(const std::string& value, int root) const {
  unsigned long long length = value.size();
  broadcast_bytes(&length, sizeof length, root);
  std::string out = rank_ == root ? value : std::string(length, '\0');
  broadcast_bytes(out.data(), out.size(), root);
  return out;
}

// Staged through a buffer of the world's own, so that a timed-out broadcast can never write into the
// caller's memory after the caller has given up on it.
void World::broadcast_bytes(void* data, std::size_t bytes, int root) const {
  require_usable();
  FT_REQUIRE(root >= 0 && root < size_, "broadcast root ", root, " is not a rank of a world of ", size_);
  auto* p = static_cast<char*>(data);
  constexpr std::size_t kChunk = 16u << 20;
  auto stage = std::make_shared<std::vector<char>>(std::min(kChunk, bytes));
  for (std::size_t off = 0; off < bytes; off += kChunk) {
    const std::size_t n = std::min(kChunk, bytes - off);
    if (rank_ == root) std::copy(p + off, p + off + n, stage->data());
    MPI_Request request;
    FT_CHECK_MPI(MPI_Ibcast(stage->data(), static_cast<int>(n), MPI_BYTE, root, comm_, &request));
    complete("broadcast", n, request, stage);
    if (rank_ != root) std::copy(stage->data(), stage->data() + n, p + off);
  }
}

template <typename T>
void World::allreduce(T* values, int count, MPI_Datatype type, MPI_Op op) const {
  require_usable();
  auto buffer = std::make_shared<std::vector<T>>(values, values + count);
  MPI_Request request;
  FT_CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, buffer->data(), count, type, op, comm_, &request));
  complete("all-reduce", sizeof(T) * count, request, buffer);
  std::copy(buffer->begin(), buffer->end(), values);
}

void World::allreduce_sum(double* values, int count) const { allreduce(values, count, MPI_DOUBLE, MPI_SUM); }

void World::allreduce_sum(std::int64_t* values, int count) const { allreduce(values, count, MPI_INT64_T, MPI_SUM); }

void World::allreduce_max(double* values, int count) const { allreduce(values, count, MPI_DOUBLE, MPI_MAX); }

double World::allreduce_sum(double value) const {
  allreduce_sum(&value, 1);
  return value;
}

double World::allreduce_max(double value) const {
  allreduce_max(&value, 1);
  return value;
}

void World::barrier() const { barrier_polling(PollBackoff::kSpin); }

void World::barrier_sleeping() const { barrier_polling(std::chrono::microseconds(0)); }

void World::barrier_polling(std::chrono::microseconds spin) const {
  require_usable();
  MPI_Request request;
  FT_CHECK_MPI(MPI_Ibarrier(comm_, &request));
  complete("barrier", 0, request, nullptr, spin);
}

void World::decide_on_rank0(const std::function<void()>& decide) const {
  std::string error;
  if (rank_ == 0) {
    try {
      decide();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  error = broadcast(error);
  if (!error.empty()) throw SharedError(error);
}

void World::abort(const std::string& message, int code) const {
  std::fprintf(stderr, "fusetrain: rank %d (%s): error: %s\n", rank_, hostname_.c_str(), message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace ft
