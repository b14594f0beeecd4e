// Expert parallelism's token exchange by hand: per-destination dispatch (DeepEP, HybridEP), the
// all-to-alls overlapped with another micro-batch's compute, and the regrouping of the received
// tokens by local expert (src/cost/sharding.cc, src/cost/step.cc).
#include <gtest/gtest.h>

#include "src/cost/sharding.h"
#include "tests/test_util.h"
#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor {
namespace {

// C(n, k) for the small cases below.
double Choose(int n, int k) {
  double c = 1;
  for (int i = 0; i < k; ++i) c = c * (n - i) / (i + 1);
  return c;
}

CollectiveInputs ExpertExchange(int ep, double experts, double k, bool dedup) {
  CollectiveInputs in;
  in.parallel = {1, 1, 1};
  in.parallel.expert = ep;
  in.link_bytes_s = 450e9;
  in.scaleout_bytes_s = 50e9;
  in.devices_per_host = 8;
  in.expert_exchange_bytes = 1e9;  // one copy per routed expert
  in.passes = 2;
  in.experts = experts;
  in.experts_per_token = k;
  in.dedup_dispatch = dedup;
  in.train = true;
  return in;
}

// Mixtral-like routing (2 of 8 experts) over 4 devices of one host: per routed expert, 3/4 of the
// copies leave; once per destination, a token goes to each other device holding one of its two
// experts, which a given device (2 of the 8) does with probability 1 - C(6,2)/C(8,2) = 13/28.
TEST(ExpertExchangeTest, PerDestinationDispatchWithinAHost) {
  const double per_expert = 3.0 / 4 * 1e9 * 2 / 450e9;
  EXPECT_NEAR(Collectives(ExpertExchange(4, 8, 2, false)).expert_s, per_expert, 1e-15);
  const double copies = 3 * (1 - Choose(6, 2) / Choose(8, 2));  // of a token's 2
  EXPECT_NEAR(copies, 39.0 / 28, 1e-12);
  EXPECT_NEAR(Collectives(ExpertExchange(4, 8, 2, true)).expert_s, copies / 2 * 1e9 * 2 / 450e9,
              1e-15);
}

// DeepSeek-like routing (8 of 64 experts) over 16 devices of two hosts: the network carries a
// token once to the other host when it holds one of its experts (32 of the 64), NVLink once to
// each other device that does (4 of the 64 each); the slower of the two bounds the exchange.
TEST(ExpertExchangeTest, PerDestinationDispatchAcrossHosts) {
  const double host = 1 * (1 - Choose(32, 8) / Choose(64, 8)) / 8;
  const double device = 15 * (1 - Choose(60, 8) / Choose(64, 8)) / 8;
  const double expected = std::max(host / 50e9, device / 450e9) * 1e9 * 2;
  EXPECT_NEAR(Collectives(ExpertExchange(16, 64, 8, true)).expert_s, expected, 1e-15);
  // One copy per routed expert: half of them cross to the other host.
  EXPECT_NEAR(Collectives(ExpertExchange(16, 64, 8, false)).expert_s, 0.5 * 1e9 * 2 / 50e9, 1e-15);
  EXPECT_LT(expected, 0.5 * 1e9 * 2 / 50e9 / 3);
}

struct MoeStep {
  Estimate plain, option;
};

// Mixtral 8x7B training at `seq` tokens on 8 H100s of one host, ep=`ep`, 4 micro-batches, with
// and without one option set by `set`.
template <typename Set>
MoeStep Mixtral(std::int64_t seq, int ep, Set set) {
  ShapeOptions so;
  so.batch = 1;
  so.dims["seq"] = seq;
  auto src = ReadSource((testing::SourceDir() / "examples/configs/mixtral-8x7b.json").string());
  auto m = LoadModel(*src, so);
  EXPECT_TRUE(m);
  if (!m) return {};
  EstimateOptions o;
  o.train = true;
  o.batch = 1;
  o.chips = 8;
  o.parallel.expert = ep;
  o.micro_batches = 4;
  MoeStep out;
  auto plain = EstimateStep(m->graph, **FindTarget("nvidia-h100"), o);
  set(o);
  auto option = EstimateStep(m->graph, **FindTarget("nvidia-h100"), o);
  EXPECT_TRUE(plain && option) << (option ? "" : option.error().message);
  if (plain && option) out = {*plain, *option};
  return out;
}

// Overlapped all-to-alls hide behind the other micro-batches' compute: of 4, 3 micro-batches'
// forward and backward work can cover the exchanges; only the rest stays on the step.
TEST(ExpertExchangeTest, OverlappedAllToAllsHideBehindOtherMicroBatches) {
  const MoeStep s = Mixtral(4096, 8, [](EstimateOptions& o) { o.overlap_expert_comm = true; });
  ASSERT_GT(s.plain.expert_ms, 0);
  EXPECT_EQ(s.option.expert_ms, s.plain.expert_ms);  // the exchange itself is unchanged
  const double compute = s.plain.forward_ms + s.plain.backward_ms + s.plain.recompute_ms;
  const double exposed = std::max(0.0, s.plain.expert_ms - compute * 3 / 4);
  EXPECT_NEAR(s.plain.step_ms - s.option.step_ms, s.plain.expert_ms - exposed,
              1e-9 * s.plain.step_ms);
}

// The received tokens regrouped by local expert: with 2 of Mixtral's 8 experts a device (ep=4),
// a read and a write of the dispatched tokens and of the results, forward and backward. Over 16
// tokens the dispatch and the combine each move 16 x 2 x 4096 elements a layer, bf16, 32 layers,
// in each of the 4 micro-batches. With one expert a device (ep=8) the tokens are used as they
// arrive.
TEST(ExpertExchangeTest, ReceivedTokensAreRegroupedByLocalExpert) {
  // forward(ep=4) - forward(ep=8): the regrouping and the weight traffic of the expert a device
  // holds beyond ep=8's one (ShardingTest.ExpertParallelismReadsOnlyTheDevicesOwnExperts).
  const auto noop = [](EstimateOptions&) {};
  const MoeStep ep4 = Mixtral(16, 4, noop), ep8 = Mixtral(16, 8, noop);
  const TargetSpec& h100 = **FindTarget("nvidia-h100");
  const double bandwidth = ep4.plain.components.bandwidth *
                           CalibrationFor(h100, *ParseRuntime("eager")).memory_efficiency;
  const double weights = 32 * 3 * 8 * 4096.0 * 14336 * 2;  // every layer's experts, bf16
  const double saved = weights * (1.0 / 4 - 1.0 / 8) / bandwidth * 1e3;
  const double regroup = 2 * (32 * 2 * 16 * 2 * 4096.0) * 2 / bandwidth * 1e3;
  EXPECT_NEAR(ep4.plain.forward_ms - ep8.plain.forward_ms, 4 * (saved + regroup),
              1e-6 * ep4.plain.forward_ms);
}

// The dispatch options describe expert parallelism; overlapping it, a training step.
TEST(ExpertExchangeTest, OptionsNeedExpertParallelism) {
  auto src = ReadSource((testing::SourceDir() / "examples/configs/mixtral-8x7b.json").string());
  ShapeOptions so;
  so.batch = 1;
  so.dims["seq"] = 64;
  auto m = LoadModel(*src, so);
  ASSERT_TRUE(m);
  EstimateOptions o;
  o.train = true;
  o.chips = 8;
  o.dedup_expert_dispatch = true;
  auto no_ep = EstimateStep(m->graph, **FindTarget("nvidia-h100"), o);
  ASSERT_FALSE(no_ep);
  EXPECT_NE(no_ep.error().message.find("ep=N"), std::string::npos);
  o.dedup_expert_dispatch = false;
  o.overlap_expert_comm = true;
  o.parallel.expert = 8;
  o.train = false;
  EXPECT_FALSE(EstimateStep(m->graph, **FindTarget("nvidia-h100"), o));
  o.train = true;
  EXPECT_TRUE(EstimateStep(m->graph, **FindTarget("nvidia-h100"), o));
}

}  // namespace
}  // namespace tpudoctor
