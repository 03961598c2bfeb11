// One extraction rule against one line. Shared by the extractor and by the load-time
// example checks, so an example passes exactly when production would match.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "core/json_text.h"
#include "rules/rule_pack.h"

namespace attrib::rules::detail {

namespace {

std::optional<nlohmann::json> convert(FieldType type, std::string_view text) {
  switch (type) {
    case FieldType::String:
      return nlohmann::json(std::string(text));
    case FieldType::Int: {
      int64_t value = 0;
      const char* begin = text.data();
      const char* end = text.data() + text.size();
      if (begin != end && *begin == '+') ++begin;
      const auto [ptr, ec] = std::from_chars(begin, end, value);
      if (ec != std::errc() || ptr != end || begin == end) return std::nullopt;
      return nlohmann::json(value);
    }
    case FieldType::Hex: {
      // Kept as text ("0x58005"): register words can exceed int64 and read better in hex.
      std::string_view digits = text;
      if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) digits.remove_prefix(2);
      if (digits.empty()) return std::nullopt;
      std::string out = "0x";
      for (const char c : digits) {
        if (c == '_') continue;  // NVRM prints addresses as 0x7f5b_ef6c1000
        if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      return nlohmann::json(out);
    }
    case FieldType::Number: {
      // A metric's value as Prometheus prints it: 12, 12.5, 1e+06, +3 (a delta).
      std::string_view digits = text;
      if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
      double value = 0;
      const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (ec != std::errc() || ptr != digits.data() + digits.size() || digits.empty() || !std::isfinite(value))
        return std::nullopt;
      // A whole number stays one ("+2" reads 2, not 2.0, in summaries and fields).
      if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0)
        return nlohmann::json(static_cast<int64_t>(value));
      return nlohmann::json(value);
    }
  }
  return std::nullopt;
}

// The rule's thresholds (at_least, any_bits) over the captured fields; a field a
// threshold names but the line did not capture fails it.
bool meets_thresholds(const ExtractionRuleDef& def, const nlohmann::json& fields) {
  for (const auto& [name, bound] : def.at_least) {
    auto it = fields.find(name);
    if (it == fields.end() || !it->is_number() || it->get<double>() < bound) return false;
  }
  for (const auto& [name, mask] : def.any_bits) {
    auto it = fields.find(name);
    if (it == fields.end() || !it->is_number_integer() || (it->get<int64_t>() & mask) == 0) return false;
  }
  return true;
}

// Runs `regex` over `text` (anchored at its start, or anywhere) and converts its typed
// named groups into `fields`.
std::optional<nlohmann::json> capture(const re2::RE2& regex, const std::vector<CompiledField>& typed,
                                      std::string_view text, nlohmann::json fields, bool from_start) {
  const int groups = regex.NumberOfCapturingGroups();
  std::vector<re2::StringPiece> captures(static_cast<size_t>(groups) + 1);
  const auto anchor = from_start ? re2::RE2::ANCHOR_START : re2::RE2::UNANCHORED;
  if (!regex.Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), anchor, captures.data(), groups + 1)) {
    return std::nullopt;
  }
  for (const auto& field : typed) {
    const re2::StringPiece& piece = captures[static_cast<size_t>(field.group)];
    if (piece.data() == nullptr) continue;  // optional group that did not participate
    auto value = convert(field.type, std::string_view(piece.data(), piece.size()));
    if (!value) return std::nullopt;
    fields[field.name] = std::move(*value);
  }
  return fields;
}

std::string key_of(const std::string& key, const nlohmann::json& fields) {
  if (key.empty()) return "";
  auto it = fields.find(key);
  if (it == fields.end()) return "";
  return value_text(*it);
}

}  // namespace

std::optional<nlohmann::json> match_line(const CompiledExtractionRule& rule, std::string_view text, bool from_start) {
  if (!rule.def.prefilter.empty()) {
    const bool any = std::any_of(rule.def.prefilter.begin(), rule.def.prefilter.end(), [&](const std::string& literal) {
      return text.find(literal) != std::string_view::npos;
    });
    if (!any) return std::nullopt;
  }
  auto fields = capture(*rule.regex, rule.fields, text, rule.def.constants, from_start);
  if (fields && !meets_thresholds(rule.def, *fields)) return std::nullopt;
  return fields;
}

bool rule_applies(const ExtractionRuleDef& rule, const std::string& source) {
  for (const auto& s : rule.sources) {
    if (s == source) return true;
    if (s == "app" && source.rfind("app.rank", 0) == 0) return true;  // "app" covers every rank's stream
  }
  return false;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      out.push_back(text.substr(pos));
      break;
    }
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  if (text.empty()) out.push_back(text);
  return out;
}

std::optional<CompletedBlock> BlockTracker::close(const CompiledExtractionRule& rule, uint64_t index,
                                                  std::string_view text, bool from_start) {
  const auto max_lines = static_cast<uint64_t>(rule.def.block->max_lines);
  // Expire first: a block whose end did not come within max_lines is dropped, not
  // reported (its end captures, e.g. the exception type, are what the event is about).
  for (auto it = open_.begin(); it != open_.end();) {
    it = index - it->second.first_index + 1 > max_lines ? open_.erase(it) : std::next(it);
  }
  if (open_.empty()) return std::nullopt;
  // A start without a key value (an unprefixed "Traceback" header) takes an end of any
  // key when no block of that key is open: the prefix was added to the last line only.
  const auto find = [&](const nlohmann::json& fields) {
    auto it = open_.find(key_of(rule.def.block->key, fields));
    return it != open_.end() ? it : open_.find("");
  };
  auto end_fields = capture(*rule.block->end, rule.block->end_fields, text, nlohmann::json::object(), from_start);
  if (!end_fields) {
    // An abort line (e.g. a traceback ending in an exception the rule does not report)
    // closes the block without an event, so a later unrelated end cannot claim it.
    if (rule.block->abort) {
      if (auto abort_fields =
              capture(*rule.block->abort, rule.block->abort_fields, text, nlohmann::json::object(), from_start)) {
        if (auto it = find(*abort_fields); it != open_.end()) open_.erase(it);
      }
    }
    return std::nullopt;
  }
  auto it = find(*end_fields);
  if (it == open_.end()) return std::nullopt;
  CompletedBlock done;
  done.time = it->second.time;
  done.seq = it->second.seq;
  done.trusted = it->second.trusted;
  done.line = std::move(it->second.first_line);
  done.line += '\n';
  done.line.append(text.data(), text.size());
  done.fields = std::move(it->second.fields);
  for (auto& [name, value] : end_fields->items()) done.fields[name] = value;  // the end's captures win
  open_.erase(it);
  return done;
}

void BlockTracker::open(const CompiledExtractionRule& rule, uint64_t index, std::string_view text,
                        std::optional<TimeUs> time, uint64_t seq, bool trusted, nlohmann::json start_fields) {
  std::string key = key_of(rule.def.block->key, start_fields);
  if (!open_.count(key) && open_.size() >= kMaxOpenBlocks) {
    auto oldest = std::min_element(open_.begin(), open_.end(), [](const auto& a, const auto& b) {
      return a.second.first_index < b.second.first_index;
    });
    open_.erase(oldest);
  }
  // A new start with the key of an open block restarts it: the earlier one was cut short.
  open_[std::move(key)] = Open{index, time, seq, trusted, std::string(text), std::move(start_fields)};
}

}  // namespace attrib::rules::detail
