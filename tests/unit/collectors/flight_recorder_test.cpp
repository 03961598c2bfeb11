// The flight_recorder collector and its readers over dumps a real PyTorch wrote
// (tests/data/flight_recorder, made by make_dumps.py there: PyTorch 2.14.1 from Debian,
// four ranks on Gloo, rank 2 never joining the fourth all_reduce), then through the
// rules engine: the verdict names rank 2 as the rank the others waited on.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "collectors/flight_recorder_collector.h"
#include "collectors/flight_recorder_dump.h"
#include "collectors/pickle_reader.h"
#include "core/whole_file.h"
#include "tests/support/rule_test_support.h"

namespace attrib::collectors {
namespace {

namespace fs = std::filesystem;

const fs::path kDumps = ATTRIB_FR_DUMPS;

TEST(PickleReader, ReadsARealDumpAsTheSameDataAsItsJsonForm) {
  auto pickled = read_pickle(attrib::read_whole_file(kDumps / "pickle" / "nccl_trace_rank_0").value_or(""));
  ASSERT_TRUE(pickled.ok()) << pickled.error().message;
  const auto json = nlohmann::json::parse(attrib::read_whole_file(kDumps / "json" / "nccl_trace_rank_0").value_or(""));
  ASSERT_EQ((*pickled)["entries"].size(), 4u);
  ASSERT_EQ(json["entries"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ((*pickled)["entries"][i]["collective_seq_id"], json["entries"][i]["collective_seq_id"]);
    EXPECT_EQ((*pickled)["entries"][i]["profiling_name"], "gloo:all_reduce");
    EXPECT_EQ((*pickled)["entries"][i]["process_group"], nlohmann::json::array({"0", "default_pg"}));
    EXPECT_EQ((*pickled)["entries"][i]["time_created_ns"], json["entries"][i]["time_created_ns"]);
  }
  EXPECT_EQ((*pickled)["pg_config"][""]["ranks"], "[0, 1, 2, 3]");
}

// A pickle that would run a command when Python loaded it: GLOBAL os.system, then REDUCE.
TEST(PickleReader, RefusesWhatNamesOrCallsCode) {
  const std::string code =
      "\x80\x02"
      "cos\nsystem\nq\x00X\x04\x00\x00\x00echo\x85R.";
  auto read = read_pickle(code);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, "COLLECT_E_DUMP");
  EXPECT_NE(read.error().message.find("refused: GLOBAL"), std::string::npos) << read.error().message;
  EXPECT_NE(read.error().message.find("at byte 2"), std::string::npos) << read.error().message;
}

TEST(PickleReader, ATruncatedDumpIsAnErrorNotACrash) {
  const std::string whole = attrib::read_whole_file(kDumps / "pickle" / "nccl_trace_rank_1").value_or("");
  for (size_t cut : {size_t{0}, size_t{1}, size_t{2}, whole.size() / 3, whole.size() / 2, whole.size() - 1}) {
    auto read = read_pickle(std::string_view(whole).substr(0, cut));
    EXPECT_FALSE(read.ok()) << "cut at " << cut;
  }
}

TEST(PickleReader, OneListReferredToOverAndOverIsRefusedNotExpanded) {
  // EMPTY_LIST BINPUT 0, then 20 times: MARK, BINGET 0 x4, LIST, BINPUT 0 -- each level
  // holds the one before four times (4^20 values once copied out).
  std::string bomb = "\x80\x02]q";
  bomb += '\0';
  bomb += "0";  // POP: only the memo keeps it
  for (int i = 0; i < 20; ++i) {
    bomb += i > 0 ? "0(" : "(";  // POP the level before: the memo holds it
    for (int k = 0; k < 4; ++k) bomb += std::string("h") + '\0';
    bomb += "lq";
    bomb += '\0';
  }
  bomb += ".";
  auto read = read_pickle(bomb);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message.find("values"), std::string::npos) << read.error().message;
}

TEST(FlightRecorderDump, EachRanksLastCollectivePerGroup) {
  for (const char* form : {"pickle", "json"}) {
    auto hung = read_flight_recorder_dump(attrib::read_whole_file(kDumps / form / "nccl_trace_rank_2").value_or(""));
    ASSERT_TRUE(hung.ok()) << form << ": " << hung.error().message;
    ASSERT_EQ(hung->size(), 1u);
    EXPECT_EQ(flight_recorder_line(2, (*hung)[0]),
              "attrib-flight-recorder: rank=2 pg=0 last_seq=3 last_op=gloo:all_reduce last_state=scheduled entries=3 "
              "ranks=0,1,2,3")
        << form;
    auto waiting = read_flight_recorder_dump(attrib::read_whole_file(kDumps / form / "nccl_trace_rank_0").value_or(""));
    ASSERT_TRUE(waiting.ok());
    EXPECT_EQ((*waiting)[0].last_seq, 4) << form;
  }
  EXPECT_FALSE(read_flight_recorder_dump("{\"entries\": []}").ok()) << "no version: not a dump";
  EXPECT_FALSE(read_flight_recorder_dump("{not json").ok());
}

class FlightRecorder : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "attrib-fr-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  // Ranks 0 and 1 ran on n1, ranks 2 and 3 on n2: each node's spool holds its ranks' dumps.
  void place(const std::string& node, int rank, const char* form = "pickle") {
    const fs::path dir = root_ / node / "77" / "user";
    fs::create_directories(dir);
    fs::copy_file(kDumps / form / ("nccl_trace_rank_" + std::to_string(rank)),
                  dir / ("nccl_trace_rank_" + std::to_string(rank)), fs::copy_options::overwrite_existing);
  }
  std::vector<Coverage> collect(const std::string& node, std::vector<LogLine>& lines) {
    auto collector = FlightRecorderCollector::create(YAML::Load("directory: " + (root_ / "{node}").string()));
    EXPECT_TRUE(collector.ok());
    CollectRequest request{"77", node, 0, INT64_MAX};
    request.owner_uid = static_cast<uint32_t>(getuid());
    return (*collector)->collect(request, [&](const LogLine& line) { lines.push_back(line); });
  }
  fs::path root_;
};

TEST_F(FlightRecorder, HandsOverOneUntrustedLinePerRankAndGroup) {
  place("n2", 2);
  place("n2", 3);
  std::vector<LogLine> lines;
  const auto coverage = collect("n2", lines);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].source, "flight_recorder");
  EXPECT_FALSE(lines[0].trusted);
  EXPECT_EQ(lines[0].text.rfind("attrib-flight-recorder: rank=2 pg=0 last_seq=3 ", 0), 0u) << lines[0].text;
  EXPECT_EQ(lines[1].text.rfind("attrib-flight-recorder: rank=3 pg=0 last_seq=4 ", 0), 0u) << lines[1].text;
  const auto dump = nlohmann::json::parse(attrib::read_whole_file(kDumps / "json" / "nccl_trace_rank_2").value_or(""));
  EXPECT_EQ(lines[0].time, std::optional<TimeUs>(dump["entries"][2]["time_created_ns"].get<int64_t>() / 1000))
      << "its last collective's time_created_ns";
  ASSERT_EQ(coverage.size(), 1u);
  EXPECT_EQ(coverage[0].status, CoverageStatus::Ok);
  EXPECT_EQ(coverage[0].detail, "2 dump(s)");
}

TEST_F(FlightRecorder, AnUnreadableDumpIsPartialCoverageNamingIt) {
  place("n1", 0);
  const fs::path broken = root_ / "n1" / "77" / "user" / "nccl_trace_rank_1";
  const std::string whole = attrib::read_whole_file(kDumps / "pickle" / "nccl_trace_rank_1").value_or("");
  std::ofstream(broken, std::ios::binary) << whole.substr(0, whole.size() / 2);
  std::vector<LogLine> lines;
  const auto coverage = collect("n1", lines);
  EXPECT_EQ(lines.size(), 1u) << "rank 0's dump still counts";
  EXPECT_EQ(coverage[0].status, CoverageStatus::Partial);
  EXPECT_NE(coverage[0].detail.find("nccl_trace_rank_1: "), std::string::npos) << coverage[0].detail;
}

TEST_F(FlightRecorder, NoDumpsIsEmptyCoverage) {
  std::vector<LogLine> lines;
  const auto coverage = collect("n1", lines);
  EXPECT_TRUE(lines.empty());
  EXPECT_EQ(coverage[0].status, CoverageStatus::Empty);
}

// The whole chain: the four ranks' real dumps on two nodes, read by the collector and
// judged by the shipped pack. Rank 2 (on n2) never joined all_reduce #4, in which ranks
// 0, 1 and 3 waited; the dumps' lines are facts for that, not listed evidence.
TEST_F(FlightRecorder, TheVerdictNamesTheRankTheOthersWaitedOn) {
  for (const char* form : {"pickle", "json"}) {
    place("n1", 0, form);
    place("n1", 1, form);
    place("n2", 2, form);
    place("n2", 3, form);
    std::vector<LogLine> lines;
    collect("n1", lines);
    collect("n2", lines);
    ASSERT_EQ(lines.size(), 4u);
    const Verdict v = test::attribute(test::job("FAILED", 1, {"n1", "n2"}), lines);
    ASSERT_TRUE(v.hung_rank.has_value()) << form;
    EXPECT_EQ(v.hung_rank->rank, 2);
    EXPECT_EQ(v.hung_rank->node, "n2");
    EXPECT_EQ(v.hung_rank->seq, 4);
    EXPECT_EQ(v.hung_rank->collective, "gloo:all_reduce");
    EXPECT_EQ(v.hung_rank->waiting_ranks, (std::vector<int64_t>{0, 1, 3}));
    EXPECT_EQ(v.hung_rank->evidence, "flight_recorder");
    EXPECT_EQ(v.hung_rank->summary,
              "rank 2 on n2 never joined collective #4 (gloo:all_reduce) of process group 0, which ranks 0,1,3 "
              "waited in (the ranks' flight-recorder dumps)");
    EXPECT_TRUE(v.unexplained.empty()) << "the dumps' lines are not evidence of their own";
    auto again = verdict_from_json(to_json(v));
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(to_json(*again), to_json(v));
  }
}

}  // namespace
}  // namespace attrib::collectors
