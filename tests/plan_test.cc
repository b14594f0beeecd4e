// `plan`: the configurations it chooses fit by the tool's own memory model and name FSDP where
// data parallelism cannot fit; the files it emits are valid (YAML parses, required fields, catalog
// strings), match their goldens (testdata/plan/CASE/FILE), and pass `check --job`.
#include "tpudoctor/jobs/plan.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "src/support/yaml_input.h"
#include "tests/test_util.h"
#include "tpudoctor/jobs/emit.h"
#include "tpudoctor/jobs/job.h"

namespace tpudoctor {
namespace {

namespace fs = std::filesystem;

Source Read(const std::string& rel) {
  auto s = ReadSource((testing::SourceDir() / rel).string());
  EXPECT_TRUE(s);
  s->display_name = rel;  // goldens do not depend on where the repository is
  return *s;
}

Plan PlanOf(const std::string& rel, std::optional<std::int64_t> seq,
            std::vector<std::string> generations = {}) {
  PlanOptions o;
  if (seq) o.shapes.dims["seq"] = *seq;
  o.generations = std::move(generations);
  auto plan = MakePlan(Read(rel), o);
  EXPECT_TRUE(plan) << (plan ? "" : plan.error().message);
  return *plan;
}

struct Case {
  const char* model;
  std::optional<std::int64_t> seq;
  bool needs_sharding;  // data parallelism alone cannot fit on any slice
};

TEST(PlanTest, ChoicesFitAndShardOnlyWhenDataParallelCannot) {
  const Case kCases[] = {{"examples/resnet50.onnx", std::nullopt, false},
                         {"examples/configs/bert-base-uncased.json", 512, false},
                         {"examples/configs/llama-3.1-8b.json", 8192, true},
                         {"examples/configs/llama-3.1-70b.json", 8192, true}};
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.model);
    const Plan plan = PlanOf(c.model, c.seq);
    ASSERT_EQ(plan.best.size(), 3u) << "v5e, v5p and v6e each get a plan";
    for (const PlanCandidate& p : plan.best) {
      SCOPED_TRACE(p.accelerator_type);
      EXPECT_TRUE(p.estimate.fits);
      EXPECT_LE(p.estimate.memory.total(), p.estimate.hbm_bytes);
      EXPECT_LE(p.estimate.global_batch, plan.max_global_batch);
      const bool sharded = p.estimate.parallel.fsdp > 1 || p.estimate.parallel.tensor > 1;
      EXPECT_EQ(sharded, c.needs_sharding);
      if (!sharded) continue;
      // The same slice and batch data parallel does not fit.
      PlanOptions o;
      ShapeOptions shapes;
      shapes.dims["seq"] = *c.seq;
      shapes.batch = std::max<std::int64_t>(1, p.graph_batch);
      auto m = LoadModel(Read(c.model), shapes);
      EstimateOptions eo;
      eo.train = true;
      eo.batch = *shapes.batch;
      eo.chips = p.estimate.chips;
      auto dp = EstimateStep(m->graph, **FindTarget(p.generation->target), eo);
      ASSERT_TRUE(dp);
      EXPECT_FALSE(dp->fits);
    }
  }
}

// The published MaxText runs of Llama 3.1 8B and 70B: the plan's throughput on the published slice
// is within 25% of the published tokens/s/chip (bench/published_validate.py prints all rows).
TEST(PlanTest, LlamaPlansAreNearThePublishedThroughput) {
  // The 70B run on v6e-32 keeps its weights and Adam state in bf16 (MaxText weight_dtype).
  const std::tuple<const char*, int, double, Precision> kRuns[] = {
      {"examples/configs/llama-3.1-8b.json", 8, 7138.9, Precision::kBf16},
      {"examples/configs/llama-3.1-70b.json", 32, 921.0, Precision::kBf16Params}};
  for (const auto& [model, chips, published, precision] : kRuns) {
    SCOPED_TRACE(model);
    PlanOptions o;
    o.precision = precision;
    o.shapes.dims["seq"] = 8192;
    o.generations = {"tpu-v6e"};
    o.max_chips = chips;
    o.objective = PlanObjective::kThroughput;
    auto plan = MakePlan(Read(model), o);
    ASSERT_TRUE(plan && plan->choice());
    const Estimate& e = plan->choice()->estimate;
    const double tokens_per_chip = e.samples_per_s * 8192 / e.chips;
    EXPECT_NEAR(tokens_per_chip / published, 1.0, 0.25);
  }
}

TEST(PlanTest, GlobalBatchBudgetAndObjective) {
  PlanOptions o;
  o.shapes.dims["seq"] = 1024;
  o.global_batch = 64;
  o.budget_usd_per_hour = 25;
  auto plan = MakePlan(Read("examples/configs/gpt2.json"), o);
  ASSERT_TRUE(plan && plan->choice());
  for (const PlanCandidate& c : plan->ranked) {
    EXPECT_EQ(c.estimate.global_batch, 64);
    EXPECT_LE(*c.estimate.usd_per_hour, 25.0);
  }
  o.objective = PlanObjective::kThroughput;
  auto fast = MakePlan(Read("examples/configs/gpt2.json"), o);
  ASSERT_TRUE(fast && fast->choice());
  EXPECT_GE(fast->choice()->estimate.samples_per_s, 0.95 * plan->choice()->estimate.samples_per_s);
  // A global batch that is no power of two a device: 96 is 24 a chip on four, 12 on eight.
  PlanOptions odd;
  odd.shapes.dims["seq"] = 1024;
  odd.generations = {"tpu-v5e"};
  odd.global_batch = 96;
  auto ninety_six = MakePlan(Read("examples/configs/gpt2.json"), odd);
  ASSERT_TRUE(ninety_six && ninety_six->choice());
  for (const PlanCandidate& c : ninety_six->ranked) EXPECT_EQ(c.estimate.global_batch, 96);
  // 2,053 is prime: one replica would take all of it, more than a device's 1,024; the plan says
  // so rather than that nothing fits.
  odd.global_batch = 2053;
  auto prime = MakePlan(Read("examples/configs/gpt2.json"), odd);
  ASSERT_TRUE(prime);
  EXPECT_FALSE(prime->choice());
  ASSERT_EQ(prime->unfit.size(), 1u);
  EXPECT_NE(prime->unfit[0].find("splits a global batch of 2053 evenly"), std::string::npos)
      << prime->unfit[0];
  // Llama 3.1 70B at 8,192 tokens and a global batch of 6: only slices of up to 16 v6e chips (2
  // replicas of tensor-parallel 8) split it, and none holds the training state; the plan says
  // that, not that nothing fits in 256 chips.
  PlanOptions six;
  six.shapes.dims["seq"] = 8192;
  six.generations = {"tpu-v6e"};
  six.global_batch = 6;
  auto small = MakePlan(Read("examples/configs/llama-3.1-70b.json"), six);
  ASSERT_TRUE(small);
  ASSERT_EQ(small->unfit.size(), 1u);
  EXPECT_NE(small->unfit[0].find("split a global batch of 6 evenly (16 chips at most)"),
            std::string::npos)
      << small->unfit[0];
  o.max_chips = 0;
  EXPECT_FALSE(MakePlan(Read("examples/configs/gpt2.json"), o));
  PlanOptions gpu;
  gpu.generations = {"nvidia-h100"};
  EXPECT_FALSE(MakePlan(Read("examples/configs/gpt2.json"), gpu));
}

struct EmitCase {
  const char* name;
  const char* model;
  std::optional<std::int64_t> seq;
  const char* generation;
  const char* framework;
};

TEST(PlanTest, EmittedFilesAreValidMatchGoldensAndPassCheckJob) {
  const EmitCase kCases[] = {
      {"llama8b_v5e_jax", "examples/configs/llama-3.1-8b.json", 8192, "tpu-v5e", ""},
      {"resnet50_v6e_pytorch", "examples/resnet50.onnx", std::nullopt, "tpu-v6e", "pytorch"},
      // A model that only fits sharded: the PyTorch/XLA script wraps it in FSDP (built on the
      // CPU, auto-wrapped) and steps with optimizer.step(), which `check` (PY003) verifies.
      {"llama70b_v6e_pytorch_fsdp", "examples/configs/llama-3.1-70b.json", 2048, "tpu-v6e",
       "pytorch"},
      {"bert_v3_tensorflow", "examples/configs/bert-base-uncased.json", 128, "tpu-v3",
       "tensorflow"}};
  for (const EmitCase& c : kCases) {
    SCOPED_TRACE(c.name);
    PlanOptions po;
    if (c.seq) po.shapes.dims["seq"] = *c.seq;
    po.generations = {c.generation};
    po.max_chips = std::string(c.generation) == "tpu-v3" ? 4 : 256;
    auto plan = MakePlan(Read(c.model), po);
    ASSERT_TRUE(plan && plan->choice());
    EmitOptions eo;
    eo.framework = c.framework;
    auto files = EmitJobFiles(*plan, *plan->choice(), eo);
    ASSERT_TRUE(files);
    const fs::path dir = testing::Testdata("plan") / c.name;
    if (testing::UpdateGoldens()) fs::create_directories(dir);
    bool vertex = false;
    for (const EmittedFile& f : *files) {
      SCOPED_TRACE(f.name);
      testing::ExpectGolden(dir / f.name, f.text);
      if (f.name.ends_with(".yaml")) {
        auto doc = ParseYamlInput(f.text, f.name);
        ASSERT_TRUE(doc) << doc.error().message;
        if (f.name.starts_with("vertex")) {
          vertex = true;
          const auto& pool = (*doc)["workerPoolSpecs"][0];
          EXPECT_TRUE(pool["machineSpec"].contains("machineType"));
          EXPECT_EQ(pool["replicaCount"], 1);
          EXPECT_TRUE(pool["containerSpec"].contains("imageUri"));
        } else {
          const std::string text = doc->dump();
          EXPECT_NE(text.find("cloud.google.com/gke-tpu-accelerator"), std::string::npos);
          EXPECT_NE(text.find("google.com/tpu"), std::string::npos);
        }
      }
      // Every emitted file passes check --job with the model it was planned for.
      ShapeOptions shapes;
      if (c.seq) shapes.dims["seq"] = *c.seq;
      shapes.batch = plan->choice()->graph_batch;
      auto model = LoadModel(Read(c.model), shapes);
      auto spec = ReadJobSpec(Source{f.name, f.text});
      ASSERT_TRUE(spec) << spec.error().message;
      if (spec->generation != nullptr) {
        EXPECT_EQ(spec->generation, plan->choice()->generation);
        EXPECT_EQ(spec->chips, plan->choice()->estimate.chips);
      }
      for (const Diagnostic& d : CheckJob({*spec, &model->graph})) {
        ADD_FAILURE() << d.code << ": " << d.message;
      }
    }
    EXPECT_TRUE(vertex) << "a Vertex AI job for every generation Vertex AI trains on";
  }
}

}  // namespace
}  // namespace tpudoctor

namespace tpudoctor {
namespace {

// A 7B fine-tune of 2B tokens due in a day: the plan ranks slices by what the job costs, drops
// those that would not finish, keeps the smallest slice within 5% of the cheapest, and says why.
TEST(PlanTest, AJobWithADeadlineGetsASmallSliceAndTheReason) {
  PlanOptions o;
  o.shapes.dims["seq"] = 4096;
  o.job_tokens = 2e9;
  o.deadline_hours = 24;
  o.fine_tune = true;
  auto source = ReadSource((testing::SourceDir() / "examples/configs/mistral-7b.json").string());
  ASSERT_TRUE(source);
  auto plan = MakePlan(*source, o);
  ASSERT_TRUE(plan) << plan.error().message;
  const PlanCandidate* choice = plan->choice();
  ASSERT_NE(choice, nullptr);
  EXPECT_LE(choice->estimate.chips, 16);
  EXPECT_LE(plan->max_global_batch, 512 * 1024 / 4096);  // a fine-tune's batch
  ASSERT_TRUE(choice->job_hours && choice->job_usd);
  EXPECT_LE(*choice->job_hours, 24);
  EXPECT_NEAR(*choice->job_hours, 2e9 / 4096 / choice->estimate.samples_per_s / 3600, 1e-9);
  EXPECT_NE(plan->why.find("within the 24 h deadline"), std::string::npos) << plan->why;
  for (const PlanCandidate& c : plan->ranked) {
    EXPECT_LE(*c.job_hours, 24) << c.accelerator_type;  // too slow: not offered
    if (c.job_usd) EXPECT_GE(*c.job_usd, *choice->job_usd * (1 - 0.05) - 1e-9);
  }
  // A deadline only the largest slices meet moves the choice to them.
  o.deadline_hours = 1;
  auto rushed = MakePlan(*source, o);
  ASSERT_TRUE(rushed && rushed->choice());
  EXPECT_LE(*rushed->choice()->job_hours, 1);
  EXPECT_GT(rushed->choice()->estimate.chips, 16);
}

}  // namespace
}  // namespace tpudoctor

namespace tpudoctor {
namespace {

// `targets` and `plan` agree: every TPU target `targets` lists has a slice catalog, and a plan on
// it alone chooses one of its slices. TPU7x has no public price: alone it is still planned (by
// chip-hours), beside priced generations it keeps its best but is not chosen on cost.
TEST(PlanTest, EveryTpuTargetIsPlannable) {
  for (const TargetSpec& t : AllTargets()) {
    if (!t.is_tpu()) continue;
    ASSERT_NE(FindGeneration(t.name), nullptr) << t.name;
    const Plan plan = PlanOf("examples/configs/mistral-7b.json", 2048, {t.name});
    ASSERT_NE(plan.choice(), nullptr) << t.name;
    EXPECT_EQ(plan.choice()->generation->target, t.name);
  }
  const Plan both = PlanOf("examples/configs/mistral-7b.json", 2048, {"tpu-7x", "tpu-v6e"});
  ASSERT_EQ(both.best.size(), 2u);
  ASSERT_NE(both.choice(), nullptr);
  EXPECT_EQ(both.choice()->generation->target, "tpu-v6e");
  EXPECT_TRUE(std::any_of(both.notes.begin(), both.notes.end(), [](const std::string& n) {
    return n.starts_with("tpu-7x has no public price");
  }));
}

// The largest slice a target accepts is the largest the job catalog offers (TPU7x: its 9,216-chip
// pod, beyond the catalog's 4,096), so a slice `plan` emits is one `estimate` takes.
TEST(PlanTest, EveryCatalogSliceIsATargetAndNoLarger) {
  for (const TargetSpec& t : AllTargets()) {
    if (!t.is_tpu()) continue;
    SCOPED_TRACE(t.name);
    const TpuGeneration* g = FindGeneration(t.name);
    ASSERT_NE(g, nullptr);
    ASSERT_TRUE(t.max_slice_chips.has_value());
    int largest = 0;
    for (const TpuSlice& slice : g->slices) largest = std::max(largest, slice.chips);
    if (t.name == "tpu-7x") {
      EXPECT_GE(*t.max_slice_chips, largest);
    } else {
      EXPECT_EQ(*t.max_slice_chips, largest);
    }
  }
}

}  // namespace
}  // namespace tpudoctor
