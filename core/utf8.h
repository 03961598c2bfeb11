// Bytes from logs are bytes: a crashing binary's name, a job name or a log line can hold
// anything. attrib makes every text it ingests valid UTF-8 once, at the door (collectors'
// lines, the hook's job fields, bundles), so JSON, protobuf strings and RE2/vectorscan's
// UTF-8 mode downstream never see an invalid sequence.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attrib {

// The length (1..4) of the well-formed sequence at text[i], or, negated, the length of
// the ill-formed part there (i < text.size()).
int utf8_sequence_at(std::string_view text, size_t i);
// How many bytes at the start of `text` are ASCII (< 0x80).
size_t ascii_prefix(std::string_view text);

// True when `text` is well-formed UTF-8 (RFC 3629: no overlongs, surrogates or > U+10FFFF).
bool is_valid_utf8(std::string_view text);

// U+FFFD REPLACEMENT CHARACTER, what to_valid_utf8 puts in place of a bad sequence.
inline constexpr std::string_view kUtf8Replacement = "\xEF\xBF\xBD";

// `text` with each ill-formed sequence (each maximal subpart, as Unicode recommends)
// replaced by U+FFFD. Valid text comes back unchanged.
std::string to_valid_utf8(std::string_view text);

// In place; returns whether anything was replaced.
bool make_valid_utf8(std::string& text);

}  // namespace attrib
