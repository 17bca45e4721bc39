// Gloo rendezvous over MPI: each set() is one all-gather of length-prefixed (key, value) records, so
// after connectFullMesh's set() every rank holds every rank's address without any shared service.
#include "comm/gloo/gloo_mpi_store.h"

#include <cstdint>
#include <cstring>
#include <numeric>

namespace ft {
namespace {

void put_u64(std::vector<char>& out, std::uint64_t value) {
  const auto* bytes = reinterpret_cast<const char*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof value);
}

std::uint64_t take_u64(const char*& cursor, const char* end) {
  FT_CHECK(end - cursor >= static_cast<std::ptrdiff_t>(sizeof(std::uint64_t)), "gloo rendezvous: truncated record");
  std::uint64_t value;
  std::memcpy(&value, cursor, sizeof value);
  cursor += sizeof value;
  return value;
}

std::string list(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& key : keys) out += (out.empty() ? "'" : ", '") + key + "'";
  return out;
}

}  // namespace

GlooMpiStore::GlooMpiStore(MPI_Comm comm) : comm_(comm) {}

void GlooMpiStore::set(const std::string& key, const std::vector<char>& data) {
  std::vector<char> record;
  put_u64(record, key.size());
  record.insert(record.end(), key.begin(), key.end());
  put_u64(record, data.size());
  record.insert(record.end(), data.begin(), data.end());

  int size = 0;
  FT_CHECK_MPI(MPI_Comm_size(comm_, &size));
  const int length = static_cast<int>(record.size());
  std::vector<int> lengths(size), offsets(size, 0);
  FT_CHECK_MPI(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_));
  std::partial_sum(lengths.begin(), lengths.end() - 1, offsets.begin() + 1);
  std::vector<char> all(static_cast<std::size_t>(offsets.back()) + lengths.back());
  FT_CHECK_MPI(MPI_Allgatherv(record.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                              MPI_CHAR, comm_));

  for (int r = 0; r < size; ++r) {
    const char* cursor = all.data() + offsets[r];
    const char* end = cursor + lengths[r];
    const std::uint64_t key_length = take_u64(cursor, end);
    FT_CHECK(static_cast<std::uint64_t>(end - cursor) >= key_length, "gloo rendezvous: truncated key");
    std::string their_key(cursor, key_length);
    cursor += key_length;
    const std::uint64_t value_length = take_u64(cursor, end);
    FT_CHECK(static_cast<std::uint64_t>(end - cursor) == value_length, "gloo rendezvous: bad value length");
    entries_[their_key].assign(cursor, end);
  }
}

std::vector<char> GlooMpiStore::get(const std::string& key) {
  const auto found = entries_.find(key);
  FT_CHECK(found != entries_.end(), "gloo rendezvous: no rank set key '", key,
           "' (the ranks disagree on the rendezvous sequence; are they running the same build?)");
  return found->second;
}

void GlooMpiStore::wait(const std::vector<std::string>& keys) {
  std::vector<std::string> missing;
  for (const auto& key : keys)
    if (!entries_.count(key)) missing.push_back(key);
  FT_CHECK(missing.empty(), "gloo rendezvous: no rank set ", list(missing),
           " (the ranks disagree on the rendezvous sequence; are they running the same build?)");
}

void GlooMpiStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) { wait(keys); }

}  // namespace ft
