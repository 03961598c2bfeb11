// A bundle's files packed into one zstd-compressed blob: how the archive keeps the raw
// evidence of an attempt (table `evidence`, its streams as compact records:
// rules/bundle_export.h archive_files) and how GetVerdict hands it, as bundle v1 files, to
// `attrib-show --export-bundle`. The packed form is a sequence of entries
// "<path>\n<size>\n<content>" (paths relative to the bundle directory, no newline in them).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/result.h"

namespace attrib::common {

using PackedFiles = std::map<std::string, std::string>;  // relative path -> content

// zstd level 1: on the benchmark's generated node log (8 MB) 654 MB/s and 7.1x, where
// level 3 did 404 MB/s and 6.6x (zstd -b, 2026-12-04), and every job end packs one. Empty
// only when zstd cannot allocate its context (the caller then keeps no evidence, and says so).
std::string pack_evidence(const PackedFiles& files);
// Error code EVIDENCE_E_UNPACK: not zstd, a truncated or damaged blob, a bad entry.
Result<PackedFiles> unpack_evidence(std::string_view blob);

}  // namespace attrib::common
