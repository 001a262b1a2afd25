// H9's replay table kept in a SQLite store (examples/webhook_receiver/
// replay_store.hpp, rule B6): two connections to one file act as two
// receivers; ids are forgotten exactly two windows after signing, as in
// memory; each claim prunes a bounded number of expired ids; concurrent
// claims of one id accept it once.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay_store.hpp"

namespace {

using webhook_receiver::open_replay_store;
using webhook_receiver::store_replay_table;
using outcome = webhook_receiver::replay_table::outcome;
const keyhook::timestamp store_t0 = keyhook::parse_timestamp("2026-11-22T12:00:00Z");
const std::chrono::seconds window(300);

// A claim whose line is written at once: claimed, then accepted (H9, B6).
template <class Table>
outcome admit_stored(Table& table, const std::string& id, keyhook::timestamp signed_at, keyhook::timestamp now) {
    const auto o = table.claim(id, signed_at, now);
    if (o == outcome::claimed) table.accept(id);
    return o;
}

// A store file of its own, removed at the end.
struct temp_store {
    std::string path;
    temp_store() {
        char name[] = "/tmp/keyhook-replay-test-XXXXXX";
        const int fd = mkstemp(name);
        REQUIRE(fd >= 0);
        close(fd);
        path = name;
    }
    ~temp_store() {
        for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
    }
    [[nodiscard]] std::string spec() const { return "sqlite:" + path; }
    [[nodiscard]] long long rows() const {
        sqlite3* db = nullptr;
        REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
        sqlite3_stmt* s = nullptr;
        REQUIRE(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM keyhook_replay_ids", -1, &s, nullptr) == SQLITE_OK);
        REQUIRE(sqlite3_step(s) == SQLITE_ROW);
        const long long n = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
        sqlite3_close(db);
        return n;
    }
};

}  // namespace

TEST_CASE("store replay table: an id accepted by one receiver is a replay at another", "[H9][B6]") {
    temp_store file;
    store_replay_table a(open_replay_store(file.spec()), window);
    store_replay_table b(open_replay_store(file.spec()), window);
    CHECK(admit_stored(a, "msg_1", store_t0, store_t0) == outcome::claimed);
    CHECK(admit_stored(b, "msg_1", store_t0, store_t0) == outcome::replay);
    CHECK(admit_stored(a, "msg_1", store_t0, store_t0) == outcome::replay);
    CHECK(admit_stored(b, "msg_2", store_t0, store_t0) == outcome::claimed);
    CHECK(file.rows() == 2);
}

TEST_CASE("store replay table: receivers of other replay scopes on one store keep their ids apart", "[H9][B6]") {
    temp_store file;
    store_replay_table acme(open_replay_store(file.spec(), "acme/crm-sync"), window);
    store_replay_table acme_too(open_replay_store(file.spec(), "acme/crm-sync"), window);
    store_replay_table globex(open_replay_store(file.spec(), "globex/crm-sync"), window);
    CHECK(globex.claim("msg_1", store_t0, store_t0) == outcome::claimed);  // pending in globex's scope
    // An id another scope holds is no replay here: acme's delivery is processed.
    CHECK(admit_stored(acme, "msg_1", store_t0, store_t0) == outcome::claimed);
    CHECK(admit_stored(acme_too, "msg_1", store_t0, store_t0) == outcome::replay);  // one scope: once
    // A release gives the pending id back in its own scope only.
    globex.release("msg_1");
    CHECK(admit_stored(acme_too, "msg_1", store_t0, store_t0) == outcome::replay);
    CHECK(admit_stored(globex, "msg_1", store_t0, store_t0) == outcome::claimed);
    CHECK(file.rows() == 2);
}

TEST_CASE("store replay table: a store of the version 1 layout is refused, naming both versions", "[H9][B6]") {
    temp_store file;
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(file.path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "CREATE TABLE keyhook_replay_ids (id TEXT PRIMARY KEY, forget_after BIGINT NOT NULL)",
                         nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
    try {
        (void)open_replay_store(file.spec());
        FAIL("opened");
    } catch (const std::runtime_error& e) {
        const std::string why = e.what();
        CHECK(why.find("the store has schema version 1") != std::string::npos);
        CHECK(why.find("needs schema version 3") != std::string::npos);
    }
}

TEST_CASE("store replay table: a released id is accepted again, at any receiver", "[H9][B6]") {
    temp_store file;
    store_replay_table a(open_replay_store(file.spec()), window);
    store_replay_table b(open_replay_store(file.spec()), window);
    REQUIRE(a.claim("msg_1", store_t0, store_t0) == outcome::claimed);  // its line then not written
    REQUIRE(admit_stored(a, "msg_2", store_t0, store_t0) == outcome::claimed);
    a.release("msg_1");
    b.release("never claimed");
    CHECK(file.rows() == 1);
    CHECK(admit_stored(b, "msg_2", store_t0, store_t0) == outcome::replay);
    CHECK(admit_stored(b, "msg_1", store_t0, store_t0) == outcome::claimed);  // the retry, at the other receiver
    CHECK(admit_stored(a, "msg_1", store_t0, store_t0) == outcome::replay);
}

TEST_CASE("store replay table: kept across a restart", "[H9][B6]") {
    temp_store file;
    {
        store_replay_table first(open_replay_store(file.spec()), window);
        REQUIRE(admit_stored(first, "msg_1", store_t0, store_t0) == outcome::claimed);
    }
    store_replay_table again(open_replay_store(file.spec()), window);
    CHECK(admit_stored(again, "msg_1", store_t0, store_t0 + window) == outcome::replay);
}

TEST_CASE("store replay table: an id is kept two windows after signing, then forgotten", "[H9][B6]") {
    temp_store file;
    store_replay_table table(open_replay_store(file.spec()), window);
    REQUIRE(admit_stored(table, "a", store_t0, store_t0) == outcome::claimed);
    const auto last = store_t0 + 2 * window;
    CHECK(admit_stored(table, "a", store_t0, last) == outcome::replay);  // at exactly two windows "a" is still held
    const auto after = last + std::chrono::microseconds(1);
    // One microsecond later it is forgotten: accepted again (a fresh signature), and held anew.
    CHECK(admit_stored(table, "a", after - window, after) == outcome::claimed);
    CHECK(admit_stored(table, "a", after - window, after) == outcome::replay);
    CHECK(file.rows() == 1);
}

TEST_CASE("store replay table: each claim prunes a bounded number of expired ids", "[H9][B6]") {
    temp_store file;
    store_replay_table table(open_replay_store(file.spec()), window);
    constexpr long long old_ids = 20;
    for (long long i = 0; i < old_ids; ++i)
        REQUIRE(admit_stored(table, "old_" + std::to_string(i), store_t0, store_t0) == outcome::claimed);
    const auto later = store_t0 + 3 * window;  // every old id has expired
    const auto batch = static_cast<long long>(examples::store::replay_prune_batch);
    REQUIRE(admit_stored(table, "new_1", later, later) == outcome::claimed);
    CHECK(file.rows() == old_ids - batch + 1);  // `batch` forgotten, not all of them
    REQUIRE(admit_stored(table, "new_2", later, later) == outcome::claimed);
    CHECK(file.rows() == old_ids - 2 * batch + 2);
    REQUIRE(admit_stored(table, "new_3", later, later) == outcome::claimed);
    CHECK(file.rows() == 3);  // the last 4 old ones: fewer than a batch were left
}

TEST_CASE("store replay table: concurrent receivers accept each id once", "[H9][B6]") {
    temp_store file;
    store_replay_table a(open_replay_store(file.spec()), window);
    store_replay_table b(open_replay_store(file.spec()), window);
    constexpr int ids = 200;
    std::atomic<int> accepted{0}, replays{0};
    const auto run = [&](store_replay_table& table) {
        for (int i = 0; i < ids; ++i) {
            const auto o = admit_stored(table, "msg_" + std::to_string(i), store_t0, store_t0);
            (o == outcome::claimed ? accepted : replays)++;
        }
    };
    std::thread one(run, std::ref(a));
    std::thread two(run, std::ref(b));
    one.join();
    two.join();
    CHECK(accepted == ids);
    CHECK(replays == ids);
}

TEST_CASE("store replay table: a store it creates, its -wal and -shm files are 0600 under umask 022", "[K18][H9]") {
    char dir_name[] = "/tmp/keyhook-replay-mode-XXXXXX";
    REQUIRE(::mkdtemp(dir_name) != nullptr);
    const std::string dir = dir_name;
    const std::string path = dir + "/replay.db";
    const mode_t was = ::umask(022);
    {
        store_replay_table table(open_replay_store("sqlite:" + path), window);
        CHECK(admit_stored(table, "msg_mode", store_t0, store_t0) == outcome::claimed);
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

TEST_CASE("store replay table: a --store it cannot open is an error naming it", "[B6]") {
    CHECK_THROWS_WITH(open_replay_store("sqlite:"), Catch::Contains("needs a path"));
    CHECK_THROWS_WITH(open_replay_store("mysql://x"),
                      Catch::Contains("unknown scheme \"mysql:\"; expected sqlite:PATH or postgresql://"));
    CHECK_THROWS_WITH(open_replay_store("jsonl:keys.jsonl"), Catch::Contains("holds keys"));
    CHECK_THROWS_WITH(open_replay_store("sqlite:/nonexistent-dir/x.db"), Catch::Contains("cannot open"));
}

// B6, H9: an id is accepted only once its line is written. Claimed and not
// yet accepted it is pending: a copy at another receiver gets `pending`
// (503 with Retry-After, at most the bound), never `replay`; past the bound
// the claim is taken over; a claim given back, or accepted, by a receiver
// whose claim was taken over changes nothing of the new holder's.
TEST_CASE("store replay table: a pending id is not accepted; past its bound it is taken over", "[H9][B6]") {
    temp_store file;
    const std::chrono::seconds bound(10);
    store_replay_table a(open_replay_store(file.spec()), window, bound);
    store_replay_table b(open_replay_store(file.spec()), window, bound);
    REQUIRE(a.claim("msg_1", store_t0, store_t0) == outcome::claimed);  // a dies before its line
    std::chrono::seconds retry_after{0};
    CHECK(b.claim("msg_1", store_t0, store_t0 + std::chrono::seconds(3), retry_after) == outcome::pending);
    CHECK(retry_after == std::chrono::seconds(7));
    CHECK(b.claim("msg_1", store_t0, store_t0 + bound, retry_after) == outcome::pending);  // at the bound: still a's
    CHECK(retry_after == std::chrono::seconds(1));
    const auto past = store_t0 + bound + std::chrono::microseconds(1);
    CHECK(b.claim("msg_1", store_t0, past) == outcome::claimed);  // taken over
    a.release("msg_1");                                           // a's late give-back: b's claim stays
    CHECK(a.claim("msg_1", store_t0, past) == outcome::pending);
    b.accept("msg_1");
    CHECK(a.claim("msg_1", store_t0, past + bound * 2) == outcome::replay);  // accepted: no bound any more
}

TEST_CASE("memory replay table: a copy of an id whose line is not yet written is pending", "[H9][B6]") {
    webhook_receiver::memory_replay_table table(window, 16);
    REQUIRE(table.claim("msg_1", store_t0, store_t0) == outcome::claimed);
    std::chrono::seconds retry_after{0};
    CHECK(table.claim("msg_1", store_t0, store_t0, retry_after) == outcome::pending);
    CHECK(retry_after >= std::chrono::seconds(1));
    table.accept("msg_1");
    CHECK(table.claim("msg_1", store_t0, store_t0) == outcome::replay);
}
