// The rule pack loader: rules/engine.h load_rule_pack, i.e. yaml-cpp, the manifest
// (pack.yaml), the rule files (extract / correlate definitions, inline examples checked at
// load), the TSV catalogs, and the compiler (RE2, the Hyperscan candidate scan).
//
// Input: a rule file; or, with marker lines, several files of a pack directory:
//   <pack.yaml>          (the text before the first marker; empty: a minimal manifest)
//   #%rules.yaml
//   <a rule file>
//   #%data.tsv
//   <a catalog the manifest names>
// Only names of [A-Za-z0-9._-] are written. Without any marker the whole input is
// rules.yaml under a minimal manifest that names it.
#include "fuzz/fuzz_support.h"
#include "rules/engine.h"

namespace attrib::fuzz {

int rule_pack(const uint8_t* data, size_t size) {
  static ScratchDir dir("rule-pack");  // removed at exit, not left in /tmp
  static const std::string kManifest = "name: fuzz\nversion: 0.0.1\nrule_files: [rules.yaml]\n";
  dir.clear();
  const std::vector<Section> sections = split_sections(as_text(data, size), "#%");
  if (sections.size() == 1) {
    dir.write("pack.yaml", kManifest);
    dir.write("rules.yaml", sections[0].text);
  } else {
    dir.write("pack.yaml", sections[0].text.empty() ? std::string_view(kManifest) : sections[0].text);
    for (size_t i = 1; i < sections.size() && i <= 8; ++i)
      if (safe_name(sections[i].name) && sections[i].name != "pack.yaml")
        dir.write(sections[i].name, sections[i].text);
  }
  rules::LoadOptions options;
  options.pack_dir = dir.path();
  auto pack = rules::load_rule_pack(options);
  if (!pack) {
    require(!pack.error().code.empty(), "a load error without a code");
    return 0;
  }
  const rules::PackStats stats = rules::pack_stats(**pack);
  (void)stats;
  // A pack that loads must run: one line through extraction and a correlation.
  rules::Extractor extractor(*pack);
  LogLine line{"gpu017",
               "kernel",
               1796032800LL * 1000000,
               0,
               true,
               "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."};
  extractor.feed(line);
  JobFacts job;
  job.job_id = "4242";
  job.state = "FAILED";
  job.exit_code = 1;
  job.nodes = {"gpu017"};
  (void)rules::correlate(**pack, job, extractor.finish(), {});
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(rule_pack)
