// Archived evidence -> evidence bundle v1, so any attributed job can be replayed offline
// (attrib-show --export-bundle, attrib-replay) and give the same verdict.
//
// The archive keeps events, not raw files: each event's line is written once as a
// journald JSON export line (<node>/<source>.jsonl) carrying its time, its stream
// position (ATTRIB_SEQ), how often it occurred (ATTRIB_COUNT) and its trust
// (_TRANSPORT / _UID), which the bundle reader turns back into exactly those LogLines.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/types.h"
#include "core/verdict.h"
#include "rules/evidence/bundle.h"
#include "rules/evidence/raw_lines.h"

namespace attrib::rules {

// The evidence as collected for one attempt: every line each source returned, and the
// coverage rows as the collectors reported them.
struct RawEvidence {
  RawLines lines;
  std::vector<Coverage> coverage;
  std::optional<TimeUs> window_start;  // the window the collectors read
  std::optional<TimeUs> window_end;
};

// Raw evidence -> bundle v1 files: job.json with the collection's window, one
// <node>/<source>.jsonl per stream read (each line with its time, stream position and
// trust), and coverage.json: replaying them gives the verdict the daemon gave.
// archived_bundle_files(archive_files(...)). Error code BUNDLE_E_EXPORT: a node that is
// no host name, a source with no bundle file name.
Result<BundleFiles> raw_bundle_files(const JobFacts& facts, const RawEvidence& evidence);
// What the archive packs of raw evidence: the same job.json and coverage.json, but each
// stream as its compact records (<node>/<source>.attrib-lines, rules/raw_lines.h), a
// third of the journal JSON and no per-line formatting when a job ends; moved in, the
// records are not copied. Same errors.
Result<BundleFiles> archive_files(const JobFacts& facts, RawEvidence evidence);
// Archived files -> bundle v1 files: each .attrib-lines stream becomes the .jsonl
// raw_bundle_files writes; the rest (and an archive from before the records, all .jsonl)
// is kept as it is. Error code EVIDENCE_E_UNPACK: damaged records, a stream named twice.
Result<BundleFiles> archived_bundle_files(BundleFiles files);
// Writes the files into dir (created; must not exist or be empty); a name that would
// leave dir is refused. Error code BUNDLE_E_EXPORT.
Status write_bundle_files(const std::filesystem::path& dir, const BundleFiles& files);
// A run's archived raw evidence (common::unpack_evidence's files) opened as a bundle in
// memory, its archived streams turned back into .jsonl by archived_bundle_files: how the
// tools judge it again (attrib-reattribute, attrib-rules mine). Errors: those of
// archived_bundle_files and open_bundle.
Result<Bundle> open_archived_bundle(BundleFiles files);

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
