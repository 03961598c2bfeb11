// append_json_string must write exactly what json_text (nlohmann's dump) writes (the bundle
// reader and replay read these lines back; archived evidence must not change bytes).
#include "core/json_text.h"

#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace attrib {
namespace {

std::string by_nlohmann(const std::string& text) { return json_text(nlohmann::json(text)); }

std::string by_us(const std::string& text) {
  std::string out = "x";  // appends: what was there stays
  append_json_string(out, text);
  return out.substr(1);
}

TEST(JsonText, EveryByteAndEveryKindOfCharacterIsWrittenAsNlohmannWritesIt) {
  for (int c = 0; c < 256; ++c) {
    const std::string text = "a" + std::string(1, static_cast<char>(c)) + "b";
    EXPECT_EQ(by_us(text), by_nlohmann(text)) << "byte " << c;
  }
  for (const std::string text : {"", "plain", "q\"uote", "back\\slash", "tab\there", "nl\n", "\x7f del", "é ü 中 😀",
                                 "bad \xff\xfe tail", "cut \xe2\x82", "\xc0\xaf overlong", "\xed\xa0\x80 surrogate",
                                 "\x01\x1f\x1b[31m"}) {
    EXPECT_EQ(by_us(text), by_nlohmann(text)) << text;
  }
  std::mt19937_64 rng(3);  // fixed seed
  for (int i = 0; i < 20000; ++i) {
    std::string text(rng() % 24, '\0');
    for (char& ch : text) ch = static_cast<char>(rng() % 4 == 0 ? rng() % 256 : 32 + rng() % 96);
    ASSERT_EQ(by_us(text), by_nlohmann(text)) << i;
  }
  // Longer lines, read eight bytes at a time: one special byte at every position.
  for (const char special : {'"', '\\', '\n', '\x01', '\x1f', '\x7f', '\xff', '\xc3'}) {
    for (size_t at = 0; at < 40; ++at) {
      std::string text(40, 'k');
      text[at] = special;
      ASSERT_EQ(by_us(text), by_nlohmann(text)) << static_cast<int>(special) << " at " << at;
    }
  }
}

}  // namespace
}  // namespace attrib
