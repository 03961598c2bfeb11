#include "rules/evidence/template_miner.h"

#include <algorithm>
#include <sstream>

#include <re2/re2.h>

namespace attrib::rules {
namespace {

// Masks, most specific first: each replaced before the next looks (a PCI address is not
// read as numbers). `find` is RE2 with the text before the value in group 1 (kept);
// `match` is what the skeleton's group matches in its place.
struct Mask {
  const char* name;
  const char* find;
  const char* match;
};
const std::vector<Mask>& masks() {
  static const std::vector<Mask> table = {
      {"<ID>", R"(()(?:GPU-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})",
       R"((?:GPU-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"},
      {"<PCI>", R"(()\b[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?\b)",
       R"([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)"},
      {"<IP>", R"(()\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b)", R"(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})"},
      {"<PATH>", R"((^|[\s=:'"(\[])/[^\s:,;'"()\[\]]+)", R"(/[^\s:,;'"()\[\]]+)"},
      // Hex words: with 0x, or 8 characters or more ("dead" and "be" stay words).
      {"<HEX>", R"(()\b(?:0x[0-9a-fA-F]+|[0-9a-fA-F]{8,})\b)", R"((?:0x)?[0-9a-fA-F]+)"},
      {"<NUM>", R"(()\b\d+(?:\.\d+)?\b)", R"(\d+(?:\.\d+)?)"},
  };
  return table;
}

const Mask* mask_named(const std::string& token) {
  for (const Mask& m : masks())
    if (token == m.name) return &m;
  return nullptr;
}

// The job's host names first (they hold digits the masks below would take apart), as
// whole words; then the masks in order.
std::string mask_line(const std::string& line, const std::set<std::string>& host_names) {
  static const std::vector<std::unique_ptr<RE2>> compiled = [] {
    std::vector<std::unique_ptr<RE2>> out;
    for (const Mask& m : masks()) out.push_back(std::make_unique<RE2>(m.find));
    return out;
  }();
  std::string text;
  if (host_names.empty()) {
    text = line;
  } else {
    const auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; };
    size_t pos = 0;
    while (pos < line.size()) {
      size_t end = pos;
      while (end < line.size() && word_char(line[end])) ++end;
      if (end == pos) {
        text += line[pos++];
        continue;
      }
      const std::string word = line.substr(pos, end - pos);
      text += host_names.count(word) ? "<NODE>" : word;
      pos = end;
    }
  }
  for (size_t i = 0; i < masks().size(); ++i)
    RE2::GlobalReplace(&text, *compiled[i], std::string("\\1") + masks()[i].name);
  return text;
}

double shared(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size() || a.empty()) return 0;
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] == b[i] && a[i] != "<*>") ++same;
  return static_cast<double>(same) / static_cast<double>(a.size());
}

std::string group_key(const std::vector<std::string>& tokens) {
  const std::string& first = tokens.front();
  return first.find('<') != std::string::npos ? "<*>" : first;
}

std::string yaml_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\t') {
      out += "\\t";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// The regex of a template, with its named groups in order ("num1", "hex1", "any1", ...).
struct Skeleton {
  std::string regex;
  std::vector<std::string> groups;
  std::string prefilter;  // the longest literal run, "" when under 4 characters
  std::string summary;    // the template with each group as {name}
};

// A summary names fields in braces: the line's own braces become parentheses.
std::string without_braces(std::string text) {
  std::replace(text.begin(), text.end(), '{', '(');
  std::replace(text.begin(), text.end(), '}', ')');
  return text;
}

Skeleton skeleton_regex(const std::vector<std::string>& tokens) {
  Skeleton out;
  std::map<std::string, int> used;
  std::string literal_run, best_run;
  auto close_run = [&] {
    if (literal_run.size() > best_run.size()) best_run = literal_run;
    literal_run.clear();
  };
  auto group = [&](const std::string& kind, const std::string& match) {
    const std::string name = kind + std::to_string(++used[kind]);
    out.groups.push_back(name);
    out.regex += "(?P<" + name + ">" + match + ")";
    out.summary += "{" + name + "}";
    close_run();
  };
  for (size_t t = 0; t < tokens.size(); ++t) {
    if (t > 0) {
      out.regex += R"(\s+)";
      out.summary += ' ';
      literal_run += ' ';
    }
    const std::string& token = tokens[t];
    if (token == "<*>") {
      group("any", R"(\S+)");
      continue;
    }
    // A token mixes literal text and masks: "pid=<NUM>," -> pid= (?P<num1>...) ,
    size_t pos = 0;
    while (pos < token.size()) {
      const size_t open = token.find('<', pos);
      const Mask* mask = nullptr;
      size_t close = std::string::npos;
      if (open != std::string::npos) {
        close = token.find('>', open);
        if (close != std::string::npos) mask = mask_named(token.substr(open, close - open + 1));
      }
      const bool node = open != std::string::npos && close != std::string::npos &&
                        token.compare(open, close - open + 1, "<NODE>") == 0;
      if (mask == nullptr && !node) {
        const size_t end = open == std::string::npos ? token.size() : open + 1;
        const std::string text = token.substr(pos, end - pos);
        out.regex += RE2::QuoteMeta(text);
        out.summary += without_braces(text);
        literal_run += text;
        pos = end;
        continue;
      }
      const std::string text = token.substr(pos, open - pos);
      out.regex += RE2::QuoteMeta(text);
      out.summary += without_braces(text);
      literal_run += text;
      if (node) {
        group("node", R"([\w.-]+)");
      } else {
        std::string kind = std::string(mask->name).substr(1, std::string(mask->name).size() - 2);
        std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return std::tolower(c); });
        group(kind, mask->match);
      }
      pos = close + 1;
    }
  }
  close_run();
  // Trim the run to whole words at its ends; a prefilter is exact bytes.
  while (!best_run.empty() && best_run.front() == ' ') best_run.erase(best_run.begin());
  while (!best_run.empty() && best_run.back() == ' ') best_run.pop_back();
  if (best_run.size() >= 4 && best_run.find("  ") == std::string::npos) out.prefilter = best_run;
  return out;
}

}  // namespace

std::vector<std::string> mask_tokens(const std::string& line, const std::set<std::string>& host_names) {
  std::vector<std::string> tokens;
  std::istringstream in(mask_line(line, host_names));
  std::string token;
  while (in >> token) tokens.push_back(token);
  return tokens;
}

std::string LineTemplate::text() const {
  std::string out;
  for (const std::string& t : tokens) out += (out.empty() ? "" : " ") + t;
  return out;
}

TemplateMiner::TemplateMiner(double similarity) : similarity_(similarity) {}

std::optional<size_t> TemplateMiner::best_cluster(const std::vector<std::string>& tokens) const {
  auto group = groups_.find({tokens.size(), group_key(tokens)});
  if (group == groups_.end()) return std::nullopt;
  std::optional<size_t> best;
  double best_score = -1;
  for (size_t index : group->second) {
    const double score = shared(clusters_[index].tokens, tokens);
    if (score >= similarity_ && score > best_score) {
      best = index;
      best_score = score;
    }
  }
  return best;
}

void TemplateMiner::add(const MinedLine& line, const std::set<std::string>& host_names) {
  std::vector<std::string> tokens = mask_tokens(line.text, host_names);
  if (tokens.empty()) return;
  ++lines_;
  std::optional<size_t> found = best_cluster(tokens);
  if (!found) {
    found = clusters_.size();
    clusters_.push_back(LineTemplate{});
    clusters_.back().tokens = tokens;
    groups_[{tokens.size(), group_key(tokens)}].push_back(*found);
  }
  LineTemplate& t = clusters_[*found];
  for (size_t i = 0; i < tokens.size(); ++i)
    if (t.tokens[i] != tokens[i]) t.tokens[i] = "<*>";
  ++t.occurrences;
  if (line.before_end) ++t.before_end;
  t.attempts.insert(line.attempt);
  t.nodes.insert(line.node);
  t.sources.insert(line.source);
  const bool seen = std::any_of(t.examples.begin(), t.examples.end(),
                                [&](const LineTemplate::Example& e) { return e.line == line.text; });
  if (!seen && t.examples.size() < 3) t.examples.push_back({line.text, line.attempt, line.node});
}

void TemplateMiner::add_baseline(const MinedLine& line, const std::set<std::string>& host_names) {
  std::vector<std::string> tokens = mask_tokens(line.text, host_names);
  if (tokens.empty()) return;
  if (auto found = best_cluster(tokens)) clusters_[*found].baseline_attempts.insert(line.attempt);
}

std::vector<LineTemplate> TemplateMiner::ranked() const {
  std::vector<LineTemplate> out = clusters_;
  std::sort(out.begin(), out.end(), [](const LineTemplate& a, const LineTemplate& b) {
    const auto key = [](const LineTemplate& t) {
      return std::make_tuple(t.baseline_attempts.empty(), t.attempts.size(), t.nodes.size(),
                             t.occurrences == 0 ? 0.0 : static_cast<double>(t.before_end) / t.occurrences,
                             t.occurrences);
    };
    if (key(a) != key(b)) return key(a) > key(b);
    return a.text() < b.text();
  });
  return out;
}

std::optional<std::string> rule_skeleton(const LineTemplate& t, const std::string& id) {
  const Skeleton s = skeleton_regex(t.tokens);
  RE2 re(s.regex);
  if (!re.ok()) return std::nullopt;
  struct Matched {
    const LineTemplate::Example* example;
    std::vector<std::string> values;
  };
  std::vector<Matched> matched;
  for (const auto& example : t.examples) {
    std::vector<re2::StringPiece> pieces(s.groups.size() + 1);
    if (!re.Match(example.line, 0, example.line.size(), RE2::UNANCHORED, pieces.data(),
                  static_cast<int>(pieces.size())))
      continue;
    if (!s.prefilter.empty() && example.line.find(s.prefilter) == std::string::npos) continue;
    Matched m{&example, {}};
    for (size_t g = 1; g < pieces.size(); ++g) m.values.push_back(std::string(pieces[g]));
    matched.push_back(std::move(m));
  }
  if (matched.empty()) return std::nullopt;

  std::string sources;
  for (const std::string& source : t.sources) {
    // Rank streams are read as `app` (docs/rules.md: "app" covers every rank).
    const std::string name = source.rfind("app.rank", 0) == 0 ? "app" : source;
    if (sources.find(name) == std::string::npos) sources += (sources.empty() ? "" : ", ") + name;
  }
  const bool untrusted = std::any_of(t.sources.begin(), t.sources.end(), [](const std::string& source) {
    return source == "app" || source.rfind("app.", 0) == 0;
  });
  std::ostringstream y;
  y << "# Mined by attrib-rules mine from the archive: " << t.text() << "\n"
    << "# Seen in " << t.attempts.size() << " attempts on " << t.nodes.size() << " nodes, " << t.occurrences
    << " lines (" << t.before_end << " before the job's end); in " << t.baseline_attempts.size()
    << " successful attempts.\n"
    << "# Replace FILL_IN with the domain (GPU_HARDWARE, GPU_DRIVER, NVLINK_FABRIC, NETWORK, HOST_OS, STORAGE,\n"
    << "# APPLICATION, SCHEDULER, CONFIGURATION), check the action and confidence, name the rule,\n"
    << "# then: attrib-rules validate --site <dir>; attrib-reattribute --pack ... --site <dir>\n"
    << "extract:\n"
    << "  - id: " << id << "\n"
    << "    kind: " << id << "\n"
    << "    description: " << yaml_quote("mined: " + t.text()) << "\n"
    << "    sources: [" << sources << "]\n";
  if (!s.prefilter.empty()) y << "    prefilter: " << yaml_quote(s.prefilter) << "\n";
  std::string escaped_regex;
  for (char c : s.regex) {
    if (c == '\'') escaped_regex += '\'';
    escaped_regex += c;
  }
  y << "    regex: '" << escaped_regex << "'\n";
  if (!s.groups.empty()) {
    y << "    fields: {";
    for (size_t g = 0; g < s.groups.size(); ++g) y << (g ? ", " : "") << s.groups[g] << ": string";
    y << "}\n";
  }
  y << "    examples:\n      match:\n";
  for (const Matched& m : matched) {
    y << "        # job " << m.example->attempt << " on " << m.example->node << "\n"
      << "        - line: " << yaml_quote(m.example->line) << "\n";
    if (!s.groups.empty()) {
      y << "          fields: {";
      for (size_t g = 0; g < s.groups.size(); ++g)
        y << (g ? ", " : "") << s.groups[g] << ": " << yaml_quote(m.values[g]);
      y << "}\n";
    }
  }
  y << "correlate:\n"
    << "  - id: " << id << "\n"
    << "    description: " << yaml_quote("mined: " + t.text()) << "\n"
    << "    precedence: 50\n"
    << "    confidence: low\n"
    << "    domain: FILL_IN\n"
    << "    action: NONE\n"
    << "    root:\n"
    << "      kind: " << id << "\n"
    << (untrusted ? "      trusted: false        # seen in the job's own output, which its user writes\n" : "")
    << "    summary: " << yaml_quote("{node}: " + s.summary) << "\n";
  return y.str();
}

}  // namespace attrib::rules
