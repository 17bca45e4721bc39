// Binary packing of records through their field table: integers and booleans as int64, doubles as
// their 8 bytes, strings as an int64 length and the bytes. Unpacking checks every length it reads.
#include "results/rank_gather.h"

#include <cstring>
#include <type_traits>

#include "results/results_fields.h"
#include "runtime/error.h"
#include "runtime/world.h"

namespace ft {
namespace {

template <typename T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

class Unpacker {
 public:
  Unpacker(const std::string& bytes, int rank) : bytes_(bytes), rank_(rank) {}
  bool done() const { return at_ == bytes_.size(); }

  template <typename T>
  T take(const char* field) {
    T value;
    std::memcpy(&value, span(sizeof(T), field), sizeof(T));
    return value;
  }
  std::string take_string(const char* field) {
    const auto size = take<std::int64_t>(field);
    FT_CHECK(size >= 0, "rank ", rank_, " sent a negative length for field ", field);
    return std::string(span(static_cast<std::size_t>(size), field), static_cast<std::size_t>(size));
  }

 private:
  const char* span(std::size_t size, const char* field) {
    FT_CHECK(bytes_.size() - at_ >= size, "rank ", rank_, "'s record ends inside field ", field,
             " (ranks run different fusetrain versions?)");
    const char* start = bytes_.data() + at_;
    at_ += size;
    return start;
  }
  const std::string& bytes_;
  int rank_;
  std::size_t at_ = 0;
};

template <typename Record>
void pack(std::string& out, const FieldGroup<Record>& group, Record record) {
  for (const auto& f : group.fields) {
    std::visit([&](auto* value) {
      using T = std::remove_pointer_t<decltype(value)>;
      if constexpr (std::is_same_v<T, std::string>) {
        put(out, static_cast<std::int64_t>(value->size()));
        out += *value;
      } else if constexpr (std::is_same_v<T, double>) {
        put(out, *value);
      } else {
        put(out, static_cast<std::int64_t>(*value));
      }
    }, f.ref(record));
  }
}

template <typename Record>
Record unpack(Unpacker& in, const FieldGroup<Record>& group) {
  Record record{};
  for (const auto& f : group.fields) {
    std::visit([&](auto* value) {
      using T = std::remove_pointer_t<decltype(value)>;
      if constexpr (std::is_same_v<T, std::string>) *value = in.take_string(f.name);
      else if constexpr (std::is_same_v<T, double>) *value = in.take<double>(f.name);
      else *value = static_cast<T>(in.take<std::int64_t>(f.name));
    }, f.ref(record));
  }
  return record;
}

template <typename Record>
std::string pack_all(const FieldGroup<Record>& group, const std::vector<Record>& records) {
  std::string bytes;
  for (const auto& record : records) pack(bytes, group, record);
  return bytes;
}

template <typename Record>
void unpack_all(const FieldGroup<Record>& group, const std::string& bytes, int rank, std::vector<Record>& out) {
  Unpacker in(bytes, rank);
  while (!in.done()) out.push_back(unpack(in, group));
}

template <typename Record>
std::vector<Record> gather(const World& world, const FieldGroup<Record>& group, const std::vector<Record>& mine) {
  std::vector<Record> all;
  const auto gathered = world.allgather(pack_all(group, mine));
  for (std::size_t rank = 0; rank < gathered.size(); ++rank)
    unpack_all(group, gathered[rank], static_cast<int>(rank), all);
  return all;
}

}  // namespace

std::string pack_rank_records(const std::vector<RankRecord>& records) { return pack_all(rank_fields(), records); }

std::vector<RankRecord> unpack_rank_records(const std::string& bytes, int rank) {
  std::vector<RankRecord> out;
  unpack_all(rank_fields(), bytes, rank, out);
  return out;
}

std::vector<RankRecord> gather_rank_records(const World& world, const RankRecord& mine) {
  return gather(world, rank_fields(), std::vector<RankRecord>{mine});
}

std::vector<RankEpochRecord> gather_rank_epochs(const World& world, const std::vector<RankEpochRecord>& mine) {
  return gather(world, rank_epoch_fields(), mine);
}

std::vector<UtilizationSample> gather_utilization(const World& world, const std::vector<UtilizationSample>& mine) {
  return gather(world, utilization_fields(), mine);
}

}  // namespace ft
