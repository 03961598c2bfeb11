// The archive's schema history: every migration the SQLite file has had, in order
// (kMigrations, PRAGMA user_version counts them), and the backfills that fill what a
// migration added for rows written before it. Append-only: a shipped migration is never
// edited (tests/fixtures/archive holds an archive of each version); a new one goes last.
// Internal to attributiond/store/: JobStore::open is the only caller.
#pragma once

#include <string>

#include "attributiond/store/sqlite.h"
#include "core/result.h"

namespace attrib::store::detail {

// The daemon's way in: the file brought to this build's schema, then the backfills (they
// find nothing to do once done, so every open runs them).
Status migrate_schema(Database& db);

// A tool's way in: the archive must exist and have exactly this build's schema. Checked on
// a read-only connection, so a missing file is not created and an old one not migrated.
Status check_schema_current(const std::string& path);

}  // namespace attrib::store::detail
