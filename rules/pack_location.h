// Where the shipped rule pack is when a tool is given no --pack: the checkout's rules/pack
// for a program run from the build tree it was built in (the first thing a newcomer runs:
// build/tools/attrib-replay bundle/), the packaged /usr/share/attrib/rules for an installed
// one. --pack (or rules.pack_dir) always wins.
#pragma once

#include <string>

namespace attrib::rules {

std::string default_pack_dir();

}  // namespace attrib::rules
