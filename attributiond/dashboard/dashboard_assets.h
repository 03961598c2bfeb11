// The dashboard's page, script and style sheet (attributiond/dashboard/web/), compiled into the
// binary by cmake/EmbedFiles.cmake: the daemon serves them without reading files at run
// time, and the browser fetches nothing from anywhere else.
#pragma once

#include <string_view>
#include <vector>

namespace attrib::dashboard {

struct WebAsset {
  std::string_view name;  // file name under attributiond/dashboard/web/, e.g. "app.js"
  std::string_view body;
};

const std::vector<WebAsset>& web_assets();  // generated: dashboard_assets.cpp in the build tree

}  // namespace attrib::dashboard
