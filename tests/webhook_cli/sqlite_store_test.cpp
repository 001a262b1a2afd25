// webhook_deliver's SQLite store (examples/shared/sqlite_store.hpp, rule B6):
// enqueueing is idempotent, a claim takes only due and unleased deliveries,
// a lease is a worker's until it runs out, and an attempt's outcome is
// written only by the worker that holds the lease. Each boundary on both sides.
#include "shared/sqlite_store.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "keyhook/delivery_state.hpp"

namespace {

using examples::store::micros;

const keyhook::timestamp t0 = keyhook::parse_timestamp("2026-03-01T12:00:00Z");

keyhook::delivery_state delivery(int i, keyhook::timestamp due) {
    keyhook::delivery_state d;
    d.webhook = "hook-" + std::to_string(i % 2);
    d.body = R"({"n":)" + std::to_string(i) + "}";
    d.id = keyhook::make_delivery_id(d.webhook, d.body);
    d.next_due = due;
    return d;
}

// A store file of its own, removed at the end.
struct temp_store {
    std::string path = "keyhook-sqlite-store-test-" + std::to_string(::getpid()) + ".db";
    temp_store() { remove(); }
    ~temp_store() { remove(); }
    void remove() const {
        for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
    }
};

}  // namespace

// K18: the store holds whsec_ secrets and authentication header values.
TEST_CASE("SQLite store: a store it creates, its -wal and -shm files are 0600 under umask 022", "[K18][B6]") {
    char dir_name[] = "/tmp/keyhook-sqlite-mode-XXXXXX";
    REQUIRE(::mkdtemp(dir_name) != nullptr);
    const std::string dir = dir_name;
    const std::string path = dir + "/deliveries.db";
    const mode_t was = ::umask(022);
    {
        examples::store::sqlite_store store(path);
        CHECK(store.enqueue("acme", {{"hook-0", R"({"secret":"whsec_x"})", ""}}, {delivery(1, t0)}) == 1);
        // Open, in WAL mode: all three files exist now.
        for (const char* suffix : {"", "-wal", "-shm"}) {
            struct stat st {};
            INFO("file " << path << suffix);
            REQUIRE(::stat((path + suffix).c_str(), &st) == 0);
            CHECK((st.st_mode & 07777) == 0600);
        }
    }
    ::umask(was);
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
    ::rmdir(dir.c_str());
}

TEST_CASE("SQLite store: a path that is a symlink to no file yet creates that file 0600", "[K18][B6]") {
    char dir_name[] = "/tmp/keyhook-sqlite-link-XXXXXX";
    REQUIRE(::mkdtemp(dir_name) != nullptr);
    const std::string dir = dir_name;
    const std::string target = dir + "/elsewhere.db";
    const std::string path = dir + "/deliveries.db";
    REQUIRE(::symlink(target.c_str(), path.c_str()) == 0);
    // The operator's link (say, to a data volume) names the store; the file
    // it names is created owner-only, not with SQLite's 0644.
    struct stat st {};
    const mode_t was = ::umask(022);
    {
        examples::store::sqlite_store store(path);
        REQUIRE(::stat(target.c_str(), &st) == 0);
    }
    ::umask(was);
    CHECK((st.st_mode & 0077) == 0);
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        std::remove((path + suffix).c_str());
        std::remove((target + suffix).c_str());
    }
    ::rmdir(dir.c_str());
}

namespace {

// Runs SQL on the store's file directly (an older program's layout, a look at the rows).
void exec_sql(const std::string& path, const char* sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    char* message = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &message);
    INFO((message ? message : ""));
    sqlite3_free(message);
    sqlite3_close(db);
    REQUIRE(rc == SQLITE_OK);
}

long long count_rows(const std::string& path, const char* sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(s) == SQLITE_ROW);
    const long long n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
}

// The message a store's opening throws, or "" when it opens.
std::string refusal(const std::string& path) {
    try {
        examples::store::sqlite_store store(path);
    } catch (const examples::store::schema_mismatch& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("SQLite store: a new store is of schema version 3, and opens again", "[B6][O5]") {
    temp_store file;
    { examples::store::sqlite_store store(file.path); }
    CHECK(count_rows(file.path, "SELECT COUNT(*) FROM keyhook_schema") == 1);
    CHECK(count_rows(file.path, "SELECT version FROM keyhook_schema") == examples::store::schema_version);
    CHECK(examples::store::schema_version == 3);
    CHECK(refusal(file.path).empty());
    CHECK(count_rows(file.path, "SELECT COUNT(*) FROM keyhook_schema") == 1);  // no second version row
}

TEST_CASE(
    "SQLite store: a store of the version 1 layout is refused, naming the version found and the one "
    "expected, and left as it was",
    "[B6]") {
    for (const char* table :
         {"CREATE TABLE keyhook_webhooks (name TEXT PRIMARY KEY, settings TEXT NOT NULL, "
          "disabled INTEGER NOT NULL DEFAULT 0)",
          "CREATE TABLE keyhook_endpoints (name TEXT PRIMARY KEY, state TEXT NOT NULL, version BIGINT NOT NULL)",
          "CREATE TABLE keyhook_replay_ids (id TEXT PRIMARY KEY, forget_after BIGINT NOT NULL)"}) {
        temp_store file;
        exec_sql(file.path, table);
        INFO(table);
        const auto why = refusal(file.path);
        CHECK(why.find("the store has schema version 1") != std::string::npos);
        CHECK(why.find("this program needs schema version 3") != std::string::npos);
        CHECK(why.find("not migrated") != std::string::npos);
        CHECK(count_rows(file.path, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'keyhook_schema'") == 0);
        CHECK(count_rows(file.path, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'") == 1);
    }
}

TEST_CASE("SQLite store: a store of another schema version is refused with both versions", "[B6][O5]") {
    temp_store file;
    { examples::store::sqlite_store store(file.path); }
    exec_sql(file.path, "UPDATE keyhook_schema SET version = 4");
    CHECK(refusal(file.path) ==
          "the store has schema version 4; this program needs schema version 3 (the store was written by a newer "
          "keyhook)");
    CHECK(count_rows(file.path, "SELECT version FROM keyhook_schema") == 4);  // left as it was
    exec_sql(file.path, "DELETE FROM keyhook_schema");
    CHECK(refusal(file.path) == "the store has schema version 0; this program needs schema version 3");
    // Version 2, the one before, is migrated (delivery_store_test.cpp), not refused.
}
