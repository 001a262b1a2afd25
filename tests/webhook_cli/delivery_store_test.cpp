// webhook_deliver's delivery_store interface (examples/shared/delivery_store.hpp,
// rules B6 and O5), the same cases on every backend the build has: in memory
// (memory_store.hpp, webhook_deliver without --store), SQLite
// (sqlite_store.hpp) and PostgreSQL (postgres_store.hpp). The PostgreSQL
// cases are hidden ([.postgresql]) and run by webhook_cli.delivery_store_postgresql,
// which starts a throwaway server (with_postgresql.py) and names it in
// KEYHOOK_TEST_POSTGRESQL. Enqueueing is idempotent, a claim takes only due
// and unleased deliveries, a lease is a worker's until it runs out, an
// attempt's outcome is written only by the worker that holds the lease, the
// endpoint rows by compare-and-set, every row keyed by (tenant, webhook
// name); the operator's actions (O5) change only deliveries in the state
// they name, racing or repeated, and a purge leaves tombstones. Each
// boundary on both sides.
#include "shared/memory_store.hpp"
#if KEYHOOK_TEST_HAVE_SQLITE
#include "shared/sqlite_store.hpp"
#endif
#if KEYHOOK_TEST_HAVE_LIBPQ
#include "shared/postgres_store.hpp"
#endif

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "keyhook/delivery_state.hpp"

// A namespace of its own: sqlite_store_test.cpp's helpers share a unity build's TU.
namespace delivery_store_test {
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

// A backend: open() gives another connection to one store of the test's own
// (in memory: another handle on the one object).
struct memory_backend {
    std::shared_ptr<examples::store::memory_store> store = std::make_shared<examples::store::memory_store>();
    std::shared_ptr<examples::store::delivery_store> open() const { return store; }
};

#if KEYHOOK_TEST_HAVE_SQLITE
struct sqlite_backend {
    std::string path = "keyhook-delivery-store-test-" + std::to_string(::getpid()) + ".db";
    sqlite_backend() { remove(); }
    ~sqlite_backend() { remove(); }
    sqlite_backend(const sqlite_backend&) = delete;
    sqlite_backend& operator=(const sqlite_backend&) = delete;
    void remove() const {
        for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
    }
    std::shared_ptr<examples::store::delivery_store> open() const {
        return std::make_shared<examples::store::sqlite_store>(path);
    }
    // SQL on the store's file directly (an older layout, a look at a row).
    void exec(const std::string& text) const {
        sqlite3* db = nullptr;
        REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
        char* message = nullptr;
        const int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &message);
        INFO((message ? message : "") << " in " << text);
        sqlite3_free(message);
        sqlite3_close(db);
        REQUIRE(rc == SQLITE_OK);
    }
    long long scalar(const std::string& text) const {
        sqlite3* db = nullptr;
        REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
        sqlite3_stmt* s = nullptr;
        REQUIRE(sqlite3_prepare_v2(db, text.c_str(), -1, &s, nullptr) == SQLITE_OK);
        REQUIRE(sqlite3_step(s) == SQLITE_ROW);
        const long long n = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
        sqlite3_close(db);
        return n;
    }
};
#endif

#if KEYHOOK_TEST_HAVE_LIBPQ
// The database KEYHOOK_TEST_POSTGRESQL names (a server of its own, which
// with_postgresql.py starts), emptied of keyhook's tables for each case.
struct postgres_backend {
    std::string uri;
    postgres_backend() {
        const char* env = std::getenv("KEYHOOK_TEST_POSTGRESQL");
        if (env == nullptr || *env == '\0') FAIL("KEYHOOK_TEST_POSTGRESQL names no database (run with_postgresql.py)");
        uri = env;
        exec(
            "DROP TABLE IF EXISTS keyhook_schema, keyhook_webhooks, keyhook_deliveries, keyhook_settings, "
            "keyhook_endpoints, keyhook_attempts, keyhook_replay_ids");
    }
    std::shared_ptr<examples::store::delivery_store> open() const {
        return std::make_shared<examples::store::postgres_store>(uri);
    }
    void exec(const std::string& text) const { (void)query(text); }
    long long scalar(const std::string& text) const { return std::stoll(query(text)); }
    // The first row's first value ("" for none).
    std::string query(const std::string& text) const {
        PGconn* c = PQconnectdb(uri.c_str());
        REQUIRE(PQstatus(c) == CONNECTION_OK);
        PGresult* r = PQexec(c, ("SET client_min_messages = warning; " + text).c_str());
        const auto status = PQresultStatus(r);
        const std::string message = PQerrorMessage(c);
        const std::string first = status == PGRES_TUPLES_OK && PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "";
        PQclear(r);
        PQfinish(c);
        INFO(message << " in " << text);
        REQUIRE((status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK));
        return first;
    }
};
#endif

}  // namespace

// STORE_TEST_CASE(name, tags) { body using TestType }: the case on every
// backend; on PostgreSQL hidden, tagged [postgresql]. SQL_STORE_TEST_CASE:
// on the SQL backends only (raw SQL through the backend's exec and scalar).
#if KEYHOOK_TEST_HAVE_SQLITE
#define BACKENDS memory_backend, sqlite_backend
#else
#define BACKENDS memory_backend
#endif
#if KEYHOOK_TEST_HAVE_LIBPQ
#define KEYHOOK_STORE_CASE_PG(fn, name, tags) \
    TEST_CASE(name " - postgres_backend", tags "[.postgresql]") { fn<postgres_backend>(); }
#else
#define KEYHOOK_STORE_CASE_PG(fn, name, tags)
#endif
#define KEYHOOK_STORE_CASE_FN2(line) store_case_##line
#define KEYHOOK_STORE_CASE_FN(line) KEYHOOK_STORE_CASE_FN2(line)
#define KEYHOOK_STORE_CASE(fn, name, tags, ...)                     \
    template <class TestType>                                       \
    void fn();                                                      \
    TEMPLATE_TEST_CASE(name, tags, __VA_ARGS__) { fn<TestType>(); } \
    KEYHOOK_STORE_CASE_PG(fn, name, tags)                           \
    template <class TestType>                                       \
    void fn()
#define STORE_TEST_CASE(name, tags) KEYHOOK_STORE_CASE(KEYHOOK_STORE_CASE_FN(__LINE__), name, tags, BACKENDS)
#if KEYHOOK_TEST_HAVE_SQLITE
#define SQL_STORE_TEST_CASE(name, tags) KEYHOOK_STORE_CASE(KEYHOOK_STORE_CASE_FN(__LINE__), name, tags, sqlite_backend)
#endif

STORE_TEST_CASE("Delivery store: enqueueing twice adds nothing, a newer configuration replaces the settings", "[B6]") {
    TestType backend;
    const auto handle = backend.open();
    auto& store = *handle;
    const std::vector<keyhook::delivery_state> ds{delivery(1, t0), delivery(2, t0)};
    CHECK(store.enqueue("acme", {{"hook-0", R"({"v":1})", ""}, {"hook-1", "{}", ""}}, ds) == 2);
    CHECK(store.enqueue("acme", {{"hook-0", R"({"v":2})", ""}}, ds) == 0);
    CHECK(store.pending() == 2);
    const auto row = store.webhook({"acme", "hook-0"});
    REQUIRE(row);
    CHECK(row->settings == R"({"v":2})");
    CHECK_FALSE(row->disabled);
    CHECK_FALSE(store.webhook({"acme", "hook-9"}));

    // Another connection (for a file or a database, also after a restart): the same rows.
    const auto again = backend.open();
    CHECK(again->pending() == 2);
}

STORE_TEST_CASE("Delivery store: a claim takes due deliveries that no live lease holds", "[B6]") {
    TestType backend;
    const auto handle = backend.open();
    auto& store = *handle;
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
    store.enqueue("acme", {{"hook-1", "{}", ""}}, {});
    CHECK(store.record(done, "w2", true));
    CHECK(store.webhook({"acme", "hook-1"})->disabled);  // in the same transaction as the outcome
    CHECK(store.pending() == 1);
    CHECK(store.claim(micros(t0) + 20000000, now + 10 * lease, now + 11 * lease, "w3", 10).size() == 1);  // b only
}

STORE_TEST_CASE("Delivery store: a claim takes at most its limit, the earliest first; a renewal extends one lease",
                "[B6]") {
    TestType backend;
    const auto handle = backend.open();
    auto& store = *handle;
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

STORE_TEST_CASE("Delivery store: every delivery listed, in batches", "[B6]") {
    TestType backend;
    const auto handle = backend.open();
    auto& store = *handle;
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

STORE_TEST_CASE("Delivery store: the delivery id key is the first one stored, and stays", "[B6][H12]") {
    TestType backend;
    {
        const auto store = backend.open();
        CHECK(store->delivery_id_key("00112233445566778899aabbccddeeff") == "00112233445566778899aabbccddeeff");
        CHECK(store->delivery_id_key("ffeeddccbbaa99887766554433221100") == "00112233445566778899aabbccddeeff");
    }
    const auto reopened = backend.open();
    CHECK(reopened->delivery_id_key("ffeeddccbbaa99887766554433221100") == "00112233445566778899aabbccddeeff");
}

STORE_TEST_CASE("Delivery store: a webhook's endpoint state is one row, written by compare-and-set", "[B6][H10][H11]") {
    TestType backend;
    const auto a_handle = backend.open();
    const auto b_handle = backend.open();  // a second worker on the same store
    auto& a = *a_handle;
    auto& b = *b_handle;
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

STORE_TEST_CASE(
    "Delivery store: two tenants' webhooks of one name are separate rows: settings, disabled flag, "
    "endpoint state, deliveries",
    "[B6][H10]") {
    TestType backend;
    const auto handle = backend.open();
    auto& store = *handle;
    using examples::store::webhook_key;
    auto acme = delivery(0, t0), globex = delivery(2, t0 + std::chrono::seconds(1));  // both to "hook-0"
    REQUIRE(acme.webhook == globex.webhook);
    CHECK(store.enqueue("acme", {{"hook-0", R"({"to":"acme"})", ""}}, {acme}) == 1);
    CHECK(store.enqueue("globex", {{"hook-0", R"({"to":"globex"})", ""}}, {globex}) == 1);
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

STORE_TEST_CASE("Delivery store: the clock's epoch and scale are the first ones kept, and stay", "[B6]") {
    TestType backend;
    const auto first = backend.open();
    const auto second = backend.open();  // a later worker
    CHECK(first->clock_epoch(micros(t0)) == micros(t0));
    CHECK(second->clock_epoch(micros(t0) + 1) == micros(t0));
    CHECK(first->clock_scale(0.001) == 0.001);
    CHECK(second->clock_scale(1.0) == 0.001);
}

TEMPLATE_TEST_CASE("Delivery store: of deliveries due at once, a claim gives the first enqueued first", "[B6]",
                   memory_backend) {
    // The in-memory store's order, which keeps a run without --store sending
    // in the order it always did (SQL's RETURNING gives no order).
    TestType backend;
    const auto store = backend.open();
    std::vector<keyhook::delivery_state> ds;
    for (int i = 0; i < 6; ++i) ds.push_back(delivery(i, t0 + std::chrono::seconds(i < 3 ? 1 : 0)));
    store->enqueue("acme", {}, ds);
    const auto got = store->claim(micros(t0) + 5000000, 1, 100, "w1", 10);
    REQUIRE(got.size() == 6);
    const std::vector<int> order{3, 4, 5, 0, 1, 2};
    for (std::size_t k = 0; k < got.size(); ++k) CHECK(got[k].id == ds[static_cast<std::size_t>(order[k])].id);
}

// ---- O5: what the operator's actions need of a store

namespace {

using examples::store::delivery_filter;
using examples::store::requeue_item;
using examples::store::stored_delivery;
using keyhook::delivery_status;

// Claims `d` (due by `at`) as `owner` and records one attempt at `at` with
// `status` ending as `how` (pending: a retry due a minute later), with its
// detail. The delivery as recorded.
stored_delivery attempt_once(examples::store::delivery_store& store, const keyhook::delivery_state& d,
                             keyhook::timestamp at, int status, delivery_status how, const std::string& owner = "w1") {
    const auto got = store.claim(micros(at), 1, 2, owner, 1000);
    const auto found = std::find_if(got.begin(), got.end(), [&](const stored_delivery& x) { return x.id == d.id; });
    REQUIRE(found != got.end());
    stored_delivery s = *found;
    using action = keyhook::retry_decision::action;
    const auto what = how == delivery_status::pending     ? action::send
                      : how == delivery_status::delivered ? action::succeeded
                      : how == delivery_status::gave_up   ? action::give_up
                                                          : action::disable_webhook;
    keyhook::record_attempt(s, {at, keyhook::attempt_outcome::http(status), std::nullopt},
                            keyhook::retry_decision{what, at + std::chrono::minutes(1), 1});
    if (how != delivery_status::pending) s.ended_at = at;
    examples::store::attempt_detail detail;
    detail.duration = std::chrono::microseconds(1500);
    detail.response = "answered " + std::to_string(status);
    detail.result = how == delivery_status::pending ? "retry" : examples::store::status_text(how);
    REQUIRE(store.record(s, owner, how == delivery_status::disabled, &detail));
    // Leases released by the record: the others claimed with it are let go.
    for (const auto& other : got)
        if (other.id != d.id) {
            auto back = other;
            REQUIRE(store.record(back, owner, false));
        }
    return s;
}

stored_delivery found(examples::store::delivery_store& store, const keyhook::delivery_state& d) {
    const auto f = store.find(to_string(d.id));
    REQUIRE(f.delivery);
    return *f.delivery;
}

std::vector<std::string> listed(examples::store::delivery_store& store, const delivery_filter& filter) {
    std::vector<std::string> ids;
    store.for_each(filter, [&](const stored_delivery& d) { ids.push_back(to_string(d.id)); });
    std::sort(ids.begin(), ids.end());
    return ids;
}

std::vector<std::string> ids_of(std::vector<keyhook::delivery_state> ds) {
    std::vector<std::string> ids;
    for (const auto& d : ds) ids.push_back(to_string(d.id));
    std::sort(ids.begin(), ids.end());
    return ids;
}

}  // namespace

STORE_TEST_CASE("Delivery store: a delivery keeps its status, creation and end times, endpoint and every attempt",
                "[B6][O5]") {
    TestType backend;
    const auto handle = backend.open();
    auto& store = *handle;
    const auto d = delivery(1, t0);
    CHECK(store.enqueue("acme", {{"hook-1", "{}", "https://a.example/in?k=1"}}, {d}, t0 - std::chrono::seconds(1)) ==
          1);
    auto s = found(store, d);
    CHECK(s.status == delivery_status::pending);
    CHECK(s.sequence == 1);
    CHECK(s.created_at == t0 - std::chrono::seconds(1));
    CHECK_FALSE(s.ended_at);
    CHECK(s.endpoint == "https://a.example/in?k=1");
    CHECK(store.history(to_string(d.id)).empty());
    CHECK_FALSE(store.find("msg_00000000000000000000000000000000").delivery);

    attempt_once(store, d, t0, 503, delivery_status::pending);
    s = found(store, d);
    CHECK(s.status == delivery_status::pending);
    CHECK_FALSE(s.ended_at);
    attempt_once(store, d, t0 + std::chrono::minutes(1), 500, delivery_status::gave_up);
    s = found(store, d);
    CHECK(s.status == delivery_status::gave_up);
    CHECK(s.ended_at == t0 + std::chrono::minutes(1));
    const auto h = store.history(to_string(d.id));
    REQUIRE(h.size() == 2);
    CHECK(h[0].sequence == 1);
    CHECK(h[0].number == 1);
    CHECK(h[0].attempt.sent_at == t0);
    CHECK(h[0].attempt.outcome == keyhook::attempt_outcome::http(503));
    REQUIRE(h[0].detail);
    CHECK(h[0].detail->duration == std::chrono::microseconds(1500));
    CHECK(h[0].detail->response == "answered 503");
    CHECK(h[0].detail->result == "retry");
    CHECK(h[1].number == 2);
    CHECK(h[1].detail->result == "gave_up");
    // A record without an attempt (a throttled wait) adds nothing to the history.
}

STORE_TEST_CASE("Delivery store: a requeue takes a delivery only in the ended status and sequence it was read in",
                "[B6][O5]") {
    TestType backend;
    const auto handle = backend.open();
    auto& store = *handle;
    const auto d = delivery(1, t0);
    store.enqueue("acme", {{"hook-1", "{}", "https://a.example/old"}}, {d}, t0);
    const auto due = t0 + std::chrono::hours(1);
    // Pending: not ended, nothing queued.
    CHECK(store.requeue({requeue_item{found(store, d), std::nullopt}}, due).empty());

    attempt_once(store, d, t0, 500, delivery_status::gave_up);
    const auto ended = found(store, d);
    CHECK(store.requeue({requeue_item{ended, std::nullopt}}, due) == std::vector<std::string>{to_string(d.id)});
    auto s = found(store, d);
    CHECK(s.status == delivery_status::pending);
    CHECK(s.sequence == 2);
    CHECK(s.attempts.empty());  // a new attempt sequence: the plan starts again
    CHECK(s.next_due == due);
    CHECK_FALSE(s.ended_at);
    CHECK(s.body == d.body);  // the same delivery: the same webhook-id and body
    CHECK(s.endpoint == "https://a.example/old");
    CHECK(store.pending() == 1);
    // The same read again (a repeat, or the loser of a race): nothing more.
    CHECK(store.requeue({requeue_item{ended, std::nullopt}}, due).empty());
    CHECK(found(store, d).sequence == 2);

    // Its attempts go to the new sequence, its history keeps the old one.
    attempt_once(store, d, due, 200, delivery_status::delivered);
    const auto h = store.history(to_string(d.id));
    REQUIRE(h.size() == 2);
    CHECK((h[0].sequence == 1 && h[0].number == 1));
    CHECK((h[1].sequence == 2 && h[1].number == 1));
    CHECK(found(store, d).attempts.size() == 1);

    // Ended again: the stale read of the first end queues nothing, a fresh one does (once per time it ended),
    // a delivered one included, sent to the endpoint given.
    CHECK(store.requeue({requeue_item{ended, std::nullopt}}, due).empty());
    const auto delivered = found(store, d);
    CHECK(store.requeue({requeue_item{delivered, std::string("https://a.example/new")}}, due).size() == 1);
    s = found(store, d);
    CHECK(s.sequence == 3);
    CHECK(s.endpoint == "https://a.example/new");
    CHECK(store.requeue({requeue_item{delivered, std::nullopt}}, due).empty());

    // A queued delivery is claimed and worked as any other.
    const auto got = store.claim(micros(due), 10, 20, "w2", 10);
    REQUIRE(got.size() == 1);
    CHECK(got[0].sequence == 3);
}

STORE_TEST_CASE("Delivery store: racing requeues from two connections queue each delivery once", "[B6][O5]") {
    TestType backend;
    const auto setup = backend.open();
    std::vector<keyhook::delivery_state> ds;
    for (int i = 0; i < 40; ++i) ds.push_back(delivery(i, t0));
    setup->enqueue("acme", {}, ds, t0);
    for (const auto& d : ds) attempt_once(*setup, d, t0, 500, delivery_status::gave_up);
    // Each racer reads every ended delivery first, then queues them one at a time.
    const auto a_handle = backend.open(), b_handle = backend.open();
    delivery_filter ended;
    ended.statuses = {delivery_status::gave_up};
    std::vector<stored_delivery> a_read, b_read;
    a_handle->for_each(ended, [&](const stored_delivery& d) { a_read.push_back(d); });
    b_handle->for_each(ended, [&](const stored_delivery& d) { b_read.push_back(d); });
    REQUIRE(a_read.size() == ds.size());
    std::reverse(b_read.begin(), b_read.end());  // from the other end: they meet in the middle
    std::vector<std::string> a_queued, b_queued;
    const auto race = [](examples::store::delivery_store& store, const std::vector<stored_delivery>& read,
                         std::vector<std::string>& queued) {
        for (const auto& d : read)
            for (const auto& id : store.requeue({requeue_item{d, std::nullopt}}, t0)) queued.push_back(id);
    };
    std::thread a(race, std::ref(*a_handle), std::cref(a_read), std::ref(a_queued));
    std::thread b(race, std::ref(*b_handle), std::cref(b_read), std::ref(b_queued));
    a.join();
    b.join();
    std::set<std::string> all(a_queued.begin(), a_queued.end());
    for (const auto& id : b_queued) CHECK(all.insert(id).second);  // none queued by both
    CHECK(all.size() == ds.size());                                // none left out
    CHECK(a_queued.size() + b_queued.size() == ds.size());
    CHECK(setup->pending() == ds.size());
    for (const auto& d : ds) CHECK(found(*setup, d).sequence == 2);
}

STORE_TEST_CASE("Delivery store: a filter takes deliveries by status, tenant, webhook and creation time", "[B6][O5]") {
    TestType backend;
    const auto handle = backend.open();
    auto& store = *handle;
    const auto a0 = delivery(0, t0), a2 = delivery(2, t0), a1 = delivery(1, t0), g4 = delivery(4, t0);
    store.enqueue("acme", {}, {a0, a2}, t0);                          // hook-0
    store.enqueue("acme", {}, {a1}, t0 + std::chrono::seconds(1));    // hook-1
    store.enqueue("globex", {}, {g4}, t0 + std::chrono::seconds(2));  // globex's hook-0
    attempt_once(store, a2, t0, 500, delivery_status::gave_up);
    attempt_once(store, g4, t0, 410, delivery_status::disabled);

    CHECK(listed(store, {}) == ids_of({a0, a1, a2, g4}));
    delivery_filter f;
    f.statuses = {delivery_status::gave_up};
    CHECK(listed(store, f) == ids_of({a2}));
    f.statuses = {delivery_status::gave_up, delivery_status::disabled};
    CHECK(listed(store, f) == ids_of({a2, g4}));
    f.statuses = {delivery_status::pending};
    CHECK(listed(store, f) == ids_of({a0, a1}));
    f = {};
    f.tenant = "acme";
    CHECK(listed(store, f) == ids_of({a0, a1, a2}));
    f.webhook = "hook-0";
    CHECK(listed(store, f) == ids_of({a0, a2}));  // acme's hook-0, not globex's
    f = {};
    f.created_since = t0 + std::chrono::seconds(1);  // at or after: the boundary is taken
    CHECK(listed(store, f) == ids_of({a1, g4}));
    f.created_since = t0 + std::chrono::seconds(1) + std::chrono::microseconds(1);
    CHECK(listed(store, f) == ids_of({g4}));
    f.tenant = "initech";
    CHECK(listed(store, f).empty());
}

STORE_TEST_CASE("Delivery store: enabling a disabled webhook clears its flag and endpoint state, once",
                "[B6][O5][H10]") {
    TestType backend;
    const auto handle = backend.open();
    auto& store = *handle;
    using examples::store::enable_outcome;
    using examples::store::endpoint_enabling;
    std::vector<std::string> read;
    const auto reader = [&read](const std::string& state) {
        read.push_back(state);
        return endpoint_enabling{state.find("\"disabled\":true") != std::string::npos, R"({"throttleTat":null})"};
    };
    CHECK(store.enable_webhook({"acme", "hook-1"}, reader) == enable_outcome::unknown_webhook);
    const auto d = delivery(1, t0);
    store.enqueue("acme", {{"hook-1", "{}", ""}}, {d}, t0);
    store.enqueue("globex", {{"hook-1", "{}", ""}}, {}, t0);
    CHECK(store.enable_webhook({"acme", "hook-1"}, reader) == enable_outcome::not_disabled);
    CHECK(read.back().empty());  // no endpoint row yet

    // Disabled by its endpoint state (H10): cleared, once; the state's version moves on.
    REQUIRE(store.put_endpoint({"acme", "hook-1"}, R"({"disabled":true})", 0));
    CHECK(store.enable_webhook({"acme", "hook-1"}, reader) == enable_outcome::enabled);
    auto row = store.endpoint({"acme", "hook-1"});
    CHECK(row.state == R"({"throttleTat":null})");
    CHECK(row.version == 2);
    CHECK(store.enable_webhook({"acme", "hook-1"}, reader) == enable_outcome::not_disabled);
    CHECK_FALSE(store.put_endpoint({"acme", "hook-1"}, R"({"disabled":true})", 1));  // a worker's stale read loses

    // Disabled by its settings row's flag (a 410 recorded): cleared, once.
    attempt_once(store, d, t0, 410, delivery_status::disabled);
    store.enqueue("globex", {}, {}, t0);
    REQUIRE(store.webhook({"acme", "hook-1"})->disabled);
    REQUIRE(store.put_endpoint({"globex", "hook-1"}, R"({"disabled":true})", 0));
    CHECK(store.enable_webhook({"acme", "hook-1"}, reader) == enable_outcome::enabled);
    CHECK_FALSE(store.webhook({"acme", "hook-1"})->disabled);
    CHECK(store.enable_webhook({"acme", "hook-1"}, reader) == enable_outcome::not_disabled);
    // Another tenant's webhook of that name is left as it was.
    CHECK(store.endpoint({"globex", "hook-1"}).state == R"({"disabled":true})");
    // Its deliveries are left to the operator's --resend or --recover.
    CHECK(found(store, d).status == delivery_status::disabled);
}

STORE_TEST_CASE("Delivery store: racing enables from two connections enable once", "[B6][O5][H10]") {
    TestType backend;
    const auto setup = backend.open();
    setup->enqueue("acme", {{"hook-1", "{}", ""}}, {}, t0);
    const auto reader = [](const std::string& state) {
        return examples::store::endpoint_enabling{state.find("\"disabled\":true") != std::string::npos, "{}"};
    };
    for (int round = 0; round < 10; ++round) {
        const auto version = setup->endpoint({"acme", "hook-1"}).version;
        REQUIRE(setup->put_endpoint({"acme", "hook-1"}, R"({"disabled":true})", version));
        const auto a_handle = backend.open(), b_handle = backend.open();
        examples::store::enable_outcome a_got{}, b_got{};
        std::thread a([&] { a_got = a_handle->enable_webhook({"acme", "hook-1"}, reader); });
        std::thread b([&] { b_got = b_handle->enable_webhook({"acme", "hook-1"}, reader); });
        a.join();
        b.join();
        const int enabled = (a_got == examples::store::enable_outcome::enabled ? 1 : 0) +
                            (b_got == examples::store::enable_outcome::enabled ? 1 : 0);
        CHECK(enabled == 1);
        CHECK(setup->endpoint({"acme", "hook-1"}).state == "{}");
    }
}

STORE_TEST_CASE("Delivery store: a purge leaves tombstones of what ended before its time; their events add nothing",
                "[B6][O5]") {
    TestType backend;
    const auto handle = backend.open();
    auto& store = *handle;
    const auto d1 = delivery(1, t0), d3 = delivery(3, t0), d5 = delivery(5, t0), g7 = delivery(7, t0);
    store.enqueue("acme", {}, {d1, d3, d5}, t0);
    store.enqueue("globex", {}, {g7}, t0);
    const auto t = t0 + std::chrono::hours(1);
    attempt_once(store, d1, t, 500, delivery_status::gave_up);
    attempt_once(store, d3, t + std::chrono::microseconds(1), 200, delivery_status::delivered);
    attempt_once(store, g7, t, 200, delivery_status::delivered);
    delivery_filter f;
    CHECK(store.purge(f) == 0);  // no time: nothing
    f.ended_before = t;
    CHECK(store.purge(f) == 0);  // ended at t is not before t
    f.ended_before = t + std::chrono::microseconds(1);
    f.tenant = "acme";
    CHECK(store.purge(f) == 1);  // d1 only: d3 ended at the boundary, g7 is globex's
    const auto tomb = store.find(to_string(d1.id));
    CHECK(tomb.purged);
    CHECK_FALSE(tomb.delivery);
    CHECK(store.history(to_string(d1.id)).empty());
    CHECK(listed(store, {}) == ids_of({d3, d5, g7}));
    // The same event enqueued again adds nothing; a tombstone is queued again by nothing.
    CHECK(store.enqueue("acme", {}, {d1}, t) == 0);
    CHECK(store.find(to_string(d1.id)).purged);
    stored_delivery was;
    static_cast<keyhook::delivery_state&>(was) = d1;
    was.status = delivery_status::gave_up;
    CHECK(store.requeue({requeue_item{was, std::nullopt}}, t).empty());

    f = {};
    f.ended_before = t0 + std::chrono::hours(2);
    CHECK(store.purge(f) == 2);  // d3 and g7; d5 is pending and never purged
    CHECK(store.purge(f) == 0);
    CHECK(listed(store, {}) == ids_of({d5}));
    CHECK(store.pending() == 1);
    CHECK(store.claim(micros(t0), 100, 200, "w9", 10).size() == 1);
}

#if KEYHOOK_TEST_HAVE_SQLITE
SQL_STORE_TEST_CASE("Delivery store: a version 2 store is migrated to version 3 when it is opened", "[B6][O5]") {
    TestType backend;
    namespace sql = examples::store::sql;
    for (const char* text : {sql::create_schema, sql::create_webhooks, sql::create_deliveries, sql::create_due_index,
                             sql::create_settings, sql::create_endpoints})
        backend.exec(text);
    backend.exec("INSERT INTO keyhook_schema (version) VALUES (2)");
    backend.exec(R"(INSERT INTO keyhook_webhooks (tenant, name, settings) VALUES ('acme', 'hook-1', )"
                 R"('{"name":"hook-1","endpoint":"https://a.example/in","saved":true}'))");
    // A delivery that gave up after two attempts, and one still pending after one.
    keyhook::delivery_state ended = delivery(1, t0), waiting = delivery(3, t0);
    using action = keyhook::retry_decision::action;
    keyhook::record_attempt(
        ended, {t0, keyhook::attempt_outcome::http(503), keyhook::retry_after::delay(std::chrono::seconds(7))},
        keyhook::retry_decision{action::send, t0 + std::chrono::minutes(1), 1});
    keyhook::record_attempt(ended, {t0 + std::chrono::minutes(1), keyhook::attempt_outcome::timed_out(), std::nullopt},
                            keyhook::retry_decision{action::give_up, {}, 2});
    keyhook::record_attempt(waiting, {t0, keyhook::attempt_outcome::transport_failure(), std::nullopt},
                            keyhook::retry_decision{action::send, t0 + std::chrono::minutes(5), 1});
    for (const auto& d : {ended, waiting})
        backend.exec("INSERT INTO keyhook_deliveries (id, tenant, webhook, due_at, state) VALUES ('" + to_string(d.id) +
                     "', 'acme', 'hook-1', " + (d.next_due ? std::to_string(micros(*d.next_due)) : "NULL") + ", '" +
                     keyhook::write_delivery_state(d) + "')");

    const auto store = backend.open();
    CHECK(backend.scalar("SELECT MAX(version) FROM keyhook_schema") == 3);
    CHECK(backend.scalar("SELECT COUNT(*) FROM keyhook_schema") == 1);
    auto s = found(*store, ended);
    CHECK(s.status == delivery_status::gave_up);
    CHECK(s.sequence == 1);
    CHECK(s.created_at == t0);                          // its first attempt
    CHECK(s.ended_at == t0 + std::chrono::minutes(1));  // its last
    CHECK(s.endpoint == "https://a.example/in");        // its webhook's, as stored
    const auto h = store->history(to_string(ended.id));
    REQUIRE(h.size() == 2);
    CHECK(h[0].attempt == ended.attempts[0]);  // Retry-After included
    CHECK(h[1].attempt == ended.attempts[1]);
    CHECK_FALSE(h[0].detail);  // version 2 kept none
    s = found(*store, waiting);
    CHECK(s.status == delivery_status::pending);
    CHECK_FALSE(s.ended_at);
    delivery_filter gave_up;
    gave_up.statuses = {delivery_status::gave_up};
    CHECK(listed(*store, gave_up) == ids_of({ended}));
    // Recoverable as any other; opened again, the store is used as it is.
    CHECK(store->requeue({requeue_item{found(*store, ended), std::nullopt}}, t0).size() == 1);
    const auto again = backend.open();
    CHECK(backend.scalar("SELECT COUNT(*) FROM keyhook_attempts") == 3);
    CHECK(found(*again, ended).sequence == 2);
}
#endif

}  // namespace delivery_store_test
