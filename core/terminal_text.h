// Text for a terminal: log lines and names inside verdicts are written by users and
// devices, and an escape sequence in them would be interpreted by an admin's terminal
// (retitle it, rewrite what is on screen, hide a line). What attrib-show and
// attrib-replay print passes through here.
#pragma once

#include <string>
#include <string_view>

namespace attrib {

// `text` with every control character except newline and tab shown as a visible escape:
// C0 controls and DEL as "\x1b", C1 controls (U+0080..U+009F) as "\u009b".
std::string terminal_safe(std::string_view text);

}  // namespace attrib
