// Pages of the archive's listings (ListVerdicts, the dashboard): at most kMaxPageRows rows,
// whoever asks, and the next page starts after the last row's key by an index seek, never
// by an OFFSET that walks every row before it. A listing is one short read however long
// the history, so no caller can hold a connection for the length of the archive.
#pragma once

#include <cstddef>
#include <string>

#include "core/types.h"

namespace attrib::store {

// The most rows one page holds: admins' requests are capped too.
inline constexpr size_t kMaxPageRows = 1000;

// A row's place in a listing ordered by (time, cluster, job): the key of a page's last
// row, from which the next page continues.
struct PageKey {
  TimeUs time_us = 0;
  std::string cluster, job_id;
};

}  // namespace attrib::store
