#include "core/utf8.h"

#include <cstdint>
#include <cstring>

namespace attrib {
namespace {

// Length of the well-formed sequence at p[i] (1..4), or, negated, the length of the
// maximal ill-formed subpart there (at least 1): RFC 3629's table.
int sequence_at(const unsigned char* p, size_t n, size_t i) {
  const unsigned char c = p[i];
  if (c < 0x80) return 1;
  int len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF)
    len = 2;
  else if (c == 0xE0)
    len = 3, lo = 0xA0;
  else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
    len = 3;
  else if (c == 0xED)
    len = 3, hi = 0x9F;  // no UTF-16 surrogates
  else if (c == 0xF0)
    len = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3)
    len = 4;
  else if (c == 0xF4)
    len = 4, hi = 0x8F;  // <= U+10FFFF
  else
    return -1;
  if (i + 1 >= n || p[i + 1] < lo || p[i + 1] > hi) return -1;
  for (int k = 2; k < len; ++k)
    if (i + k >= n || p[i + k] < 0x80 || p[i + k] > 0xBF) return -k;
  return len;
}

}  // namespace

int utf8_sequence_at(std::string_view text, size_t i) {
  return sequence_at(reinterpret_cast<const unsigned char*>(text.data()), text.size(), i);
}

size_t ascii_prefix(std::string_view text) {
  // Eight bytes at a time: log text is nearly all ASCII, and this runs on every line kept.
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, text.data() + i, sizeof word);
    if ((word & 0x8080808080808080ULL) != 0) break;
  }
  while (i < text.size() && static_cast<unsigned char>(text[i]) < 0x80) ++i;
  return i;
}

bool is_valid_utf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t i = ascii_prefix(text); i < text.size();) {
    if (p[i] < 0x80) {
      i += ascii_prefix(text.substr(i));
      continue;
    }
    const int len = sequence_at(p, text.size(), i);
    if (len < 0) return false;
    i += static_cast<size_t>(len);
  }
  return true;
}

std::string to_valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t i = 0; i < text.size();) {
    const int len = sequence_at(p, text.size(), i);
    if (len > 0) {
      out.append(text.data() + i, static_cast<size_t>(len));
      i += static_cast<size_t>(len);
    } else {
      out += kUtf8Replacement;
      i += static_cast<size_t>(-len);
    }
  }
  return out;
}

bool make_valid_utf8(std::string& text) {
  if (is_valid_utf8(text)) return false;
  text = to_valid_utf8(text);
  return true;
}

}  // namespace attrib
