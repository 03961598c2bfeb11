#include "attributiond/store/wal_checkpointer.h"

#include <utility>

namespace attrib::store {

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::start(Database& writer, const std::string& path, int pages) {
  auto own = Database::open(path);
  if (!own) return own.error();
  return std::unique_ptr<WalCheckpointer>(new WalCheckpointer(writer, std::move(*own), pages));
}

WalCheckpointer::WalCheckpointer(Database& writer, Database own, int pages)
    : writer_(writer), own_(std::move(own)), pages_(pages) {
  thread_ = std::thread([this] { run(); });
  // Replaces the writer's autocheckpoint (itself a WAL hook) from its next commit on.
  sqlite3_wal_hook(writer_.handle(), &WalCheckpointer::on_commit, this);
}

WalCheckpointer::~WalCheckpointer() {
  sqlite3_wal_autocheckpoint(writer_.handle(), kDefaultPages);  // drops our hook
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

// Called by SQLite in the writer's commit, the log now `pages` long: a wake-up each time the
// log has grown by pages_ since the last one, and nothing else unless the log has outgrown
// the thread. A passive checkpoint seldom catches up with a writer that keeps committing,
// so the log is not started over after each one: waking the thread on every commit past
// pages_ would checkpoint (and sync) once a job.
int WalCheckpointer::on_commit(void* self, sqlite3* db, const char* schema, int pages) {
  auto& checkpointer = *static_cast<WalCheckpointer*>(self);
  if (pages < checkpointer.woken_at_) checkpointer.woken_at_ = 0;  // the log was started over
  if (pages >= checkpointer.pages_ * kInlineFactor) {
    // No other writer can be in the log now (this connection holds the write), so this
    // passive checkpoint copies all of it and the next write starts the log over.
    ++checkpointer.inline_;
    sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    return SQLITE_OK;
  }
  if (pages - checkpointer.woken_at_ < checkpointer.pages_) return SQLITE_OK;
  checkpointer.woken_at_ = pages;
  {
    std::lock_guard lock(checkpointer.mutex_);
    checkpointer.due_ = true;
  }
  checkpointer.wake_.notify_one();
  return SQLITE_OK;
}

void WalCheckpointer::run() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return due_ || stopping_; });
      if (stopping_) return;
      due_ = false;
    }
    // Passive: copies what no reader still needs and waits for nobody; the writer starts the
    // log over at its next write once everything was copied.
    const int rc = sqlite3_wal_checkpoint_v2(own_.handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    ++background_;
    std::lock_guard lock(mutex_);
    last_error_ = rc == SQLITE_OK || rc == SQLITE_BUSY ? std::string() : own_.last_error();
  }
}

std::string WalCheckpointer::last_error() const {
  std::lock_guard lock(mutex_);
  return last_error_;
}

}  // namespace attrib::store
