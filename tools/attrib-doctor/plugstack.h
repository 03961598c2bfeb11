// Slurm's SPANK plugin stack file as slurmd and srun read it (spank(8)): lines
// "required|optional PATH [ARGS...]" and "include GLOB", # comments. A relative PATH is
// looked up in PluginDir. What attrib-doctor needs from it: where spank_attrib.so is
// loaded from, how, and for which Slurm release that file was built.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace attrib::doctor {

struct PluginLine {
  std::string file;  // the plugstack file (or included file) and line, "plugstack.conf:3"
  bool required = false;
  std::string path;  // as resolved against PluginDir
  std::vector<std::string> args;
};

// Every plugin line of `plugstack` and the files it includes (globs expanded, nested
// includes followed, each file once). Errors name the file that cannot be read.
Result<std::vector<PluginLine>> read_plugstack(const std::string& plugstack, const std::string& plugin_dir);

// The Slurm version ("22.05.8") spank_attrib.so at `path` was built for, from the marker
// it carries (spank/spank_attrib.cpp, attrib_spank_built_for); nullopt when the file has
// none (not attrib's plugin, or one built before the marker), an error when unreadable.
Result<std::optional<std::string>> spank_built_for(const std::string& path);

// "22.05" of "22.05.8".
std::string release_of(const std::string& version);

}  // namespace attrib::doctor
