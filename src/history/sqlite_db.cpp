#include "history/sqlite_db.hpp"

#include <cstring>
#include <fstream>
#include <sqlite3.h>

namespace aisp {
namespace {

[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  throw history_error(what + ": " + (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

}  // namespace

sqlite_statement::sqlite_statement(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &statement_, nullptr) != SQLITE_OK)
    fail(db, "history database: cannot prepare '" + std::string(sql.substr(0, 40)) + "'");
}

sqlite_statement::~sqlite_statement() { sqlite3_finalize(statement_); }

sqlite_statement& sqlite_statement::bind(int index, std::int64_t value) {
  if (sqlite3_bind_int64(statement_, index, value) != SQLITE_OK) fail(db_, "history database: bind");
  return *this;
}

sqlite_statement& sqlite_statement::bind(int index, double value) {
  if (sqlite3_bind_double(statement_, index, value) != SQLITE_OK) fail(db_, "history database: bind");
  return *this;
}

sqlite_statement& sqlite_statement::bind(int index, const std::string& value) {
  if (sqlite3_bind_text(statement_, index, value.c_str(), static_cast<int>(value.size()), SQLITE_TRANSIENT) != SQLITE_OK)
    fail(db_, "history database: bind");
  return *this;
}

bool sqlite_statement::step() {
  const int status = sqlite3_step(statement_);
  if (status == SQLITE_ROW) return true;
  if (status == SQLITE_DONE) return false;
  fail(db_, "history database");
}

void sqlite_statement::run() {
  while (step()) {
  }
}

void sqlite_statement::reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

std::int64_t sqlite_statement::integer(int column) const { return sqlite3_column_int64(statement_, column); }
double sqlite_statement::real(int column) const { return sqlite3_column_double(statement_, column); }
std::string sqlite_statement::text(int column) const {
  const auto* value = sqlite3_column_text(statement_, column);
  return value != nullptr ? reinterpret_cast<const char*>(value) : "";
}

namespace {

// A file that holds something and is not an SQLite database: SQLite takes a file shorter than
// its header as an empty database and writes one over it (a one-byte text file became a 32 KiB
// database under `bench history --db`, a user's walkthrough, 2026-12-04). An empty file is the
// empty database it looks like.
bool holds_something_else(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return false;
  char header[16] = {};
  file.read(header, sizeof header);
  const auto read = file.gcount();
  return read > 0 && (read < static_cast<std::streamsize>(sizeof header) || std::memcmp(header, "SQLite format 3", sizeof header) != 0);
}

}  // namespace

sqlite_db::sqlite_db(const std::string& path) : path_(path) {
  if (holds_something_else(path)) throw history_error("history database " + path + " is unusable: the file is not an SQLite database (nothing was written to it)");
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    const std::string why = db_ != nullptr ? sqlite3_errmsg(db_) : "cannot allocate";
    sqlite3_close(db_);
    db_ = nullptr;
    throw history_error("history database " + path + ": " + why);
  }
  sqlite3_busy_timeout(db_, 5000);  // another run writing: wait, then say "locked"
  try {
    execute("PRAGMA journal_mode=WAL");
    execute("PRAGMA foreign_keys=ON");
  } catch (const history_error& error) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw history_error("history database " + path + " is unusable (" + error.what() + ")");
  }
}

sqlite_db::~sqlite_db() { sqlite3_close(db_); }

void sqlite_db::execute(std::string_view sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string why = message != nullptr ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    throw history_error("history database " + path_ + ": " + why);
  }
}

std::int64_t sqlite_db::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

sqlite_transaction::sqlite_transaction(sqlite_db& db) : db_(db) { db_.execute("BEGIN IMMEDIATE"); }

sqlite_transaction::~sqlite_transaction() {
  if (done_) return;
  try {
    db_.execute("ROLLBACK");
  } catch (...) {  // the connection is failing already; its error is being reported
  }
}

void sqlite_transaction::commit() {
  db_.execute("COMMIT");
  done_ = true;
}

}  // namespace aisp
