// What the SQLite engine's files share (job_store.cpp, job_queue.cpp, verdict_archive.cpp,
// schema_migrations.cpp): the rows more than one of them writes. Internal to
// attributiond/store/; nothing outside it includes this.
#pragma once

#include "attrib/v1/attrib.pb.h"
#include "attributiond/store/job_key.h"
#include "attributiond/store/sqlite.h"
#include "core/result.h"
#include "core/types.h"
#include "core/verdict.h"

namespace attrib::store::detail {

inline Error db_error(const Statement& stmt) { return Error{kDbStep, stmt.error()}; }

// Who besides admins may read a job's rows: its uid, or its user name resolved (an older
// hook sent only the name); none when neither is known.
void bind_owner(Statement& stmt, int index, const v1::JobEnded& request);

// One history row per archived verdict (fleet_queries.h): written by archive and revise,
// and by the backfill for verdicts archived before the table existed. Only a root cause
// blames a node: AMBIGUOUS, UNATTRIBUTED and NONE rows keep node ''.
Status insert_history(Database& db, const JobKey& key, const Verdict& verdict, const v1::JobEnded& request,
                      TimeUs archived);

}  // namespace attrib::store::detail
