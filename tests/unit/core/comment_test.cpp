#include "core/comment.h"

#include <gtest/gtest.h>

namespace attrib {
namespace {

Verdict gpu_verdict() {
  Verdict v;
  v.domain = "GPU_HARDWARE";
  Event e;
  e.node = "n2";
  v.root_cause = RootCause{"gpu.fallen_off_bus", "GPU 0000:3b:00 on n2 fell off the bus (Xid 79)", e};
  v.symptoms.resize(2);
  v.nodes = {"n1", "n2", "n3"};
  v.affected_nodes = {"n2"};
  v.affected_gpus = {{"n2", "0000:3b:00.0"}};
  v.recommended_action = "DRAIN_NODE";
  for (const char* node : {"n1", "n2", "n3"}) {
    Coverage c;
    c.node = node;
    c.source = "kernel";
    c.status = CoverageStatus::Ok;
    v.coverage.push_back(c);
  }
  return v;
}

TEST(RenderComment, RootCauseForm) {
  EXPECT_EQ(render_comment(gpu_verdict()),
            "attrib: GPU_HARDWARE node=n2 gpu=0000:3b:00.0 rule=gpu.fallen_off_bus action=DRAIN_NODE symptoms=2 "
            "coverage=3/3");
}

TEST(RenderComment, CoverageCountsNodesWithEverySourceOkOrEmpty) {
  Verdict v = gpu_verdict();
  v.coverage[0].status = CoverageStatus::Empty;  // n1 still covered
  Coverage app;
  app.node = "n3";
  app.source = "app";
  app.status = CoverageStatus::Unavailable;  // n3 not fully covered
  v.coverage.push_back(app);
  v.nodes.push_back("n4");  // allocated, nothing collected
  EXPECT_NE(render_comment(v).find("coverage=2/4"), std::string::npos) << render_comment(v);
}

TEST(RenderComment, NoneUnattributedAmbiguous) {
  Verdict none = gpu_verdict();
  none.domain = "NONE";
  none.root_cause.reset();
  none.symptoms.clear();
  none.recommended_action = "NONE";
  EXPECT_EQ(render_comment(none), "attrib: NONE coverage=3/3");

  Verdict unattributed = gpu_verdict();
  unattributed.domain = "UNATTRIBUTED";
  unattributed.root_cause.reset();
  unattributed.symptoms.clear();
  unattributed.affected_nodes.clear();
  unattributed.affected_gpus.clear();
  unattributed.recommended_action = "NONE";
  unattributed.unexplained.resize(4);
  EXPECT_EQ(render_comment(unattributed), "attrib: UNATTRIBUTED action=NONE symptoms=0 unexplained=4 coverage=3/3");

  Verdict ambiguous = gpu_verdict();
  ambiguous.domain = "AMBIGUOUS";
  ambiguous.root_cause.reset();
  ambiguous.candidates = {{"HOST_HARDWARE", "host.pcie_fatal", "", {"e1"}},
                          {"GPU_HARDWARE", "gpu.fallen_off_bus", "", {"e2"}}};
  EXPECT_EQ(render_comment(ambiguous),
            "attrib: AMBIGUOUS candidates=GPU_HARDWARE/gpu.fallen_off_bus,HOST_HARDWARE/host.pcie_fatal node=n2 "
            "gpu=0000:3b:00.0 action=DRAIN_NODE symptoms=2 unexplained=0 coverage=3/3");
}

TEST(RenderComment, SanitisedAndBounded) {
  Verdict v = gpu_verdict();
  v.affected_nodes.clear();
  for (int i = 0; i < 400; ++i) v.affected_nodes.push_back("node\n" + std::to_string(i));
  const std::string comment = render_comment(v);
  EXPECT_LE(comment.size(), 1000u);
  EXPECT_EQ(comment.find('\n'), std::string::npos);
  EXPECT_EQ(comment.rfind("attrib: ", 0), 0u);
}

TEST(SanitizeForComment, RemovesControlCharacters) {
  EXPECT_EQ(sanitize_for_comment("a\nb\rc\td\x1b[31me\x7f"), "a b c d [31me ");
  EXPECT_EQ(sanitize_for_comment("GPU 0000:3b:00 – ok"), "GPU 0000:3b:00 – ok");  // UTF-8 kept
}

TEST(MergeComment, KeepsTheUsersText) {
  const std::string segment = "attrib: NONE coverage=1/1";
  EXPECT_EQ(merge_comment("", segment), segment);
  EXPECT_EQ(merge_comment("exp 42", segment), "exp 42 | " + segment);
  EXPECT_EQ(merge_comment("exp 42 | attrib: GPU_HARDWARE node=n2 coverage=0/1", segment), "exp 42 | " + segment);
  EXPECT_EQ(merge_comment("attrib: UNATTRIBUTED coverage=0/1", segment), segment);
  EXPECT_EQ(merge_comment("attrib: OLD | exp 42", segment), segment + " | exp 42");
  // "attrib:" inside the user's own words is not our segment
  EXPECT_EQ(merge_comment("note attrib: later", segment), "note attrib: later | " + segment);
  // merging twice is stable
  const std::string once = merge_comment("exp 42", segment);
  EXPECT_EQ(merge_comment(once, segment), once);
}

// The segment alone, wherever it sits among the user's text: what the head compares with
// the segments it archived before trusting one.
TEST(CommentSegment, IsTheAttribSegmentBetweenTheUsersText) {
  EXPECT_EQ(comment_segment("user note"), "");
  EXPECT_EQ(comment_segment("attrib: NONE coverage=1/1"), "attrib: NONE coverage=1/1");
  EXPECT_EQ(comment_segment("mine | attrib: NONE coverage=1/1 attempt=2 | after"), "attrib: NONE coverage=1/1 attempt=2");
}

// Which attempt a Comment shows: a requeued job's earlier attempt, judged late, must not
// replace a later attempt's verdict (attribution.cpp compares these).
TEST(CommentAttempt, ReadsTheAttemptOfTheAttribSegmentOnly) {
  EXPECT_EQ(comment_attempt("user note"), -1);
  EXPECT_EQ(comment_attempt("attrib: NONE coverage=1/1"), 0);
  EXPECT_EQ(comment_attempt("note | attrib: UNATTRIBUTED action=NONE coverage=1/1 attempt=2 missing=n1:kernel"), 2);
  EXPECT_EQ(comment_attempt("attrib: NONE coverage=1/1 | my attempt=7 text"), 0);
  Verdict v;
  v.domain = "NONE";
  v.attempt = 3;
  EXPECT_EQ(comment_attempt(render_comment(v)), 3);
}

}  // namespace
}  // namespace attrib
