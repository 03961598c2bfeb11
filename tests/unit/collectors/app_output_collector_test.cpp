// The application output collector against job output files in the formats
// PyTorch, NCCL, torchrun and srun --label really print (docs/collectors.md).
#include "collectors/app_output_collector.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "collectors/registry.h"
#include "tests/support/file_fixtures.h"

namespace attrib::collectors {
namespace {

using testing::collect_all;
using testing::ScratchDir;
using testing::status_of;
using testing::write_file;

constexpr TimeUs kSecond = 1'000'000;
constexpr TimeUs kMar21_0200 = 1'742'522'400 * kSecond;  // 2025-03-21T02:00:00Z
constexpr TimeUs kWindowStart = kMar21_0200;
constexpr TimeUs kWindowEnd = kMar21_0200 + 3600 * kSecond;

// Flow lists need quotes around templates: a bare {job_id} would be a YAML mapping.
std::string quoted(const std::string& path) { return "'" + path + "'"; }

Result<std::unique_ptr<Collector>> make(const std::string& yaml) {
  return create_collector("app_output", YAML::Load(yaml));
}

CollectRequest request_for(const std::string& node) {
  CollectRequest request;
  request.job_id = "4242";
  request.node = node;
  request.window_start = kWindowStart;
  request.window_end = kWindowEnd;
  request.owner_uid = geteuid();  // the job's user owns its output files
  return request;
}

TEST(AppLinePrefix, SrunLabelIsStrippedAndGivesTheRank) {
  const std::map<int, std::string> none;
  AppLinePrefix p = parse_app_line("3: RuntimeError: CUDA error: an illegal memory access was encountered", none, 0, 0);
  ASSERT_TRUE(p.rank.has_value());
  EXPECT_EQ(*p.rank, 3);
  EXPECT_TRUE(p.srun_label);
  EXPECT_EQ(p.text, "RuntimeError: CUDA error: an illegal memory access was encountered");

  // srun right-aligns labels when the step has 10 tasks or more.
  p = parse_app_line(" 7: hello", none, 0, 0);
  EXPECT_EQ(p.rank, 7);
  EXPECT_EQ(p.text, "hello");

  // "12:34:56 ..." is a clock, not a label; an empty labelled line is still labelled.
  p = parse_app_line("12:34:56 epoch 3 done", none, 0, 0);
  EXPECT_FALSE(p.rank.has_value());
  EXPECT_EQ(p.text, "12:34:56 epoch 3 done");
  p = parse_app_line("5:", none, 0, 0);
  EXPECT_EQ(p.rank, 5);
  EXPECT_EQ(p.text, "");

  // With a known step layout, a number that is no rank of the job is the program's text.
  const std::map<int, std::string> two = {{0, "n1"}, {1, "n2"}};
  p = parse_app_line("42: the answer", two, 0, 0);
  EXPECT_FALSE(p.rank.has_value());
  EXPECT_EQ(p.text, "42: the answer");
}

TEST(AppLinePrefix, PyTorchRankPrefixIsKeptAndSrunLabelWins) {
  const std::map<int, std::string> none;
  AppLinePrefix p = parse_app_line(
      "[rank3]: torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/"
      "ProcessGroupNCCL.cpp:3763, remote process exited or there was a network error, NCCL version 2.28.8",
      none, 0, kWindowStart);
  EXPECT_EQ(p.rank, 3);
  EXPECT_FALSE(p.srun_label);
  EXPECT_EQ(p.text.rfind("[rank3]: torch.distributed.DistBackendError", 0), 0u);
  EXPECT_FALSE(p.time.has_value());

  // torchrun under `srun --label`: the label is the Slurm task the step layout maps.
  p = parse_app_line("1: [rank9]: ncclRemoteError: A call failed", none, 0, 0);
  EXPECT_EQ(p.rank, 1);
  EXPECT_EQ(p.text, "[rank9]: ncclRemoteError: A call failed");
}

TEST(AppLinePrefix, TimesFromGlogAndIsoPrefixes) {
  const std::map<int, std::string> none;
  // c10 logging prints the month unpadded ("E321" = March 21); the year comes from the window.
  AppLinePrefix p = parse_app_line(
      "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, "
      "Timeout(ms)=600000) ran for 600060 milliseconds before timing out.",
      none, 0, kWindowStart);
  EXPECT_EQ(p.rank, 0);
  ASSERT_TRUE(p.time.has_value());
  EXPECT_EQ(format_time(*p.time), "2025-03-21T02:07:08.408271Z");

  // torch.distributed.elastic: padded glog at the line start, node-local (UTC+1 here).
  p = parse_app_line(
      "E0321 03:23:20.000000 32974 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: 1) "
      "local_rank: 3 (pid: 33054) of binary: /usr/bin/python3",
      none, 60, kWindowStart);
  ASSERT_TRUE(p.time.has_value());
  EXPECT_EQ(format_time(*p.time), "2025-03-21T02:23:20.000000Z");

  // Around New Year the closest year wins.
  p = parse_app_line("W1231 23:59:59.500000 1 x.py:1] late", none, 0, 1'767'225'600 * kSecond /* 2026-01-01 */);
  ASSERT_TRUE(p.time.has_value());
  EXPECT_EQ(format_time(*p.time), "2025-12-31T23:59:59.500000Z");

  // Python logging, Slurm's bracketed ISO, and ISO with a zone.
  p = parse_app_line("2025-03-21 02:10:54,859 ERROR trainer: loss is nan", none, 0, 0);
  ASSERT_TRUE(p.time.has_value());
  EXPECT_EQ(format_time(*p.time), "2025-03-21T02:10:54.859000Z");
  p = parse_app_line("[2025-03-21T02:43:55.500] [63532.0] error: *** STEP 63532.0 ON cn106 CANCELLED ***", none, 0, 0);
  ASSERT_TRUE(p.time.has_value());
  EXPECT_EQ(format_time(*p.time), "2025-03-21T02:43:55.500000Z");
  p = parse_app_line("2025-03-21T04:00:00+02:00 done", none, 0, 0);
  ASSERT_TRUE(p.time.has_value());
  EXPECT_EQ(format_time(*p.time), "2025-03-21T02:00:00.000000Z");

  // A time inside the text is not a prefix.
  p = parse_app_line("slurmstepd: error: *** JOB 867816 ON c0700a-s1 CANCELLED AT 2021-05-11T12:06:17 ***", none, 0, 0);
  EXPECT_FALSE(p.time.has_value());
}

const std::string kSharedOutput =
    "Starting training on 2 nodes\n"
    "0: [rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) "
    "ran for 600060 milliseconds before timing out.\n"
    "1: [rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
    "1: [rank1]:[E320 23:00:00.000000000 ProcessGroupNCCL.cpp:1] from a previous attempt, before the window\n"
    "0: [rank0]: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
    "srun: error: n2: task 1: Exited with exit code 1\n";

TEST(AppOutputCollector, RankStreamsAreBoundedByTheLayoutOrMaxRanks) {
  ScratchDir dir;
  std::string output;
  for (int rank = 0; rank < 50; ++rank) output += "[rank" + std::to_string(rank) + "]: step done\n";
  output += "[rank9999999]: made up\n";
  write_file(dir.file("slurm-4242.out"), output);
  auto collector = make("paths: [" + quoted(dir.file("slurm-{job_id}.out")) + "]\nmax_ranks: 8\n");
  ASSERT_TRUE(collector.ok()) << collector.error().message;
  // Unknown layout: ranks 0..7 get streams, every other line stays in `app`.
  auto got = collect_all(**collector, request_for("n1"));
  ASSERT_EQ(got.lines.size(), 51u);
  EXPECT_EQ(got.lines[7].source, "app.rank7");
  EXPECT_EQ(got.lines[8].source, "app");
  EXPECT_EQ(got.lines[8].text, "[rank8]: step done");  // the prefix stays in the text
  EXPECT_EQ(got.lines[50].source, "app");
  EXPECT_EQ(got.coverage.size(), 9u);  // app + 8 rank streams
  // A known layout: only its ranks.
  CollectRequest request = request_for("n1");
  request.ranks = {{0, "n1"}, {1, "n2"}};
  got = collect_all(**collector, request);
  EXPECT_EQ(got.lines[1].source, "app.rank1");
  EXPECT_EQ(got.lines[2].source, "app");
  EXPECT_EQ(got.coverage.size(), 3u);  // app on n1, app.rank0 on n1, app.rank1 on n2
}

TEST(AppOutputCollector, SplitsASharedFileIntoRankStreamsOnTheirNodes) {
  ScratchDir dir;
  write_file(dir.file("slurm-4242.out"), kSharedOutput);
  auto collector = make("paths: [" + quoted(dir.file("slurm-{job_id}.out")) + "]\n");
  ASSERT_TRUE(collector.ok()) << collector.error().message;
  CollectRequest request = request_for("n1");  // the batch node
  request.ranks = {{0, "n1"}, {1, "n2"}};
  auto got = collect_all(**collector, request);

  ASSERT_EQ(got.lines.size(), 5u);
  EXPECT_EQ(got.lines[0].source, "app");
  EXPECT_EQ(got.lines[0].node, "n1");
  EXPECT_FALSE(got.lines[0].time.has_value());
  EXPECT_EQ(got.lines[1].source, "app.rank0");
  EXPECT_EQ(got.lines[1].node, "n1");
  EXPECT_EQ(format_time(*got.lines[1].time), "2025-03-21T02:07:08.408271Z");
  EXPECT_EQ(got.lines[1].text.rfind("[rank0]:[E321", 0), 0u);
  EXPECT_EQ(got.lines[2].source, "app.rank1");
  EXPECT_EQ(got.lines[2].node, "n2");  // rank 1 ran on n2
  EXPECT_EQ(got.lines[2].text, "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered");
  EXPECT_EQ(got.lines[3].source, "app.rank0");
  EXPECT_EQ(got.lines[3].seq, 1u);  // second line of the (n1, app.rank0) stream
  EXPECT_EQ(got.lines[4].source, "app");
  EXPECT_EQ(got.lines[4].seq, 1u);
  for (const LogLine& line : got.lines) EXPECT_FALSE(line.trusted) << line.text;  // even a printed "NVRM: Xid"

  ASSERT_EQ(got.coverage.size(), 3u);
  EXPECT_EQ(got.coverage[0].node, "n1");
  EXPECT_EQ(got.coverage[0].source, "app");
  EXPECT_EQ(got.coverage[0].lines, 2u);
  EXPECT_EQ(status_of(got.coverage[0]), "ok");
  EXPECT_EQ(got.coverage[1].source, "app.rank0");
  EXPECT_EQ(got.coverage[1].lines, 2u);
  EXPECT_EQ(got.coverage[2].node, "n2");
  EXPECT_EQ(got.coverage[2].source, "app.rank1");
  EXPECT_EQ(got.coverage[2].lines, 1u);
  EXPECT_EQ(status_of(got.coverage[2]), "ok");
}

TEST(AppOutputCollector, RequestPathsAndTemplatesAreReadOnceEach) {
  ScratchDir dir;
  write_file(dir.file("4242.out"), "epoch 1\n");
  write_file(dir.file("4242-n1.err"), "Traceback (most recent call last):\n");
  auto collector = make("paths: [" + quoted(dir.file("{job_id}.out")) + ", " + quoted(dir.file("{job_id}-{node}.err")) +
                        ", " + quoted(dir.file("{job_id}.missing")) + "]\n");
  ASSERT_TRUE(collector.ok()) << collector.error().message;
  CollectRequest request = request_for("n1");
  request.output_paths = {dir.file("4242.out"), "relative/4242.out"};
  auto got = collect_all(**collector, request);
  ASSERT_EQ(got.lines.size(), 2u);
  EXPECT_EQ(got.lines[0].text, "epoch 1");
  EXPECT_EQ(got.lines[1].text, "Traceback (most recent call last):");
  EXPECT_EQ(status_of(got.coverage[0]), "ok");
  EXPECT_NE(got.coverage[0].detail.find("4242.missing"), std::string::npos) << got.coverage[0].detail;
  EXPECT_NE(got.coverage[0].detail.find("not absolute"), std::string::npos) << got.coverage[0].detail;
}

TEST(AppOutputCollector, CoverageStatuses) {
  ScratchDir dir;
  auto none = make("");
  ASSERT_TRUE(none.ok());
  auto no_paths = collect_all(**none, request_for("n1"));
  EXPECT_EQ(status_of(no_paths.coverage[0]), "unavailable");
  EXPECT_NE(no_paths.coverage[0].detail.find("no output paths"), std::string::npos);

  auto collector = make("paths: [" + quoted(dir.file("{job_id}.out")) + "]\n");
  ASSERT_TRUE(collector.ok());
  auto missing = collect_all(**collector, request_for("n1"));
  EXPECT_EQ(status_of(missing.coverage[0]), "unavailable");

  write_file(dir.file("4242.out"), "\n\n");
  auto empty = collect_all(**collector, request_for("n1"));
  EXPECT_EQ(status_of(empty.coverage[0]), "empty");

  // Only lines outside the window: read, nothing in it.
  write_file(dir.file("4242.out"), "2025-03-20 10:00:00,000 INFO previous attempt\n");
  auto outside = collect_all(**collector, request_for("n1"));
  EXPECT_TRUE(outside.lines.empty());
  EXPECT_EQ(status_of(outside.coverage[0]), "empty");
}

TEST(AppOutputCollector, RefusesSymlinksAndFifosWithoutBlocking) {
  ScratchDir dir;
  write_file(dir.file("secret"), "root-only text\n");
  std::filesystem::create_symlink(dir.file("secret"), dir.file("4242.out"));
  ASSERT_EQ(mkfifo(dir.file("4242.err").c_str(), 0600), 0);
  const int writer = open(dir.file("4242.err").c_str(), O_RDWR | O_NONBLOCK);  // a writer that never closes
  ASSERT_GE(writer, 0);
  auto collector =
      make("paths: [" + quoted(dir.file("{job_id}.out")) + ", " + quoted(dir.file("{job_id}.err")) + "]\n");
  ASSERT_TRUE(collector.ok());
  auto got = collect_all(**collector, request_for("n1"));
  close(writer);
  EXPECT_TRUE(got.lines.empty());
  EXPECT_EQ(status_of(got.coverage[0]), "refused");
  EXPECT_NE(got.coverage[0].detail.find("symbolic link"), std::string::npos) << got.coverage[0].detail;
  EXPECT_NE(got.coverage[0].detail.find("4242.err is not a regular file"), std::string::npos) << got.coverage[0].detail;

  // One good file next to a refused one: partial, saying which was refused.
  write_file(dir.file("4242-n1.log"), "hello\n");
  auto mixed_collector =
      make("paths: [" + quoted(dir.file("{job_id}.out")) + ", " + quoted(dir.file("{job_id}-{node}.log")) + "]\n");
  ASSERT_TRUE(mixed_collector.ok());
  auto mixed = collect_all(**mixed_collector, request_for("n1"));
  EXPECT_EQ(mixed.lines.size(), 1u);
  EXPECT_EQ(status_of(mixed.coverage[0]), "partial");
  EXPECT_NE(mixed.coverage[0].detail.find("symbolic link"), std::string::npos) << mixed.coverage[0].detail;
}

// The job's user names its output files and the daemon reads with more rights: a path
// to someone else's file, a system file, or through a swapped directory link is refused
// and never read (docs/security.md, "User files").
TEST(AppOutputCollector, ReadsOnlyFilesOwnedByTheJobsUserReachedWithoutLinks) {
  ScratchDir dir;
  const std::string secret = "Xid 79 secret line of another user\n";
  write_file(dir.file("other.out"), secret);
  auto collector = make("");
  ASSERT_TRUE(collector.ok());

  // Another user's file: the job runs as a uid that does not own it.
  CollectRequest other_user = request_for("n1");
  other_user.owner_uid = geteuid() + 1;
  other_user.output_paths = {dir.file("other.out")};
  auto got = collect_all(**collector, other_user);
  EXPECT_TRUE(got.lines.empty());
  EXPECT_EQ(status_of(got.coverage[0]), "refused");
  EXPECT_NE(got.coverage[0].detail.find("is owned by uid " + std::to_string(geteuid()) + ", not by the job's user"),
            std::string::npos)
      << got.coverage[0].detail;

  // A file under /etc, named as a job's output by a user who is not root.
  CollectRequest etc = request_for("n1");
  etc.owner_uid = 65534;
  etc.output_paths = {"/etc/passwd"};
  got = collect_all(**collector, etc);
  EXPECT_TRUE(got.lines.empty());
  EXPECT_EQ(status_of(got.coverage[0]), "refused");
  EXPECT_NE(got.coverage[0].detail.find("/etc/passwd is owned by uid 0"), std::string::npos) << got.coverage[0].detail;

  // A parent directory swapped for a link after submission: to /etc, and to another
  // directory holding a file the job's user does own. Neither is followed.
  std::filesystem::create_directory(dir.file("elsewhere"));
  write_file(dir.file("elsewhere/4242.out"), "mine, but reached through a link\n");
  std::filesystem::create_directory_symlink(dir.file("elsewhere"), dir.file("jobdir"));
  std::filesystem::create_directory_symlink("/etc", dir.file("etcdir"));
  CollectRequest swapped = request_for("n1");
  swapped.output_paths = {dir.file("jobdir/4242.out"), dir.file("etcdir/passwd")};
  got = collect_all(**collector, swapped);
  EXPECT_TRUE(got.lines.empty());
  EXPECT_EQ(status_of(got.coverage[0]), "refused");
  EXPECT_NE(got.coverage[0].detail.find(dir.file("jobdir") + " is a symbolic link"), std::string::npos)
      << got.coverage[0].detail;
  EXPECT_NE(got.coverage[0].detail.find(dir.file("etcdir") + " is a symbolic link"), std::string::npos)
      << got.coverage[0].detail;

  // ".." could climb out of a checked directory; an unknown owner cannot be checked.
  CollectRequest dots = request_for("n1");
  dots.output_paths = {dir.file("elsewhere/../other.out")};
  got = collect_all(**collector, dots);
  EXPECT_EQ(status_of(got.coverage[0]), "refused");
  EXPECT_NE(got.coverage[0].detail.find("'..'"), std::string::npos) << got.coverage[0].detail;
  CollectRequest unknown = request_for("n1");
  unknown.owner_uid.reset();
  unknown.output_paths = {dir.file("elsewhere/4242.out")};
  got = collect_all(**collector, unknown);
  EXPECT_EQ(status_of(got.coverage[0]), "refused");
  EXPECT_NE(got.coverage[0].detail.find("the job's user is not known"), std::string::npos) << got.coverage[0].detail;

  // The same file through its real path, as its owner: read.
  CollectRequest real = request_for("n1");
  real.output_paths = {dir.file("elsewhere/4242.out")};
  got = collect_all(**collector, real);
  ASSERT_EQ(got.lines.size(), 1u);
  EXPECT_EQ(status_of(got.coverage[0]), "ok");
}

TEST(AppOutputCollector, LargeFilesAreReadFromTheirTailAtALineStart) {
  ScratchDir dir;
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "filler line number " + std::to_string(i) + "\n";
  text += "1: [rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n";
  write_file(dir.file("4242.out"), text);
  auto collector = make("paths: [" + quoted(dir.file("{job_id}.out")) + "]\nmax_bytes_per_file: 4096\n");
  ASSERT_TRUE(collector.ok()) << collector.error().message;
  auto got = collect_all(**collector, request_for("n1"));
  ASSERT_FALSE(got.lines.empty());
  EXPECT_LT(got.lines.size(), 300u);
  EXPECT_EQ(got.lines.front().text.rfind("filler line number ", 0), 0u) << got.lines.front().text;
  EXPECT_EQ(got.lines.back().source, "app.rank1");
  EXPECT_EQ(status_of(got.coverage[0]), "partial");
  EXPECT_NE(got.coverage[0].detail.find("last 4096 bytes"), std::string::npos) << got.coverage[0].detail;
}

TEST(AppOutputCollector, OptionValidation) {
  auto glob = make("timezone_offset_minutes: 0\npaths: [\"/home/*/slurm-{job_id}.out\"]\n");
  ASSERT_FALSE(glob.ok());
  EXPECT_EQ(glob.error().code, "CONFIG_E_VALUE");
  EXPECT_NE(glob.error().message.find("glob"), std::string::npos) << glob.error().message;
  EXPECT_NE(glob.error().message.find("line 2"), std::string::npos) << glob.error().message;

  auto placeholder = make("paths: [\"/shared/{user}/{job_id}.out\"]\n");
  ASSERT_FALSE(placeholder.ok());
  EXPECT_NE(placeholder.error().message.find("{user}"), std::string::npos) << placeholder.error().message;

  auto unknown = make("paths: []\npath: /x\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, "CONFIG_E_UNKNOWN_KEY");
  EXPECT_NE(unknown.error().message.find("'path'"), std::string::npos);
  EXPECT_NE(unknown.error().message.find("line 2"), std::string::npos);

  auto not_list = make("paths: /shared/{job_id}.out\n");
  ASSERT_FALSE(not_list.ok());
  EXPECT_EQ(not_list.error().code, "CONFIG_E_TYPE");

  auto tiny = make("max_bytes_per_file: 10\n");
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(tiny.error().code, "CONFIG_E_VALUE");

  ASSERT_NE(find_collector_kind("app_output"), nullptr);
}

}  // namespace
}  // namespace attrib::collectors
