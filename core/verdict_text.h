// The human-readable verdict attrib-show and attrib-replay print: what died, why, where, what to do,
// which messages were only symptoms, and how complete the evidence was.
#pragma once

#include <string>

#include "core/verdict.h"

namespace attrib {

std::string render_verdict_text(const Verdict& verdict);

}  // namespace attrib
