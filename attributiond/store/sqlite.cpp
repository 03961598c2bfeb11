#include "attributiond/store/sqlite.h"

#include <utility>

namespace attrib::store {
namespace {

// "<file>: <sqlite's message>": several databases may be open (archive, an export), and an
// admin reading "database is locked" needs to know which file to look at.
std::string describe(sqlite3* db, std::string_view message) {
  const char* file = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
  if (file == nullptr || *file == '\0') return std::string(message);
  return std::string(file) + ": " + std::string(message);
}

}  // namespace

StatementCache::~StatementCache() {
  for (auto& [sql, statements] : idle_)
    for (sqlite3_stmt* stmt : statements) sqlite3_finalize(stmt);
}

sqlite3_stmt* StatementCache::take(std::string_view sql) {
  std::lock_guard lock(mutex_);
  auto at = idle_.find(std::string(sql));
  if (at == idle_.end() || at->second.empty()) return nullptr;
  sqlite3_stmt* stmt = at->second.back();
  at->second.pop_back();
  return stmt;
}

void StatementCache::give_back(std::string sql, sqlite3_stmt* stmt) {
  // A few of one text at most: as many as are ever live at once (a query inside a loop
  // over another), not one per call.
  constexpr size_t kIdlePerText = 4;
  std::lock_guard lock(mutex_);
  auto& statements = idle_[std::move(sql)];
  if (statements.size() < kIdlePerText)
    statements.push_back(stmt);
  else
    sqlite3_finalize(stmt);
}

Statement::Statement(sqlite3* db, std::string_view sql, std::shared_ptr<StatementCache> cache)
    : db_(db), cache_(std::move(cache)) {
  if (cache_ != nullptr) {
    sql_ = sql;
    stmt_ = cache_->take(sql);
    if (stmt_ != nullptr) return;
  }
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK) {
    error_ = describe(db, sqlite3_errmsg(db)) + " in: " + std::string(sql);
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
  }
}

Statement::~Statement() {
  if (stmt_ == nullptr) return;
  if (cache_ == nullptr) {
    sqlite3_finalize(stmt_);
    return;
  }
  // Reset: not left running (which would hold a read transaction open or block a DROP),
  // and its bound text released.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  cache_->give_back(std::move(sql_), stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      error_(std::move(other.error_)),
      cache_(std::move(other.cache_)),
      sql_(std::move(other.sql_)) {}

Statement& Statement::bind(int index, std::string_view text) {
  if (stmt_ != nullptr) sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind(int index, int64_t value) {
  if (stmt_ != nullptr) sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::bind_null(int index) {
  if (stmt_ != nullptr) sqlite3_bind_null(stmt_, index);
  return *this;
}

Statement& Statement::bind_blob(int index, const std::string& bytes) {
  if (stmt_ != nullptr) sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  return *this;
}

bool Statement::step() {
  if (stmt_ == nullptr) return false;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) error_ = describe(db_, sqlite3_errmsg(db_));
  return false;
}

Status Statement::run() {
  if (stmt_ == nullptr) return Error{kDbPrepare, error_};
  while (step()) {
  }
  if (!error_.empty()) return Error{kDbStep, error_};
  return ok_status();
}

Statement& Statement::reset() {
  if (stmt_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  error_.clear();
  return *this;
}

int64_t Statement::int_at(int column) const { return sqlite3_column_int64(stmt_, column); }

std::string Statement::text_at(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  int size = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr) return {};
  return std::string(static_cast<const char*>(data), static_cast<size_t>(size));
}

bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

Result<Database> Database::open(const std::string& path) {
  sqlite3* raw = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  Database db(raw);  // owns raw even on failure
  if (rc != SQLITE_OK) {
    return Error{kDbOpen, "cannot open SQLite database " + path + ": " + (raw ? sqlite3_errmsg(raw) : "out of memory")};
  }
  sqlite3_busy_timeout(raw, 5000);
  // WAL keeps readers (attrib-show, exports) from blocking the workers; FULL sync so an
  // accepted job survives power loss, which is the queue's whole point.
  if (auto s = db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;"); !s)
    return s.error();
  return db;
}

Result<Database> Database::open_read_only(const std::string& path) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX, nullptr);
  Database db(raw);  // owns raw even on failure
  if (rc != SQLITE_OK) {
    return Error{kDbOpen, "cannot open SQLite database " + path +
                              " read-only: " + (raw ? sqlite3_errmsg(raw) : "out of memory")};
  }
  sqlite3_busy_timeout(raw, 5000);
  if (auto s = db.exec("PRAGMA query_only=ON;"); !s) return s.error();
  return db;
}

Database::~Database() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), cache_(std::move(other.cache_)) {}

Status Database::exec(std::string_view sql) {
  char* message = nullptr;
  std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string error = describe(db_, message ? message : "unknown error");
    sqlite3_free(message);
    return Error{kDbExec, error};
  }
  return ok_status();
}

Result<int64_t> Database::schema_version() {
  auto version = prepare("PRAGMA user_version");  // finalised on return: DROP TABLE fails while it is active
  if (!version.ok() || !version.step()) return Error{kDbMigrate, "cannot read user_version: " + last_error()};
  return version.int_at(0);
}

Status Database::migrate(const std::vector<std::string>& migrations) {
  auto current = schema_version();
  if (!current) return current.error();
  const int64_t version = *current;
  if (version > static_cast<int64_t>(migrations.size()))
    return Error{kDbMigrate, "database schema version " + std::to_string(version) +
                                 " is newer than this attributiond (" + std::to_string(migrations.size()) + ")"};
  for (size_t i = static_cast<size_t>(version); i < migrations.size(); ++i) {
    Transaction tx(*this);
    if (auto s = tx.began(); !s) return s;
    if (auto s = exec(migrations[i]); !s)
      return Error{kDbMigrate, "migration " + std::to_string(i + 1) + ": " + s.error().message};
    if (auto s = exec("PRAGMA user_version=" + std::to_string(i + 1)); !s) return s;
    if (auto s = tx.commit(); !s) return s;
  }
  return ok_status();
}

std::string Database::last_error() const { return describe(db_, sqlite3_errmsg(db_)); }

Transaction::Transaction(Database& db) : db_(db) {
  auto begun = db_.prepare("BEGIN IMMEDIATE").run();  // prepared once per connection
  began_ = begun.ok();
  if (!began_) begin_error_ = begun.error().message;
}

Status Transaction::began() const {
  if (!began_) return Error{kDbTransaction, "cannot begin a transaction: " + begin_error_};
  return ok_status();
}

Transaction::~Transaction() {
  if (began_ && !done_) (void)db_.prepare("ROLLBACK").run();
}

Status Transaction::commit() {
  if (auto s = began(); !s) return s;
  done_ = true;
  return db_.prepare("COMMIT").run();
}

RelaxedSync::RelaxedSync(Database& db) : db_(db) { (void)db_.prepare("PRAGMA synchronous=NORMAL").run(); }

RelaxedSync::~RelaxedSync() { (void)db_.prepare("PRAGMA synchronous=FULL").run(); }

}  // namespace attrib::store
