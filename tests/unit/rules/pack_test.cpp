// The shipped pack: every file loads, every inline example passes (checked at load),
// every row of the three NVIDIA tables (Xid catalog, NVLink5 Xid 144-150 decode, NVSwitch
// SXid catalog) maps to a named event with a domain, a severity and an action.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "rules/engine.h"
#include "rules/rule_pack.h"
#include "tests/support/rule_test_support.h"
#include "tests/support/test_paths.h"

namespace attrib {
namespace {

namespace fs = std::filesystem;

TEST(ShippedPack, LoadsWithAllInlineExamplesPassing) {
  rules::LoadOptions options;
  options.pack_dir = attrib::test::rules_pack_dir();
  auto pack = rules::load_rule_pack(options);
  ASSERT_TRUE(pack.ok()) << pack.error().code << ": " << pack.error().message;
  const auto stats = rules::pack_stats(**pack);
  EXPECT_EQ(stats.version, "1.8.1");
  EXPECT_EQ(rules::pack_version(**pack), "1.8.1");
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
  for (const auto& entry : fs::directory_iterator(attrib::test::rules_pack_dir())) {
    if (entry.path().extension() == ".yaml") {
      EXPECT_TRUE(loaded.count(entry.path().filename().string())) << entry.path() << " is not listed in pack.yaml";
    }
  }
  EXPECT_TRUE(loaded.count("xid-catalog.tsv"));
}

TEST(ShippedPack, EveryExtractedKindIsARootASymptomOrDeclaredBenign) {
  // An event no rule weighs would sit in every verdict's `unexplained` without anyone
  // having decided that it means nothing (docs/rules.md, "Every kind has a role").
  const auto pack = test::shipped_pack();
  ASSERT_TRUE(pack);
  const auto roles = rules::kind_roles(*pack);
  EXPECT_GE(roles.size(), 50u);
  for (const auto& role : roles) {
    EXPECT_TRUE(!role.roots.empty() || !role.explained_by.empty() || role.benign) << role.kind << " has no role";
    if (role.benign) {
      EXPECT_TRUE(role.roots.empty()) << role.kind;
    }
  }
  const auto nothing = std::find_if(roles.begin(), roles.end(), [](const auto& r) { return r.kind == "fm.no_nvswitch"; });
  ASSERT_NE(nothing, roles.end());
  EXPECT_TRUE(nothing->benign);
}

TEST(ShippedPack, HashIsStableAndTracksContent) {
  const fs::path copy = fs::temp_directory_path() / ("attrib-pack-copy-" + std::to_string(::getpid()));
  fs::remove_all(copy);
  fs::copy(attrib::test::rules_pack_dir(), copy, fs::copy_options::recursive);
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

size_t column(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  EXPECT_NE(it, header.end()) << "no column " << name;
  return static_cast<size_t>(it - header.begin());
}

// One data table, read here independently of the loader: which columns make a row's
// identity (the engine's CatalogEntry::key joins them with '|').
struct TableSpec {
  std::string catalog;                   // name in pack.yaml
  std::string file;                      // under data/
  std::vector<std::string> key_columns;  // key column, then the decode columns
};

const std::vector<TableSpec>& table_specs() {
  static const std::vector<TableSpec> specs = {
      {"xid", "xid-catalog.tsv", {"xid"}},
      {"nvlink5",
       "xid-nvlink5-decode.tsv",
       {"xid", "intrinfo_mask_v1_pre_r575", "intrinfo_mask_v2_r575plus", "action2_mask_v1", "action2_mask_v2",
        "error_status_hex", "subunit"}},
      {"sxid", "sxid-catalog.tsv", {"sxid"}},
  };
  return specs;
}

class CatalogRows : public ::testing::TestWithParam<TableSpec> {};

TEST_P(CatalogRows, EveryRowMapsToANamedEventWithDomainSeverityAndAction) {
  const auto& spec = GetParam();
  const auto pack = test::shipped_pack();
  ASSERT_TRUE(pack);
  const auto rows = read_tsv(fs::path(attrib::test::rules_pack_dir()) / "data" / spec.file);
  ASSERT_GT(rows.size(), 1u);
  const auto entries = rules::catalog_entries(*pack, spec.catalog);
  ASSERT_EQ(entries.size(), rows.size() - 1) << spec.catalog << ": table rows and engine entries differ";

  const std::set<std::string> domains = {"GPU_HARDWARE", "GPU_DRIVER",    "NVLINK_FABRIC",
                                         "APPLICATION",  "HOST_HARDWARE", "UNATTRIBUTED"};
  const std::set<std::string> severities = {"fatal", "job-fatal", "degraded", "benign"};
  const std::set<std::string> actions = {"NONE",           "RESUBMIT",       "FIX_APPLICATION",
                                         "DRAIN_NODE",     "RESET_GPU",      "REBOOT_NODE",
                                         "INSPECT_FABRIC", "CONTACT_VENDOR", "FIX_CONFIGURATION"};
  std::set<std::string> keys;
  for (const auto& e : entries) {
    keys.insert(e.key);
    EXPECT_FALSE(e.name.empty()) << spec.catalog << " " << e.key;
    EXPECT_TRUE(domains.count(e.domain)) << spec.catalog << " " << e.key << " domain " << e.domain;
    EXPECT_TRUE(severities.count(e.severity)) << spec.catalog << " " << e.key;
    EXPECT_TRUE(actions.count(e.action)) << spec.catalog << " " << e.key << " action " << e.action;
    if (e.severity == "benign" || e.domain == "UNATTRIBUTED") {
      EXPECT_FALSE(e.root_eligible) << spec.catalog << " " << e.key;
    }
  }
  // Every row of the file, by its own identity: a dropped or merged row maps to nothing.
  std::vector<size_t> cols;
  for (const auto& c : spec.key_columns) cols.push_back(column(rows[0], c));
  for (size_t i = 1; i < rows.size(); ++i) {
    std::string key;
    for (size_t c = 0; c < cols.size(); ++c) {
      if (c) key += "|";
      key += cols[c] < rows[i].size() ? rows[i][cols[c]] : "";
    }
    EXPECT_TRUE(keys.count(key)) << spec.file << " line " << i + 1 << " (" << key << ") maps to nothing";
  }
}

INSTANTIATE_TEST_SUITE_P(ShippedTables, CatalogRows, ::testing::ValuesIn(table_specs()),
                         [](const auto& info) { return info.param.catalog; });

TEST(XidCatalog, SpotChecksAgainstTheReferenceMapping) {
  const auto pack = test::shipped_pack();
  ASSERT_TRUE(pack);
  const auto entries = rules::catalog_entries(*pack, "xid");
  auto find = [&](const std::string& key) {
    return *std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.key == key; });
  };
  EXPECT_EQ(find("79").domain, "GPU_HARDWARE");
  EXPECT_EQ(find("79").action, "DRAIN_NODE");
  EXPECT_EQ(find("119").domain, "GPU_DRIVER");   // GPU_DRIVER_FIRMWARE
  EXPECT_EQ(find("54").domain, "GPU_HARDWARE");  // THERMAL_POWER
  EXPECT_EQ(find("13").action, "FIX_APPLICATION");
  EXPECT_FALSE(find("1").root_eligible);    // UNKNOWN
  EXPECT_FALSE(find("154").root_eligible);  // benign
}

TEST(SxidCatalog, SeverityAndActionFollowTheTable) {
  const auto pack = test::shipped_pack();
  ASSERT_TRUE(pack);
  const auto entries = rules::catalog_entries(*pack, "sxid");
  auto find = [&](const std::string& key) {
    return *std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.key == key; });
  };
  EXPECT_EQ(find("20034").severity, "fatal");
  EXPECT_EQ(find("20034").action, "RESET_GPU");
  EXPECT_EQ(find("20034").domain, "NVLINK_FABRIC");
  EXPECT_EQ(find("22013").severity, "benign");  // NONFATAL, IGNORE
  EXPECT_FALSE(find("22013").root_eligible);
  EXPECT_EQ(find("10004").domain, "HOST_HARDWARE");  // the switch's thermal event
  EXPECT_EQ(find("11004").action, "FIX_CONFIGURATION");
  EXPECT_EQ(find("28006").name, "OSFP module thermal");
}

// Each decode row is found again from the words an Xid 144-150 line carries: IntrInfo
// built from the row's mask (either layout), ErrorStatus, the printed unit name.
TEST(Nvlink5Decode, EveryRowIsFoundFromTheFieldsOfItsXidLine) {
  const auto pack = test::shipped_pack();
  ASSERT_TRUE(pack);
  const auto& table = pack->catalogs.at("nvlink5");
  const auto rows = read_tsv(fs::path(attrib::test::rules_pack_dir()) / "data" / "xid-nvlink5-decode.tsv");
  const auto& h = rows[0];
  const size_t xid = column(h, "xid"), v1 = column(h, "intrinfo_mask_v1_pre_r575"),
               v2 = column(h, "intrinfo_mask_v2_r575plus"), status = column(h, "error_status_hex"),
               subunit = column(h, "subunit");
  auto value_of = [](const std::string& mask) {
    uint64_t v = 0;
    for (char c : mask) v = (v << 1) | (c == '1' ? 1u : 0u);
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08llx", static_cast<unsigned long long>(v));
    return std::string(buf);
  };
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    std::string st = r[status].empty() ? "0x00000000" : r[status].substr(0, r[status].find('/'));
    const std::string name =
        r[subunit].substr(r[subunit].rfind('/') == std::string::npos ? 0 : r[subunit].rfind('/') + 1);
    for (size_t mask : {v1, v2}) {
      const nlohmann::json fields = {
          {"xid", std::stoi(r[xid])}, {"intr_info", value_of(r[mask])}, {"error_status", st}, {"subunit", name}};
      const auto* entry = rules::detail::find_catalog_entry(table, r[xid], fields);
      ASSERT_NE(entry, nullptr) << "line " << i + 1 << " " << fields.dump();
      const std::string expected = r[xid] + "|" + r[v1] + "|" + r[v2];
      EXPECT_EQ(entry->key.rfind(expected, 0), 0u) << "line " << i + 1 << " decoded as " << entry->key;
      EXPECT_NE(entry->key.find("|" + r[status] + "|" + r[subunit]), std::string::npos)
          << "line " << i + 1 << " decoded as " << entry->key;
    }
  }
}

// Real NVLink5 lines through the engine: a decoded-fatal report is the root and its
// summary names the decoded unit; a non-fatal one is never a cause.
TEST(Nvlink5Decode, FatalRowsDecideTheVerdictAndNonFatalOnesDoNot) {
  const auto facts = test::job("FAILED", 1, {"n1"});
  const auto fatal =
      test::attribute(facts, {test::kernel_line("n1",
                                                "NVRM: Xid (PCI:0018:01:00): 145, RLW_REMAP Fatal XC0 i0 Link 13 "
                                                "(0x0409a082 0x00000040 0x00000000 0x00000000 0x00000000 0x00000000)",
                                                test::at("2026-11-30T10:05:00Z"), 1)});
  EXPECT_EQ(fatal.domain, "NVLINK_FABRIC");
  EXPECT_EQ(fatal.recommended_action, "RESET_GPU");
  ASSERT_TRUE(fatal.root_cause.has_value());
  EXPECT_EQ(fatal.root_cause->rule, "gpu.nvlink5_fatal");
  EXPECT_NE(fatal.root_cause->summary.find("RLW_REMAP"), std::string::npos) << fatal.root_cause->summary;

  const auto nonfatal =
      test::attribute(facts, {test::kernel_line("n1",
                                                "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 "
                                                "(0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)",
                                                test::at("2026-11-30T10:05:00Z"), 1)});
  EXPECT_EQ(nonfatal.domain, "UNATTRIBUTED");
  EXPECT_FALSE(nonfatal.root_cause.has_value());
}

// The decode's secondary action: RLW_RXPIPE's Non-fatal* rows need a GPU reset when
// IntrInfo bit 10 is set (the action2 masks); without the bit the report stays no cause.
TEST(Nvlink5Decode, SecondaryActionResetsTheGpuWhenIntrInfoBit10IsSet) {
  const auto pack = test::shipped_pack();
  ASSERT_TRUE(pack);
  const auto& table = pack->catalogs.at("nvlink5");
  const nlohmann::json clear = {
      {"xid", 145}, {"intr_info", "0x0409a0c2"}, {"error_status", "0x00000001"}, {"subunit", "RLW_RXPIPE"}};
  nlohmann::json set = clear;
  set["intr_info"] = "0x0409a4c2";  // bit 10
  const auto* plain = rules::detail::find_catalog_entry(table, "145", clear);
  const auto* secondary = rules::detail::find_catalog_entry(table, "145", set);
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(secondary, nullptr);
  EXPECT_EQ(plain->action, "NONE");
  EXPECT_EQ(plain->severity, "degraded");
  EXPECT_EQ(secondary->action, "RESET_GPU");
  EXPECT_EQ(secondary->severity, "degraded");  // still the same row: non-fatal, remote packet loss
  EXPECT_EQ(secondary->name, plain->name);
  EXPECT_EQ(secondary->key, plain->key + "|action2");
  // The R575+ layout's action2 mask names the same secondary action.
  set["intr_info"] = "0x00000086";
  const auto* v2 = rules::detail::find_catalog_entry(table, "145", set);
  ASSERT_NE(v2, nullptr);
  EXPECT_EQ(v2->action, "RESET_GPU");

  const auto facts = test::job("FAILED", 1, {"n1"});
  const auto v =
      test::attribute(facts, {test::kernel_line("n1",
                                                "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 "
                                                "(0x0409a4c2 0x00000001 0x00000001 0x00000000 0x00100000 0x00000004)",
                                                test::at("2026-11-30T10:05:00Z"), 1)});
  EXPECT_EQ(v.domain, "NVLINK_FABRIC");
  EXPECT_EQ(v.recommended_action, "RESET_GPU");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "gpu.nvlink5_secondary_reset");
  EXPECT_NE(v.root_cause->summary.find("RLW_RXPIPE"), std::string::npos) << v.root_cause->summary;
  EXPECT_NE(v.root_cause->summary.find("0x0409a4c2"), std::string::npos) << v.root_cause->summary;

  const auto without =
      test::attribute(facts, {test::kernel_line("n1",
                                                "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 "
                                                "(0x0409a0c2 0x00000001 0x00000001 0x00000000 0x00100000 0x00000004)",
                                                test::at("2026-11-30T10:05:00Z"), 1)});
  EXPECT_EQ(without.domain, "UNATTRIBUTED");
  EXPECT_FALSE(without.root_cause.has_value());
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
