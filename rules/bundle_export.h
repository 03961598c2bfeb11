// Archived evidence -> evidence bundle v1, so any attributed job can be replayed offline
// (attrib-show --export-bundle, attrib-replay) and give the same verdict.
//
// The archive keeps events, not raw files: each event's line is written once as a
// journald JSON export line (<node>/<source>.jsonl) carrying its time, its stream
// position (ATTRIB_SEQ), how often it occurred (ATTRIB_COUNT) and its trust
// (_TRANSPORT / _UID), which the bundle reader turns back into exactly those LogLines.
#pragma once

#include <filesystem>
#include <vector>

#include "core/result.h"
#include "core/types.h"
#include "core/verdict.h"

namespace attrib::rules {

// Writes a bundle into dir (created; must not exist or be empty). Events without a node
// (the synthetic accounting event) are not written: replay derives it from job.json.
// Coverage rows that were read (ok, empty, partial) get a file even when they hold no
// event, so the node does not look unavailable on replay. Error code BUNDLE_E_EXPORT.
Status write_bundle(const std::filesystem::path& dir, const JobFacts& facts, const std::vector<Event>& events,
                    const std::vector<Coverage>& coverage);

// What a verdict (e.g. from GetVerdict) says about the job: id, cluster, attempt, state,
// exit code, signal, nodes, and the end time carried by its accounting event.
JobFacts facts_from_verdict(const Verdict& verdict);
// Every event a verdict mentions (root cause, symptoms, unexplained), each once.
std::vector<Event> events_of_verdict(const Verdict& verdict);
// write_bundle(dir, facts_from_verdict(v), events_of_verdict(v), v.coverage).
Status export_verdict_bundle(const std::filesystem::path& dir, const Verdict& verdict);

}  // namespace attrib::rules
