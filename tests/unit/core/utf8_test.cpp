// Bytes are bytes (core/utf8.h): validation, and replacement of each ill-formed sequence
// by U+FFFD, the way Unicode recommends (maximal subparts).
#include "core/utf8.h"

#include <gtest/gtest.h>

namespace attrib {
namespace {

TEST(Utf8, Validation) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xff"));
  EXPECT_FALSE(is_valid_utf8("\xc3"));              // truncated
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // > U+10FFFF
}

// The ASCII runs are skipped eight bytes at a time: a bad byte anywhere in a word, or at
// its edges, is still found.
TEST(Utf8, ABadByteAtAnyPositionOfALongTextIsFound) {
  for (size_t at = 0; at < 41; ++at) {
    std::string text(41, 'a');
    text[at] = '\xff';
    EXPECT_FALSE(is_valid_utf8(text)) << at;
    EXPECT_EQ(ascii_prefix(text), at);
    text.replace(at, 1, "\xc3\xa9");
    EXPECT_TRUE(is_valid_utf8(text)) << at;
    text.replace(at, 2, "\xe2\x82");  // cut short
    EXPECT_FALSE(is_valid_utf8(text)) << at;
  }
  EXPECT_EQ(ascii_prefix(std::string(100, 'x')), 100U);
  EXPECT_EQ(utf8_sequence_at("a\xf0\x9f\x98\x80", 1), 4);
  EXPECT_EQ(utf8_sequence_at("a\xf0\x9f\x98", 1), -3);
}

TEST(Utf8, IllFormedSequencesBecomeReplacementCharacters) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(to_valid_utf8("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(to_valid_utf8("a\xff"
                          "b"),
            "a" + fffd + "b");
  EXPECT_EQ(to_valid_utf8("a\xe2\x82"), "a" + fffd);             // a truncated sequence is one subpart
  EXPECT_EQ(to_valid_utf8("\xed\xa0\x80"), fffd + fffd + fffd);  // surrogate: three
  EXPECT_EQ(to_valid_utf8("\xf0\x9f\x98"
                          "x"),
            fffd + "x");
  std::string text = "NVRM\xff";
  EXPECT_TRUE(make_valid_utf8(text));
  EXPECT_EQ(text, "NVRM" + fffd);
  EXPECT_FALSE(make_valid_utf8(text));
  EXPECT_TRUE(is_valid_utf8(to_valid_utf8(std::string("\x80\x80\xc0\xaf\xf8\xff\x00z", 8))));
}

}  // namespace
}  // namespace attrib
