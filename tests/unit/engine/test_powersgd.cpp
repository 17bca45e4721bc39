// PowerSGD's compressed all-reduce against the algebra written out directly: ranks simulated by threads that sum
// through a shared all-reduce, each bucket's result, every rank's error feedback and the warm-started Q compared
// with P = orth(sum M Q), Mhat = P P^T mean(M), e = M - Mhat computed here from the same M and Q.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include <torch/cuda.h>

#include "engine/powersgd.h"

namespace ft {
namespace {

// An all-reduce among `ranks` threads: each contributes its tensor and leaves with the sum.
class ThreadSum {
 public:
  explicit ThreadSum(int ranks) : ranks_(ranks) {}
  void allreduce(at::Tensor& t) {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::uint64_t round = round_;
    sum_ = arrived_ == 0 ? t.clone() : sum_ + t;
    if (++arrived_ == ranks_) {
      result_ = sum_;
      arrived_ = 0;
      ++round_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return round_ != round; });
    }
    t.copy_(result_);
  }

 private:
  int ranks_, arrived_ = 0;
  std::uint64_t round_ = 0;
  at::Tensor sum_, result_;
  std::mutex mutex_;
  std::condition_variable cv_;
};

std::vector<at::Device> devices() {
  std::vector<at::Device> out{at::kCPU};
  if (torch::cuda::is_available()) out.emplace_back(at::kCUDA, 0);
  return out;
}

// A bucket of three parameters: a conv weight kept channels_last (compressed), a bias (sent as it is) and a
// linear weight (compressed); float64 on `device`.
struct ThreeTensors {
  std::vector<NamedTensor> params;
  BucketSpec bucket;
  explicit ThreeTensors(at::Device device = at::kCPU) {
    const auto f64 = at::TensorOptions().dtype(at::kDouble).device(device);
    params.push_back({"conv.weight", at::zeros({8, 3, 3, 3}, f64).contiguous(at::MemoryFormat::ChannelsLast)});
    params.push_back({"conv.bias", at::zeros({8}, f64)});
    params.push_back({"fc.weight", at::zeros({10, 12}, f64)});
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < params.size(); ++i) {
      bucket.tensors.push_back(i);
      bucket.offsets.push_back(offset);
      offset += params[i].tensor.numel();
    }
    bucket.numel = offset;
    bucket.dtype = DType::kFloat64;
  }
};

// Rank r's packed bucket: its gradients (divided by the ranks, as the engine packs them) in each parameter's
// memory order, then the status element `status`.
at::Tensor packed(const ThreeTensors& s, const std::vector<at::Tensor>& grads, int ranks, double status) {
  std::vector<at::Tensor> parts;
  for (std::size_t i = 0; i < grads.size(); ++i) {
    const at::Tensor laid = at::empty_like(s.params[i].tensor).copy_(grads[i] / ranks);  // the parameter's layout
    parts.push_back(laid.as_strided({laid.numel()}, {1}));
  }
  parts.push_back(at::full({1}, status, grads[0].options()));
  return at::cat(parts);
}

// What the bucket holds for tensor i after the reduction, in its logical shape.
at::Tensor unpacked(const ThreeTensors& s, const at::Tensor& buffer, std::size_t i) {
  const at::Tensor& p = s.params[i].tensor;
  return buffer.narrow(0, s.bucket.offsets[i], p.numel()).as_strided(p.sizes(), p.strides());
}

double difference(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kCPU) - b.to(at::kCPU)).abs().max().item<double>();
}

// One step of every rank in its own thread; returns each rank's buffer after it.
std::vector<at::Tensor> step(const ThreeTensors& s, std::vector<std::unique_ptr<PowerSgd>>& ranks,
                             const std::vector<std::vector<at::Tensor>>& grads) {
  const int n = static_cast<int>(ranks.size());
  ThreadSum sum(n);
  std::vector<at::Tensor> buffers;
  for (int r = 0; r < n; ++r) buffers.push_back(packed(s, grads[r], n, r + 1.0));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] { ranks[r]->reduce(s.bucket, buffers[r], [&](at::Tensor& t) { sum.allreduce(t); }); });
  for (auto& t : threads) t.join();
  return buffers;
}

// The reference of one compressed matrix: ranks' M (own gradient plus error), the shared Q before the step.
struct Expected {
  at::Tensor approximation;  // P P^T mean(M), what every rank's bucket holds
  std::vector<at::Tensor> errors;
  at::Tensor q;  // the next step's warm start, before orthogonalisation: M^T P averaged over the ranks
};

Expected direct(const std::vector<at::Tensor>& m, const at::Tensor& q_before) {
  const at::Tensor q = std::get<0>(at::linalg_qr(q_before));
  at::Tensor p_sum = at::zeros({m[0].size(0), q.size(1)}, m[0].options());
  for (const auto& mr : m) p_sum += mr.mm(q);
  const at::Tensor p = std::get<0>(at::linalg_qr(p_sum));
  at::Tensor mean = at::zeros_like(m[0]);
  for (const auto& mr : m) mean += mr / static_cast<double>(m.size());
  Expected e;
  e.q = mean.t().mm(p);
  e.approximation = p.mm(e.q.t());
  for (const auto& mr : m) e.errors.push_back(mr - e.approximation);
  return e;
}

void check_algebra(at::Device device) {
  for (const int n : {2, 3}) {
    ThreeTensors s(device);
    std::vector<std::unique_ptr<PowerSgd>> ranks;
    for (int r = 0; r < n; ++r) ranks.push_back(std::make_unique<PowerSgd>(s.params, n, PowerSgdOptions{2, 0, 7}));
    ASSERT_TRUE(ranks[0]->compressed(0));
    ASSERT_FALSE(ranks[0]->compressed(1));
    ASSERT_TRUE(ranks[0]->compressed(2));
    std::vector<at::Tensor> q_before{ranks[0]->q(0).clone(), at::Tensor(), ranks[0]->q(2).clone()};
    std::vector<std::vector<at::Tensor>> errors(n, std::vector<at::Tensor>(3));
    for (int r = 0; r < n; ++r)
      for (std::size_t i : {0, 2})
        errors[r][i] = at::zeros({s.params[i].tensor.size(0), q_before[i].size(0)}, s.params[i].tensor.options());
    at::manual_seed(11);
    for (int round = 0; round < 3; ++round) {  // the second and third steps start from warm Q and carried errors
      std::vector<std::vector<at::Tensor>> grads(n);
      for (int r = 0; r < n; ++r)
        for (const auto& p : s.params) grads[r].push_back(at::randn(p.tensor.sizes(), at::kDouble).to(device));
      const auto buffers = step(s, ranks, grads);
      for (std::size_t i : {0, 2}) {
        std::vector<at::Tensor> m;
        for (int r = 0; r < n; ++r) m.push_back(grads[r][i].reshape({errors[r][i].size(0), -1}) + errors[r][i]);
        const Expected e = direct(m, q_before[i]);
        for (int r = 0; r < n; ++r) {
          EXPECT_LT(difference(unpacked(s, buffers[r], i).reshape(e.approximation.sizes()), e.approximation), 1e-12)
              << n << " ranks, step " << round << ", tensor " << i << ", rank " << r;
          EXPECT_LT(difference(ranks[r]->error(i), e.errors[r]), 1e-12) << "error feedback of rank " << r;
          EXPECT_TRUE(at::equal(ranks[r]->q(i), ranks[0]->q(i))) << "Q differs on rank " << r;
          errors[r][i] = e.errors[r];
        }
        // P's columns are unique up to sign, and so is the warm start's; P Q^T is not.
        EXPECT_LT(difference(ranks[0]->q(i).abs(), e.q.abs()), 1e-12) << "warm-started Q";
        q_before[i] = ranks[0]->q(i).clone();
      }
      at::Tensor bias_mean = at::zeros({8}, s.params[1].tensor.options());
      for (int r = 0; r < n; ++r) bias_mean += grads[r][1] / n;
      for (int r = 0; r < n; ++r) {
        EXPECT_LT(difference(unpacked(s, buffers[r], 1), bias_mean), 1e-12) << "the bias is the plain mean";
        EXPECT_EQ(buffers[r][-1].item<double>(), n * (n + 1) / 2.0) << "status elements are summed";
      }
    }
  }
}

TEST(PowerSgd, CompressedAllReduceIsTheAlgebraOfPowerSgd) {
  for (const at::Device device : devices()) {
    SCOPED_TRACE(device.str());
    check_algebra(device);
  }
}

TEST(PowerSgd, BeforeTheStartStepTheBucketIsAllReducedAsItIs) {
  ThreeTensors s;
  std::vector<std::unique_ptr<PowerSgd>> ranks;
  for (int r = 0; r < 2; ++r) ranks.push_back(std::make_unique<PowerSgd>(s.params, 2, PowerSgdOptions{1, 5, 7}));
  for (auto& r : ranks) r->set_step(4);
  std::vector<std::vector<at::Tensor>> grads(2);
  for (int r = 0; r < 2; ++r)
    for (const auto& p : s.params) grads[r].push_back(at::randn(p.tensor.sizes(), at::kDouble));
  const auto buffers = step(s, ranks, grads);
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_LT(difference(unpacked(s, buffers[0], i), (grads[0][i] + grads[1][i]) / 2), 1e-12) << i;
  EXPECT_EQ(ranks[0]->error(0).abs().max().item<double>(), 0) << "nothing lost, nothing carried";
}

TEST(PowerSgd, OnlyMatricesWorthCompressingAreCompressed) {
  const auto f = at::TensorOptions().dtype(at::kFloat);
  // [16, 1, 3, 3] at rank 4: (16 + 9) x 4 x 2 = 200 elements against 144: sent as it is, as PyTorch decides.
  std::vector<NamedTensor> params{{"small", at::zeros({16, 1, 3, 3}, f)}, {"wide", at::zeros({64, 64, 3, 3}, f)},
                                  {"vector", at::zeros({64}, f)}};
  PowerSgd compressor(params, 2, PowerSgdOptions{4, 0, 0});
  EXPECT_FALSE(compressor.compressed(0));
  EXPECT_TRUE(compressor.compressed(1));
  EXPECT_FALSE(compressor.compressed(2));
  EXPECT_EQ(compressor.q(1).sizes(), at::IntArrayRef({576, 4}));
  EXPECT_EQ(compressor.shared_state().size(), 1u);
  EXPECT_EQ(compressor.rank_state().size(), 1u);
}

TEST(PowerSgd, OrthogonalisationGivesOrthonormalColumns) {
  for (const at::Device device : devices()) {
    for (const int k : {1, 2, 4}) {  // Gram-Schmidt up to 2, QR above
      at::Tensor m = at::randn({20, k}, at::kDouble).to(device);
      const at::Tensor before = m.clone();
      orthogonalise(m);
      EXPECT_LT(difference(m.t().mm(m), at::eye(k, at::kDouble)), 1e-12) << device << ", rank " << k;
      const at::Tensor projected = m.mm(m.t()).mm(before);  // the same column space
      EXPECT_LT(difference(projected, before), 1e-12) << device << ", rank " << k;
    }
    at::Tensor zero = at::zeros({5, 1}, at::TensorOptions().dtype(at::kDouble).device(device));
    orthogonalise(zero);
    EXPECT_EQ(zero.abs().max().item<double>(), 0) << "a zero column stays zero";
  }
}

}  // namespace
}  // namespace ft
