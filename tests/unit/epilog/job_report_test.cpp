// attrib-epilog encodes attrib.v1.JobEnded by hand (it links no protobuf): every field,
// at every wire type and edge, must decode with the real parser to what the message says,
// and to the same message protobuf's own serializer would have written.
#include "epilog/job_report.h"

#include <limits>

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "attrib/v1/attrib.pb.h"

namespace attrib::epilog {
namespace {

v1::JobEnded Decode(const JobReport& report) {
  v1::JobEnded message;
  EXPECT_TRUE(message.ParseFromString(encode_job_ended(report)));
  return message;
}

TEST(JobReport, EveryFieldDecodesWithProtobuf) {
  JobReport r;
  r.job_id = "4242_7";
  r.cluster = "lab";
  r.node_list = "gpu[001-002,017]";
  r.exit_code = -1;  // int32 negatives take ten bytes on the wire
  r.signal = 9;
  r.state = "NODE_FAIL";
  r.hook = HookKind::JobcompScript;
  r.spank_options = {{"attrib_attrib", "off"}, {"attrib_attrib_evidence", ""}, {"x", std::string(300, 'v')}};
  r.hook_time_us = 1796034001000000;
  r.user = "älice";
  r.uid = std::numeric_limits<uint32_t>::max();
  r.start_time_us = 1796030400000000;
  r.end_time_us = 1796034000000000;
  r.job_name = std::string(200, 'n');  // a length over one varint byte
  r.stdout_path = "/home/alice/slurm-%j.out";
  r.stderr_path = "/home/alice/slurm-%j.err";
  r.slurm_job_id = "4249";
  r.het_job_offset = 0;  // present at 0: proto3 `optional`

  const v1::JobEnded m = Decode(r);
  v1::JobEnded want;
  want.set_job_id("4242_7");
  want.set_cluster("lab");
  want.set_node_list("gpu[001-002,017]");
  want.set_exit_code(-1);
  want.set_signal(9);
  want.set_state("NODE_FAIL");
  want.set_hook(v1::HOOK_KIND_JOBCOMP_SCRIPT);
  (*want.mutable_spank_options())["attrib_attrib"] = "off";
  (*want.mutable_spank_options())["attrib_attrib_evidence"] = "";
  (*want.mutable_spank_options())["x"] = std::string(300, 'v');
  want.set_hook_time_us(1796034001000000);
  want.set_user("älice");
  want.set_uid(std::numeric_limits<uint32_t>::max());
  want.set_start_time_us(1796030400000000);
  want.set_end_time_us(1796034000000000);
  want.set_job_name(std::string(200, 'n'));
  want.set_stdout_path("/home/alice/slurm-%j.out");
  want.set_stderr_path("/home/alice/slurm-%j.err");
  want.set_slurm_job_id("4249");
  want.set_het_job_offset(0);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(m, want)) << m.DebugString();
  EXPECT_TRUE(m.has_het_job_offset());

  // Byte for byte what protobuf writes (maps aside, whose order is its own choice).
  v1::JobEnded without_map = want;
  without_map.clear_spank_options();
  JobReport r_without_map = r;
  r_without_map.spank_options.clear();
  EXPECT_EQ(encode_job_ended(r_without_map), without_map.SerializeAsString());
}

TEST(JobReport, DefaultsAreLeftOutAsProto3Does) {
  JobReport r;
  r.job_id = "1";
  EXPECT_EQ(encode_job_ended(r), std::string("\x0a\x01"
                                             "1",
                                             3));
  const v1::JobEnded m = Decode(r);
  EXPECT_FALSE(m.has_het_job_offset());
  EXPECT_EQ(m.hook(), v1::HOOK_KIND_UNSPECIFIED);
}

TEST(JobReport, TheUsersBytesBecomeValidUtf8BeforeTheyAreEncoded) {
  auto r = job_report_from_env({{"SLURM_JOB_ID", "9"},
                                {"SLURM_JOB_NAME", std::string("bad\xff\xfename")},
                                {"SPANK__SLURM_SPANK_OPTION_p_\xc3", std::string("v\x80")}},
                               1);
  ASSERT_TRUE(r) << r.error().message;
  v1::JobEnded m;
  ASSERT_TRUE(m.ParseFromString(encode_job_ended(*r)));  // proto3 refuses strings that are not UTF-8
  EXPECT_EQ(m.job_name().find('\xff'), std::string::npos);
  ASSERT_EQ(m.spank_options_size(), 1);
}

TEST(JobReport, DescribeListsWhatIsSet) {
  auto r = job_report_from_env({{"SLURM_JOB_ID", "17"}, {"SLURM_JOB_EXIT_CODE2", "3:0"}}, 5);
  ASSERT_TRUE(r);
  EXPECT_EQ(describe(*r),
            "job_id: 17\nexit_code: 3\nhook: HOOK_KIND_EPILOG_SLURMCTLD\nhook_time_us: 5\nslurm_job_id: 17\n");
}

}  // namespace
}  // namespace attrib::epilog
