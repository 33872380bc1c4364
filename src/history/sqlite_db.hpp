// A thin RAII layer over SQLite: a connection and prepared statements. Every failure becomes a
// history_error with one line that names the database and what SQLite said.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace aisp {

class history_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class sqlite_statement {
 public:
  sqlite_statement(sqlite3* db, std::string_view sql);
  ~sqlite_statement();
  sqlite_statement(const sqlite_statement&) = delete;
  sqlite_statement& operator=(const sqlite_statement&) = delete;

  sqlite_statement& bind(int index, std::int64_t value);
  sqlite_statement& bind(int index, double value);
  sqlite_statement& bind(int index, const std::string& value);
  // Steps once: true while a row is available.
  bool step();
  void run();  // steps to completion
  void reset();  // ready to bind and run again
  [[nodiscard]] std::int64_t integer(int column) const;
  [[nodiscard]] double real(int column) const;
  [[nodiscard]] std::string text(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* statement_ = nullptr;
};

class sqlite_db {
 public:
  // Opens (creating) the file with WAL journaling and a busy timeout.
  explicit sqlite_db(const std::string& path);
  ~sqlite_db();
  sqlite_db(const sqlite_db&) = delete;
  sqlite_db& operator=(const sqlite_db&) = delete;

  void execute(std::string_view sql);
  [[nodiscard]] sqlite_statement prepare(std::string_view sql) { return sqlite_statement(db_, sql); }
  [[nodiscard]] std::int64_t last_insert_id() const;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// BEGIN IMMEDIATE ... COMMIT; rolled back when destroyed without commit().
class sqlite_transaction {
 public:
  explicit sqlite_transaction(sqlite_db& db);
  ~sqlite_transaction();
  sqlite_transaction(const sqlite_transaction&) = delete;
  sqlite_transaction& operator=(const sqlite_transaction&) = delete;
  void commit();

 private:
  sqlite_db& db_;
  bool done_ = false;
};

}  // namespace aisp
