// attrib-doctor's judgments, each on real files (a plugin stack with includes, the built
// spank_attrib.so, a spool with waiting and quarantined reports, scripts a user can or
// cannot run) or on the answers it judges (archive figures, an agent's Collect answer).
// The checks against the real slurmctld, slurmdbd, munged, head and agents run in
// tests/e2e/doctor.sh.
#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <httplib.h>

#include "attributiond/node/node_collect_service.h"
#include "attributiond/ops/http_server.h"
#include "core/clock.h"
#include "slurm/ctl_config.h"
#include "tools/attrib-doctor/agent_checks.h"
#include "tools/attrib-doctor/head_checks.h"
#include "tools/attrib-doctor/plugstack.h"
#include "tools/attrib-doctor/slurm_checks.h"
#include "tools/attrib-doctor/source_checks.h"
#include "tools/attrib-doctor/spool_checks.h"

namespace attrib::doctor {
namespace {

namespace fs = std::filesystem;
constexpr TimeUs kSecond = 1000 * 1000;

class DoctorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attrib-doctor-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms(0755));
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path;
  }
  // The finding for area/check, or a failure naming what was found instead.
  static const Finding* Find(const Findings& findings, const std::string& area, const std::string& check) {
    for (const Finding& f : findings.all())
      if (f.area == area && f.check == check) return &f;
    ADD_FAILURE() << "no finding " << area << ": " << check << " in\n" << findings.text();
    return nullptr;
  }
  fs::path dir_;
};

Identity Nobody() {
  const passwd* user = getpwnam("nobody");
  return {"nobody", user->pw_uid, user->pw_gid};
}

TEST_F(DoctorTest, OneFailFailsTheRunAndEveryLineSaysWhatItSawAndTheFix) {
  Findings findings;
  findings.ok("slurm", "slurmctld", "answers");
  findings.warn("spool", "backlog", "3 waiting", "start the head");
  EXPECT_FALSE(findings.failed());
  findings.fail("munge", "encode", "munged is down", "systemctl start munge");
  EXPECT_TRUE(findings.failed());
  const std::string text = findings.text();
  EXPECT_NE(text.find("OK    slurm: slurmctld -- answers\n"), std::string::npos) << text;
  EXPECT_NE(text.find("WARN  spool: backlog -- 3 waiting; fix: start the head\n"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL  munge: encode -- munged is down; fix: systemctl start munge\n"), std::string::npos);
  EXPECT_NE(text.find("3 checks: 1 failed, 1 warnings"), std::string::npos) << text;
  const nlohmann::json json = findings.json();
  EXPECT_EQ(json["ok"], false);
  EXPECT_EQ(json["findings"][2]["level"], "FAIL");
  EXPECT_EQ(json["findings"][2]["fix"], "systemctl start munge");
}

TEST_F(DoctorTest, PlugstackIncludesAreFollowedAndRelativePathsResolvedInPluginDir) {
  Write("plugins/spank_attrib.so", "not really");
  Write("plugstack.conf.d/attrib.conf", "# attrib\noptional spank_attrib.so spool_dir=/x  # tasks\n");
  Write("plugstack.conf.d/other.conf", "required /usr/lib64/slurm/other.so\n");
  const fs::path plugstack = Write("plugstack.conf", "include plugstack.conf.d/*.conf\n");
  auto lines = read_plugstack(plugstack.string(), "/nonexistent:" + (dir_ / "plugins").string());
  ASSERT_TRUE(lines) << lines.error().message;
  ASSERT_EQ(lines->size(), 2u);
  EXPECT_EQ((*lines)[0].path, (dir_ / "plugins/spank_attrib.so").string());
  EXPECT_FALSE((*lines)[0].required);
  EXPECT_EQ((*lines)[0].args, std::vector<std::string>{"spool_dir=/x"});
  EXPECT_EQ((*lines)[0].file, (dir_ / "plugstack.conf.d/attrib.conf").string() + ":2");
  EXPECT_TRUE((*lines)[1].required);
  EXPECT_FALSE(read_plugstack((dir_ / "missing.conf").string(), ""));
}

TEST_F(DoctorTest, TheBuiltPluginSaysTheSlurmItWasBuiltFor) {
  // This test's executable lies at <build>/tests/unit/tools/.
  const fs::path build = fs::canonical("/proc/self/exe").parent_path().parent_path().parent_path().parent_path();
  auto built_for = spank_built_for((build / "spank/spank_attrib.so").string());
  ASSERT_TRUE(built_for) << built_for.error().message;
  ASSERT_TRUE(built_for->has_value());
  EXPECT_EQ(release_of(**built_for), slurm::built_slurm_release());
  auto none = spank_built_for(Write("other.so", "an ELF file of someone else").string());
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(release_of("24.11.5"), "24.11");
}

TEST_F(DoctorTest, APluginBuiltForAnotherSlurmFailsAndAMissingOneWarns) {
  const fs::path plugin =
      Write("spank_attrib.so", std::string("x\0attrib spank_attrib.so built for Slurm 0x160508\0y", 51));
  slurm::CtlConfig ctl;
  ctl.version = "24.11.5";
  ctl.plugstack = Write("plugstack.conf", "required " + plugin.string() + "\n").string();
  Findings findings;
  check_plugstack(ctl, findings);
  const Finding* found = Find(findings, "slurm", "SPANK plugin");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->level, Level::Fail);
  EXPECT_NE(found->saw.find("built for Slurm 22.05.8, slurmctld runs 24.11.5"), std::string::npos) << found->saw;
  EXPECT_NE(found->fix.find("attrib-spank package built for Slurm 24.11"), std::string::npos) << found->fix;

  ctl.version = "22.05.8";
  Findings same;
  check_plugstack(ctl, same);
  EXPECT_EQ(Find(same, "slurm", "SPANK plugin")->level, Level::Ok);

  ctl.plugstack = Write("empty.conf", "# nothing\n").string();
  Findings missing;
  check_plugstack(ctl, missing);
  EXPECT_EQ(Find(missing, "slurm", "SPANK plugin")->level, Level::Warn);
}

TEST_F(DoctorTest, AHookTheSlurmUserCannotRunFailsWithTheChmod) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  const fs::path hook = Write("attrib-epilog", "#!/bin/sh\nexit 0\n");
  fs::permissions(hook, fs::perms(0644));
  slurm::CtlConfig ctl;
  ctl.epilog_slurmctld = {hook.string()};
  ctl.job_comp_type = "jobcomp/none";
  Findings findings;
  check_hooks(ctl, Nobody(), findings);
  const Finding* found = Find(findings, "slurm", "EpilogSlurmctld");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->level, Level::Fail);
  EXPECT_EQ(found->fix.rfind("chmod 0755 " + hook.string(), 0), 0u) << found->fix;

  fs::permissions(hook, fs::perms(0755));
  Findings fixed;
  check_hooks(ctl, Nobody(), fixed);
  EXPECT_EQ(Find(fixed, "slurm", "EpilogSlurmctld")->level, Level::Ok);

  Findings none;
  check_hooks(slurm::CtlConfig{}, Nobody(), none);
  EXPECT_EQ(Find(none, "slurm", "hook")->level, Level::Fail);
}

TEST_F(DoctorTest, CommentWithoutTheStoreFlagFailsAndAdminCommentNeedsNone) {
  common::Config config;
  config.path = "/etc/attrib/attrib.yaml";
  slurm::CtlConfig ctl;
  ctl.accounting_storage_type = "accounting_storage/slurmdbd";
  Findings findings;
  check_comment_storage(config, ctl, findings);
  const Finding* found = Find(findings, "slurm", "AccountingStoreFlags");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->level, Level::Fail);
  EXPECT_NE(found->fix.find("AccountingStoreFlags=job_comment in slurm.conf"), std::string::npos);

  config.head.comment_field = "AdminComment";
  Findings admin;
  check_comment_storage(config, ctl, admin);
  EXPECT_EQ(Find(admin, "slurm", "AccountingStoreFlags")->level, Level::Ok);

  ctl.accounting_storage_type = "";
  Findings no_dbd;
  check_comment_storage(config, ctl, no_dbd);
  EXPECT_EQ(Find(no_dbd, "slurm", "AccountingStorageType")->level, Level::Fail);
}

TEST_F(DoctorTest, TheSpoolsBacklogAndQuarantineAreCountedWithTheirAge) {
  common::Config config;
  config.path = "attrib.yaml";
  config.head.spool_dir = (dir_ / "spool").string();
  config.epilog.spool_dir = config.head.spool_dir;
  const TimeUs now = wall_clock_us();
  Findings missing;
  check_spool(config, std::nullopt, now, missing);
  EXPECT_EQ(Find(missing, "spool", "directory")->level, Level::Fail);

  const fs::path waiting = Write("spool/lab_42_1_2.jobended", "x");
  Write("spool/.lab_43_1_2.jobended.tmp", "being written");
  const fs::path bad = Write("spool/bad/lab_41_1_2.jobended", "x");
  const auto hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(waiting, hour_ago);
  fs::last_write_time(bad, hour_ago - std::chrono::hours(24));
  const SpoolBacklog backlog = spool_backlog(config.head.spool_dir);
  EXPECT_EQ(backlog.waiting, 1u);
  EXPECT_EQ(backlog.quarantined, 1u);
  Findings findings;
  check_spool(config, std::nullopt, now, findings);
  const Finding* behind = Find(findings, "spool", "backlog");
  ASSERT_NE(behind, nullptr);
  EXPECT_EQ(behind->level, Level::Warn);
  EXPECT_NE(behind->saw.find("1 job ends waiting, the oldest for 60 min"), std::string::npos) << behind->saw;
  EXPECT_EQ(Find(findings, "spool", "quarantined")->level, Level::Warn);

  config.epilog.spool_dir = "/elsewhere";
  Findings split;
  check_spool(config, std::nullopt, now, split);
  EXPECT_EQ(Find(split, "spool", "paths")->level, Level::Fail);
}

TEST_F(DoctorTest, ASpoolTheHookUserCannotWriteFails) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  common::Config config;
  config.head.spool_dir = (dir_ / "spool").string();
  config.epilog.spool_dir = config.head.spool_dir;
  fs::create_directories(config.head.spool_dir);
  fs::permissions(config.head.spool_dir, fs::perms(0755));
  Findings findings;
  check_spool(config, Nobody(), wall_clock_us(), findings);
  const Finding* found = Find(findings, "spool", "writable");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->level, Level::Fail);
  EXPECT_EQ(found->fix, "chown nobody: " + config.head.spool_dir + " && chmod 0750 " + config.head.spool_dir);
  EXPECT_TRUE(fs::is_empty(config.head.spool_dir));

  fs::permissions(config.head.spool_dir, fs::perms(0777));
  Findings writable;
  check_spool(config, Nobody(), wall_clock_us(), writable);
  EXPECT_EQ(Find(writable, "spool", "writable")->level, Level::Ok);
  EXPECT_TRUE(fs::is_empty(config.head.spool_dir)) << "the probe is removed";
}

TEST_F(DoctorTest, AnArchiveAtItsCapFailsAndAStalledRetentionWarns) {
  common::Config config;
  config.archive.max_bytes = 1000;
  config.archive.prune_interval_s = 3600;
  const TimeUs now = 1'800'000'000LL * kSecond;
  const nlohmann::json full = {
      {"schema_version", 13}, {"used_bytes", 1000}, {"runs", 5},
      {"queued", 0},          {"dead_lettered", 2}, {"last_prune", "2027-01-15T08:00:00.000000Z"}};
  Findings findings;
  judge_archive(config, full, now, findings);
  EXPECT_EQ(Find(findings, "archive", "size")->level, Level::Fail);
  EXPECT_EQ(Find(findings, "archive", "given up")->level, Level::Warn);
  EXPECT_NE(Find(findings, "archive", "schema")->saw.find("version 13"), std::string::npos);
  // 2027-01-15T08:00:00Z is 1,800,000,000 s minus 0: a fresh pass.
  EXPECT_EQ(Find(findings, "archive", "retention")->level, Level::Ok) << findings.text();

  nlohmann::json stalled = full;
  stalled["used_bytes"] = 100;
  stalled["last_prune"] = "2027-01-14T08:00:00.000000Z";
  Findings late;
  judge_archive(config, stalled, now, late);
  EXPECT_EQ(Find(late, "archive", "size")->level, Level::Ok);
  EXPECT_EQ(Find(late, "archive", "retention")->level, Level::Warn);
  stalled["last_prune"] = nullptr;
  Findings never;
  judge_archive(config, stalled, now, never);
  EXPECT_EQ(Find(never, "archive", "retention")->level, Level::Warn);
}

v1::CollectResponse HealthyAnswer(TimeUs at) {
  v1::CollectResponse answer;
  answer.set_ruleset_hash("sha256:aaaa");
  answer.set_ruleset_version("1.8.1");
  answer.set_agent_time_us(at);
  auto* kernel = answer.add_coverage();
  kernel->set_source("kernel");
  kernel->set_status("ok");
  auto* fabric = answer.add_coverage();
  fabric->set_source("fabricmanager");
  fabric->set_status("unavailable");
  return answer;
}

TEST_F(DoctorTest, AnAgentsOtherPackSkewedClockAndMissingSourcesFail) {
  const HeadPack head{"1.8.1", "sha256:aaaa"};
  const TimeUs now = wall_clock_us();
  Findings healthy;
  judge_agent_answer("n1", "10.0.0.1:7070", HealthyAnswer(now + kSecond / 2), head, now, healthy);
  EXPECT_FALSE(healthy.failed()) << healthy.text();
  EXPECT_NE(Find(healthy, "agent n1", "clock")->saw.find("+0.5"), std::string::npos);

  v1::CollectResponse other = HealthyAnswer(now - 400 * kSecond);
  other.set_ruleset_hash("sha256:bbbb");
  other.set_ruleset_version("1.7.0");
  other.set_nvswitch_devices(4);
  other.mutable_coverage(0)->set_status("failed");
  other.mutable_coverage(0)->set_detail("cannot open the journal");
  Findings broken;
  judge_agent_answer("n2", "10.0.0.2:7070", other, head, now, broken);
  const Finding* pack = Find(broken, "agent n2", "rule pack");
  ASSERT_NE(pack, nullptr);
  EXPECT_EQ(pack->level, Level::Fail);
  EXPECT_NE(pack->saw.find("runs pack 1.7.0"), std::string::npos) << pack->saw;
  EXPECT_EQ(Find(broken, "agent n2", "clock")->level, Level::Fail);
  EXPECT_EQ(Find(broken, "agent n2", "source kernel")->level, Level::Fail);
  const Finding* fabric = Find(broken, "agent n2", "source fabricmanager");
  ASSERT_NE(fabric, nullptr);
  EXPECT_NE(fabric->saw.find("4 NVSwitch devices"), std::string::npos) << fabric->saw;
}

TEST_F(DoctorTest, TheWebhookGetsOneTestPostOnlyWhenAskedAndARefusalNamesTheToken) {
  std::atomic<int> status{200};
  std::atomic<int> posts{0};
  std::string authorization;
  auto server = ops::HttpServer::start("127.0.0.1:0", {.what = "test receiver"}, [&](httplib::Server& s) {
    s.Post("/verdicts", [&](const httplib::Request& request, httplib::Response& response) {
      ++posts;
      authorization = request.get_header_value("Authorization");
      response.status = status;
    });
  });
  ASSERT_TRUE(server) << server.error().message;
  common::Config config;
  config.path = "attrib.yaml";
  config.sinks.webhook_url = "http://127.0.0.1:" + std::to_string((*server)->port()) + "/verdicts";
  config.sinks.webhook_token_file = Write("token", "s3cret\n").string();
  Findings not_sent;
  check_webhook(config, false, not_sent);
  EXPECT_EQ(Find(not_sent, "source", "webhook")->level, Level::Ok);
  EXPECT_EQ(posts, 0);

  Findings sent;
  check_webhook(config, true, sent);
  EXPECT_EQ(Find(sent, "source", "webhook")->level, Level::Ok) << sent.text();
  EXPECT_EQ(posts, 1);
  EXPECT_EQ(authorization, "Bearer s3cret");

  status = 401;
  Findings refused;
  check_webhook(config, true, refused);
  const Finding* found = Find(refused, "source", "webhook");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->level, Level::Fail);
  EXPECT_NE(found->saw.find("HTTP 401"), std::string::npos) << found->saw;
  EXPECT_NE(found->fix.find("sinks.webhook_token_file"), std::string::npos) << found->fix;
}

TEST_F(DoctorTest, AMetricSourceThatDoesNotAnswerFailsWithTheCollectorsReason) {
  // Nothing listens on port 1: the Prometheus collector's query fails as it would in the daemon.
  common::Config config;
  config.path = "attrib.yaml";
  config.collectors.push_back(
      {"prometheus", YAML::Load("{url: 'http://127.0.0.1:1', queries: [{name: up, promql: 'up'}]}"), 7});
  config.collectors.push_back({"journald", YAML::Load("{}"), 9});
  Findings findings;
  check_metric_sources(config, "n1", wall_clock_us(), findings);
  ASSERT_EQ(findings.all().size(), 1u) << "only the prometheus entry is a metric source: " << findings.text();
  EXPECT_EQ(findings.all()[0].level, Level::Fail);
  EXPECT_EQ(findings.all()[0].check, "prometheus (attrib.yaml:7)");
}

TEST_F(DoctorTest, NVSwitchDevicesAreCountedWithoutTheControlDevice) {
  for (const char* name : {"nvidia-nvswitch0", "nvidia-nvswitch1", "nvidia-nvswitchctl", "nvidia0", "nvidiactl"})
    Write(std::string("dev/") + name, "");
  EXPECT_EQ(node::count_nvswitch_devices(dir_ / "dev"), 2u);
  EXPECT_EQ(node::count_nvswitch_devices(dir_ / "missing"), 0u);
}

}  // namespace
}  // namespace attrib::doctor
