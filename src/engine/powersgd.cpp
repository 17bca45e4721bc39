// PowerSGD's per-bucket work on the communication thread: the matrices' factors and the vectors in one all-reduce,
// the second factors in another, the reconstruction written back into the bucket and the error kept; and the
// state (Q and error feedback per matrix) that checkpoints carry.
#include "engine/powersgd.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>

#include "runtime/error.h"

namespace ft {

struct PowerSgd::Matrix {
  std::size_t index = 0;            // in the engine's tensor list
  std::int64_t n = 0, m = 0, k = 0;
  std::vector<std::int64_t> sizes, strides;
  bool dense = true;                // the parameter's layout is one dense span (channels_last or contiguous)
  at::Tensor q;                     // [m, k], warm-started from the previous step's
  at::Tensor error;                 // [n, m], this rank's: what compression lost, carried into the next step
};

namespace {

// PyTorch's _should_compress with min_compression_rate 2.
bool worth_compressing(std::int64_t n, std::int64_t m, std::int64_t k) { return (n + m) * k * 2 < n * m; }

}  // namespace

void orthogonalise(at::Tensor& m) {
  const std::int64_t k = m.size(1);
  if (k > 2 && m.scalar_type() != at::kHalf && m.scalar_type() != at::kBFloat16) {
    m.copy_(std::get<0>(at::linalg_qr(m)));
    return;
  }
  for (std::int64_t i = 0; i < k; ++i) {
    at::Tensor column = m.narrow(1, i, 1);
    column.div_(column.norm().clamp_min(1e-30));
    if (i + 1 < k) {
      at::Tensor rest = m.narrow(1, i + 1, k - i - 1);
      rest.sub_((column * rest).sum(0, /*keepdim=*/true) * column);
    }
  }
}

PowerSgd::PowerSgd(const std::vector<NamedTensor>& parameters, int ranks, const PowerSgdOptions& options)
    : matrix_of_(parameters.size(), -1), ranks_(ranks), options_(options) {
  for (const NamedTensor& p : parameters) numels_.push_back(p.tensor.numel());
  FT_REQUIRE(options.rank >= 1, "distributed.powersgd_rank must be at least 1, not ", options.rank);
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(options.seed ^ 0x706f77657273676full);
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const at::Tensor& p = parameters[i].tensor;
    if (p.dim() < 2) continue;
    Matrix x;
    x.index = i;
    x.n = p.size(0);
    x.m = p.numel() / x.n;
    x.k = std::min<std::int64_t>({x.n, x.m, options.rank});
    if (!worth_compressing(x.n, x.m, x.k)) continue;
    x.sizes = p.sizes().vec();
    x.strides = p.strides().vec();
    x.dense = p.is_non_overlapping_and_dense();
    const auto like = p.options().requires_grad(false);
    x.q = at::randn({x.m, x.k}, generator, like.device(at::kCPU)).to(p.device());
    orthogonalise(x.q);
    x.error = at::zeros({x.n, x.m}, like);
    matrix_of_[i] = static_cast<int>(matrices_.size());
    matrices_.push_back(std::move(x));
  }
}

PowerSgd::~PowerSgd() = default;

const at::Tensor& PowerSgd::q(std::size_t index) const {
  FT_CHECK(compressed(index), "tensor ", index, " is not compressed");
  return matrices_[static_cast<std::size_t>(matrix_of_[index])].q;
}

const at::Tensor& PowerSgd::error(std::size_t index) const {
  FT_CHECK(compressed(index), "tensor ", index, " is not compressed");
  return matrices_[static_cast<std::size_t>(matrix_of_[index])].error;
}

std::vector<at::Tensor> PowerSgd::shared_state() const {
  std::vector<at::Tensor> out;
  for (const Matrix& x : matrices_) out.push_back(x.q);
  return out;
}

std::vector<at::Tensor> PowerSgd::rank_state() const {
  std::vector<at::Tensor> out;
  for (const Matrix& x : matrices_) out.push_back(x.error);
  return out;
}

void PowerSgd::reduce(const BucketSpec& bucket, at::Tensor& buffer, const AllReduce& allreduce) {
  bool any = false;
  for (std::size_t index : bucket.tensors) any = any || compressed(index);
  if (step_.load() < options_.start_step || !any) {
    allreduce(buffer);
    return;
  }
  compress(bucket, buffer, allreduce);
}

void PowerSgd::compress(const BucketSpec& bucket, at::Tensor& buffer, const AllReduce& allreduce) {
  at::NoGradGuard no_grad;
  // One compressed matrix in flight: its slot seen as the parameter, M = share x ranks + error, and P.
  struct InFlight {
    Matrix* matrix;
    at::Tensor slot, m, p;
  };
  std::vector<at::Tensor> vectors, first;
  std::vector<InFlight> work;
  for (std::size_t s = 0; s < bucket.tensors.size(); ++s) {
    const std::size_t index = bucket.tensors[s];
    at::Tensor raw = buffer.narrow(0, bucket.offsets[s], numels_[index]);
    if (!compressed(index)) {
      vectors.push_back(raw);
      first.push_back(raw);
      continue;
    }
    Matrix& x = matrices_[static_cast<std::size_t>(matrix_of_[index])];
    // The slot as the parameter lies in memory (a channels_last weight packed channels_last), read as [out, rest].
    at::Tensor slot = x.dense ? raw.as_strided(x.sizes, x.strides) : raw.view(x.sizes);
    at::Tensor m = slot.reshape({x.n, x.m}) * static_cast<double>(ranks_) + x.error;
    orthogonalise(x.q);
    work.push_back({&x, slot, m, m.mm(x.q)});
  }
  first.push_back(buffer.narrow(0, bucket.numel, 1));  // the status element: summed as it is
  for (const InFlight& w : work) first.push_back(w.p.view(-1));
  at::Tensor sums = at::cat(first);
  allreduce(sums);
  std::int64_t offset = 0;
  for (at::Tensor& v : vectors) v.copy_(sums.narrow(0, offset, v.numel())), offset += v.numel();
  buffer.narrow(0, bucket.numel, 1).copy_(sums.narrow(0, offset, 1)), offset += 1;
  std::vector<at::Tensor> qs;
  for (InFlight& w : work) {
    w.p = sums.narrow(0, offset, w.matrix->n * w.matrix->k).view({w.matrix->n, w.matrix->k});
    offset += w.p.numel();
    orthogonalise(w.p);
    qs.push_back(w.m.t().mm(w.p).view(-1));
  }
  at::Tensor q_sums = at::cat(qs);
  allreduce(q_sums);
  q_sums.div_(static_cast<double>(ranks_));
  offset = 0;
  for (InFlight& w : work) {
    Matrix& x = *w.matrix;
    x.q.copy_(q_sums.narrow(0, offset, x.m * x.k).view({x.m, x.k}));
    offset += x.m * x.k;
    const at::Tensor approximation = w.p.mm(x.q.t());
    at::sub_out(x.error, w.m, approximation);
    w.slot.copy_(approximation.view(x.sizes));
  }
}

}  // namespace ft
