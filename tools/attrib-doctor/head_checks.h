// attrib-doctor's checks of the head host: munged encodes and decodes, attributiond
// answers an admin's call, and its archive (schema, size against archive.max_bytes, the
// last retention pass, the disk under it).
#pragma once

#include "common/config.h"
#include "core/types.h"
#include "tools/attrib-doctor/findings.h"

namespace attrib::doctor {

void check_munge(const common::Config& config, Findings& out);
void check_head_and_archive(const common::Config& config, TimeUs now, Findings& out);

// The archive's figures as GetArchiveStats reports them (its JSON), judged against the
// configuration: for its tests.
void judge_archive(const common::Config& config, const nlohmann::json& stats, TimeUs now, Findings& out);

}  // namespace attrib::doctor
