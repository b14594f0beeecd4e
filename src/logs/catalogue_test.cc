// The message catalogue (data/logs/catalogue.tsv) and how `logs` reads with it: unwrapping,
// first-in-time ranking, knock-ons that name no root, and abstaining when a log does not show why.
#include "src/logs/catalogue.h"

#include <gtest/gtest.h>

#include <set>

#include "tpudoctor/logs/logs.h"

namespace tpudoctor {
namespace {

using logs::CatalogueEntries;
using logs::MatchCatalogue;
using logs::MessageRole;
using logs::RootCauseOf;

TEST(LogCatalogueTest, LoadsWithASourceForEveryMessage) {
  EXPECT_EQ(logs::CatalogueLoadError(), "");
  ASSERT_GE(CatalogueEntries().size(), 40u);
  std::set<std::string> ids, frameworks;
  for (const auto& e : CatalogueEntries()) {
    EXPECT_TRUE(ids.insert(e.id).second) << "duplicate id " << e.id;
    EXPECT_FALSE(e.source.empty()) << e.id;
    frameworks.insert(e.framework);
  }
  for (const char* fw : {"jax", "pytorch/xla", "tensorflow", "xla"}) {
    EXPECT_TRUE(frameworks.count(fw)) << fw;
  }
}

// `Check failed: ... (INVALID_ARGUMENT: <message>)`: the wrapper is unwrapped to the message.
TEST(LogCatalogueTest, TheInnermostMessageOfALineDecides) {
  const auto matches = MatchCatalogue(
      "F0000 00:00:1 debug.cc:12] Check failed: status.ok() (INVALID_ARGUMENT: Unsupported XLA "
      "type 10)\n");
  auto root = RootCauseOf(matches);
  ASSERT_TRUE(root);
  EXPECT_EQ(root->entry->id, "torchxla-unsupported-type");
  EXPECT_EQ(root->line, 1);
  bool wrapper_seen = false;
  for (const auto& m : matches) wrapper_seen |= m.entry->role == MessageRole::kWrapper;
  EXPECT_TRUE(wrapper_seen);
}

// The first cause in time wins: what follows it is its effect.
// Messages whose meaning names the cause (session 14): a storage 404 on a checkpoint path; the
// torch_xla runtime created twice in one process; TensorFlow's placer pinning an op to a device
// the session does not have; pybind11 finding no overload (a package and its native extension
// from different releases).
TEST(LogCatalogueTest, MessagesThatNameTheirCause) {
  const std::pair<const char*, const char*> kCases[] = {
      {"NotFoundException: 404 gs://bucket/run/checkpoint_1000.tmp-7/state/0.0 does not exist.",
       "checkpoint_io"},
      {"RuntimeError: torch_xla/csrc/runtime/runtime.cc:17 : Check failed: !was_initialized",
       "distribution_setup"},
      {"InvalidArgumentError: Cannot assign a device for operation x: {{node x}} was explicitly "
       "assigned to /job:worker/replica:0/task:0/device:CPU:0 but available devices are [ ]",
       "distribution_setup"},
      {"TypeError: Execute(): incompatible function arguments. The following argument types are "
       "supported:",
       "version_mismatch"},
      // torch_xla's bridge names the type of the tensor it refused: one left on the CPU, or a
      // complex one (session 15).
      {"RuntimeError: torch_xla/csrc/aten_xla_bridge.cpp:99 : Check failed: xtensor\nInput "
       "tensor is not an XLA tensor: CPUFloatType",
       "distribution_setup"},
      {"RuntimeError: Check failed: xtensor: Input tensor is not an XLA tensor: "
       "XLAComplexFloatType",
       "unsupported_dtype"},
      // Session 16: messages whose source says what they mean.
      {"RuntimeError: Failed precondition: Operand 1 of instruction reduce-scatter.3 already has "
       "a layout constraint bf16[8,128]{0,1}, cannot add incompatible constraint bf16[8,128]{1,0}",
       "compiler_crash"},
      {"NotFoundError: Op type not registered 'TPUPartitionedCall' in binary running on host-0.",
       "version_mismatch"},
      {"InternalError: The filesystem registered under the 'gs://' scheme was not a "
       "tensorflow::RetryingGcsFileSystem*.",
       "version_mismatch"},
      {"  (2) Out of range: End of sequence", "input_pipeline"},
      {"     Allocation type: HLO temp", "hbm_oom"},
      {"Program hbm requirement 17.10G:", "hbm_oom"},
      {"ValueError: Expected a tiled memref", "unsupported_op"},
      {"RuntimeError: Requested backend tpu, but it failed to initialize: NOT_FOUND: no TPU",
       "version_mismatch"},
      {"TypeError: fit() got an unexpected keyword argument 'steps_per_execution'",
       "version_mismatch"},
      {"TypeError: spawn() takes from 1 to 3 positional arguments but 4 were given",
       "version_mismatch"},
      {"TypeError: barrier() missing 1 required positional argument: 'name'", "version_mismatch"},
      {"ImportError: cannot import name 'spmd' from 'torch_xla.distributed'", "version_mismatch"},
      {"AttributeError: module 'jax.experimental' has no attribute 'maps'", "version_mismatch"}};
  for (const auto& [line, category] : kCases) {
    SCOPED_TRACE(line);
    auto root = RootCauseOf(MatchCatalogue(std::string(line) + "\n"));
    ASSERT_TRUE(root);
    EXPECT_EQ(root->category, category);
  }
}

TEST(LogCatalogueTest, TheFirstCauseInTimeWins) {
  auto root = RootCauseOf(MatchCatalogue(
      "jax.errors.ConcretizationTypeError: Abstract tracer value encountered where concrete value "
      "is expected\n"
      "E0000 worker 1: Socket closed\n"
      "RuntimeError: Unable to initialize backend 'tpu': already in use\n"));
  ASSERT_TRUE(root);
  EXPECT_EQ(root->category, "dynamic_shape");
  EXPECT_EQ(root->line, 1);
}

// Only effects in the log: the first knock-on, marked as such; wrappers alone decide nothing.
TEST(LogCatalogueTest, KnockOnsAndWrappers) {
  auto knock_on = RootCauseOf(MatchCatalogue("grpc: failed to connect to all addresses\n"));
  ASSERT_TRUE(knock_on);
  EXPECT_EQ(knock_on->entry->role, MessageRole::kKnockOn);
  EXPECT_FALSE(RootCauseOf(MatchCatalogue("RET_CHECK failure (hlo_verifier.cc:12) ok\n")));
  EXPECT_FALSE(RootCauseOf(MatchCatalogue("I0101 step 100 loss 2.3\n")));
}

// The catalogue answers a log no signature knows, with its source and what it outranked.
TEST(LogCatalogueTest, DiagnosisNamesTheMessageAndItsSource) {
  auto d = DiagnoseLogText("run.log",
                           "Traceback (most recent call last):\n"
                           "  File \"train.py\", line 9, in <module>\n"
                           "    xm.set_replication(device, devices)\n"
                           "RuntimeError: Cannot replicate if number of devices (1) is different "
                           "from 8\n");
  ASSERT_TRUE(d.ok());
  ASSERT_FALSE(d->causes.empty());
  const LogCause& c = d->causes[0];
  EXPECT_EQ(c.layer, "catalogue");
  EXPECT_EQ(c.category, "distribution_setup");
  EXPECT_GE(c.confidence, 0.5);
  EXPECT_NE(c.explanation.find("torch_xla/core/xla_model.py"), std::string::npos);
}

// A message whose meaning depends on where it happened: the TPU cannot read the VM's local disk,
// for the input pipeline or, inside a checkpoint restore, for the checkpoint.
TEST(LogCatalogueTest, ContextDecidesBetweenCategories) {
  auto data = RootCauseOf(
      MatchCatalogue("  File \"train.py\", line 40, in <module>\n    for x in dataset:\n"
                     "UnimplementedError: File system scheme '[local]' not implemented\n"));
  ASSERT_TRUE(data);
  EXPECT_EQ(data->category, "input_pipeline");
  auto restore = RootCauseOf(MatchCatalogue(
      "  File \"train.py\", line 12, in <module>\n    model.load_weights(ckpt_path)\n"
      "Unsuccessful TensorSliceReader constructor: Failed to get matching files on "
      "/content/model.ckpt-1400: Unimplemented: File system scheme '[local]' not implemented\n"));
  ASSERT_TRUE(restore);
  EXPECT_EQ(restore->category, "checkpoint_io");
  // A CPU tensor given to SPMD's mark_sharding is a sharding mistake, not a placement one.
  auto shard = RootCauseOf(MatchCatalogue(
      "    xs.mark_sharding(w, mesh, ('data', None))\n"
      "RuntimeError: Check failed: xtensor: Input tensor is not an XLA tensor: CPUBFloat16Type\n"));
  ASSERT_TRUE(shard);
  EXPECT_EQ(shard->category, "sharding");
  // The op TensorFlow names on the lines continuing a message is part of its context: a Cloud
  // Storage error while saving a checkpoint is the checkpoint's; the same error while reading
  // the data is the pipeline's.
  const std::string http =
      "Unavailable: Error executing an HTTP request: HTTP response code 503\n"
      "         when uploading gs://bucket/run/part-0001\n";
  auto save = RootCauseOf(MatchCatalogue(http + "         [[node save/SaveV2 ]]\n"));
  ASSERT_TRUE(save);
  EXPECT_EQ(save->category, "checkpoint_io");
  auto read = RootCauseOf(MatchCatalogue(http + "         [[node IteratorGetNext ]]\n"));
  ASSERT_TRUE(read);
  EXPECT_EQ(read->category, "input_pipeline");
  // A line that does not continue the message (not indented) is not read after it.
  auto apart = RootCauseOf(MatchCatalogue(http + "saving a SaveV2 op elsewhere\n"));
  ASSERT_TRUE(apart);
  EXPECT_EQ(apart->category, "input_pipeline");
  // The memory report of VMEM, not HBM.
  auto vmem = RootCauseOf(
      MatchCatalogue("Largest program allocations in vmem:\n\n  XLA label: spill slots\n"
                     "  Allocation type: scoped\n"));
  ASSERT_TRUE(vmem);
  EXPECT_EQ(vmem->category, "vmem_oom");
}

// A log that shows a failure but no message naming its cause: the tool says it cannot tell and
// what to capture, and claims no confident category.
TEST(LogCatalogueTest, AbstainsWhenTheExcerptDoesNotShowWhy) {
  auto d = DiagnoseLogText("cut.log",
                           "epoch 3 batch 120\n"
                           "Traceback (most recent call last):\n"
                           "  File \"train.py\", line 30, in <module>\n"
                           "    main()\n"
                           "  File \"train.py\", line 22, in main\n"
                           "    run()\n");
  ASSERT_TRUE(d.ok());
  ASSERT_FALSE(d->causes.empty());
  const LogCause& c = d->causes[0];
  EXPECT_EQ(c.category, "unknown");
  EXPECT_LT(c.confidence, 0.5);
  EXPECT_NE(c.fix.find("Capture"), std::string::npos);
  EXPECT_NE(RenderLogsText(*d).find("does not show why"), std::string::npos);
}

// Decorations real pastes carry do not hide a failure: a notebook's line number glued to the
// exception, a timestamp before a worker's address, Markdown backticks, a shell's job-control
// line for a killed process, a glog fatal line without its timestamp.
TEST(LogCatalogueTest, DecoratedFailureLinesAreRead) {
  struct Case {
    const char* log;
    const char* category;
  };
  const Case cases[] = {
      {"4859ValueError: Cannot replicate if number of devices (1) is different from 8\n",
       "distribution_setup"},
      {"2021-05-03 10:11:12 10.164.0.3 [3] RuntimeError: Cannot replicate if number of devices "
       "(1) is different from 8\n",
       "distribution_setup"},
      {"`jax.errors.TracerBoolConversionError: Attempted boolean conversion of traced array`\n",
       "control_flow"},
      {"epoch 1\n[1]+  Killed                  python3 train.py\n", "host_oom"},
      {"F external/xla/xla/service/dynamic_dimension_inference.cc:123] Unable to infer dynamic "
       "dimension of operand 0\n",
       "dynamic_shape"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.log);
    auto d = DiagnoseLogText("pasted.log", c.log);
    ASSERT_TRUE(d.ok());
    ASSERT_FALSE(d->causes.empty());
    EXPECT_EQ(d->causes[0].category, c.category);
  }
}

}  // namespace
}  // namespace tpudoctor
