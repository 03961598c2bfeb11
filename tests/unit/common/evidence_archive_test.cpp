// The packed, zstd-compressed form the archive keeps raw evidence in.
#include "common/evidence_archive.h"

#include <gtest/gtest.h>

namespace attrib::common {
namespace {

TEST(EvidenceArchive, FilesSurvivePackingExactlyAndLogTextShrinks) {
  PackedFiles files;
  files["job.json"] = "{\"job_id\": \"7\"}\n";
  files["n1/kernel.jsonl"] = "";  // read, said nothing
  std::string lines;
  for (int i = 0; i < 2000; ++i)
    lines += "{\"MESSAGE\":\"NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>'\",\"ATTRIB_SEQ\":\"" + std::to_string(i) +
             "\"}\n";
  files["n2/kernel.jsonl"] = lines;
  files["n2/app.jsonl"] = std::string("binary \0 and\nnewlines\n", 22);
  const std::string blob = pack_evidence(files);
  ASSERT_FALSE(blob.empty());
  EXPECT_LT(blob.size(), lines.size() / 5);
  auto back = unpack_evidence(blob);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, files);
}

TEST(EvidenceArchive, ADamagedBlobIsAClearErrorNotACrash) {
  PackedFiles files{{"job.json", "{}"}, {"n1/kernel.jsonl", "line\n"}};
  const std::string blob = pack_evidence(files);
  EXPECT_EQ(unpack_evidence("not zstd at all").error().code, "EVIDENCE_E_UNPACK");
  EXPECT_EQ(unpack_evidence(blob.substr(0, blob.size() / 2)).error().code, "EVIDENCE_E_UNPACK");
  for (size_t at : {blob.size() / 2, blob.size() - 3}) {  // a damaged byte: the checksum says so
    std::string flipped = blob;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x5a);
    EXPECT_EQ(unpack_evidence(flipped).error().code, "EVIDENCE_E_UNPACK") << at;
  }
  EXPECT_EQ(unpack_evidence("").error().code, "EVIDENCE_E_UNPACK");
}

}  // namespace
}  // namespace attrib::common
