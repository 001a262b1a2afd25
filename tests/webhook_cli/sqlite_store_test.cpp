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

TEST_CASE("SQLite store: enqueueing twice adds nothing, a newer configuration replaces the settings", "[B6]") {
    temp_store file;
    examples::store::sqlite_store store(file.path);
    const std::vector<keyhook::delivery_state> ds{delivery(1, t0), delivery(2, t0)};
    CHECK(store.enqueue("acme", {{"hook-0", R"({"v":1})"}, {"hook-1", "{}"}}, ds) == 2);
    CHECK(store.enqueue("acme", {{"hook-0", R"({"v":2})"}}, ds) == 0);
    CHECK(store.pending() == 2);
    const auto row = store.webhook({"acme", "hook-0"});
    REQUIRE(row);
    CHECK(row->settings == R"({"v":2})");
    CHECK_FALSE(row->disabled);
    CHECK_FALSE(store.webhook({"acme", "hook-9"}));

    // Reopened (a restart): the same rows.
    examples::store::sqlite_store again(file.path);
    CHECK(again.pending() == 2);
}

TEST_CASE("SQLite store: a claim takes due deliveries that no live lease holds", "[B6]") {
    temp_store file;
    examples::store::sqlite_store store(file.path);
    const auto a = delivery(1, t0), b = delivery(2, t0 + std::chrono::seconds(10));
    store.enqueue("acme", {}, {a, b});
    const std::int64_t now = 1000, lease = 500;

    CHECK(store.claim(micros(t0) - 1, now, now + lease, "w1", 10).empty());  // not yet due
    auto got = store.claim(micros(t0), now, now + lease, "w1", 10);          // due exactly now
    REQUIRE(got.size() == 1);
    CHECK(got[0] == a);
    CHECK(store.next_due(now) == micros(t0) + 10000000);  // a is leased: b's due time is next

    // The lease holds up to and including its last microsecond, and not after.
    CHECK(store.claim(micros(t0), now + lease - 1, now + 2 * lease, "w2", 10).empty());
    CHECK(store.claim(micros(t0), now + lease, now + 2 * lease, "w2", 10).empty());
    CHECK(store.claim(micros(t0), now + lease + 1, now + 3 * lease, "w2", 10).size() == 1);

    // w1's lease ran out and w2 has the delivery: w1's outcome is refused, w2's recorded.
    examples::store::stored_delivery done = got[0];
    keyhook::record_attempt(done, {t0, keyhook::attempt_outcome::http(410), std::nullopt},
                            keyhook::retry_decision{keyhook::retry_decision::action::disable_webhook, {}, 1});
    CHECK_FALSE(store.record(done, "w1", true));
    CHECK_FALSE(store.webhook({"acme", "hook-1"}));  // nothing of w1's transaction was written
    CHECK(store.pending() == 2);
    store.enqueue("acme", {{"hook-1", "{}"}}, {});
    CHECK(store.record(done, "w2", true));
    CHECK(store.webhook({"acme", "hook-1"})->disabled);  // in the same transaction as the outcome
    CHECK(store.pending() == 1);
    CHECK(store.claim(micros(t0) + 20000000, now + 10 * lease, now + 11 * lease, "w3", 10).size() == 1);  // b only
}

TEST_CASE("SQLite store: a claim takes at most its limit, the earliest first; a renewal extends one lease", "[B6]") {
    temp_store file;
    examples::store::sqlite_store store(file.path);
    std::vector<keyhook::delivery_state> ds;
    for (int i = 0; i < 5; ++i) ds.push_back(delivery(i, t0 + std::chrono::seconds(5 - i)));
    store.enqueue("acme", {}, ds);
    const auto got = store.claim(micros(t0) + 100000000, 1, 100, "w1", 2);
    REQUIRE(got.size() == 2);
    // The two due first (RETURNING gives no order).
    const auto first = std::min(*got[0].next_due, *got[1].next_due),
               second = std::max(*got[0].next_due, *got[1].next_due);
    CHECK(first == t0 + std::chrono::seconds(1));
    CHECK(second == t0 + std::chrono::seconds(2));
    CHECK(store.renew(to_string(got[0].id), "w1", 1000));
    CHECK(store.renew(to_string(got[1].id), "w1", 1000));
    CHECK(store.renew(to_string(got[1].id), "w1", 50));                           // never shortened
    CHECK_FALSE(store.renew(to_string(got[0].id), "w2", 9000));                   // w2 does not hold it
    CHECK(store.claim(micros(t0) + 100000000, 500, 5000, "w2", 10).size() == 3);  // w1's two stay leased
    CHECK(store.claim(micros(t0) + 100000000, 1000, 5000, "w3", 10).empty());
    CHECK(store.claim(micros(t0) + 100000000, 1001, 5000, "w3", 10).size() == 2);
    // B6: w1's leases ran out and w3 claimed them: w1's renewal says so.
    CHECK_FALSE(store.renew(to_string(got[0].id), "w1", 9000));
    CHECK(store.renew(to_string(got[0].id), "w3", 9000));
}

TEST_CASE("SQLite store: every delivery listed, in batches", "[B6]") {
    temp_store file;
    examples::store::sqlite_store store(file.path);
    std::vector<keyhook::delivery_state> ds;
    const std::size_t n = examples::store::read_batch * 2 + 1;
    for (std::size_t i = 0; i < n; ++i) ds.push_back(delivery(static_cast<int>(i), t0));
    store.enqueue("acme", {}, ds);
    std::size_t seen = 0;
    std::string last;
    bool ordered = true;
    store.for_each([&](const examples::store::stored_delivery& d) {
        ++seen;
        ordered = ordered && to_string(d.id) > last;
        last = to_string(d.id);
    });
    CHECK(seen == n);
    CHECK(ordered);
}

TEST_CASE("SQLite store: the delivery id key is the first one stored, and stays", "[B6][H12]") {
    temp_store file;
    {
        examples::store::sqlite_store store(file.path);
        CHECK(store.delivery_id_key("00112233445566778899aabbccddeeff") == "00112233445566778899aabbccddeeff");
        CHECK(store.delivery_id_key("ffeeddccbbaa99887766554433221100") == "00112233445566778899aabbccddeeff");
    }
    examples::store::sqlite_store reopened(file.path);
    CHECK(reopened.delivery_id_key("ffeeddccbbaa99887766554433221100") == "00112233445566778899aabbccddeeff");
}

TEST_CASE("SQLite store: a webhook's endpoint state is one row, written by compare-and-set", "[B6][H10][H11]") {
    temp_store file;
    examples::store::sqlite_store a(file.path);
    examples::store::sqlite_store b(file.path);  // a second worker on the same file
    CHECK(a.endpoint({"acme", "crm"}).version == 0);
    CHECK(a.endpoint({"acme", "crm"}).state.empty());
    // The first write inserts at version 1; a second "first" write loses.
    CHECK(a.put_endpoint({"acme", "crm"}, R"({"disabled":false})", 0));
    CHECK_FALSE(b.put_endpoint({"acme", "crm"}, R"({"disabled":true})", 0));
    const auto row = b.endpoint({"acme", "crm"});
    CHECK(row.version == 1);
    CHECK(row.state == R"({"disabled":false})");
    // A write from the version read wins once; the other worker, still at that version, loses.
    CHECK(b.put_endpoint({"acme", "crm"}, R"({"disabled":true})", 1));
    CHECK_FALSE(a.put_endpoint({"acme", "crm"}, R"({"throttleTat":null})", 1));
    CHECK(a.endpoint({"acme", "crm"}).version == 2);
    CHECK(a.endpoint({"acme", "crm"}).state == R"({"disabled":true})");
    CHECK(a.put_endpoint({"acme", "crm"}, R"({"disabled":false})", 2));
    // Rows are per webhook.
    CHECK(a.endpoint({"acme", "other"}).version == 0);
}

// K18: the store holds whsec_ secrets and authentication header values.
TEST_CASE("SQLite store: a store it creates, its -wal and -shm files are 0600 under umask 022", "[K18][B6]") {
    char dir_name[] = "/tmp/keyhook-sqlite-mode-XXXXXX";
    REQUIRE(::mkdtemp(dir_name) != nullptr);
    const std::string dir = dir_name;
    const std::string path = dir + "/deliveries.db";
    const mode_t was = ::umask(022);
    {
        examples::store::sqlite_store store(path);
        CHECK(store.enqueue("acme", {{"hook-0", R"({"secret":"whsec_x"})"}}, {delivery(1, t0)}) == 1);
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

TEST_CASE(
    "SQLite store: two tenants' webhooks of one name are separate rows: settings, disabled flag, "
    "endpoint state, deliveries",
    "[B6][H10]") {
    temp_store file;
    examples::store::sqlite_store store(file.path);
    using examples::store::webhook_key;
    auto acme = delivery(0, t0), globex = delivery(2, t0 + std::chrono::seconds(1));  // both to "hook-0"
    REQUIRE(acme.webhook == globex.webhook);
    CHECK(store.enqueue("acme", {{"hook-0", R"({"to":"acme"})"}}, {acme}) == 1);
    CHECK(store.enqueue("globex", {{"hook-0", R"({"to":"globex"})"}}, {globex}) == 1);
    // globex's configuration did not replace acme's.
    CHECK(store.webhook(webhook_key{"acme", "hook-0"})->settings == R"({"to":"acme"})");
    CHECK(store.webhook(webhook_key{"globex", "hook-0"})->settings == R"({"to":"globex"})");
    CHECK_FALSE(store.webhook(webhook_key{"initech", "hook-0"}));

    // Each claimed delivery carries its own tenant.
    auto got = store.claim(micros(t0) + 5000000, 1, 100, "w1", 10);
    REQUIRE(got.size() == 2);
    std::sort(got.begin(), got.end(), [](const auto& x, const auto& y) { return x.next_due < y.next_due; });
    CHECK(got[0].tenant == "acme");
    CHECK(got[0].key() == webhook_key{"acme", "hook-0"});
    CHECK(got[1].tenant == "globex");

    // A 410 for globex's delivery disables globex's webhook, not acme's.
    auto done = got[1];
    keyhook::record_attempt(done, {t0, keyhook::attempt_outcome::http(410), std::nullopt},
                            keyhook::retry_decision{keyhook::retry_decision::action::disable_webhook, {}, 1});
    CHECK(store.record(done, "w1", true));
    CHECK(store.webhook(webhook_key{"globex", "hook-0"})->disabled);
    CHECK_FALSE(store.webhook(webhook_key{"acme", "hook-0"})->disabled);

    // H10: the endpoint state (health, disabled flag, throttle) is one row per tenant's webhook.
    CHECK(store.put_endpoint(webhook_key{"globex", "hook-0"}, R"({"disabled":true})", 0));
    CHECK(store.endpoint(webhook_key{"acme", "hook-0"}).version == 0);
    CHECK(store.put_endpoint(webhook_key{"acme", "hook-0"}, R"({"disabled":false})", 0));
    CHECK(store.endpoint(webhook_key{"acme", "hook-0"}).state == R"({"disabled":false})");
    CHECK(store.endpoint(webhook_key{"globex", "hook-0"}).state == R"({"disabled":true})");

    // Listed with their tenants.
    std::vector<std::string> tenants;
    store.for_each([&](const examples::store::stored_delivery& d) { tenants.push_back(d.tenant); });
    std::sort(tenants.begin(), tenants.end());
    CHECK(tenants == std::vector<std::string>{"acme", "globex"});
}

TEST_CASE("SQLite store: a new store is of schema version 2, and opens again", "[B6]") {
    temp_store file;
    { examples::store::sqlite_store store(file.path); }
    CHECK(count_rows(file.path, "SELECT COUNT(*) FROM keyhook_schema") == 1);
    CHECK(count_rows(file.path, "SELECT version FROM keyhook_schema") == examples::store::schema_version);
    CHECK(examples::store::schema_version == 2);
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
        CHECK(why.find("this program needs schema version 2") != std::string::npos);
        CHECK(why.find("not migrated") != std::string::npos);
        CHECK(count_rows(file.path, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'keyhook_schema'") == 0);
        CHECK(count_rows(file.path, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'") == 1);
    }
}

TEST_CASE("SQLite store: a store of another schema version is refused with both versions", "[B6]") {
    temp_store file;
    { examples::store::sqlite_store store(file.path); }
    exec_sql(file.path, "UPDATE keyhook_schema SET version = 3");
    CHECK(refusal(file.path) ==
          "the store has schema version 3; this program needs schema version 2 (the store was written by a newer "
          "keyhook)");
    exec_sql(file.path, "DELETE FROM keyhook_schema");
    CHECK(refusal(file.path) == "the store has schema version 0; this program needs schema version 2");
}
