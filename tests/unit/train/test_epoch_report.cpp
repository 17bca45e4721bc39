// What the loop keeps of an epoch: the digests it records are those of the network's and the optimizer's
// state as they stand, and a non-finite loss ends the run exactly when the rules say (first bad step, evaluation).
#include "train/epoch_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "checkpoint/state_digest.h"
#include "error_of.h"
#include "optim/optimizer.h"
#include "tiny_network.h"

namespace ft {
namespace {

TEST(EpochReport, TheRecordHoldsTheDigestsOfTheStateAsItStands) {
  at::manual_seed(0);
  auto net = test::tiny_network();
  std::vector<at::Tensor> parameters = net->parameters();
  OptimizerConfig sgd;
  sgd.momentum = 0.9;
  auto optimizer = make_optimizer(sgd, parameters);
  const std::string weights_before = weights_digest(*net);
  test::tiny_step(*net, *optimizer);
  EpochRecord record;
  record_digests(record, *net, *optimizer, nullptr);
  EXPECT_EQ(record.weights_digest, weights_digest(*net));
  EXPECT_NE(record.weights_digest, weights_before) << "the step changed the weights";
  EXPECT_EQ(record.optimizer_digest, optimizer_digest(*optimizer));
  EXPECT_NE(record.optimizer_digest, tensors_digest({})) << "the momentum buffers exist after a step";
}

TEST(EpochReport, ATrainingLossIsRefusedFromItsFirstBadStep) {
  EXPECT_NO_THROW(require_finite_loss(-1, 3, Precision::fp32));
  EXPECT_EQ(test::error_of([] { require_finite_loss(0, 1, Precision::bf16); }).rfind(
                "non-finite training loss at optimizer step 0 (epoch 1) with precision bf16", 0),
            0u);
  EXPECT_NE(test::error_of([] { require_finite_loss(17, 2, Precision::fp16); }).find("step 17 (epoch 2)"),
            std::string::npos);
}

TEST(EpochReport, ATestLossCountsOnlyWhenTheEpochWasEvaluated) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EpochRecord record;
  record.epoch = 4;
  record.evaluated = false;
  record.test_loss = nan;
  EXPECT_NO_THROW(require_finite_test_loss(record, Precision::fp32)) << "no evaluation, no test loss to judge";
  record.evaluated = true;
  record.test_loss = 2.5;
  EXPECT_NO_THROW(require_finite_test_loss(record, Precision::fp32));
  for (const double bad : {nan, inf, -inf}) {
    record.test_loss = bad;
    try {
      require_finite_test_loss(record, Precision::fp16);
      ADD_FAILURE() << "test loss " << bad << " passed";
    } catch (const SharedError& e) {  // every rank raises it from the same reduced figure
      EXPECT_NE(std::string(e.what()).find("non-finite test loss after epoch 4 with precision fp16"),
                std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ft
