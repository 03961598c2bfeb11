// The engine's one event order and one notion of "identical events".
//
// Order: timed events first, by (time, node, source, seq); then untimed events by
// (node, source, seq), i.e. in stream order. Remaining ties break on kind, rule,
// line and fields so the order is total and independent of input order.
#pragma once

#include <string>

#include "core/types.h"

namespace attrib::rules::detail {

bool event_less(const Event& a, const Event& b);

// Events with equal fold keys are one event with a count (time and seq excluded:
// the folded event keeps its earliest occurrence).
std::string fold_key(const Event& e);

// Merges `other` (same fold key) into `into`: adds counts, keeps the earliest occurrence.
void fold_into(Event& into, const Event& other);

// "0000:3b:00" -> "0000:3b:00.0"; "00000000:3B:00.0" -> "0000:3b:00.0".
std::string normalize_pci(const std::string& pci);

}  // namespace attrib::rules::detail
