// attrib-show's readable form of the fleet reports (attrib.node_history.v1,
// attrib.verdict_list.v1, docs/fleet.md), of attrib.failed_list.v1 and of
// attrib.array_rollup.v1.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace attrib::show {

std::string render_node_history_text(const nlohmann::json& report);
std::string render_verdict_list_text(const nlohmann::json& report);
std::string render_failed_list_text(const nlohmann::json& report);
// attrib-show --stats: GetArchiveStats' JSON.
std::string render_archive_stats_text(const nlohmann::json& report);
// attrib.array_rollup.v1 (attrib-show on an array job's id).
std::string render_array_rollup_text(const nlohmann::json& report);

}  // namespace attrib::show
