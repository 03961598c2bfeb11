// Thin RAII wrappers over sqlite3: one Database per connection, prepared statements
// only, schema migrations applied in order under PRAGMA user_version.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <sqlite3.h>

#include "core/result.h"

namespace attrib::store {

// A connection's prepared statements kept for reuse, by SQL text: a statement is parsed
// once and handed out again after a reset, not parsed anew per call (archiving one
// verdict runs a dozen; docs/benchmarks.md, the burst). Shared by the Database and its
// live Statements, so either may go first; the last one finalizes what is idle.
class StatementCache {
 public:
  ~StatementCache();
  sqlite3_stmt* take(std::string_view sql);             // nullptr: none idle
  void give_back(std::string sql, sqlite3_stmt* stmt);  // reset and unbound

 private:
  std::mutex mutex_;  // the connection is shared by threads (SQLITE_OPEN_FULLMUTEX)
  std::unordered_map<std::string, std::vector<sqlite3_stmt*>> idle_;
};

class Statement {
 public:
  // Check ok() before use. With a cache, the statement comes from it and goes back to it.
  Statement(sqlite3* db, std::string_view sql, std::shared_ptr<StatementCache> cache = nullptr);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  const std::string& error() const { return error_; }

  // Binds are 1-based like sqlite3_bind_*.
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, int64_t value);
  Statement& bind_null(int index);
  Statement& bind_blob(int index, const std::string& bytes);

  // Returns true while a row is available; false when done or on error (see error()).
  bool step();
  // Runs to completion; error when the statement failed.
  Status run();
  // Makes a run statement ready to run again with new binds: one prepare for many rows.
  Statement& reset();

  int64_t int_at(int column) const;
  std::string text_at(int column) const;
  bool is_null(int column) const;

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string error_;
  std::shared_ptr<StatementCache> cache_;
  std::string sql_;  // the cache's key
};

class Database {
 public:
  static Result<Database> open(const std::string& path);
  // A second, read-only connection to an existing database (the dashboard): WAL lets it
  // read while the daemon's connection writes; it never creates, migrates or writes.
  static Result<Database> open_read_only(const std::string& path);
  ~Database();
  Database(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  Database& operator=(Database&&) = delete;

  Statement prepare(std::string_view sql) { return Statement(db_, sql, cache_); }
  Status exec(std::string_view sql);  // for schema and transaction statements only
  // Applies migrations[i] for every i >= PRAGMA user_version, each in its own transaction.
  Status migrate(const std::vector<std::string>& migrations);
  // PRAGMA user_version: how many migrations the file has had.
  Result<int64_t> schema_version();
  std::string last_error() const;
  // The connection itself, for what this wrapper does not cover (the WAL hook,
  // store/wal_checkpointer.h).
  sqlite3* handle() const { return db_; }

 private:
  explicit Database(sqlite3* db) : db_(db), cache_(std::make_shared<StatementCache>()) {}
  sqlite3* db_ = nullptr;
  std::shared_ptr<StatementCache> cache_;
};

// Begins a transaction and rolls it back unless commit() succeeded. Check began() before
// the first statement: when BEGIN fails (the file locked by another process past the busy
// wait) the statements would run one by one in autocommit, and a retry would then find
// half a write.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Status began() const;
  Status commit();

 private:
  Database& db_;
  bool began_ = false;
  bool done_ = false;
  std::string begin_error_;
};

// While it lives, commits on the connection do not wait for the disk (PRAGMA synchronous
// NORMAL instead of the connection's FULL): in WAL mode such a commit survives a crash of
// the process, and the next FULL commit or checkpoint makes it durable; a power loss before
// then can roll it back. Only for writes whose loss redoes work and loses nothing: the
// archive of a verdict and the done marks (the job, queued with FULL, is judged again).
class RelaxedSync {
 public:
  explicit RelaxedSync(Database& db);
  ~RelaxedSync();
  RelaxedSync(const RelaxedSync&) = delete;
  RelaxedSync& operator=(const RelaxedSync&) = delete;

 private:
  Database& db_;
};

}  // namespace attrib::store
