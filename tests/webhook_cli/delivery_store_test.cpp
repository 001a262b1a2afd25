// webhook_deliver's delivery_store interface (examples/shared/delivery_store.hpp,
// rule B6), the same cases on every backend the build has: in memory
// (memory_store.hpp, webhook_deliver without --store) and SQLite
// (sqlite_store.hpp); PostgreSQL runs the same loop in the interop stage.
// Enqueueing is idempotent, a claim takes only due and unleased deliveries,
// a lease is a worker's until it runs out, an attempt's outcome is written
// only by the worker that holds the lease, the endpoint rows by
// compare-and-set, every row keyed by (tenant, webhook name). Each boundary
// on both sides.
#include "shared/memory_store.hpp"
#if KEYHOOK_TEST_HAVE_SQLITE
#include "shared/sqlite_store.hpp"
#endif

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
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
};
#define BACKENDS memory_backend, sqlite_backend
#else
#define BACKENDS memory_backend
#endif

}  // namespace

TEMPLATE_TEST_CASE("Delivery store: enqueueing twice adds nothing, a newer configuration replaces the settings", "[B6]",
                   BACKENDS) {
    TestType backend;
    const auto handle = backend.open();
    auto& store = *handle;
    const std::vector<keyhook::delivery_state> ds{delivery(1, t0), delivery(2, t0)};
    CHECK(store.enqueue("acme", {{"hook-0", R"({"v":1})"}, {"hook-1", "{}"}}, ds) == 2);
    CHECK(store.enqueue("acme", {{"hook-0", R"({"v":2})"}}, ds) == 0);
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

TEMPLATE_TEST_CASE("Delivery store: a claim takes due deliveries that no live lease holds", "[B6]", BACKENDS) {
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
    store.enqueue("acme", {{"hook-1", "{}"}}, {});
    CHECK(store.record(done, "w2", true));
    CHECK(store.webhook({"acme", "hook-1"})->disabled);  // in the same transaction as the outcome
    CHECK(store.pending() == 1);
    CHECK(store.claim(micros(t0) + 20000000, now + 10 * lease, now + 11 * lease, "w3", 10).size() == 1);  // b only
}

TEMPLATE_TEST_CASE("Delivery store: a claim takes at most its limit, the earliest first; a renewal extends one lease",
                   "[B6]", BACKENDS) {
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

TEMPLATE_TEST_CASE("Delivery store: every delivery listed, in batches", "[B6]", BACKENDS) {
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

TEMPLATE_TEST_CASE("Delivery store: the delivery id key is the first one stored, and stays", "[B6][H12]", BACKENDS) {
    TestType backend;
    {
        const auto store = backend.open();
        CHECK(store->delivery_id_key("00112233445566778899aabbccddeeff") == "00112233445566778899aabbccddeeff");
        CHECK(store->delivery_id_key("ffeeddccbbaa99887766554433221100") == "00112233445566778899aabbccddeeff");
    }
    const auto reopened = backend.open();
    CHECK(reopened->delivery_id_key("ffeeddccbbaa99887766554433221100") == "00112233445566778899aabbccddeeff");
}

TEMPLATE_TEST_CASE("Delivery store: a webhook's endpoint state is one row, written by compare-and-set",
                   "[B6][H10][H11]", BACKENDS) {
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

TEMPLATE_TEST_CASE(
    "Delivery store: two tenants' webhooks of one name are separate rows: settings, disabled flag, "
    "endpoint state, deliveries",
    "[B6][H10]", BACKENDS) {
    TestType backend;
    const auto handle = backend.open();
    auto& store = *handle;
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

TEMPLATE_TEST_CASE("Delivery store: the clock's epoch and scale are the first ones kept, and stay", "[B6]", BACKENDS) {
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

}  // namespace delivery_store_test
