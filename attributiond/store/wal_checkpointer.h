// Moves a database's write-ahead log into the database file on a thread of its own, so
// that the connection that writes never waits for it. SQLite's own autocheckpoint runs
// inside the commit that crosses its threshold, and a checkpoint waits for the disk twice
// (the log synced before it, the file after): in a burst that commit held the store's lock
// for tens of milliseconds every few dozen jobs, and the other worker stood idle behind it
// (a quarter of the CPU left unused in the burst benchmark, docs/benchmarks.md).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "attributiond/store/sqlite.h"
#include "core/result.h"

namespace attrib::store {

class WalCheckpointer {
 public:
  // SQLite's default threshold: a log of this many pages is checkpointed.
  static constexpr int kDefaultPages = 1000;

  // Takes over the checkpoints of `writer`, a connection to `path` that outlives this
  // object: its autocheckpoint is replaced by a hook that wakes a thread checkpointing
  // through a connection of its own each time the log has grown by `pages` pages. Should
  // the log still reach `pages` * kInlineFactor pages (the thread behind, or a reader
  // holding on to old pages), the writer checkpoints in its own commit as SQLite would
  // have: the log stays bounded whatever happens.
  static Result<std::unique_ptr<WalCheckpointer>> start(Database& writer, const std::string& path,
                                                        int pages = kDefaultPages);
  // Stops the thread and gives the writer its autocheckpoint back.
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  static constexpr int kInlineFactor = 8;

  // Checkpoints run by the thread, and by the writer itself past the bound.
  uint64_t background_checkpoints() const { return background_.load(); }
  uint64_t inline_checkpoints() const { return inline_.load(); }
  // The last background checkpoint's failure (SQLite's message), empty when it succeeded.
  std::string last_error() const;

 private:
  WalCheckpointer(Database& writer, Database own, int pages);
  static int on_commit(void* self, sqlite3* db, const char* schema, int pages);
  void run();

  Database& writer_;
  Database own_;
  const int pages_;
  int woken_at_ = 0;  // the log's length at the last wake-up; only the writer's commits touch it
  std::atomic<uint64_t> background_{0}, inline_{0};
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool due_ = false, stopping_ = false;
  std::string last_error_;
  std::thread thread_;
};

}  // namespace attrib::store
