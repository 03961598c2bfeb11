// Extractor: lines -> folded events.
//
// Per line, one candidate scan (candidate_scan.h) over every rule of the line's source
// flags the rules that may match; only those run their prefilter and RE2 regex
// (match_line). Without a scanner (the RE2-only reference mode) every rule is a
// candidate, which is the same result by construction: the scan only ever over-approximates.
//
// Block rules (multi-line, docs/rules.md) keep per (node, source) stream state: lines of
// one stream arrive in order, so a block's start, body and end are consecutive there.
// Identical events fold into one entry with a count.
//
// Trust by structure (docs/security.md): a system log's line is matched from the start of
// its emitter's message, never inside it, and a line of a format that embeds user-chosen
// text (a rule with claims_line) is that format only: no other rule reads it.
#include <string.h>  // memrchr

#include <algorithm>
#include <cstring>
#include <tuple>
#include <unordered_map>

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "core/utf8.h"
#include "rules/candidate_scan.h"
#include "rules/event_order.h"
#include "rules/rule_pack.h"

namespace attrib::rules {

namespace {

// The rules one source reads, and how to find candidates among them.
struct SourceRules {
  std::vector<const detail::CompiledExtractionRule*> rules;  // load order
  const detail::ScanSet* set = nullptr;                      // null: every rule is a candidate
  std::vector<size_t> block_rules;                           // positions of block rules in `rules`
};

// Block state of one (node, source) stream: its physical line count and one tracker per
// block rule of the source (parallel to SourceRules::block_rules).
struct Stream {
  uint64_t lines = 0;
  std::vector<detail::BlockTracker> trackers;
};

// The '\n' bytes in [begin, end): feed_lines counts every line it skips (their seq),
// which is most of a run's bytes. With SSE2 (every x86-64) sixteen bytes at a time: each
// compare gives 0xff per '\n', subtracted into per-byte counters that are summed (psadbw)
// before any can pass 255. Elsewhere eight at a time, an exact zero-byte count per 64-bit
// word (no borrow between bytes, unlike the usual "has a zero byte" test).
uint64_t count_newlines(const char* begin, const char* end) {
  uint64_t n = 0;
#if defined(__SSE2__) && defined(__x86_64__)
  const __m128i newline = _mm_set1_epi8('\n');
  while (end - begin >= 16) {
    __m128i counts = _mm_setzero_si128();
    for (int i = 0; i < 255 && end - begin >= 16; ++i, begin += 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(begin));
      counts = _mm_sub_epi8(counts, _mm_cmpeq_epi8(bytes, newline));
    }
    const __m128i sums = _mm_sad_epu8(counts, _mm_setzero_si128());  // two 64-bit sums
    n += static_cast<uint64_t>(_mm_cvtsi128_si64(sums)) +
         static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
  }
#else
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
  constexpr uint64_t kNewlines = 0x0a0a0a0a0a0a0a0aULL;
  for (; end - begin >= 8; begin += 8) {
    uint64_t word;
    std::memcpy(&word, begin, 8);
    word ^= kNewlines;                                                    // '\n' bytes are now zero
    const uint64_t zero = ~(((word & kLow7) + kLow7) | word | kLow7);  // 0x80 in each zero byte
    n += ((zero >> 7) * 0x0101010101010101ULL) >> 56;  // sum of the 0/1 bytes (no popcnt needed)
  }
#endif
  for (; begin != end; ++begin) n += *begin == '\n';
  return n;
}

}  // namespace

struct Extractor::State {
  std::shared_ptr<const RulePack> pack;
  size_t max_distinct = kDefaultMaxDistinctEvents;
  size_t max_per_stream = kDefaultMaxDistinctEventsPerStream;
  detail::HsScratch scratch;  // this Extractor's own: hs_scan writes into it
  std::unordered_map<std::string, SourceRules> by_source;
  std::unordered_map<std::string, Stream> streams;  // key: node '\0' source
  std::unordered_map<std::string, Event> folded;
  std::vector<char> flags;
  std::vector<size_t> ends;  // feed_lines: occurrence end offsets in the run
  uint64_t dropped = 0;
  struct StreamEvents {
    uint64_t distinct = 0;
    uint64_t dropped = 0;
  };
  std::unordered_map<std::string, StreamEvents> per_stream;  // key: node '\0' source

  // The last line's outcome (see feed): a storm repeats one line, and the same text from
  // the same node, source and trust gives the same candidates and the same events, which
  // fold into the ones already there; only their count, time and seq move.
  struct LastLine {
    const SourceRules* rules = nullptr;
    std::string node;
    bool trusted = false;
    std::string text;
    std::vector<char> flags;             // its candidates, kept when the source has block rules
    std::vector<std::string> fold_keys;  // of the events the line gave (not block events)
    bool claimed = false;                // a claims_line rule took it: no block rule sees it
    bool valid = false;
  } last;

  bool repeats_last(const SourceRules& rules, const LogLine& line) const {
    return last.valid && last.rules == &rules && last.trusted == line.trusted && last.node == line.node &&
           last.text == line.text;
  }

  // The repeated line's events folded into those its first occurrence left; false when
  // one of them is not there (dropped at a cap): the line then goes the whole way.
  bool fold_repeat(const LogLine& line) {
    std::vector<Event*> targets;
    for (const std::string& key : last.fold_keys) {
      auto it = folded.find(key);
      if (it == folded.end()) return false;
      targets.push_back(&it->second);
    }
    Event occurrence;
    occurrence.node = line.node;
    occurrence.source = line.source;
    occurrence.time = line.time;
    occurrence.seq = line.seq;
    occurrence.count = 1;
    for (Event* target : targets) detail::fold_into(*target, occurrence);
    return true;
  }

  const SourceRules& rules_for(const std::string& source) {
    auto it = by_source.find(source);
    if (it != by_source.end()) return it->second;
    SourceRules rules;
    if (pack->scanner) {
      rules.set = pack->scanner->set_for(source);
      if (rules.set != nullptr) rules.rules = rules.set->rules;
    } else if (detail::is_known_source(source)) {
      for (const auto& rule : pack->extraction) {
        if (detail::rule_applies(rule.def, source)) rules.rules.push_back(&rule);
      }
    }
    for (size_t i = 0; i < rules.rules.size(); ++i) {
      if (rules.rules[i]->block) rules.block_rules.push_back(i);
    }
    return by_source.emplace(source, std::move(rules)).first->second;
  }

  // flags[i] = 1 when rules.rules[i] may match `text`.
  void candidates(const SourceRules& rules, std::string_view text) {
    if (rules.set != nullptr) {
      pack->scanner->scan(*rules.set, text, scratch.get(), flags);
    } else {
      flags.assign(rules.rules.size(), 1);
    }
  }

  void add(Event event) {
    std::string key = detail::fold_key(event);
    auto it = folded.find(key);
    if (it != folded.end()) {
      detail::fold_into(it->second, event);
      return;
    }
    StreamEvents& stream = per_stream[event.node + '\0' + event.source];
    if (folded.size() >= max_distinct || stream.distinct >= max_per_stream) {
      ++dropped;
      ++stream.dropped;
      return;
    }
    ++stream.distinct;
    folded.emplace(std::move(key), std::move(event));
  }

  Event event_for(const detail::CompiledExtractionRule& rule, const LogLine& line) const {
    Event event;
    event.kind = rule.def.kind;
    event.rule = rule.def.id;
    event.node = line.node;
    event.source = line.source;
    event.time = line.time;
    event.seq = line.seq;
    // A user's own output is never trusted, whatever the collector claims (Trust).
    event.trusted = line.trusted && !detail::is_application_source(line.source);
    return event;
  }

  // One physical line through the block rules of its stream. `flags` holds this line's
  // candidates.
  void feed_blocks(const SourceRules& rules, Stream& stream, const LogLine& line, std::string_view text) {
    const uint64_t index = ++stream.lines;
    const bool from_start = !detail::is_application_source(line.source);
    for (size_t b = 0; b < rules.block_rules.size(); ++b) {
      const size_t pos = rules.block_rules[b];
      const auto& rule = *rules.rules[pos];
      auto& tracker = stream.trackers[b];
      if (!tracker.empty()) {
        if (auto done = tracker.close(rule, index, text, from_start)) {
          Event event = event_for(rule, line);
          event.time = done->time;  // a block is dated by its first line
          event.seq = done->seq;
          event.trusted = done->trusted && !detail::is_application_source(line.source);
          event.line = std::move(done->line);
          event.fields = std::move(done->fields);
          add(std::move(event));
          continue;  // the line that ends a block does not also start one
        }
      }
      if (!flags[pos]) continue;
      if (auto fields = detail::match_line(rule, text, from_start)) {
        tracker.open(rule, index, text, line.time, line.seq, line.trusted, std::move(*fields));
      }
    }
  }
};

Extractor::Extractor(std::shared_ptr<const RulePack> pack) : Extractor(std::move(pack), kDefaultMaxDistinctEvents) {}

Extractor::Extractor(std::shared_ptr<const RulePack> pack, size_t max_distinct_events, size_t max_distinct_per_stream)
    : state_(std::make_unique<State>()) {
  state_->pack = std::move(pack);
  state_->max_distinct = max_distinct_events;
  state_->max_per_stream = max_distinct_per_stream;
  if (state_->pack->scanner) state_->scratch = state_->pack->scanner->make_scratch();
}

Extractor::~Extractor() = default;

void Extractor::feed(const LogLine& given) {
  // Bytes are bytes: every line from every source is made valid UTF-8 here, once, before
  // any rule, JSON or protobuf sees it (core/utf8.h).
  LogLine repaired;
  const bool valid = is_valid_utf8(given.text);
  if (!valid) {
    repaired = given;
    repaired.text = to_valid_utf8(given.text);
  }
  const LogLine& line = valid ? given : repaired;
  State& s = *state_;
  const SourceRules& rules = s.rules_for(line.source);
  if (rules.rules.empty()) return;
  const bool from_start = !detail::is_application_source(line.source);
  if (s.repeats_last(rules, line) && s.fold_repeat(line)) {
    // The same line again: no scan, no regex; the block rules still see it (below).
    if (s.last.claimed || rules.block_rules.empty()) return;
    s.flags = s.last.flags;
  } else {
    s.candidates(rules, line.text);
    State::LastLine& last = s.last;
    last.valid = false;
    last.fold_keys.clear();
    last.claimed = false;
    auto try_rule = [&](const detail::CompiledExtractionRule& rule) {
      auto fields = detail::match_line(rule, line.text, from_start);
      if (!fields) return false;
      Event event = s.event_for(rule, line);
      event.line = line.text;
      event.fields = std::move(*fields);
      last.fold_keys.push_back(detail::fold_key(event));
      s.add(std::move(event));
      return true;
    };
    // A system log line of a format that carries user text belongs to its own rule alone.
    if (from_start) {
      for (size_t i = 0; i < rules.rules.size(); ++i) {
        const auto& rule = *rules.rules[i];
        if (s.flags[i] && rule.def.claims_line && try_rule(rule)) {
          last.claimed = true;
          break;
        }
      }
    }
    if (!last.claimed) {
      for (size_t i = 0; i < rules.rules.size(); ++i) {
        const auto& rule = *rules.rules[i];
        if (!s.flags[i] || rule.block || (from_start && rule.def.claims_line)) continue;
        try_rule(rule);
      }
    }
    last.rules = &rules;
    last.node = line.node;
    last.trusted = line.trusted;
    last.text = line.text;
    if (!rules.block_rules.empty()) last.flags = s.flags;  // only the block rules read them again
    last.valid = true;
    if (last.claimed) return;
  }
  if (rules.block_rules.empty()) return;

  std::string key = line.node;
  key += '\0';
  key += line.source;
  Stream& stream = s.streams[key];
  if (stream.trackers.empty()) stream.trackers.resize(rules.block_rules.size());
  if (line.text.find('\n') == std::string::npos) {
    s.feed_blocks(rules, stream, line, line.text);
    return;
  }
  // A payload holding several lines (a journald MESSAGE, or a block event exported by
  // attrib-show --export-bundle) is, for block rules, those lines in order.
  for (const auto piece : detail::split_lines(line.text)) {
    s.candidates(rules, piece);
    s.feed_blocks(rules, stream, line, piece);
  }
}

uint64_t Extractor::feed_lines(const LineRun& run) {
  State& s = *state_;
  const std::string_view text = run.text;
  uint64_t seq = run.first_seq;
  LogLine line;
  line.node = run.node;
  line.source = run.source;
  line.trusted = run.trusted;
  // One line of the run, through feed(): dated, its prefix cut off.
  auto feed_one = [&](size_t begin, size_t end) {
    if (line_of(run, text.substr(begin, end - begin), seq, line)) feed(line);
    ++seq;
  };
  auto line_end = [&](size_t from) {
    const void* nl = std::memchr(text.data() + from, '\n', text.size() - from);
    return nl == nullptr ? text.size() : static_cast<size_t>(static_cast<const char*>(nl) - text.data());
  };
  // Lines from `from` to the end of the run (the last one may lack its '\n').
  auto lines_after = [&](size_t from) {
    return count_newlines(text.data() + from, text.data() + text.size()) +
           (from < text.size() && text.back() != '\n' ? 1 : 0);
  };

  const SourceRules& rules = s.rules_for(run.source);
  if (rules.rules.empty()) return lines_after(0);  // no rule reads this source
  std::vector<size_t>& ends = s.ends;
  // The fast path needs a literal-only set (CandidateScanner::scans_lines); otherwise
  // line by line. Bytes that are not UTF-8 need no care here: feed() repairs a candidate
  // line, and a literal found in the repaired line is in the raw bytes too (see there).
  const bool scanned = rules.set != nullptr && detail::CandidateScanner::scans_lines(*rules.set) &&
                       s.pack->scanner->scan_lines(*rules.set, text, s.scratch.get(), ends);
  const Stream* stream = nullptr;  // this run's block state, once feed() has made it
  auto block_open = [&] {
    if (rules.block_rules.empty()) return false;
    if (stream == nullptr) {
      auto it = s.streams.find(run.node + '\0' + run.source);
      if (it == s.streams.end()) return false;
      stream = &it->second;  // unordered_map nodes stay put
    }
    return std::any_of(stream->trackers.begin(), stream->trackers.end(),
                       [](const detail::BlockTracker& t) { return !t.empty(); });
  };

  size_t pos = 0;  // start of the first line not yet fed or counted
  size_t next = 0;  // next occurrence in `ends`
  while (pos < text.size()) {
    if (!scanned || block_open()) {
      // Every line: no scan to go by, or an open block, whose end or body may be any line.
      const size_t end = line_end(pos);
      feed_one(pos, end);
      pos = end + 1;
      continue;
    }
    // Skip to the line holding the next occurrence (its last byte), counting what is passed.
    while (next < ends.size() && ends[next] <= pos) ++next;  // inside lines already fed
    if (next == ends.size()) {
      seq += lines_after(pos);
      break;
    }
    const size_t at = ends[next] - 1;
    const void* before = at > pos ? ::memrchr(text.data() + pos, '\n', at - pos) : nullptr;
    const size_t begin = before == nullptr ? pos : static_cast<size_t>(static_cast<const char*>(before) - text.data()) + 1;
    seq += count_newlines(text.data() + pos, text.data() + begin);
    const size_t end = line_end(at);  // an occurrence ending in '\n' flags the line that '\n' ends
    feed_one(begin, end);
    pos = end + 1;
  }
  return seq - run.first_seq;
}

std::vector<Event> Extractor::finish() {
  // Blocks still open have no end line: incomplete (e.g. output cut off), not reported.
  state_->streams.clear();
  std::vector<Event> events;
  events.reserve(state_->folded.size());
  for (auto& [key, event] : state_->folded) events.push_back(std::move(event));
  state_->folded.clear();
  std::sort(events.begin(), events.end(), detail::event_less);
  return events;
}

uint64_t Extractor::dropped_events() const { return state_->dropped; }

std::vector<Extractor::Dropped> Extractor::dropped_by_stream() const {
  std::vector<Dropped> out;
  for (const auto& [key, stream] : state_->per_stream) {
    if (stream.dropped == 0) continue;
    const size_t nul = key.find('\0');
    out.push_back({key.substr(0, nul), key.substr(nul + 1), stream.dropped});
  }
  std::sort(out.begin(), out.end(),
            [](const Dropped& a, const Dropped& b) { return std::tie(a.node, a.source) < std::tie(b.node, b.source); });
  return out;
}

}  // namespace attrib::rules
