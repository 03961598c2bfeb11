// The human-readable verdict attrib-show and attrib-replay print: what died, why, where, what to do,
// which messages were only symptoms, and how complete the evidence was. Safe for a terminal:
// control characters in log lines and names are shown escaped (core/terminal_text.h).
#pragma once

#include <string>

#include "core/verdict.h"

namespace attrib {

std::string render_verdict_text(const Verdict& verdict);

}  // namespace attrib
