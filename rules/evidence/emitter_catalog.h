// Emitter catalogs (docs/rules.md, "Emitter catalogs"): for one program whose lines reach
// a job's evidence (NCCL, rdma-core, ...), every failure message its source can print,
// read from its repository at a release tag, and whether the pack knows it. They make the
// pack's coverage a measured fact per emitter instead of a list of incidents it has seen:
// `attrib-rules catalog` prints it, and a pack whose catalog names an extractor that does
// not exist does not pass.
//
// <pack>/data/emitters/<emitter>.tsv, tab-separated, '#' comments:
//   # emitter: NCCL            # repository: https://...       # tag: v2.23.4-1
//   # scope: what was read
//   message  where  family  role  known_by  left_out
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"

namespace attrib::rules {

class RulePack;

struct EmitterMessage {
  size_t line = 0;       // in the .tsv, for errors
  std::string message;   // the format string or table text, as the source writes it
  std::string where;     // path/in/repo.c:LINE at the tag
  std::string family;    // messages that mean the same failure share one
  std::string role;      // root_cause | symptom | benign
  std::string known_by;  // the pack extractor that matches its lines; empty: none
  std::string left_out;  // without known_by: why the pack does not need it, or "todo"
};

struct EmitterCatalog {
  std::filesystem::path file;
  std::string emitter, repository, tag, scope;
  std::vector<EmitterMessage> messages;
};

// RULE_E_CATALOG naming file:line and the column when a row or the header is malformed.
Result<EmitterCatalog> read_emitter_catalog(const std::filesystem::path& file);
// Every <pack_dir>/data/emitters/*.tsv, sorted by file name; none is not an error.
Result<std::vector<EmitterCatalog>> read_emitter_catalogs(const std::filesystem::path& pack_dir);

struct EmitterCoverage {
  std::string emitter, repository, tag;
  size_t messages = 0, known = 0, left_out = 0, todo = 0;
  size_t families = 0, families_known = 0;  // a family is known when one of its messages is
  std::map<std::string, size_t> left_out_reasons;  // reason -> messages
  std::vector<std::string> todo_families;          // families none of whose messages is known
  std::vector<std::string> missing_extractors;     // "file:line: id" of known_by ids the pack lacks
};
EmitterCoverage emitter_coverage(const EmitterCatalog& catalog, const RulePack& pack);

}  // namespace attrib::rules
