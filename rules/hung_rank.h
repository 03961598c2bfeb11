// Which rank the others were waiting on when a job's collectives stopped: the ranks'
// flight-recorder dumps (collector flight_recorder, events collective.rank_state) say
// how far each rank got in each process group; one that never reached the collective
// the others had entered is the one they waited on. Without dumps, the same from the
// framework's own lines: the watchdog's "last enqueued NCCL work" per rank
// (nccl.watchdog_exception), or PyTorch's desync report naming the lagging ranks
// (nccl.desync_lagging). docs/verdict-reference.md, "Hung rank".
#pragma once

#include <optional>
#include <vector>

#include "core/types.h"
#include "core/verdict.h"

namespace attrib::rules::detail {

inline constexpr const char* kRankStateKind = "collective.rank_state";

// A rank's flight-recorder summary: read here, not listed as evidence.
inline bool is_rank_state(const Event& e) { return e.kind == kRankStateKind; }

std::optional<HungRank> find_hung_rank(const std::vector<Event>& events);

}  // namespace attrib::rules::detail
