#include "core/json_text.h"

#include <cstdint>
#include <cstring>

#include "core/utf8.h"

namespace attrib {

namespace {

// Whether none of the eight bytes needs a second look: no byte >= 0x80 (UTF-8, checked
// apart), < 0x20 (a control character), '"' or '\\'. Bit tricks on the whole word
// ("Bit Twiddling Hacks", haszero and hasless): log lines are nearly all such bytes.
bool plain_word(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;
  const auto has_zero_byte = [&](uint64_t x) { return ((x - kOnes) & ~x & kHighs) != 0; };
  if ((word & kHighs) != 0) return false;
  if (((word - kOnes * 0x20) & ~word & kHighs) != 0) return false;  // a byte < 0x20
  return !has_zero_byte(word ^ (kOnes * '"')) && !has_zero_byte(word ^ (kOnes * '\\'));
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  const size_t start = out.size();
  out += '"';
  size_t plain = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < text.size();) {
    if (i + 8 <= text.size()) {
      uint64_t word;
      std::memcpy(&word, text.data() + i, sizeof word);
      if (plain_word(word)) {
        i += 8;
        continue;
      }
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      // A sequence of more than one byte: copied as is when it is well-formed.
      const int length = utf8_sequence_at(text, i);
      if (length < 0) {  // rare: nlohmann's replacement of bad sequences, exactly
        out.resize(start);
        out += json_text(std::string(text));
        return;
      }
      i += static_cast<size_t>(length);
      continue;
    }
    if (c >= 0x20 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    out.append(text.data() + plain, i - plain);
    plain = ++i;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
    }
  }
  out.append(text.data() + plain, text.size() - plain);
  out += '"';
}

}  // namespace attrib
