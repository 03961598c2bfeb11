// The slurm_accounting collector's line shapes against the shipped rules that read them.
// The collector against a real slurmdbd runs in the end-to-end suite (xid79_symptoms,
// exit3_unattributed).
#include "collectors/slurm_accounting_collector.h"

#include <gtest/gtest.h>

#include "collectors/registry.h"
#include "rules/engine.h"
#include "tests/support/test_paths.h"

using namespace attrib;

namespace {

std::vector<Event> extract(const std::string& text) {
  auto pack = rules::load_rule_pack({attrib::test::rules_pack_dir(), {}});
  EXPECT_TRUE(pack) << pack.error().message;
  rules::Extractor extractor(*pack);
  extractor.feed(LogLine{"n1", "slurm", 1000, 0, true, text});
  return extractor.finish();
}

slurm::StepRecord step(const std::string& state, int exit_code, int signal) {
  slurm::StepRecord s;
  s.step_id = "12.0";
  s.name = "python";
  s.state = state;
  s.exit_code = exit_code;
  s.signal = signal;
  s.node_expr = "n[1-3]";
  return s;
}

}  // namespace

TEST(SlurmAccountingCollector, FailedStepLineBecomesAStepFailedEvent) {
  auto events = extract(collectors::format_step_line(step("FAILED", 7, 0)));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "slurm.step_failed");
  EXPECT_EQ(events[0].fields["step"], "12.0");
  EXPECT_EQ(events[0].fields["exit_code"], 7);
  EXPECT_EQ(events[0].fields["nodes"], "n[1-3]");
  EXPECT_TRUE(events[0].trusted);
}

TEST(SlurmAccountingCollector, KilledStepKeepsItsSignal) {
  auto events = extract(collectors::format_step_line(step("CANCELLED", 0, 9)));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].fields["signal"], 9);
}

TEST(SlurmAccountingCollector, CompletedStepAndJobLineAreNoEvents) {
  EXPECT_TRUE(extract(collectors::format_step_line(step("COMPLETED", 0, 0))).empty());
  slurm::AccountingRecord job;
  job.job_id = "12";
  job.state = "FAILED";
  job.exit_code = 1;
  job.reason = "NonZeroExitCode";
  job.node_expr = "n[1-3]";
  std::string line = collectors::format_job_line(job);
  EXPECT_EQ(line, "job 12 ended FAILED exit_code=1 signal=0 reason=NonZeroExitCode requeues=0 on n[1-3]");
  EXPECT_TRUE(extract(line).empty());  // the job's state reaches the rules from the record itself
}

// slurmdbd's requid on a cancelled job: who cancelled it, appended to the job line and
// read back by the pack as a slurm.cancelled event naming the user.
TEST(SlurmAccountingCollector, CancelledJobLineNamesWhoCancelled) {
  slurm::AccountingRecord job;
  job.job_id = "12";
  job.state = "CANCELLED";
  job.signal = 15;
  job.node_expr = "n[1-3]";
  // No requid recorded: the line keeps its old shape and is no event.
  std::string line = collectors::format_job_line(job);
  EXPECT_EQ(line, "job 12 ended CANCELLED exit_code=0 signal=15 reason=None requeues=0 on n[1-3]");
  EXPECT_TRUE(extract(line).empty());

  job.requid = 1000;
  job.requser = "alice";
  line = collectors::format_job_line(job);
  EXPECT_EQ(line,
            "job 12 ended CANCELLED exit_code=0 signal=15 reason=None requeues=0 on n[1-3] cancelled_by=alice(1000)");
  auto events = extract(line);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "slurm.cancelled");
  EXPECT_EQ(events[0].rule, "slurm.accounting_job_cancelled");
  EXPECT_EQ(events[0].fields["cancelled_by"], "alice");
  EXPECT_EQ(events[0].fields["cancelled_by_uid"], 1000);
  EXPECT_EQ(events[0].fields["job"], "12");

  // A uid without a name (no passwd entry where the collector runs) is written as its number.
  job.requid = 0;
  job.requser.clear();
  line = collectors::format_job_line(job);
  EXPECT_EQ(line, "job 12 ended CANCELLED exit_code=0 signal=15 reason=None requeues=0 on n[1-3] cancelled_by=0(0)");
  events = extract(line);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].fields["cancelled_by"], "0");

  // requid on a job that was not cancelled (Slurm may record it on other ends) is not written.
  job.state = "TIMEOUT";
  job.requid = 1000;
  EXPECT_EQ(collectors::format_job_line(job),
            "job 12 ended TIMEOUT exit_code=0 signal=15 reason=None requeues=0 on n[1-3]");
}

TEST(SlurmAccountingCollector, OptionsAreValidatedAndClusterIsRequiredSomewhere) {
  auto bad = collectors::create_collector("slurm_accounting", YAML::Load("{clustr: lab}"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "CONFIG_E_UNKNOWN_KEY");
  auto collector = collectors::create_collector("slurm_accounting", YAML::Load("{}"));
  ASSERT_TRUE(collector) << collector.error().message;
  // No cluster in the request nor the options: not configured, and nothing is read.
  int lines = 0;
  auto coverage = (*collector)->collect({.job_id = "1", .node = "n1"}, [&](const LogLine&) { ++lines; });
  ASSERT_EQ(coverage.size(), 1u);
  EXPECT_EQ(coverage[0].status, CoverageStatus::NotConfigured);
  EXPECT_EQ(lines, 0);
}
