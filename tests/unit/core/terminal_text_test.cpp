// What attrib-show and attrib-replay print: escape sequences from logs never reach the
// admin's terminal as escapes.
#include "core/terminal_text.h"

#include <gtest/gtest.h>

#include "core/verdict_text.h"

namespace attrib {
namespace {

TEST(TerminalSafe, ControlCharactersAreShownNotSent) {
  EXPECT_EQ(terminal_safe("plain\ttext\n"), "plain\ttext\n");
  EXPECT_EQ(terminal_safe("\x1b[2J\x1b]0;pwned\x07"), "\\x1b[2J\\x1b]0;pwned\\x07");
  EXPECT_EQ(terminal_safe(std::string("a\0b\rc\x7f", 6)), "a\\x00b\\x0dc\\x7f");
  // C1 controls in UTF-8 (U+009B is a CSI), while other non-ASCII text stays.
  EXPECT_EQ(terminal_safe("\xc2\x9b" "31m \xc2\xa0 Gr\xc3\xbc\xc3\x9f" "e"), "\\u009b31m \xc2\xa0 Gr\xc3\xbc\xc3\x9f" "e");
  EXPECT_EQ(terminal_safe("ends with \xc2"), "ends with \xc2");
}

TEST(TerminalSafe, TheVerdictTextCarriesNoEscape) {
  Verdict v;
  v.job_id = "17";
  v.cluster = "lab";
  v.terminal_state = "FAILED";
  v.domain = "APPLICATION";
  Event e;
  e.id = "e1";
  e.kind = "app.traceback";
  e.node = "n1";
  e.source = "app";
  e.line = "\x1b]0;attrib: HARDWARE\x07\x1b[2K\rRuntimeError: boom";
  v.root_cause = RootCause{"app.python_exception", "a Python exception", e};
  Coverage c;
  c.node = "n1";
  c.source = "app";
  c.status = CoverageStatus::Refused;
  c.detail = "/home/u/\x1b[8mhidden.out is owned by uid 0";
  v.coverage.push_back(c);
  const std::string text = render_verdict_text(v);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_NE(text.find("\\x1b]0;attrib: HARDWARE\\x07\\x1b[2K\\x0dRuntimeError: boom"), std::string::npos) << text;
  EXPECT_NE(text.find("refused"), std::string::npos) << text;
}

TEST(VerdictText, SaysHowSureTheVerdictIsWhenItKnows) {
  Verdict v;
  v.job_id = "17";
  v.domain = "GPU_HARDWARE";
  v.confidence = "low";
  EXPECT_NE(render_verdict_text(v).find("Confidence:   low\n"), std::string::npos) << render_verdict_text(v);
  v.confidence.clear();  // archived before confidence existed: no line rather than a guess
  EXPECT_EQ(render_verdict_text(v).find("Confidence:"), std::string::npos) << render_verdict_text(v);
}

}  // namespace
}  // namespace attrib
