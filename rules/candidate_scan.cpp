#include "rules/candidate_scan.h"

#include <hs.h>

#include <algorithm>
#include <cctype>

#include "core/utf8.h"

namespace attrib::rules::detail {

void HsDatabaseDeleter::operator()(hs_database* db) const noexcept { hs_free_database(db); }
void HsScratchDeleter::operator()(hs_scratch* scratch) const noexcept { hs_free_scratch(scratch); }

namespace {

// Every database is a candidate filter: one report per rule and line is all we need.
constexpr unsigned kLiteralFlags = HS_FLAG_SINGLEMATCH;
// Prefilter mode promises a superset of the regex's matches. UTF-8 mode makes `.` and
// negated classes consume a whole character as RE2 does (byte mode would miss "a.b" on
// "aéb"); lines that are not valid UTF-8 skip this database and flag its rules instead.
constexpr unsigned kRegexFlags = HS_FLAG_PREFILTER | HS_FLAG_SINGLEMATCH | HS_FLAG_UTF8;

struct CompileError {
  hs_compile_error_t* error = nullptr;
  ~CompileError() {
    if (error != nullptr) hs_free_compile_error(error);
  }
  std::string message() const {
    return error != nullptr && error->message != nullptr ? error->message : "unknown error";
  }
};

// Constructs whose meaning differs between RE2 and Hyperscan in ways prefilter mode
// would not cover (the scan could then miss a line RE2 matches). Such rules are scanned
// Always. Conservative: a false alarm only costs an RE2 call per line.
std::string regex_gate(const std::string& pattern) {
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[i + 1];
      if (next == 'Q') {  // \Q...\E quotes everything up to \E
        const size_t end = pattern.find("\\E", i + 2);
        if (end == std::string::npos) break;
        i = end + 1;
        continue;
      }
      if (next == 'p' || next == 'P') return "Unicode classes (\\p) may differ between RE2 and Hyperscan";
      if (next == 'C') return "\\C (any byte) has no Hyperscan equivalent in UTF-8 mode";
      if (next == 'x' || std::isdigit(static_cast<unsigned char>(next))) {
        return "numeric escapes (\\x, octal) denote characters in RE2 but may denote bytes in Hyperscan";
      }
      ++i;
      continue;
    }
    if (c == '(' && i + 1 < pattern.size() && pattern[i + 1] == '?') {
      const bool plain = pattern.compare(i, 3, "(?:") == 0 || pattern.compare(i, 4, "(?P<") == 0;
      // (?i) folds Unicode case in RE2 (K matches U+212A KELVIN SIGN); flags may differ.
      if (!plain) return "inline flags such as (?i) may differ between RE2 and Hyperscan";
    }
  }
  return "";
}

int on_match(unsigned int id, unsigned long long /*from*/, unsigned long long /*to*/, unsigned int /*flags*/,
             void* context) {
  static_cast<char*>(context)[id] = 1;
  return 0;  // keep scanning: other rules may still be flagged
}

bool scan_one(const hs_database_t* db, std::string_view text, hs_scratch_t* scratch, char* flags) {
  const char* data = text.empty() ? "" : text.data();
  return hs_scan(db, data, static_cast<unsigned int>(text.size()), 0, scratch, on_match, flags) == HS_SUCCESS;
}

// Verifies prefilter mode on the rule's own example lines: every line RE2 matches must be
// flagged. A miss would be a translation bug; the rule then falls back to Always.
bool flags_every_example(const CompiledExtractionRule& rule, const hs_database_t* db) {
  hs_scratch_t* raw = nullptr;
  if (hs_alloc_scratch(db, &raw) != HS_SUCCESS) return false;
  HsScratch scratch(raw);
  std::vector<std::string> lines;
  for (const auto& e : rule.def.match_examples) lines.push_back(e.line);
  for (const auto& e : rule.def.no_match_examples) lines.push_back(e.line);
  for (const auto& text : lines) {
    for (const auto line : split_lines(text)) {
      if (!is_valid_utf8(line) || !match_line(rule, line, /*from_start=*/false)) continue;  // the wider set
      char flagged = 0;
      if (!scan_one(db, line, scratch.get(), &flagged) || !flagged) return false;
    }
  }
  return true;
}

void plan_rule(CompiledExtractionRule& rule) {
  if (!rule.def.prefilter.empty()) {
    rule.scan = ScanMode::Literal;
    return;
  }
  rule.scan = ScanMode::Always;
  if (std::string why = regex_gate(rule.def.regex); !why.empty()) {
    rule.scan_note = why;
    return;
  }
  hs_database_t* raw = nullptr;
  CompileError error;
  if (hs_compile(rule.def.regex.c_str(), kRegexFlags, HS_MODE_BLOCK, nullptr, &raw, &error.error) != HS_SUCCESS) {
    rule.scan_note = "Hyperscan: " + error.message();
    return;
  }
  HsDatabase db(raw);
  if (!flags_every_example(rule, db.get())) {
    rule.scan_note = "Hyperscan prefilter missed an example line";
    return;
  }
  rule.scan = ScanMode::Regex;
}

HsDatabase compile_literals(const std::vector<CompiledExtractionRule*>& rules, const std::vector<uint32_t>& positions,
                            unsigned literal_flags, std::string& error_text) {
  std::vector<const char*> expressions;
  std::vector<size_t> lengths;
  std::vector<unsigned> flags, ids;
  for (const uint32_t pos : positions) {
    for (const auto& literal : rules[pos]->def.prefilter) {
      expressions.push_back(literal.data());
      lengths.push_back(literal.size());
      flags.push_back(literal_flags);
      ids.push_back(pos);
    }
  }
  hs_database_t* raw = nullptr;
  CompileError error;
  if (hs_compile_lit_multi(expressions.data(), flags.data(), ids.data(), lengths.data(),
                           static_cast<unsigned>(expressions.size()), HS_MODE_BLOCK, nullptr, &raw,
                           &error.error) != HS_SUCCESS) {
    error_text = "Hyperscan: " + error.message();
    return nullptr;
  }
  return HsDatabase(raw);
}

HsDatabase compile_regexes(const std::vector<CompiledExtractionRule*>& rules, const std::vector<uint32_t>& positions,
                           std::string& error_text) {
  std::vector<const char*> expressions;
  std::vector<unsigned> flags, ids;
  for (const uint32_t pos : positions) {
    expressions.push_back(rules[pos]->def.regex.c_str());
    flags.push_back(kRegexFlags);
    ids.push_back(pos);
  }
  hs_database_t* raw = nullptr;
  CompileError error;
  if (hs_compile_multi(expressions.data(), flags.data(), ids.data(), static_cast<unsigned>(expressions.size()),
                       HS_MODE_BLOCK, nullptr, &raw, &error.error) != HS_SUCCESS) {
    error_text = "Hyperscan: " + error.message();
    return nullptr;
  }
  return HsDatabase(raw);
}

}  // namespace

void plan_candidate_scan(std::vector<CompiledExtractionRule>& rules) {
  for (auto& rule : rules) plan_rule(rule);
}

std::shared_ptr<const CandidateScanner> CandidateScanner::build(std::vector<CompiledExtractionRule>& rules) {
  auto scanner = std::make_shared<CandidateScanner>();
  std::vector<std::string> sources = fixed_sources();
  for (const auto& rule : rules) {
    for (const auto& s : rule.def.sources) {
      if (s.rfind("app.rank", 0) == 0 && std::find(sources.begin(), sources.end(), s) == sources.end()) {
        sources.push_back(s);
      }
    }
  }
  // "app.rank" is no source name; rule_applies() gives it exactly the rules listing "app",
  // which is what every app.rank<N> stream that no rule names gets.
  const std::string other_ranks = "app.rank";
  sources.push_back(other_ranks);

  bool any_database = false;
  hs_scratch_t* prototype = nullptr;
  for (const auto& source : sources) {
    auto set = std::make_unique<ScanSet>();
    std::vector<CompiledExtractionRule*> members;
    std::vector<uint32_t> literal_rules;
    for (auto& rule : rules) {
      if (!rule_applies(rule.def, source)) continue;
      const auto pos = static_cast<uint32_t>(members.size());
      members.push_back(&rule);
      set->rules.push_back(&rule);
      switch (rule.scan) {
        case ScanMode::Literal:
          literal_rules.push_back(pos);
          break;
        case ScanMode::Regex:
          set->regex_rules.push_back(pos);
          break;
        case ScanMode::Always:
          set->always_rules.push_back(pos);
          break;
      }
    }
    std::string error;
    if (!literal_rules.empty()) {
      set->literals = compile_literals(members, literal_rules, kLiteralFlags, error);
      if (!set->literals) {
        for (const uint32_t pos : literal_rules) {
          members[pos]->scan_note = error;
          set->always_rules.push_back(pos);
        }
      }
    }
    if (!set->regex_rules.empty()) {
      set->regexes = compile_regexes(members, set->regex_rules, error);
      if (!set->regexes) {
        for (const uint32_t pos : set->regex_rules) {
          members[pos]->scan_note = error;
          set->always_rules.push_back(pos);
        }
        set->regex_rules.clear();
      }
    }
    if (set->literals && set->regexes == nullptr && set->always_rules.empty() &&
        std::none_of(literal_rules.begin(), literal_rules.end(), [&](uint32_t pos) {
          return std::any_of(members[pos]->def.prefilter.begin(), members[pos]->def.prefilter.end(),
                             [](const std::string& literal) { return literal.find(kUtf8Replacement) != std::string::npos; });
        })) {
      // Every occurrence, not one per scan: a buffer holds many lines. Without it (a
      // compile failure) lines are scanned one at a time, which is never wrong.
      //
      // The raw bytes are scanned, though feed() scans a line after repairing its invalid
      // UTF-8 (U+FFFD for each bad sequence). A literal is valid UTF-8 and starts on a
      // character, so an occurrence in the repaired line is made of the line's own valid
      // characters, contiguous in the raw bytes as well -- unless the literal holds U+FFFD
      // itself: such a set is scanned line by line.
      set->buffer_literals = compile_literals(members, literal_rules, 0, error);
      for (const uint32_t pos : literal_rules)
        for (const auto& literal : members[pos]->def.prefilter)
          set->longest_literal = std::max(set->longest_literal, literal.size());
    }
    for (const hs_database_t* db : {set->literals.get(), set->regexes.get(), set->buffer_literals.get()}) {
      if (db == nullptr) continue;
      any_database = true;
      // One scratch serves every database it was allocated (grown) for.
      if (hs_alloc_scratch(db, &prototype) != HS_SUCCESS) {
        if (prototype != nullptr) hs_free_scratch(prototype);
        prototype = nullptr;
        any_database = false;  // scan() without scratch flags everything: slow, never wrong
        break;
      }
    }
    scanner->by_source_[source] = set.get();
    if (source == other_ranks) scanner->other_ranks_ = set.get();
    scanner->sets_.push_back(std::move(set));
  }
  if (any_database)
    scanner->prototype_.reset(prototype);
  else if (prototype != nullptr)
    hs_free_scratch(prototype);
  return scanner;
}

const ScanSet* CandidateScanner::set_for(const std::string& source) const {
  if (source == "app.rank") return nullptr;  // the internal key, not a source
  auto it = by_source_.find(source);
  if (it != by_source_.end()) return it->second;
  if (source.rfind("app.rank", 0) == 0 && is_known_source(source)) return other_ranks_;
  return nullptr;
}

HsScratch CandidateScanner::make_scratch() const {
  std::lock_guard<std::mutex> lock(clone_mutex_);
  if (!prototype_) return nullptr;
  hs_scratch_t* clone = nullptr;
  if (hs_clone_scratch(prototype_.get(), &clone) != HS_SUCCESS) return nullptr;
  return HsScratch(clone);
}

void CandidateScanner::scan(const ScanSet& set, std::string_view text, hs_scratch* scratch,
                            std::vector<char>& flags) const {
  flags.assign(set.rules.size(), 0);
  for (const uint32_t pos : set.always_rules) flags[pos] = 1;
  const bool have_db = set.literals || set.regexes;
  if (have_db && scratch == nullptr) {
    flags.assign(set.rules.size(), 1);
    return;
  }
  if (set.literals && !scan_one(set.literals.get(), text, scratch, flags.data())) {
    flags.assign(set.rules.size(), 1);
    return;
  }
  if (set.regexes) {
    if (!is_valid_utf8(text)) {
      for (const uint32_t pos : set.regex_rules) flags[pos] = 1;
    } else if (!scan_one(set.regexes.get(), text, scratch, flags.data())) {
      flags.assign(set.rules.size(), 1);
    }
  }
}

namespace {

int on_occurrence(unsigned int /*id*/, unsigned long long /*from*/, unsigned long long to, unsigned int /*flags*/,
                  void* context) {
  static_cast<std::vector<size_t>*>(context)->push_back(static_cast<size_t>(to));
  return 0;
}

}  // namespace

bool CandidateScanner::scan_lines(const ScanSet& set, std::string_view text, hs_scratch* scratch,
                                  std::vector<size_t>& ends) const {
  ends.clear();
  if (!set.buffer_literals || scratch == nullptr) return false;
  // hs_scan takes an unsigned int length: a larger buffer goes in pieces that overlap by
  // the longest literal's length less one, so no occurrence is cut in two.
  constexpr size_t kPiece = size_t{1} << 30;
  const size_t overlap = set.longest_literal;
  for (size_t from = 0; from < text.size() || from == 0;) {
    const size_t length = std::min(kPiece, text.size() - from);
    const size_t before = ends.size();
    const char* data = text.empty() ? "" : text.data() + from;
    if (hs_scan(set.buffer_literals.get(), data, static_cast<unsigned int>(length), 0, scratch, on_occurrence,
                &ends) != HS_SUCCESS)
      return false;
    for (size_t i = before; i < ends.size(); ++i) ends[i] += from;
    if (from + length >= text.size()) break;
    from += length - std::min(length, overlap > 0 ? overlap - 1 : 0);
  }
  // Hyperscan reports in end order within one scan; pieces can repeat an occurrence.
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  return true;
}

}  // namespace attrib::rules::detail
