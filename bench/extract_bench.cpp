// Benchmark 1: extraction throughput. The full shipped rule pack, single-threaded, over
// the corpus from attrib-bench-gen, producing typed events, against ripgrep on the same
// file with the pack's own patterns (`attrib-rules export-patterns`), in the same run.
//
//   attrib-bench-extract --corpus corpus.log --pack rules/pack [--rg] [--attrib-rules BIN]
//
// Two ways through the engine, on the same bytes:
//   - by line (the reference): each line dated and its prefix cut off (parse_line_stamp),
//     then Extractor::feed -- what a collector handing over one line at a time costs;
//   - by run (the figure): the corpus split beforehand, untimed, into the files a node
//     keeps per source (kern.log, syslog, the Fabric Manager log, the job's output), each
//     read in 1 MiB pieces and handed to Extractor::feed_lines, which scans a piece at once
//     and dates only the lines a rule may match.
// Both must give the same events. A line's source comes from its prefix: a Fabric Manager
// stamp is `fabricmanager`, a syslog header is `kernel` when the ident is "kernel" and
// `syslog` otherwise, anything else is the job's output (`app`). MB are 10^6 bytes.
#include <fcntl.h>
#include <string.h>  // memrchr
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "rules/engine.h"
#include "rules/line_time.h"

using namespace attrib;
namespace bench = attrib::bench;

namespace {

struct Options {
  std::string corpus;
  std::string pack = ATTRIB_BENCH_PACK_DIR;
  std::string attrib_rules = ATTRIB_BENCH_ATTRIB_RULES;
  bool rg = false;
  bool by_line = true;  // --no-by-line: the figure's path alone (for a profile of it)
};

// Calls visit(piece) for the file in pieces of about 1 MiB that end at a line's end (what
// a collector reading a file hands the engine), the last one as it ends.
template <typename Visit>
uint64_t for_each_piece(const std::string& path, Visit&& visit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::perror(path.c_str());
    std::exit(1);
  }
  std::vector<char> buf(1 << 20);
  size_t have = 0;
  uint64_t total = 0;
  for (;;) {
    ssize_t n = ::read(fd, buf.data() + have, buf.size() - have);
    if (n < 0) {
      std::perror("read");
      std::exit(1);
    }
    total += static_cast<uint64_t>(n);
    have += static_cast<size_t>(n);
    if (n == 0) {
      if (have > 0) visit(std::string_view(buf.data(), have));
      break;
    }
    const void* last = ::memrchr(buf.data(), '\n', have);
    if (last == nullptr) {  // one line longer than the buffer
      if (have == buf.size()) buf.resize(buf.size() * 2);
      continue;
    }
    const size_t end = static_cast<size_t>(static_cast<const char*>(last) - buf.data()) + 1;
    visit(std::string_view(buf.data(), end));
    std::memmove(buf.data(), buf.data() + end, have - end);
    have -= end;
  }
  ::close(fd);
  return total;
}

// Calls visit(line) for every line of the file, read in large pieces (no per-line I/O).
template <typename Visit>
uint64_t for_each_line(const std::string& path, Visit&& visit) {
  return for_each_piece(path, [&](std::string_view piece) {
    while (!piece.empty()) {
      const size_t nl = piece.find('\n');
      visit(piece.substr(0, nl));
      piece.remove_prefix(nl == std::string_view::npos ? piece.size() : nl + 1);
    }
  });
}

struct ExtractResult {
  uint64_t bytes = 0, lines = 0, events = 0, occurrences = 0;
  std::map<std::string, uint64_t> per_source;
  std::map<std::string, uint64_t> per_kind;
  double seconds = 0;
};

const char* const kSources[] = {"kernel", "syslog", "fabricmanager", "app"};

rules::TimeContext bench_time_context() {
  rules::TimeContext context;
  context.reference = rules::civil_to_us(2026, 11, 30, 12, 0, 0, 0);
  return context;
}

// Which of kSources a corpus line is, and its stamp.
int source_of(std::string_view text, const rules::TimeContext& context, rules::LineStamp& stamp) {
  stamp = rules::parse_line_stamp(text, context, true);
  if (stamp.format == rules::StampFormat::FabricManager) return 2;
  if (stamp.format == rules::StampFormat::Syslog)
    return text.substr(0, stamp.payload_offset).find(" kernel: ") != std::string_view::npos ? 0 : 1;
  stamp = rules::parse_line_stamp(text, context, false);
  return 3;
}

void summarise(ExtractResult& r, const std::vector<Event>& events, const uint64_t counts[4]) {
  for (int i = 0; i < 4; ++i) {
    r.per_source[kSources[i]] = counts[i];
    r.lines += counts[i];
  }
  r.events = events.size();
  for (const Event& e : events) {
    r.occurrences += e.count;
    r.per_kind[e.kind] += e.count;
  }
}

// The reference: every line dated, cut and fed on its own.
ExtractResult run_by_line(const Options& options, std::shared_ptr<const rules::RulePack> pack) {
  ExtractResult r;
  const rules::TimeContext context = bench_time_context();
  LogLine lines[4];
  for (int i = 0; i < 4; ++i) {
    lines[i].node = "gpu017";
    lines[i].source = kSources[i];
    lines[i].trusted = i != 3;  // system logs are root-written; job output is not
  }
  uint64_t counts[4] = {0, 0, 0, 0};
  const double t0 = bench::now_s();
  rules::Extractor extractor(pack);
  r.bytes = for_each_line(options.corpus, [&](std::string_view text) {
    if (text.empty()) return;
    rules::LineStamp stamp;
    const int source = source_of(text, context, stamp);
    LogLine& line = lines[source];
    line.time = stamp.time;
    line.seq = counts[source]++;
    line.text.assign(text.substr(stamp.payload_offset));
    extractor.feed(line);
  });
  std::vector<Event> events = extractor.finish();
  r.seconds = bench::now_s() - t0;
  summarise(r, events, counts);
  return r;
}

// The corpus as the files a node keeps per source (untimed); their paths by kSources.
std::vector<std::string> split_by_source(const Options& options) {
  const rules::TimeContext context = bench_time_context();
  std::vector<std::string> paths;
  std::vector<FILE*> files;
  for (const char* source : kSources) {
    paths.push_back(options.corpus + "." + source);
    files.push_back(std::fopen(paths.back().c_str(), "w"));
    if (files.back() == nullptr) {
      std::perror(paths.back().c_str());
      std::exit(1);
    }
  }
  for_each_line(options.corpus, [&](std::string_view text) {
    if (text.empty()) return;
    rules::LineStamp stamp;
    FILE* out = files[static_cast<size_t>(source_of(text, context, stamp))];
    std::fwrite(text.data(), 1, text.size(), out);
    std::fputc('\n', out);
  });
  for (FILE* f : files) std::fclose(f);
  return paths;
}

// The figure: each source's file in 1 MiB pieces of whole lines through feed_lines.
ExtractResult run_by_run(const std::vector<std::string>& paths, std::shared_ptr<const rules::RulePack> pack) {
  ExtractResult r;
  const rules::TimeContext context = bench_time_context();
  uint64_t counts[4] = {0, 0, 0, 0};
  const double t0 = bench::now_s();
  rules::Extractor extractor(pack);
  for (int i = 0; i < 4; ++i) {
    const bool system_log = i != 3;
    LineRun run;
    run.node = "gpu017";
    run.source = kSources[i];
    run.trusted = system_log;
    run.prefix = [&](std::string_view line) -> std::optional<LineRun::Prefix> {
      const rules::LineStamp stamp = rules::parse_line_stamp(line, context, system_log);
      return LineRun::Prefix{stamp.time, stamp.payload_offset};
    };
    r.bytes += for_each_piece(paths[static_cast<size_t>(i)], [&](std::string_view piece) {
      run.first_seq = counts[i];
      run.text = piece;
      counts[i] += extractor.feed_lines(run);
    });
  }
  std::vector<Event> events = extractor.finish();
  r.seconds = bench::now_s() - t0;
  summarise(r, events, counts);
  return r;
}

void print_result(const char* name, ExtractResult& a) {
  std::printf("%s: %" PRIu64 " bytes, %" PRIu64 " lines (kernel %" PRIu64 ", syslog %" PRIu64 ", fabricmanager %" PRIu64
              ", app %" PRIu64 "), %" PRIu64 " events from %" PRIu64 " matching lines (%.3f%%), %.3f s\n",
              name, a.bytes, a.lines, a.per_source["kernel"], a.per_source["syslog"], a.per_source["fabricmanager"],
              a.per_source["app"], a.events, a.occurrences,
              a.lines ? 100.0 * static_cast<double>(a.occurrences) / static_cast<double>(a.lines) : 0.0, a.seconds);
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string key = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "attrib-bench-extract: %s needs a value\n", key.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (key == "--corpus")
      options.corpus = value();
    else if (key == "--pack")
      options.pack = value();
    else if (key == "--attrib-rules")
      options.attrib_rules = value();
    else if (key == "--rg")
      options.rg = true;
    else if (key == "--no-by-line")
      options.by_line = false;
    else {
      std::fprintf(stderr, "usage: attrib-bench-extract --corpus FILE [--pack DIR] [--rg] [--no-by-line] [--attrib-rules BIN]\n");
      return 2;
    }
  }
  if (options.corpus.empty()) {
    std::fprintf(stderr, "usage: attrib-bench-extract --corpus FILE [--pack DIR] [--rg] [--no-by-line] [--attrib-rules BIN]\n");
    return 2;
  }
  bench::print_machine();
  auto pack = rules::load_rule_pack({options.pack, {}});
  if (!pack) {
    std::fprintf(stderr, "attrib-bench-extract: %s %s\n", pack.error().code.c_str(), pack.error().message.c_str());
    return 1;
  }
  const auto stats = rules::pack_stats(**pack);
  std::printf("pack: %zu extraction rules (%zu by prefilter literal, %zu by regex, %zu on every line)\n",
              stats.extraction_rules, stats.scan_literal_rules, stats.scan_regex_rules, stats.scan_fallbacks.size());

  // Warm the page cache so both tools read from memory.
  for_each_line(options.corpus, [](std::string_view) {});

  const std::vector<std::string> paths = split_by_source(options);
  ExtractResult a = run_by_run(paths, *pack);
  print_result("attrib by run", a);
  for (const auto& [kind, n] : a.per_kind) std::printf("  %-28s %" PRIu64 "\n", kind.c_str(), n);
  const double attrib_mb_s = static_cast<double>(a.bytes) / 1e6 / a.seconds;
  bench::figure("extract.attrib_mb_s", attrib_mb_s, "MB/s");
  bench::figure("extract.attrib_lines_s", static_cast<double>(a.lines) / a.seconds, "lines/s");
  bench::target("extract MB/s >= 1000", attrib_mb_s, 1000.0, false);
  for (int i = 0; i < 2 && !options.by_line; ++i) run_by_run(paths, *pack);  // more samples for a profile
  for (const auto& path : paths) std::remove(path.c_str());
  if (!options.by_line) return 0;

  ExtractResult line = run_by_line(options, *pack);
  print_result("attrib by line", line);
  bench::figure("extract.by_line_mb_s", static_cast<double>(line.bytes) / 1e6 / line.seconds, "MB/s");
  bench::figure("extract.by_run_over_by_line", line.seconds / a.seconds, "x");
  const bool same = a.per_kind == line.per_kind && a.per_source == line.per_source && a.events == line.events;
  std::printf("by run and by line give the same events: %s\n", same ? "yes" : "NO");
  if (!same) return 1;

  if (!options.rg) return 0;
  const std::string patterns = options.corpus + ".patterns";
  const std::string export_cmd = shell_quote(options.attrib_rules) + " export-patterns --pack " +
                                 shell_quote(options.pack) + " > " + shell_quote(patterns);
  if (std::system(export_cmd.c_str()) != 0) {
    std::fprintf(stderr, "attrib-bench-extract: %s failed\n", export_cmd.c_str());
    return 1;
  }
  // One thread (-j1) on one file, like the engine; output read through a pipe (ripgrep
  // stops at the first match when its output is /dev/null).
  const std::string rg_cmd = "rg --no-config -j1 --no-filename --no-line-number -f " + shell_quote(patterns) + " " +
                             shell_quote(options.corpus);
  std::printf("ripgrep: %s\n", rg_cmd.c_str());
  const double t0 = bench::now_s();
  FILE* pipe = ::popen(rg_cmd.c_str(), "r");
  if (!pipe) {
    std::perror("popen rg");
    return 1;
  }
  uint64_t rg_lines = 0;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0)
    for (size_t k = 0; k < n; ++k) rg_lines += buf[k] == '\n';
  const int rc = ::pclose(pipe);
  const double rg_s = bench::now_s() - t0;
  if (rc != 0 && WEXITSTATUS(rc) != 1) {  // 1: no match
    std::fprintf(stderr, "attrib-bench-extract: ripgrep failed (status %d)\n", rc);
    return 1;
  }
  const double rg_mb_s = static_cast<double>(a.bytes) / 1e6 / rg_s;
  std::printf("ripgrep: %" PRIu64 " matching lines, %.3f s\n", rg_lines, rg_s);
  bench::figure("extract.ripgrep_mb_s", rg_mb_s, "MB/s");
  bench::figure("extract.ratio_attrib_over_ripgrep", attrib_mb_s / rg_mb_s, "x");
  bench::target("extract ratio >= 2.0", attrib_mb_s / rg_mb_s, 2.0, false);
  return 0;
}
