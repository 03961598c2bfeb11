// One extraction rule against one line. Shared by the extractor and by the load-time
// example checks, so an example passes exactly when production would match.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "rule_pack.h"

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
  }
  return std::nullopt;
}

}  // namespace

std::optional<nlohmann::json> match_line(const CompiledExtractionRule& rule, std::string_view text) {
  if (!rule.def.prefilter.empty()) {
    const bool any = std::any_of(rule.def.prefilter.begin(), rule.def.prefilter.end(),
                                 [&](const std::string& literal) { return text.find(literal) != std::string_view::npos; });
    if (!any) return std::nullopt;
  }
  const int groups = rule.regex->NumberOfCapturingGroups();
  std::vector<re2::StringPiece> captures(static_cast<size_t>(groups) + 1);
  if (!rule.regex->Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), re2::RE2::UNANCHORED,
                         captures.data(), groups + 1)) {
    return std::nullopt;
  }
  nlohmann::json fields = rule.def.constants;
  for (const auto& field : rule.fields) {
    const re2::StringPiece& piece = captures[static_cast<size_t>(field.group)];
    if (piece.data() == nullptr) continue;  // optional group that did not participate
    auto value = convert(field.type, std::string_view(piece.data(), piece.size()));
    if (!value) return std::nullopt;
    fields[field.name] = std::move(*value);
  }
  return fields;
}

}  // namespace attrib::rules::detail
