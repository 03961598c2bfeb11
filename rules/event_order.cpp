#include "rules/event_order.h"

#include <cctype>
#include <tuple>

#include "core/json_text.h"

namespace attrib::rules::detail {

namespace {

// Position of an occurrence within the engine's order (the part that folding ignores).
bool occurs_before(const Event& a, const Event& b) {
  const bool a_untimed = !a.time.has_value();
  const bool b_untimed = !b.time.has_value();
  return std::make_tuple(a_untimed, a.time.value_or(0), a.seq) < std::make_tuple(b_untimed, b.time.value_or(0), b.seq);
}

}  // namespace

bool event_less(const Event& a, const Event& b) {
  const bool a_untimed = !a.time.has_value();
  const bool b_untimed = !b.time.has_value();
  const auto head_a = std::tie(a_untimed);
  const auto head_b = std::tie(b_untimed);
  if (head_a != head_b) return head_a < head_b;
  const int64_t ta = a.time.value_or(0), tb = b.time.value_or(0);
  const auto key_a = std::tie(ta, a.node, a.source, a.seq, a.kind, a.rule, a.line, a.trusted, a.count);
  const auto key_b = std::tie(tb, b.node, b.source, b.seq, b.kind, b.rule, b.line, b.trusted, b.count);
  if (key_a != key_b) return key_a < key_b;
  return json_text(a.fields) < json_text(b.fields);
}

std::string fold_key(const Event& e) {
  std::string key;
  key.reserve(e.node.size() + e.source.size() + e.kind.size() + e.rule.size() + e.line.size() + 64);
  key += e.node;
  key += '\0';
  key += e.source;
  key += '\0';
  key += e.kind;
  key += '\0';
  key += e.rule;
  key += '\0';
  key += e.trusted ? '1' : '0';
  key += '\0';
  key += json_text(e.fields);
  key += '\0';
  key += e.line;
  return key;
}

void fold_into(Event& into, const Event& other) {
  into.count += other.count;
  if (occurs_before(other, into)) {
    into.time = other.time;
    into.seq = other.seq;
  }
}

std::string normalize_pci(const std::string& pci) {
  std::string out;
  for (const char c : pci) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t first_colon = out.find(':');
  if (first_colon == 8 && out.compare(0, 4, "0000") == 0) out.erase(0, 4);  // nvidia-smi's 8-digit domain
  if (out.find('.') == std::string::npos) out += ".0";                      // Xid lines omit the function
  return out;
}

}  // namespace attrib::rules::detail
