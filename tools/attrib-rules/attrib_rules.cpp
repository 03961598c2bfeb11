// attrib-rules: check a rule pack and its golden fixtures; export its patterns.
//   validate         load the pack (+ site dirs): schema, regexes, fields, references, examples
//   test             validate, then replay every golden fixture and compare with expected.json
//   export-patterns  one extraction regex per line (RE2 syntax; ripgrep reads it with -f)
// Exit codes: 0 ok, 1 a check failed, 2 usage.
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>

#include "rules/engine.h"
#include "rules/golden.h"
#include "rules/pack_location.h"
#include "rules/pack_patterns.h"

namespace {

attrib::Result<std::shared_ptr<const attrib::rules::RulePack>> load(const std::string& pack_dir,
                                                                    const std::vector<std::string>& site_dirs) {
  attrib::rules::LoadOptions options;
  options.pack_dir = pack_dir;
  for (const auto& s : site_dirs) options.site_dirs.emplace_back(s);
  return attrib::rules::load_rule_pack(options);
}

void print_stats(const attrib::rules::RulePack& pack) {
  const auto stats = attrib::rules::pack_stats(pack);
  std::printf("pack %s %s %s: %zu files, %zu extraction rules, %zu correlation rules, %zu examples passed\n",
              stats.name.c_str(), stats.version.c_str(), attrib::rules::pack_hash(pack).c_str(), stats.files.size(),
              stats.extraction_rules, stats.correlation_rules, stats.examples);
  std::printf("candidate scan: %zu rules by prefilter literal, %zu by regex, %zu on every line; %zu block rules\n",
              stats.scan_literal_rules, stats.scan_regex_rules, stats.scan_fallbacks.size(), stats.block_rules);
  // Not an error: such a rule works, RE2 just runs on every line of its sources.
  for (const auto& note : stats.scan_fallbacks) std::printf("  every line: %s\n", note.c_str());
}

int run_tests(const std::shared_ptr<const attrib::rules::RulePack>& pack, const std::string& fixtures, bool verbose) {
  if (fixtures.empty()) return 0;
  size_t passed = 0, failed = 0, pending = 0;
  const auto dirs = attrib::rules::list_golden_fixtures(fixtures);
  if (dirs.empty()) {
    std::fprintf(stderr, "attrib-rules: no fixture (a directory with expected.json) under %s\n", fixtures.c_str());
    return 1;
  }
  for (const auto& dir : dirs) {
    auto result = attrib::rules::check_golden_fixture(dir, pack);
    const std::string name = dir.filename().string();
    if (!result) {
      std::printf("ERROR   %s: %s %s\n", name.c_str(), result.error().code.c_str(), result.error().message.c_str());
      ++failed;
      continue;
    }
    const bool ok = result->mismatches.empty();
    if (!result->pending.empty()) {
      if (ok) {
        std::printf("FIXED   %s: passes now; remove \"pending\" from its expected.json\n", name.c_str());
        ++failed;
      } else {
        std::printf("PENDING %s: %s\n", name.c_str(), result->pending.c_str());
        ++pending;
      }
    } else if (ok) {
      std::printf("PASS    %s\n", name.c_str());
      ++passed;
    } else {
      std::printf("FAIL    %s\n", name.c_str());
      ++failed;
    }
    if (!ok && (result->pending.empty() || verbose))
      for (const auto& m : result->mismatches) std::printf("          %s\n", m.c_str());
  }
  std::printf("fixtures: %zu passed, %zu failed, %zu pending\n", passed, failed, pending);
  return failed == 0 ? 0 : 1;
}

}  // namespace

// ripgrep (-f) and grep compile all patterns into one regex, where a capture name used by
// two rules (`(?P<pci>`) is an error: export plain groups, which match the same lines.
static std::string unnamed_groups(const std::string& regex) {
  std::string out;
  out.reserve(regex.size());
  for (size_t i = 0; i < regex.size(); ++i) {
    size_t backslashes = 0;
    for (size_t k = i; k > 0 && regex[k - 1] == '\\'; --k) ++backslashes;
    if (backslashes % 2 == 0 && regex.compare(i, 4, "(?P<") == 0) {
      const size_t close = regex.find('>', i + 4);
      if (close != std::string::npos) {
        out += '(';
        i = close;
        continue;
      }
    }
    out += regex[i];
  }
  return out;
}

int main(int argc, char** argv) {
  CLI::App app{"attrib-rules: validate and test a rule pack"};
  app.require_subcommand(1);
  std::string pack_dir = attrib::rules::default_pack_dir();
  std::vector<std::string> site_dirs;
  std::string fixtures;
  bool verbose = false;
  const auto pack_options = [&](CLI::App* sub) {
    sub->add_option("--pack", pack_dir, "rule pack directory")->capture_default_str();
    sub->add_option("--site", site_dirs, "site rule directory (repeatable)");
  };
  CLI::App* validate = app.add_subcommand("validate", "load the pack: schema, regexes, fields, references, examples");
  pack_options(validate);
  CLI::App* test = app.add_subcommand("test", "validate, then replay every golden fixture and compare");
  pack_options(test);
  test->add_option("--fixtures", fixtures, "directory of golden fixtures (<scenario>/job.json, expected.json, ...)");
  test->add_flag("-v,--verbose", verbose, "also show why pending fixtures fail");
  CLI::App* patterns = app.add_subcommand("export-patterns", "print every extraction regex, one per line");
  pack_options(patterns);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return e.get_exit_code() == 0 ? 0 : 2;
  }

  auto pack = load(pack_dir, site_dirs);
  if (!pack) {
    std::fprintf(stderr, "attrib-rules: %s %s\n", pack.error().code.c_str(), pack.error().message.c_str());
    return 1;
  }
  if (patterns->parsed()) {
    for (const auto& p : attrib::rules::extraction_patterns(**pack)) {
      std::cout << unnamed_groups(p.regex) << "\n";
      if (!p.block_end.empty()) std::cout << unnamed_groups(p.block_end) << "\n";  // a block's last line is matched too
    }
    return 0;
  }
  print_stats(**pack);
  if (test->parsed()) return run_tests(*pack, fixtures, verbose);
  return 0;
}
