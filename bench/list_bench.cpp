// Benchmark 7: reads never block writes. A head database whose archive holds --rows
// (default 1,000,000) verdicts of --users users (default 100), written in one transaction,
// and the head's Attribution gRPC service over it on a unix socket (auth.mode none; no
// workers, so what is timed is the queue insert). One client times --submits (default
// 1,000) SubmitJobEnded calls, one every --interval-ms (default 10) as epilogs arrive: first
// alone (the reference), then while --listers (default 8) threads each list one ordinary
// user's verdicts since the beginning (attrib-show --since, every page) through
// ListVerdicts' read path, over and over.
//
// The listers call the RPC's code after its authentication (auth.mode none makes every
// caller an admin): the same pages, for the user's uid, as the RPC serves a
// MUNGE-authenticated non-admin.
//
// --admin: the listers are admins instead, through the ListVerdicts handler itself: every
// user's verdicts, pages of 1,000, the first page counting the whole history per domain.
//
//   attrib-bench-list [--rows N] [--users N] [--submits N] [--interval-ms N] [--listers N] [--admin]
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "attributiond/fleet/fleet_report.h"
#include "attributiond/ops/grpc_server.h"
#include "bench/head_harness.h"
#include "common/grpc_limits.h"
#include "core/json_text.h"

using namespace attrib;
namespace bench = attrib::bench;
namespace fs = std::filesystem;

namespace {

constexpr TimeUs kFirstUs = 1796083200LL * 1000000;  // 2026-12-01T00:00:00Z
constexpr uint32_t kFirstUid = 20000;
const char* const kFailures[] = {"APPLICATION", "GPU_HARDWARE", "NETWORK", "UNATTRIBUTED"};

// rows archived jobs, one a second, in one transaction with one prepared statement per
// table: user i % users; one job in ten failed (domain by i / users, so every user has
// failures), the others are NONE (successes), as on a real cluster.
Status write_history(store::JobStore& store, int64_t rows, int users) {
  return store.with_db([&](store::Database& db) -> Status {
    store::Transaction tx(db);
    // The rows JobStore::archive writes, owner_uid included (migration 4).
    auto job = db.prepare(
        "INSERT INTO jobs (cluster, job_id, status, request, received_us, verdict_json, domain, archived_us, "
        "done_us, owner_uid) VALUES ('lab', ?1, 'done', ?2, ?3, ?4, ?5, ?3, ?3, ?6)");
    auto history = db.prepare(
        "INSERT INTO history (cluster, job_id, time_us, user_name, uid, state, domain, rule, action, node, gpu, "
        "affected_nodes, trusted, owner_uid) VALUES ('lab', ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, '', ?9, ?10, ?4)");
    if (!job.ok()) return Error{kDbPrepare, job.error()};
    if (!history.ok()) return Error{kDbPrepare, history.error()};
    for (int64_t i = 0; i < rows; ++i) {
      const std::string id = std::to_string(1000000 + i);
      const uint32_t uid = kFirstUid + static_cast<uint32_t>(i % users);
      const std::string user = "user" + std::to_string(uid);
      const TimeUs time = kFirstUs + i * 1000000;
      const bool failed = (i / users) % 10 == 0;
      const std::string domain = failed ? kFailures[(i / users / 10) % 4] : "NONE";
      const bool blames = domain == "GPU_HARDWARE";
      const std::string node = blames ? "gpu" + std::to_string(i % 512) : "";
      v1::JobEnded request;
      request.set_job_id(id);
      request.set_cluster("lab");
      request.set_user(user);
      request.set_uid(uid);
      request.set_node_list("gpu" + std::to_string(i % 512));
      request.set_end_time_us(time);
      const std::string verdict = R"({"schema":"attrib.verdict.v1","job_id":")" + id + R"(","domain":")" + domain +
                                  R"(","terminal_state":")" + (failed ? "FAILED" : "COMPLETED") + R"("})";
      job.reset().bind(1, id).bind_blob(2, request.SerializeAsString()).bind(3, time).bind(4, verdict).bind(5, domain);
      job.bind(6, int64_t{uid});
      if (auto s = job.run(); !s) return s;
      history.reset()
          .bind(1, id)
          .bind(2, time)
          .bind(3, user)
          .bind(4, int64_t{uid})
          .bind(5, failed ? "FAILED" : "COMPLETED")
          .bind(6, domain)
          .bind(7, blames ? "gpu.fallen_off_bus" : "")
          .bind(8, blames   ? "DRAIN_NODE"
                   : failed ? "FIX_APPLICATION"
                            : "NONE")
          .bind(9, node)
          .bind(10, int64_t{blames});
      if (auto s = history.run(); !s) return s;
    }
    return tx.commit();
  });
}

// One user's listing since the beginning, every page: what attrib-show --since asks the
// daemon for. An ordinary user's goes through ListVerdicts' read path after authentication
// (the store's read connection, the report, its JSON); an admin's (--admin) through the
// RPC handler itself, in-process. Returns the pages read.
int list_everything(store::JobStore& store, head::AttributionService& service, std::optional<uint32_t> uid,
                    std::vector<double>& page_ms) {
  v1::VerdictListRequest request;
  request.set_limit(1000);  // as attrib-show asks
  int pages = 0;
  while (true) {
    const double t0 = bench::now_s();
    v1::FleetReport response;
    if (uid) {
      store::VerdictQuery query;
      query.cluster = "lab";
      query.owner = *uid;
      query.limit = request.limit();
      if (request.has_after())
        query.after = store::PageKey{request.after().time_us(), request.after().cluster(), request.after().job_id()};
      std::optional<store::PageKey> next;
      auto report =
          store.with_read_db([&](store::Database& db) { return fleet::verdict_list_report(db, query, &next); });
      if (!report) throw std::runtime_error("listing: " + report.error().message);
      response.set_json(json_text(*report));
      if (next) {
        response.mutable_next()->set_time_us(next->time_us);
        response.mutable_next()->set_cluster(next->cluster);
        response.mutable_next()->set_job_id(next->job_id);
      }
    } else if (grpc::Status status = service.ListVerdicts(nullptr, &request, &response); !status.ok()) {
      throw std::runtime_error("listing: " + status.error_message());
    }
    page_ms.push_back((bench::now_s() - t0) * 1000.0);
    ++pages;
    if (!response.has_next()) return pages;
    *request.mutable_after() = response.next();
  }
}

// count SubmitJobEnded calls, one after another, each interval_ms after the previous one
// began (as epilogs arrive; it keeps the listers running for the whole phase); their wall
// times in ms.
std::vector<double> submit(v1::Attribution::Stub& stub, int first, int count, int interval_ms, int& failures) {
  std::vector<double> ms;
  auto next = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) {
    std::this_thread::sleep_until(next);
    next += std::chrono::milliseconds(interval_ms);
    v1::JobEnded job;
    job.set_job_id(std::to_string(first + i));
    job.set_node_list("gpu1");
    job.set_user("user" + std::to_string(kFirstUid));
    job.set_uid(kFirstUid);
    job.set_hook(v1::HOOK_KIND_EPILOG_SLURMCTLD);
    job.set_exit_code(1);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    v1::SubmitResponse response;
    const double t0 = bench::now_s();
    const bool ok = stub.SubmitJobEnded(&context, job, &response).ok() && response.accepted();
    ms.push_back((bench::now_s() - t0) * 1000.0);
    if (!ok) ++failures;
  }
  return ms;
}

void print_latency(const char* what, const std::vector<double>& ms) {
  std::printf("%s: %zu calls, p50 %.2f ms, p99 %.2f ms, max %.2f ms, over the epilog's 1 s deadline: %zu\n", what,
              ms.size(), bench::percentile(ms, 50), bench::percentile(ms, 99),
              ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end()),
              static_cast<size_t>(std::count_if(ms.begin(), ms.end(), [](double v) { return v > 1000; })));
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 1000000;
  int users = 100, submits = 1000, listers = 8, interval_ms = 10;
  bool admin = false;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    const bool value = i + 1 < argc;
    if (key == "--admin") {
      admin = true;
    } else if (key == "--rows" && value) {
      rows = std::stoll(argv[++i]);
    } else if (key == "--users" && value) {
      users = std::stoi(argv[++i]);
    } else if (key == "--submits" && value) {
      submits = std::stoi(argv[++i]);
    } else if (key == "--interval-ms" && value) {
      interval_ms = std::stoi(argv[++i]);
    } else if (key == "--listers" && value) {
      listers = std::stoi(argv[++i]);
    } else {
      std::fprintf(
          stderr,
          "usage: attrib-bench-list [--rows N] [--users N] [--submits N] [--interval-ms N] [--listers N] [--admin]\n");
      return 2;
    }
  }
  if (users < listers || users <= 0) {
    std::fprintf(stderr, "attrib-bench-list: --users must be at least --listers\n");
    return 2;
  }
  bench::print_machine();
  spdlog::set_level(spdlog::level::warn);  // one info line per job would be timed too
  const fs::path dir = bench::work_dir("list");
  auto config = bench::head_config(dir, ATTRIB_BENCH_PACK_DIR);
  auto opened = store::JobStore::open(config.head.database);
  if (!opened) {
    std::fprintf(stderr, "attrib-bench-list: %s\n", opened.error().message.c_str());
    return 1;
  }
  std::unique_ptr<store::JobStore> store = std::move(*opened);
  double t0 = bench::now_s();
  if (auto s = write_history(*store, rows, users); !s) {
    std::fprintf(stderr, "attrib-bench-list: writing the history: %s\n", s.error().message.c_str());
    return 1;
  }
  const double generate_s = bench::now_s() - t0;
  std::printf("archive: %" PRId64 " verdicts of %d users (%" PRId64 " each, one in ten failed) written in %.1f s\n",
              rows, users, rows / users, generate_s);

  head::AttributionService service(
      *store, config.cluster, [] {}, common::Authenticator::none());
  auto server = ops::start_grpc_server(config.head.listen, service, common::kMaxGrpcMessageBytes);
  if (!server) {
    std::fprintf(stderr, "attrib-bench-list: %s\n", server.error().message.c_str());
    return 1;
  }
  auto stub = bench::client(config.head.listen[0]);
  int failures = 0;
  submit(*stub, 1, 20, 0, failures);  // warm-up: the channel connects
  const auto alone = submit(*stub, 100, submits, interval_ms, failures);
  print_latency("SubmitJobEnded alone", alone);

  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::vector<double> page_ms;
  std::atomic<int64_t> listings{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < listers; ++t)
    threads.emplace_back([&, t] {
      std::vector<double> mine;
      while (!stop) {
        std::optional<uint32_t> uid;
        if (!admin) uid = kFirstUid + static_cast<uint32_t>(t);
        list_everything(*store, service, uid, mine);
        ++listings;
      }
      std::lock_guard lock(mutex);
      page_ms.insert(page_ms.end(), mine.begin(), mine.end());
    });
  t0 = bench::now_s();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // every lister under way
  const auto listing = submit(*stub, 100 + submits, submits, interval_ms, failures);
  stop = true;
  for (auto& t : threads) t.join();
  const double listing_s = bench::now_s() - t0;  // from the first listing to the last
  print_latency("SubmitJobEnded while users list", listing);
  std::printf("listings: %d %s threads, %" PRId64
              " complete listings (%zu pages) in %.1f s; page p50 %.2f ms, p99 %.2f ms\n",
              listers, admin ? "admin" : "non-admin", listings.load(), page_ms.size(), listing_s,
              bench::percentile(page_ms, 50), bench::percentile(page_ms, 99));
  (*server)->Shutdown();

  bench::figure("list.generate_seconds", generate_s, "s");
  bench::figure("list.submit_alone_p50_ms", bench::percentile(alone, 50), "ms");
  bench::figure("list.submit_alone_p99_ms", bench::percentile(alone, 99), "ms");
  bench::figure("list.submit_listing_p50_ms", bench::percentile(listing, 50), "ms");
  bench::figure("list.submit_listing_p99_ms", bench::percentile(listing, 99), "ms");
  bench::figure("list.page_p99_ms", bench::percentile(page_ms, 99), "ms");
  bench::figure("list.listings_per_s", static_cast<double>(listings.load()) / listing_s, "listings/s");
  bench::target("list submit p99 < 50 ms while users list", bench::percentile(listing, 99), 50, true);
  store.reset();
  fs::remove_all(dir);
  return failures == 0 ? 0 : 1;
}
