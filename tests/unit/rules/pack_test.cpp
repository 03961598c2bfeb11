// The shipped pack: every file loads, every inline example passes (checked at load),
// every Xid catalog row maps to a named event with a domain, a severity and an action.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <unistd.h>

#include "attrib/rules/engine.h"
#include "test_support.h"

namespace attrib {
namespace {

namespace fs = std::filesystem;

TEST(ShippedPack, LoadsWithAllInlineExamplesPassing) {
  rules::LoadOptions options;
  options.pack_dir = ATTRIB_RULES_PACK_DIR;
  auto pack = rules::load_rule_pack(options);
  ASSERT_TRUE(pack.ok()) << pack.error().code << ": " << pack.error().message;
  const auto stats = rules::pack_stats(**pack);
  EXPECT_EQ(stats.version, "1.0.0");
  EXPECT_EQ(rules::pack_version(**pack), "1.0.0");
  EXPECT_GE(stats.extraction_rules, 20u);
  EXPECT_GE(stats.correlation_rules, 15u);
  EXPECT_GE(stats.examples, stats.extraction_rules);
  const std::string hash = rules::pack_hash(**pack);
  ASSERT_EQ(hash.size(), std::string("sha256:").size() + 64);
  EXPECT_EQ(hash.rfind("sha256:", 0), 0u);
}

TEST(ShippedPack, EveryRuleFileInThePackDirectoryIsLoaded) {
  const auto pack = test::shipped_pack();
  ASSERT_TRUE(pack);
  const auto stats = rules::pack_stats(*pack);
  std::set<std::string> loaded;
  for (const auto& f : stats.files) loaded.insert(fs::path(f).filename().string());
  for (const auto& entry : fs::directory_iterator(ATTRIB_RULES_PACK_DIR)) {
    if (entry.path().extension() == ".yaml") {
      EXPECT_TRUE(loaded.count(entry.path().filename().string())) << entry.path() << " is not listed in pack.yaml";
    }
  }
  EXPECT_TRUE(loaded.count("xid-catalog.tsv"));
}

TEST(ShippedPack, HashIsStableAndTracksContent) {
  const fs::path copy = fs::temp_directory_path() / ("attrib-pack-copy-" + std::to_string(::getpid()));
  fs::remove_all(copy);
  fs::copy(ATTRIB_RULES_PACK_DIR, copy, fs::copy_options::recursive);
  rules::LoadOptions options;
  options.pack_dir = copy;
  auto first = rules::load_rule_pack(options);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(rules::pack_hash(**first), rules::pack_hash(*test::shipped_pack()));
  std::ofstream(copy / "slurm.yaml", std::ios::app) << "\n# a comment changes the bytes\n";
  auto second = rules::load_rule_pack(options);
  ASSERT_TRUE(second.ok());
  EXPECT_NE(rules::pack_hash(**second), rules::pack_hash(**first));
  fs::remove_all(copy);
}

// Reads the pack's own copy of the catalog, independently of the engine.
std::vector<std::vector<std::string>> read_tsv(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, '\t')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

TEST(XidCatalog, EveryRowMapsToANamedEventWithDomainSeverityAndAction) {
  const auto pack = test::shipped_pack();
  ASSERT_TRUE(pack);
  const auto rows = read_tsv(fs::path(ATTRIB_RULES_PACK_DIR) / "data" / "xid-catalog.tsv");
  ASSERT_GT(rows.size(), 1u);
  const auto entries = rules::catalog_entries(*pack, "xid");
  ASSERT_EQ(entries.size(), rows.size() - 1) << "catalog rows and engine entries differ";

  const std::set<std::string> domains = {"GPU_HARDWARE", "GPU_DRIVER", "NVLINK_FABRIC", "APPLICATION",
                                         "HOST_HARDWARE", "UNATTRIBUTED"};
  const std::set<std::string> severities = {"fatal", "job-fatal", "degraded", "benign"};
  const std::set<std::string> actions = {"NONE", "RESUBMIT", "FIX_APPLICATION", "DRAIN_NODE", "RESET_GPU",
                                         "REBOOT_NODE", "INSPECT_FABRIC", "CONTACT_VENDOR", "FIX_CONFIGURATION"};
  std::set<std::string> keys;
  for (const auto& e : entries) {
    keys.insert(e.key);
    EXPECT_FALSE(e.name.empty()) << "Xid " << e.key;
    EXPECT_TRUE(domains.count(e.domain)) << "Xid " << e.key << " domain " << e.domain;
    EXPECT_TRUE(severities.count(e.severity)) << "Xid " << e.key;
    EXPECT_TRUE(actions.count(e.action)) << "Xid " << e.key << " action " << e.action;
    if (e.severity == "benign" || e.domain_hint == "UNKNOWN") {
      EXPECT_FALSE(e.root_eligible) << "Xid " << e.key;
    }
  }
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_TRUE(keys.count(rows[i][0])) << "row for Xid " << rows[i][0] << " maps to nothing";

  // Spot checks against the reference README's mapping.
  auto find = [&](const std::string& key) {
    return *std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.key == key; });
  };
  EXPECT_EQ(find("79").domain, "GPU_HARDWARE");
  EXPECT_EQ(find("79").action, "DRAIN_NODE");
  EXPECT_EQ(find("119").domain, "GPU_DRIVER");    // GPU_DRIVER_FIRMWARE
  EXPECT_EQ(find("54").domain, "GPU_HARDWARE");   // THERMAL_POWER
  EXPECT_EQ(find("13").action, "FIX_APPLICATION");
  EXPECT_FALSE(find("1").root_eligible);           // UNKNOWN
  EXPECT_FALSE(find("154").root_eligible);         // benign
}

// Every catalog row, fed through the engine as a real kernel line, yields the catalog's
// domain when it can be a root, and never a verdict from a row that cannot.
TEST(XidCatalog, EveryRowDrivesTheVerdictThroughTheEngine) {
  const auto pack = test::shipped_pack();
  ASSERT_TRUE(pack);
  for (const auto& entry : rules::catalog_entries(*pack, "xid")) {
    const auto facts = test::job("FAILED", 1, {"n1"});
    const std::string line = "NVRM: Xid (PCI:0000:3b:00): " + entry.key + ", pid='<unknown>', name=<unknown>, test";
    const auto v = test::attribute(facts, {test::kernel_line("n1", line, test::at("2026-11-30T10:05:00Z"), 1)});
    const bool root = entry.root_eligible && (entry.severity == "fatal" || entry.severity == "job-fatal");
    if (root) {
      EXPECT_EQ(v.domain, entry.domain) << "Xid " << entry.key;
      EXPECT_EQ(v.recommended_action, entry.action) << "Xid " << entry.key;
      ASSERT_TRUE(v.root_cause.has_value()) << "Xid " << entry.key;
      EXPECT_NE(v.root_cause->summary.find("Xid " + entry.key), std::string::npos) << v.root_cause->summary;
    } else {
      EXPECT_EQ(v.domain, "UNATTRIBUTED") << "Xid " << entry.key;
      ASSERT_EQ(v.unexplained.size(), 1u) << "Xid " << entry.key;
    }
  }
}

}  // namespace
}  // namespace attrib
