// The SQLite engine's shared part: open() (schema checked or migrated, the two
// connections, the checkpointer) and the rows both the archive and the schema history
// write. The queue is job_queue.cpp, the archive verdict_archive.cpp, the schema history
// schema_migrations.cpp.
#include "attributiond/store/job_store.h"

#include <cctype>

#include "attributiond/store/schema_migrations.h"
#include "attributiond/store/store_rows.h"
#include "common/auth.h"

namespace attrib::store {
namespace {

// The GPU a verdict blames on its root cause node: the only affected GPU there, or the
// one the root cause event names (its raw "0000:3b:00" prefixes the normalised form).
std::string blamed_gpu(const Verdict& verdict, const std::string& node) {
  std::vector<std::string> on_node;
  for (const AffectedGpu& gpu : verdict.affected_gpus)
    if (gpu.node == node) on_node.push_back(gpu.pci);
  if (on_node.size() == 1) return on_node.front();
  const auto& fields = verdict.root_cause->event.fields;
  if (auto pci = fields.find("pci"); pci != fields.end() && pci->is_string() && !pci->get<std::string>().empty()) {
    std::string raw = pci->get<std::string>();
    for (char& c : raw) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const std::string& gpu : on_node)
      if (gpu.rfind(raw, 0) == 0 || gpu.find(raw) != std::string::npos) return gpu;
  }
  return "";
}

}  // namespace

namespace detail {

void bind_owner(store::Statement& stmt, int index, const v1::JobEnded& request) {
  if (auto owner = common::job_owner_uid(request.uid(), request.user()))
    stmt.bind(index, static_cast<int64_t>(*owner));
  else
    stmt.bind_null(index);
}

Status insert_history(store::Database& db, const JobKey& key, const Verdict& verdict, const v1::JobEnded& request,
                      TimeUs archived) {
  TimeUs time = request.end_time_us() > 0    ? request.end_time_us()
                : request.hook_time_us() > 0 ? request.hook_time_us()
                                             : archived;
  std::string node, gpu, rule;
  bool trusted = false;
  if (verdict.root_cause) {
    node = verdict.root_cause->event.node;
    gpu = blamed_gpu(verdict, node);
    rule = verdict.root_cause->rule;
    trusted = verdict.root_cause->event.trusted;
  }
  std::string affected;
  for (const std::string& n : verdict.affected_nodes) affected += (affected.empty() ? "" : ",") + n;
  auto ins = db.prepare(
      "INSERT OR IGNORE INTO history (cluster, job_id, run, time_us, user_name, uid, state, domain, rule, action, "
      "node, gpu, affected_nodes, trusted, owner_uid) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  ins.bind(1, key.cluster)
      .bind(2, key.job_id)
      .bind(3, key.run)
      .bind(4, time)
      .bind(5, request.user())
      .bind(6, static_cast<int64_t>(request.uid()))
      .bind(7, verdict.terminal_state)
      .bind(8, verdict.domain)
      .bind(9, rule)
      .bind(10, verdict.recommended_action)
      .bind(11, node)
      .bind(12, gpu)
      .bind(13, affected)
      .bind(14, int64_t{trusted});
  bind_owner(ins, 15, request);
  return ins.run();
}

}  // namespace detail

Result<std::unique_ptr<JobStore>> JobStore::open(const std::string& path, StoreAccess access) {
  if (access == StoreAccess::Tool) {
    if (auto s = detail::check_schema_current(path); !s) return s.error();
  }
  auto db = store::Database::open(path);
  if (!db) return db.error();
  if (access == StoreAccess::Daemon) {
    if (auto s = detail::migrate_schema(*db); !s) return s.error();
  }
  // Opened after the writer made the file WAL and current: readers never create or migrate.
  auto read_db = store::Database::open_read_only(path);
  if (!read_db) return read_db.error();
  std::unique_ptr<JobStore> store(new JobStore(std::move(*db), std::move(*read_db)));
  auto checkpointer = store::WalCheckpointer::start(store->db_, path);
  if (!checkpointer) return checkpointer.error();
  store->checkpointer_ = std::move(*checkpointer);
  return store;
}

}  // namespace attrib::store
