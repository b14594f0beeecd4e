#include "tpudoctor/logs/logs.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "src/logs/advice.h"
#include "src/logs/fallback.h"
#include "src/logs/knowledge_base.h"
#include "tests/test_util.h"

namespace tpudoctor {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST(LogSignaturesTest, KnowledgeBaseLoads) {
  EXPECT_EQ(logs::KnowledgeBase::Get().load_error(), "");
  EXPECT_GT(LogSignatures().size(), 40u);
}

// Every signature says what it must match and what it must not, and means it.
TEST(LogSignaturesTest, ExamplesMatchAndNonExamplesDoNot) {
  std::set<std::string> ids;
  for (const SignatureInfo& s : LogSignatures()) {
    SCOPED_TRACE(s.id);
    EXPECT_TRUE(ids.insert(s.id).second) << "duplicate id";
    if (s.category.empty()) continue;  // framework/version detectors
    EXPECT_FALSE(s.match_examples.empty()) << "a signature needs at least one example line";
    for (const std::string& line : s.match_examples)
      EXPECT_TRUE(Contains(MatchLine(line), s.id)) << line;
    for (const std::string& line : s.no_match_examples)
      EXPECT_FALSE(Contains(MatchLine(line), s.id)) << line;
  }
}

TEST(LogSignaturesTest, WarningsAboutMemoryAreNotOutOfMemory) {
  for (const char* line :
       {"W0101 memory usage is high: 12.1G of 16G", "INFO: freed 3.2G of host memory",
        "hbm bandwidth: 819 GB/s", "WARNING: Memory efficient attention is disabled",
        "RESOURCE_EXHAUSTED: Quota exceeded for TPU v5e chips"}) {
    for (const std::string& id : MatchLine(line)) {
      EXPECT_EQ(id.find("oom"), std::string::npos) << line << " matched " << id;
    }
  }
}

TEST(LogDiagnosisTest, RootCauseBeforeKnockOn) {
  const std::string log =
      "I0101 step 10 loss 2.1\n"
      "E0101 Ran out of memory in memory space hbm. Used 20.50G of 15.48G hbm. Exceeded hbm "
      "capacity by 5.02G.\n"
      "W0101 RPC failed with status = \"Unavailable: Socket closed\"\n"
      "W0101 RPC failed with status = \"Unavailable: Socket closed\"\n";
  auto d = DiagnoseLogText("run.log", log);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->causes.size(), 2u);
  EXPECT_EQ(d->causes[0].category, "hbm_oom");
  EXPECT_EQ(d->causes[0].evidence[0].line, 2);
  EXPECT_EQ(d->causes[1].category, "preemption_or_maintenance");
  EXPECT_TRUE(d->causes[1].knock_on);
  EXPECT_EQ(d->causes[1].count, 2);
}

TEST(LogDiagnosisTest, HbmAdviceNamesTheChipAndTheBatchCut) {
  auto d = DiagnoseLogText("run.log",
                           "Ran out of memory in memory space hbm. Used 20.50G of 15.48G hbm.\n");
  ASSERT_TRUE(d.ok());
  ASSERT_FALSE(d->causes.empty());
  const LogCause& c = d->causes[0];
  auto field = [&](const char* k) {
    for (const auto& [key, v] : c.extracted) {
      if (key == k) return v;
    }
    return std::string();
  };
  EXPECT_EQ(field("used"), "20.50G");
  EXPECT_EQ(field("capacity"), "15.48G");
  EXPECT_NE(field("device").find("v5e"), std::string::npos);
  EXPECT_EQ(field("batch_scale"), "67%");  // floor(15.48 * 0.9 / 20.5 * 100)
  EXPECT_NE(c.fix.find("67%"), std::string::npos);
}

TEST(LogDiagnosisTest, ByteSizes) {
  EXPECT_DOUBLE_EQ(*logs::ParseByteSize("1.5G"), 1.5 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*logs::ParseByteSize("256.00MiB"), 256.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*logs::ParseByteSize("0B"), 0);
  EXPECT_FALSE(logs::ParseByteSize("lots").has_value());
}

TEST(LogDiagnosisTest, RepeatsCollapseWithACount) {
  std::string log;
  for (int w = 0; w < 8; ++w) {
    log += "worker " + std::to_string(w) + ": Unsupported XLA type 10\n";
  }
  auto d = DiagnoseLogText("run.log", log);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->causes.size(), 1u);
  EXPECT_EQ(d->causes[0].count, 8);
  EXPECT_EQ(d->causes[0].evidence.size(), 3u);  // the first three
  EXPECT_EQ(d->causes[0].evidence[0].line, 1);
}

TEST(LogDiagnosisTest, LineNumbersSurviveChunkBoundaries) {
  std::string log;
  for (int i = 0; i < 40000; ++i)
    log += "I0101 step " + std::to_string(i) + " loss 1.234567 throughput 123.4 ex/s\n";
  log += "XlaRuntimeError: INVALID_ARGUMENT: Element type C128 is not supported on TPU.\n";
  ASSERT_GT(log.size(), std::size_t{2} << 20);
  auto d = DiagnoseLogText("run.log", log);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->causes.size(), 1u);
  EXPECT_EQ(d->causes[0].evidence[0].line, 40001);
  EXPECT_EQ(d->lines, 40001);
}

TEST(LogDiagnosisTest, AnOverlongLineIsScannedInPiecesWithBoundedMemory) {
  std::string line(5 << 20, 'x');
  line.replace(3 << 20, 40, "Unsupported XLA type 10 ...............");
  auto d = DiagnoseLogText("run.log", "first\n" + line + "\nlast\n");
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->causes.size(), 1u);
  EXPECT_EQ(d->causes[0].evidence[0].line, 2);
  EXPECT_LE(d->causes[0].evidence[0].text.size(), 400u);
  EXPECT_NE(d->causes[0].evidence[0].text.find("Unsupported XLA type 10"),
            std::string::npos);  // around the match
  EXPECT_EQ(d->lines, 3);
}

TEST(LogDiagnosisTest, InvalidUtf8StaysValidJson) {
  auto d = DiagnoseLogText("run.log", "Unsupported XLA type 10 \xff\xfe\xc3\x28 tail\n");
  ASSERT_TRUE(d.ok());
  const std::string json = RenderLogsJson(*d);
  auto parsed = nlohmann::json::parse(json, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded());
  EXPECT_EQ(parsed["causes"][0]["category"], "unsupported_dtype");
}

TEST(LogDiagnosisTest, NothingFoundIsNotAnError) {
  auto d = DiagnoseLogText("run.log", "I0101 step 1\nI0101 step 2\n");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->causes.empty());
  EXPECT_NE(RenderLogsText(*d).find("no failure found"), std::string::npos);
}

// Healthy training logs of each framework, with the warnings, deprecation notices, a cuInit error
// line, progress bars and metrics reports real runs print: no cause.
TEST(LogDiagnosisTest, HealthyTrainingLogsHaveNoCause) {
  for (const char* name : {"healthy_tf_keras.log", "healthy_jax.log", "healthy_torch_xla.log"}) {
    SCOPED_TRACE(name);
    auto d = DiagnoseLogs({testing::Testdata(std::string("logs/") + name)});
    ASSERT_TRUE(d.ok());
    for (const LogCause& c : d->causes) ADD_FAILURE() << c.category << ": " << c.title;
  }
}

// A failure no signature knows still gets a cause: the scored layer's category, its confidence,
// the runner-up and the lines that show the failure.
TEST(LogDiagnosisTest, UnknownFailureGetsARankedGuess) {
  const std::string log =
      "  3. Size: 1.17G\n"
      "     Operator: op_type=\"Transpose\" op_name=\"gradients/transpose_grad\"\n"
      "     Shape: f32[246534,1280]{1,0:T(8,128)}\n"
      "     Unpadded size: 1.17G\n";
  auto d = DiagnoseLogText("cut.log", log);
  ASSERT_TRUE(d.ok());
  ASSERT_FALSE(d->causes.empty());
  const LogCause& c = d->causes[0];
  EXPECT_EQ(c.layer, "fallback");
  EXPECT_EQ(c.category, "hbm_oom");
  EXPECT_GT(c.confidence, 0.2);
  EXPECT_FALSE(c.evidence.empty());
  EXPECT_NE(RenderLogsText(*d).find("by the scored fallback"), std::string::npos);
  // With the report's allocation type, the lines are the TPU compiler's memory report, which it
  // prints only with an out-of-memory error: the catalogue names the cause.
  auto report = DiagnoseLogText("cut.log", log + "     Allocation type: HLO temp\n");
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->causes.empty());
  EXPECT_EQ(report->causes[0].layer, "catalogue");
  EXPECT_EQ(report->causes[0].category, "hbm_oom");
  // Structural evidence alone, with words of no category: still a failure, never "healthy".
  auto bare = DiagnoseLogText("bare.log", "Segmentation fault (core dumped)\n");
  ASSERT_TRUE(bare.ok());
  ASSERT_FALSE(bare->causes.empty());
}

// The same failure in the shapes real logs come in: every line prefixed by a worker's address
// (a command run on all workers of a slice), by the Kaggle viewer's columns, by pytest's `E`, in
// ANSI colour, cut mid-traceback, or as several processes' interleaved tracebacks.
TEST(LogDiagnosisTest, LogShapesDoNotHideTheCause) {
  const std::string oom =
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. "
      "Ran out of memory in memory space hbm. Used 40.10G of 15.75G hbm. Exceeded hbm capacity by "
      "24.35G.";
  const std::vector<std::pair<std::string, std::string>> shapes = {
      {"worker address",
       "10.164.0.3 [1] Traceback (most recent call last):\n10.164.0.3 [1] " + oom},
      {"worker name", "[worker-3] " + oom},
      {"kaggle viewer", "41.2s 118 Traceback (most recent call last):\n41.3s 119 " + oom},
      {"pytest", "E   " + oom},
      {"colab viewer",
       "Nov 23, 2026, 3:45:18 AM\tWARNING\tTraceback (most recent call last):\n"
       "Nov 23, 2026, 3:45:18 AM\tWARNING\t" +
           oom},
      // Log viewers that list the newest line first.
      {"newest first", oom + "\n  File \"train.py\", line 9, in <module>\nTraceback (most recent "
                             "call last):\nstep 10 loss 2.1"},
      {"ansi colour", "\x1b[31m" + oom + "\x1b[0m"},
      {"interleaved",
       "[worker-0] step 10\n[worker-1] Traceback (most recent call last):\n"
       "[worker-0] Traceback (most recent call last):\n[worker-1] " +
           oom + "\n[worker-0] " + oom},
  };
  for (const auto& [name, log] : shapes) {
    SCOPED_TRACE(name);
    auto d = DiagnoseLogText("shaped.log", log);
    ASSERT_TRUE(d.ok());
    ASSERT_FALSE(d->causes.empty());
    EXPECT_EQ(d->causes[0].category, "hbm_oom");
    EXPECT_EQ(d->causes[0].layer, "signature");
  }
  auto colab_killed = DiagnoseLogText("c.log", "Nov 23, 2026, 3:45:18 AM\tWARNING\tKilled\n");
  ASSERT_TRUE(colab_killed.ok());
  ASSERT_FALSE(colab_killed->causes.empty());
  EXPECT_EQ(colab_killed->causes[0].category, "host_oom");
  // A bare `Killed` from the shell, in colour and behind a worker prefix, is still the line.
  auto killed = DiagnoseLogText("k.log", "step 100\n10.0.0.2 [0] \x1b[1mKilled\x1b[0m\n");
  ASSERT_TRUE(killed.ok());
  ASSERT_FALSE(killed->causes.empty());
  EXPECT_EQ(killed->causes[0].category, "host_oom");
  // Cut mid-traceback: frames and no exception line still show a failure.
  auto cut = DiagnoseLogText("cut.log",
                             "step 1 loss 2.3\n"
                             "  File \"train.py\", line 88, in <module>\n"
                             "    main()\n"
                             "  File \"train.py\", line 80, in main\n"
                             "    state = train_step(state, batch)\n");
  ASSERT_TRUE(cut.ok());
  EXPECT_FALSE(cut->causes.empty());
}

// A cause's fix speaks the framework the log came from: a torch_xla log never gets a JAX fix.
TEST(LogDiagnosisTest, FixFollowsTheLogsFramework) {
  const std::string crash = "Check failed: hlo->shape().IsArray() RET_CHECK failure\n";
  auto torch = DiagnoseLogText(
      "t.log",
      "  File \"/usr/lib/python3/site-packages/torch_xla/core/xla_model.py\", line 1\n"
      "import torch_xla.core.xla_model as xm\n" +
          crash);
  auto jax =
      DiagnoseLogText("j.log",
                      "  File \"/usr/lib/python3/site-packages/jax/_src/compiler.py\", line 1\n"
                      "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: " +
                          crash);
  ASSERT_TRUE(torch.ok() && jax.ok());
  ASSERT_FALSE(torch->causes.empty());
  ASSERT_FALSE(jax->causes.empty());
  EXPECT_EQ(torch->framework, "pytorch/xla");
  EXPECT_EQ(jax->framework, "jax");
  auto all_fixes = [](const LogDiagnosis& d) {
    std::string fixes;
    for (const LogCause& c : d.causes) fixes += c.fix + "\n";
    return fixes;
  };
  EXPECT_EQ(all_fixes(*torch).find("jax"), std::string::npos) << all_fixes(*torch);
  EXPECT_NE(all_fixes(*torch).find("torch_xla"), std::string::npos) << all_fixes(*torch);
  EXPECT_EQ(all_fixes(*jax).find("torch"), std::string::npos) << all_fixes(*jax);
}

// A log that is only a torch_xla metrics report is read: CPU fallbacks (`aten::` counters) and
// compilations that take minutes are causes; a report of a few cached compilations is not.
TEST(LogDiagnosisTest, TorchXlaMetricsReportIsRead) {
  auto fallbacks =
      DiagnoseLogText("m.log",
                      "Metric: CompileTime\n  TotalSamples: 3\nCounter: CachedCompile\n"
                      "  Value: 120\nCounter: aten::nonzero\n  Value: 240\n");
  ASSERT_TRUE(fallbacks.ok());
  ASSERT_FALSE(fallbacks->causes.empty());
  EXPECT_EQ(fallbacks->causes[0].category, "unsupported_op");
  auto slow = DiagnoseLogText("s.log",
                              "Metric: CompileTime\n  TotalSamples: 3\n  Accumulator: 06m16s\n"
                              "  Percentiles: 1%=021ms656.289us; 50%=023ms380.079us; "
                              "80%=06m15s551ms654.655us\n");
  ASSERT_TRUE(slow.ok());
  ASSERT_FALSE(slow->causes.empty());
  EXPECT_EQ(slow->causes[0].category, "compilation_timeout");
  auto fine = DiagnoseLogText("f.log",
                              "Metric: CompileTime\n  TotalSamples: 3\n  Percentiles: 1%=2s; "
                              "50%=3s\nCounter: CachedCompile\n  Value: 1997\n");
  ASSERT_TRUE(fine.ok());
  EXPECT_TRUE(fine->causes.empty());
}

// The words the fallback reads; scripts/train_logs_fallback.py's tokens() gives the same list.
TEST(LogDiagnosisTest, FallbackWordsMatchTheTrainingScript) {
  EXPECT_EQ(logs::LogWords("jax.errors.XlaRuntimeError: RESOURCE_EXHAUSTED at 0x7f3a9c 12:30 v5e "
                           "bf16 libtpu_0_1 Killed"),
            (std::vector<std::string>{"errors", "jax", "killed", "libtpu_0_1", "resource_exhausted",
                                      "v5e", "xlaruntimeerror"}));
}

// A healthy run's chatter must not produce a cause: a diagnosis tool that cries wolf is useless.
TEST(LogDiagnosisTest, HealthyRunHasNoCause) {
  const std::string log =
      "I0101 00:00:01 1 xla_bridge.py:884] Unable to initialize backend 'cuda': module not found\n"
      "I0101 00:00:02 1 preemption_sync_manager.cc:88] Initialized preemption sync manager\n"
      "I0101 00:00:03 1 tpu_initializer_helper.cc:95] libtpu.so initialized, 4 TPU v5 lite chips\n"
      "I0101 00:00:09 1 train.py:200] Compiled jit(train_step) in 41.2s\n"
      "I0101 00:00:10 1 train.py:210] step 100 loss 2.31 hbm in use 11.2G of 15.75G\n"
      "I0101 00:00:11 1 checkpoint_manager.py:1301] Saving checkpoint for step 100 to "
      "gs://b/run/100\n"
      "INFO:tensorflow:Enqueue next (100) batch(es) of data to infeed.\n"
      "W0101 00:00:12 1 memory.py:12] Memory efficient attention disabled; using dense attention\n"
      "I0101 00:00:13 1 train.py:230] Training finished in 2h03m\n";
  std::string padded = log;
  for (int i = 0; i < 20; ++i) padded += "I0101 eval step " + std::to_string(i) + "\n";
  auto d = DiagnoseLogText("run.log", padded);
  ASSERT_TRUE(d.ok());
  for (const LogCause& c : d->causes) ADD_FAILURE() << c.signature << ": " << c.evidence[0].text;
}

TEST(LogDiagnosisTest, ALogEndingInTheTrainingLoopIsAStall) {
  auto d = DiagnoseLogText(
      "run.log",
      "I0101 step 1\nINFO:tensorflow:Enqueue next (100) batch(es) of data to infeed.\n"
      "INFO:tensorflow:Outfeed finished for iteration (685, 41)\n");
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->causes.size(), 1u);
  EXPECT_EQ(d->causes[0].category, "hang_or_deadlock");
  EXPECT_EQ(d->causes[0].evidence[0].line, 3);  // the last progress line, not the first
}

// Where the log stops says less than a message that names a cause: TPUEstimator's infeed pulled
// past the end of a finite dataset (the iterator's "End of sequence", attributed to the failed op),
// or recorded its input_fn's error. The stall follows the cause.
TEST(LogDiagnosisTest, ANamedCauseComesBeforeWhereTheLogStopped) {
  const std::string loop =
      "INFO:tensorflow:Enqueue next (50) batch(es) of data to infeed.\n"
      "INFO:tensorflow:Dequeue next (50) batch(es) of data from outfeed.\n";
  auto exhausted = DiagnoseLogText(
      "run.log", loop +
                     "W0601 12:00:01 tf_logging.py:126] Error occurred during infeed/outfeed.\n"
                     "End of sequence\n"
                     "\t [[Node: input_pipeline_task0/IteratorGetNext = IteratorGetNext[]()]]\n");
  ASSERT_TRUE(exhausted.ok());
  ASSERT_GE(exhausted->causes.size(), 2u);
  EXPECT_EQ(exhausted->causes[0].category, "input_pipeline");
  EXPECT_EQ(exhausted->causes[0].layer, "catalogue");
  EXPECT_EQ(exhausted->causes[1].category, "hang_or_deadlock");
  auto recorded = DiagnoseLogText(
      "run.log", loop +
                     "INFO:tensorflow:Error recorded from infeed: No registered 'PyFunc' OpKernel "
                     "for CPU devices compatible with node {{node PyFunc}}\n"
                     "\t [[{{node PyFunc}}]]\n");
  ASSERT_TRUE(recorded.ok());
  ASSERT_FALSE(recorded->causes.empty());
  EXPECT_EQ(recorded->causes[0].category, "input_pipeline");
}

// TensorFlow 2 ends every pass over a finite dataset with a warning that a rendezvous aborted with
// OUT_OF_RANGE "End of sequence", and names the iterator on the next line: a healthy Keras run
// prints it once an epoch. The same attribution after a lost connection is a failure.
TEST(LogDiagnosisTest, TheEndOfAnEpochIsNotAFailure) {
  const std::string epoch_end =
      "2024-01-01 10:00:00.000000: W tensorflow/core/framework/local_rendezvous.cc:404] Local "
      "rendezvous is aborting with status: OUT_OF_RANGE: End of sequence\n"
      "\t [[{{node IteratorGetNext}}]]\n";
  auto healthy = DiagnoseLogText(
      "run.log", "Epoch 1/2\n100/100 [====] - 12s 80ms/step - loss: 0.52\n" + epoch_end +
                     "Epoch 2/2\n100/100 [====] - 8s 80ms/step - loss: 0.41\n" + epoch_end);
  ASSERT_TRUE(healthy.ok());
  EXPECT_TRUE(healthy->causes.empty()) << healthy->causes.front().category;
  auto lost = DiagnoseLogText(
      "run.log",
      "UnavailableError: {{function_node __inference_train_function_1}} failed to connect to all "
      "addresses\n"
      "\t [[{{node IteratorGetNext}}]]\n");
  ASSERT_TRUE(lost.ok());
  ASSERT_FALSE(lost->causes.empty());
  EXPECT_EQ(lost->causes[0].category, "input_pipeline");
  // Nor is it the first cause in time of a run that fails later for a reason the log names.
  auto later = DiagnoseLogText(
      "run.log", "Epoch 1/2\n" + epoch_end +
                     "Traceback (most recent call last):\n  File \"train.py\", line 9\n"
                     "NotFoundError: Op type not registered 'SentencepieceOp' in binary running "
                     "on n-1.\n");
  ASSERT_TRUE(later.ok());
  ASSERT_FALSE(later->causes.empty());
  EXPECT_EQ(later->causes[0].category, "version_mismatch");
}

// Messages decide by what they say: XLA's TPU verifier rejecting element types is a dtype
// problem, not a crash; a kernel registered but not for a variant (a TensorList's handle) is a
// missing op, while one not for DT_DOUBLE is a dtype; torch_xla's "ops not lowered" explains the
// transfers its profiler reports beside them.
TEST(LogDiagnosisTest, WhatTheMessageNamesDecidesTheCategory) {
  auto first = [](const std::string& log) {
    auto d = DiagnoseLogText("run.log", log);
    EXPECT_TRUE(d.ok() && !d->causes.empty());
    return d.ok() && !d->causes.empty() ? d->causes[0].category : std::string();
  };
  EXPECT_EQ(first("RuntimeError: Check failed: status.ok() (Invalid argument: Invalid HLO for "
                  "TPU: U8 and S8 types are not supported: %p = u8[] parameter(0))\n"),
            "unsupported_dtype");
  const std::string unsupported =
      "InvalidArgumentError: Compilation failure: Detected unsupported operations when trying to "
      "compile graph cond_true_1 on XLA_TPU_JIT: FakeParam (No registered 'FakeParam' OpKernel for "
      "XLA_TPU_JIT devices compatible with node {{node cond/FakeParam}}\n"
      "\t (OpKernel was found, but attributes didn't match) Requested Attributes: ";
  EXPECT_EQ(first(unsupported + "dtype=DT_VARIANT, shape=[]){{node cond/FakeParam}}\n"),
            "unsupported_op");
  EXPECT_EQ(first(unsupported + "dtype=DT_DOUBLE, shape=[]){{node cond/FakeParam}}\n"),
            "unsupported_dtype");
  EXPECT_EQ(first("pt-xla-profiler: TransferFromServerTime too frequent: 120 counts during 3 "
                  "steps\n"
                  "pt-xla-profiler: Op(s) not lowered: aten::reflection_pad1d,  Please open a "
                  "GitHub issue with the above op lowering requests.\n"),
            "unsupported_op");
}

TEST(LogDiagnosisTest, BadInputsAreErrors) {
  EXPECT_FALSE(DiagnoseLogText("x", "").ok());
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary += static_cast<char>((i * 7919) % 256);
  auto b = DiagnoseLogText("x", binary);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("binary"), std::string::npos);
  EXPECT_FALSE(DiagnoseLogs({"/nonexistent/run.log"}).ok());
  EXPECT_FALSE(DiagnoseLogs({}).ok());
}

TEST(LogDiagnosisTest, GzipIsReadAndTruncatedGzipIsAnError) {
  const std::string dir = ::testing::TempDir();
  const std::string gz = dir + "/run.log.gz";
  const std::string text =
      "I0101 ok\nRan out of memory in memory space hbm. Used 9.00G of 8.00G hbm.\n";
  {
    gzFile f = gzopen(gz.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
  }
  auto d = DiagnoseLogs({gz});
  ASSERT_TRUE(d.ok()) << d.error().message;
  ASSERT_FALSE(d->causes.empty());
  EXPECT_EQ(d->causes[0].category, "hbm_oom");
  EXPECT_EQ(d->causes[0].evidence[0].line, 2);
  std::string bytes = testing::ReadFile(gz);
  const std::string cut = dir + "/cut.log.gz";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 12);
  auto t = DiagnoseLogs({cut});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("truncated"), std::string::npos) << t.error().message;
}

// The acceptance bar: top-1 category on the real logs of testdata/logs/tpu_logs_dev.jsonl
// (error output pasted into public issue threads), at least 90%. Expected misses are listed here
// with the reason; there are none at the moment.
// Both corpora of real TPU failure logs (testdata/logs/tpu_logs_dev*.jsonl): at least 89% top-1
// over both files together — an in-sample regression floor, not a figure of accuracy (that is
// scripts/logs_loso.py's). It was 90% until the scored fallback learned to abstain under
// similarity 0.2: two right but weak guesses became "cannot tell", on purpose. Every log gets a
// cause from some layer: none is silent (the one cut before its error shows a launch on 3 cores,
// which xmp.spawn does not support).
TEST(LogCorpusTest, BothCorporaAccuracyFloor) {
  int total = 0, hits = 0, silent = 0;
  for (const char* file : {"logs/tpu_logs_dev.jsonl", "logs/tpu_logs_dev2.jsonl"}) {
    std::ifstream in(testing::Testdata(file));
    std::string line;
    while (std::getline(in, line)) {
      auto row = nlohmann::json::parse(line);
      auto d = DiagnoseLogText(row["id"], row["log"].get<std::string>());
      ASSERT_TRUE(d.ok()) << row["id"];
      ++total;
      silent += d->causes.empty();
      hits += !d->causes.empty() && d->causes[0].category == row["category"];
    }
  }
  EXPECT_EQ(total, 151);
  EXPECT_GE(hits * 100, total * 89) << hits << " of " << total;
  EXPECT_EQ(silent, 0) << silent << " failure logs get no cause";
}

TEST(LogCorpusTest, TopCategoryOnRealLogs) {
  const std::map<std::string, std::string> expected_misses = {};
  std::ifstream in(testing::Testdata("logs/tpu_logs_dev.jsonl"));
  std::string line;
  int total = 0, hits = 0;
  while (std::getline(in, line)) {
    auto row = nlohmann::json::parse(line);
    const std::string id = row["id"], want = row["category"];
    auto d = DiagnoseLogText(id, row["log"].get<std::string>());
    ASSERT_TRUE(d.ok()) << id;
    const std::string got = d->causes.empty() ? "none" : d->causes[0].category;
    ++total;
    if (got == want) {
      ++hits;
      EXPECT_FALSE(expected_misses.count(id)) << id << " now passes: take it off the miss list";
    } else {
      EXPECT_TRUE(expected_misses.count(id)) << id << ": expected " << want << ", got " << got;
    }
  }
  EXPECT_EQ(total, 55);
  EXPECT_GE(hits * 100, total * 89) << hits << " of " << total;
}

}  // namespace
}  // namespace tpudoctor
