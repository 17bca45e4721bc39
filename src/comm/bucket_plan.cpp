// Bucket planning and the start-up negotiation check: the plan is a pure function of the tensor list,
// so agreeing on the list (checked here) is agreeing on the plan.
#include "comm/bucket_plan.h"

#include <map>
#include <sstream>

#include "runtime/error.h"

namespace ft {

std::int64_t TensorSpec::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string TensorSpec::describe() const {
  std::ostringstream out;
  out << name << " " << dtype_name(dtype) << " [";
  for (std::size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << "]";
  return out.str();
}

namespace {

std::size_t bytes_of(const TensorSpec& t) { return static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype); }

// Appends tensor `index` at the end of `bucket`.
void append(BucketSpec& bucket, std::size_t index, const TensorSpec& t) {
  bucket.dtype = t.dtype;
  bucket.tensors.push_back(index);
  bucket.offsets.push_back(bucket.numel);
  bucket.numel += t.numel();
}

// Splits the final bucket (the gradients backward produces last) when it holds more than last_bytes: its
// tail tensors, up to last_bytes, travel alone after the rest has left while backward still ran.
void split_last_bucket(std::vector<BucketSpec>& buckets, const std::vector<TensorSpec>& tensors,
                       std::size_t last_bytes) {
  if (buckets.size() < 2 || buckets.back().tensors.size() < 2) return;
  const BucketSpec whole = buckets.back();
  if (static_cast<std::size_t>(whole.numel) * dtype_size(whole.dtype) <= last_bytes) return;
  std::size_t tail_bytes = 0, keep = whole.tensors.size();
  while (keep > 1 && tail_bytes + bytes_of(tensors[whole.tensors[keep - 1]]) <= last_bytes)
    tail_bytes += bytes_of(tensors[whole.tensors[--keep]]);
  if (keep == whole.tensors.size()) return;
  BucketSpec head, tail;
  for (std::size_t s = 0; s < whole.tensors.size(); ++s)
    append(s < keep ? head : tail, whole.tensors[s], tensors[whole.tensors[s]]);
  buckets.back() = head;
  buckets.push_back(tail);
}

}  // namespace

std::vector<BucketSpec> plan_buckets(const std::vector<TensorSpec>& tensors, std::size_t first_bytes,
                                     std::size_t bucket_bytes, std::size_t last_bytes) {
  std::vector<BucketSpec> buckets;
  BucketSpec current;
  std::size_t current_bytes = 0;
  auto close = [&] {
    if (!current.tensors.empty()) buckets.push_back(current);
    current = BucketSpec{};
    current_bytes = 0;
  };
  for (std::size_t k = tensors.size(); k-- > 0;) {
    const auto& t = tensors[k];
    const std::size_t bytes = bytes_of(t);
    const std::size_t limit = buckets.empty() ? first_bytes : bucket_bytes;
    const bool other_dtype = !current.tensors.empty() && current.dtype != t.dtype;
    if (other_dtype || (!current.tensors.empty() && current_bytes + bytes > limit)) close();
    append(current, k, t);
    current_bytes += bytes;
  }
  close();
  split_last_bucket(buckets, tensors, last_bytes);
  return buckets;
}

std::string describe_all(const std::vector<TensorSpec>& tensors) {
  std::string out;
  for (const auto& t : tensors) out += t.describe() + "\n";
  return out;
}

void check_same_tensors(const std::vector<std::string>& lists) {
  auto split = [](const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  };
  std::vector<std::vector<std::string>> per_rank;
  for (const auto& l : lists) per_rank.push_back(split(l));
  std::size_t longest = 0;
  for (const auto& l : per_rank) longest = std::max(longest, l.size());
  for (std::size_t i = 0; i < longest; ++i) {
    std::map<std::string, std::vector<int>> variants;  // description at position i -> ranks
    for (std::size_t r = 0; r < per_rank.size(); ++r)
      variants[i < per_rank[r].size() ? per_rank[r][i] : std::string("(no tensor)")].push_back(static_cast<int>(r));
    if (variants.size() == 1) continue;
    std::ostringstream msg;
    msg << "ranks disagree on gradient tensor #" << i << ":";
    for (const auto& [description, ranks] : variants) {
      msg << " '" << description << "' on rank" << (ranks.size() > 1 ? "s " : " ");
      for (std::size_t k = 0; k < ranks.size(); ++k) msg << (k ? "," : "") << ranks[k];
      msg << ";";
    }
    msg << " every rank must build the same model from the same config";
    throw Error(msg.str());
  }
}

}  // namespace ft
