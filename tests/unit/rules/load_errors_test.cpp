// Load errors carry a stable code and name file:line and the field.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "rules/engine.h"

namespace attrib {
namespace {

namespace fs = std::filesystem;

constexpr const char* kGoodRule = R"(extract:
  - id: test.xid
    kind: gpu.xid
    sources: [kernel]
    prefilter: "NVRM: Xid"
    regex: 'NVRM: Xid \(PCI:(?P<pci>[0-9a-f:]+)\): (?P<xid>\d+)'
    fields: {pci: string, xid: int}
    examples:
      match:
        - line: "NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus."
          fields: {xid: 79}
correlate:
  - id: test.gpu
    precedence: 100
    domain: GPU_HARDWARE
    action: DRAIN_NODE
    root: {kind: gpu.xid, where: {xid: 79}}
    summary: "GPU {pci} on {node}"
)";

class TempPack : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attrib-rules-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "data");
    write("pack.yaml", "name: test\nversion: 0.0.1\nrule_files: [bad.yaml]\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }

  Error load_error(std::vector<fs::path> site_dirs = {}) {
    rules::LoadOptions options;
    options.pack_dir = dir_;
    options.site_dirs = std::move(site_dirs);
    auto result = rules::load_rule_pack(options);
    if (result.ok()) {
      ADD_FAILURE() << "pack loaded but should not have";
      return Error{};
    }
    return result.error();
  }

  fs::path dir_;
};

TEST_F(TempPack, GoodRuleLoads) {
  write("bad.yaml", kGoodRule);
  rules::LoadOptions options;
  options.pack_dir = dir_;
  auto result = rules::load_rule_pack(options);
  ASSERT_TRUE(result.ok()) << result.error().message;
}

TEST_F(TempPack, YamlSyntaxError) {
  write("bad.yaml", "extract:\n  - id: x\n    kind: [unclosed\n");
  const Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_YAML");
  EXPECT_NE(e.message.find("bad.yaml:"), std::string::npos) << e.message;
}

TEST_F(TempPack, BadRegexNamesFileLineAndField) {
  std::string text = kGoodRule;
  text.replace(text.find("(?P<xid>\\d+)"), 12, "(?P<xid>\\d+");
  write("bad.yaml", text);
  const Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_REGEX");
  EXPECT_NE(e.message.find("bad.yaml:6: extract.test.xid.regex"), std::string::npos) << e.message;
}

TEST_F(TempPack, UntypedCaptureIsARegexError) {
  std::string text = kGoodRule;
  const std::string typed = "fields: {pci: string, xid: int}";
  text.replace(text.find(typed), typed.size(), "fields: {pci: string}");
  write("bad.yaml", text);
  const Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_REGEX");
  EXPECT_NE(e.message.find("'xid'"), std::string::npos) << e.message;
}

TEST_F(TempPack, FailingExampleNamesItsLine) {
  std::string text = kGoodRule;
  text.replace(text.find("fields: {xid: 79}"), 17, "fields: {xid: 48}");
  write("bad.yaml", text);
  const Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_EXAMPLE");
  EXPECT_NE(e.message.find("bad.yaml:10:"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("expected 48"), std::string::npos) << e.message;
}

TEST_F(TempPack, NoMatchExampleThatMatches) {
  std::string text = kGoodRule;
  text.insert(text.find("correlate:"), "      no_match:\n        - \"NVRM: Xid (PCI:0000:02:00): 13, x\"\n");
  write("bad.yaml", text);
  const Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_EXAMPLE");
  EXPECT_NE(e.message.find("bad.yaml:13:"), std::string::npos) << e.message;
}

TEST_F(TempPack, UnknownKeyIsAFieldError) {
  std::string text = kGoodRule;
  text.insert(text.find("    sources: [kernel]"), "    sauces: [kernel]\n");
  write("bad.yaml", text);
  const Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_FIELD");
  EXPECT_NE(e.message.find("bad.yaml:4: extract[0].sauces"), std::string::npos) << e.message;
}

TEST_F(TempPack, UnknownSourceDomainAndAction) {
  std::string text = kGoodRule;
  text.replace(text.find("[kernel]"), 8, "[dmesg]");
  write("bad.yaml", text);
  EXPECT_EQ(load_error().code, "RULE_E_FIELD");

  text = kGoodRule;
  text.replace(text.find("domain: GPU_HARDWARE"), 20, "domain: GPU_HARDWAR");
  write("bad.yaml", text);
  const Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_FIELD");
  EXPECT_NE(e.message.find("bad.yaml:15: correlate[0].domain"), std::string::npos) << e.message;
}

TEST_F(TempPack, ReferenceToAnUnknownKind) {
  std::string text = kGoodRule;
  text.insert(text.find("    summary:"), "    explains: [nccl.watchdog_timeout]\n");
  write("bad.yaml", text);
  const Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_REF");
  EXPECT_NE(e.message.find("nccl.watchdog_timeout"), std::string::npos) << e.message;
}

TEST_F(TempPack, ConditionOnAFieldTheKindDoesNotHave) {
  std::string text = kGoodRule;
  text.replace(text.find("where: {xid: 79}"), 16, "where: {link: 3}");
  write("bad.yaml", text);
  EXPECT_EQ(load_error().code, "RULE_E_REF");
}

TEST_F(TempPack, HardwareRootFromUntrustedEvidenceIsRefused) {
  std::string text = kGoodRule;
  text.replace(text.find("where: {xid: 79}}"), 17, "where: {xid: 79}, trusted: false}");
  write("bad.yaml", text);
  const Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_TRUST");
  EXPECT_NE(e.message.find("bad.yaml:17:"), std::string::npos) << e.message;
}

TEST_F(TempPack, UntrustedHardwareInferenceLoadsOnlyAsLowConfidenceThatNeverDrains) {
  // low + untrusted + a drain: refused (a user's printout must not drain a node).
  std::string text = kGoodRule;
  text.replace(text.find("where: {xid: 79}}"), 17, "where: {xid: 79}, trusted: false}");
  text.insert(text.find("    root:"), "    confidence: low\n");
  write("bad.yaml", text);
  Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_TRUST");
  EXPECT_NE(e.message.find("never drains"), std::string::npos) << e.message;

  // low + untrusted + no action: a low-confidence inference, which loads.
  text.replace(text.find("action: DRAIN_NODE"), 18, "action: NONE");
  write("bad.yaml", text);
  rules::LoadOptions options;
  options.pack_dir = dir_;
  auto loaded = rules::load_rule_pack(options);
  EXPECT_TRUE(loaded.ok()) << loaded.error().message;
}

TEST_F(TempPack, ABenignKindMustBeExtractedAndNeverARoot) {
  write("bad.yaml", std::string(kGoodRule) + "benign: [gpu.nvlink]\n");
  Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_REF");
  EXPECT_NE(e.message.find("no extraction rule produces kind 'gpu.nvlink'"), std::string::npos) << e.message;

  write("bad.yaml", std::string(kGoodRule) + "benign: [gpu.xid]\n");
  e = load_error();
  EXPECT_EQ(e.code, "RULE_E_REF");
  EXPECT_NE(e.message.find("declared benign but is the root of test.gpu"), std::string::npos) << e.message;
}

TEST_F(TempPack, UnknownConfidence) {
  std::string text = kGoodRule;
  text.insert(text.find("    root:"), "    confidence: certain\n");
  write("bad.yaml", text);
  const Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_FIELD");
  EXPECT_NE(e.message.find("confidence"), std::string::npos) << e.message;
}

TEST_F(TempPack, UnknownSummaryPlaceholder) {
  std::string text = kGoodRule;
  text.replace(text.find("{pci}"), 5, "{bus}");
  write("bad.yaml", text);
  const Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_TEMPLATE");
  EXPECT_NE(e.message.find("bad.yaml:18:"), std::string::npos) << e.message;
}

// root.distinct (docs/rules.md): shape errors name file:line and the field, a field the
// root kind lacks is a reference error, its placeholders exist only with it.
TEST_F(TempPack, DistinctRootCondition) {
  const std::string root = "root: {kind: gpu.xid, where: {xid: 79}}";
  auto with_root = [&](const std::string& replacement, const std::string& summary = "GPU {pci} on {node}") {
    std::string text = kGoodRule;
    text.replace(text.find(root), root.size(), replacement);
    text.replace(text.find("GPU {pci} on {node}"), 19, summary);
    write("bad.yaml", text);
  };
  with_root("root: {kind: gpu.xid, distinct: {field: xid, scope: same_gpu}}",
            "GPU {pci} on {node}: {distinct.count} Xids ({distinct.values})");
  rules::LoadOptions options;
  options.pack_dir = dir_;
  auto loaded = rules::load_rule_pack(options);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;

  with_root("root: {kind: gpu.xid, distinct: {field: xid, at_least: 1}}");
  Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_FIELD");
  EXPECT_NE(e.message.find("bad.yaml:17: correlate[0].root.distinct.at_least: must be 2..1000"), std::string::npos)
      << e.message;

  with_root("root: {kind: gpu.xid, distinct: {field: xid, atleast: 2}}");
  e = load_error();
  EXPECT_EQ(e.code, "RULE_E_FIELD");
  EXPECT_NE(e.message.find("bad.yaml:17: correlate[0].root.distinct.atleast"), std::string::npos) << e.message;

  with_root("root: {kind: gpu.xid, distinct: {at_least: 2}}");
  e = load_error();
  EXPECT_EQ(e.code, "RULE_E_FIELD");
  EXPECT_NE(e.message.find("correlate[0].root.distinct.field: missing required key"), std::string::npos) << e.message;

  with_root("root: {kind: gpu.xid, distinct: pid}");
  e = load_error();
  EXPECT_EQ(e.code, "RULE_E_FIELD");
  EXPECT_NE(e.message.find("bad.yaml:17: correlate[0].root.distinct: expected a map"), std::string::npos) << e.message;

  with_root("root: {kind: gpu.xid, distinct: {field: pid, scope: same_gpu}}");
  e = load_error();
  EXPECT_EQ(e.code, "RULE_E_REF");
  EXPECT_NE(e.message.find("bad.yaml:17: correlate.test.gpu.root.distinct.field: kind 'gpu.xid' has no field 'pid'"),
            std::string::npos)
      << e.message;

  with_root("root: {kind: gpu.xid, where: {xid: 79}}", "GPU {pci}: {distinct.count}");
  e = load_error();
  EXPECT_EQ(e.code, "RULE_E_TEMPLATE");
  EXPECT_NE(e.message.find("{distinct.count}"), std::string::npos) << e.message;
}

TEST_F(TempPack, DuplicateIds) {
  write("bad.yaml", std::string(kGoodRule));
  write("pack.yaml", "name: test\nversion: 0.0.1\nrule_files: [bad.yaml, bad.yaml]\n");
  EXPECT_EQ(load_error().code, "RULE_E_DUPLICATE");
}

TEST_F(TempPack, SiteOverrideMustBeExplicit) {
  write("bad.yaml", kGoodRule);
  const fs::path site = dir_ / "site";
  fs::create_directories(site);
  std::ofstream(site / "local.yaml") << kGoodRule;
  const Error e = load_error({site});
  EXPECT_EQ(e.code, "RULE_E_OVERRIDE");
  EXPECT_NE(e.message.find("local.yaml:2:"), std::string::npos) << e.message;

  // With `override: true` on both rules the site copy replaces the shipped one.
  std::string overriding = kGoodRule;
  overriding.insert(overriding.find("    kind: gpu.xid"), "    override: true\n");
  overriding.insert(overriding.find("    precedence: 100"), "    override: true\n");
  std::ofstream(site / "local.yaml") << overriding;
  rules::LoadOptions options;
  options.pack_dir = dir_;
  options.site_dirs = {site};
  auto result = rules::load_rule_pack(options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(rules::pack_stats(**result).extraction_rules, 1u);
}

TEST_F(TempPack, MissingRuleFile) {
  const Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_IO");
  EXPECT_NE(e.message.find("bad.yaml"), std::string::npos);
}

TEST_F(TempPack, CatalogRowThatMapsToNothing) {
  write("bad.yaml", kGoodRule);
  write("data/cat.tsv", "xid\tname\tdomain_hint\tseverity\n79\tFALLEN\tGPU_HARDWARE\tfatal\n80\tODD\tMARTIAN\tfatal\n");
  write("pack.yaml",
        "name: test\nversion: 0.0.1\nrule_files: [bad.yaml]\ncatalogs:\n  - name: xid\n    file: data/cat.tsv\n"
        "    key_column: xid\n    name_column: name\n    domain_column: domain_hint\n    severity_column: severity\n"
        "    domain_map: {GPU_HARDWARE: GPU_HARDWARE}\n    action_by_severity: {fatal: DRAIN_NODE}\n");
  const Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_CATALOG");
  EXPECT_NE(e.message.find("cat.tsv:3:"), std::string::npos) << e.message;
}

// A decode table's secondary action: its action must map, and it needs cells saying when.
TEST_F(TempPack, CatalogSecondaryActionThatMapsToNothing) {
  write("bad.yaml", kGoodRule);
  const std::string manifest =
      "name: test\nversion: 0.0.1\nrule_files: [bad.yaml]\ncatalogs:\n  - name: dec\n    file: data/dec.tsv\n"
      "    key_column: xid\n    name_column: name\n    domain_column: domain_hint\n    severity_column: severity\n"
      "    domain_map: {HW: NVLINK_FABRIC}\n    action_by_severity: {degraded: NONE}\n"
      "    action_column: action\n    action_map: {IGNORE: NONE, RESET_GPU: RESET_GPU}\n"
      "    match:\n      - {columns: [mask], field: intr_info, type: bits}\n"
      "    secondary_action:\n      column: action2\n      when: {columns: [mask2], field: intr_info, type: bits}\n";
  write("pack.yaml", manifest);
  write("data/dec.tsv",
        "xid\tname\tdomain_hint\tseverity\taction\tmask\tmask2\taction2\n"
        "145\tRX\tHW\tdegraded\tIGNORE\t-0\t-1\tRESET_GPU\n");
  rules::LoadOptions options;
  options.pack_dir = dir_;
  auto loaded = rules::load_rule_pack(options);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;

  write("data/dec.tsv",
        "xid\tname\tdomain_hint\tseverity\taction\tmask\tmask2\taction2\n"
        "145\tRX\tHW\tdegraded\tIGNORE\t-0\t-1\tREBOOT\n");
  Error e = load_error();
  EXPECT_EQ(e.code, "RULE_E_CATALOG");
  EXPECT_NE(e.message.find("dec.tsv:2: action2: action 'REBOOT' has no entry in catalogs.dec.action_map"),
            std::string::npos)
      << e.message;

  write("data/dec.tsv",
        "xid\tname\tdomain_hint\tseverity\taction\tmask\tmask2\taction2\n"
        "145\tRX\tHW\tdegraded\tIGNORE\t-0\t\tRESET_GPU\n");
  e = load_error();
  EXPECT_EQ(e.code, "RULE_E_CATALOG");
  EXPECT_NE(e.message.find("but no cell says when"), std::string::npos) << e.message;

  write("pack.yaml",
        manifest.substr(0, manifest.find("    secondary_action:")) +
            "    secondary_action: {column: action2, when: {columns: [mask2], field: subunit, type: name}}\n");
  e = load_error();
  EXPECT_EQ(e.code, "RULE_E_FIELD");
  EXPECT_NE(e.message.find("catalogs[0].secondary_action.when.type: type must be bits or hex"), std::string::npos)
      << e.message;
}

}  // namespace
}  // namespace attrib
