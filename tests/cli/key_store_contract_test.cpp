// The key_store interface's contract (examples/shared/key_store.hpp), the
// same checks over each backend: the JSON-lines file always, PostgreSQL
// (examples/shared/postgres_key_store.hpp) when KEYHOOK_TEST_POSTGRESQL names
// a database the test may use freely (its key tables are dropped before each
// case). CTest's interop.key_store_postgresql starts a server and sets it
// (tests/webhook_cli/with_postgresql.py); without it the PostgreSQL parts say so
// once and pass. Waits are on conditions with deadlines, never on sleeps.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "keyhook/base64.hpp"
#include "keyhook/creation.hpp"
#include "keyhook/lifecycle.hpp"
#include "shared/key_store.hpp"
#include "shared/store_opener.hpp"
#include "../lifecycle/helpers.hpp"
#if KEYHOOK_EXAMPLES_HAVE_LIBPQ
#include <libpq-fe.h>
#endif

namespace contract {

using namespace keyhook;

crypto::pepper_set contract_peppers() {
    return key_store::parse_peppers("p2:" + base64_encode(std::string(48, 'b')) +
                                    " p1:" + base64_encode(std::string(32, 'a')))
        .value();
}

crypto::pepper_set older_pepper_only() {
    return key_store::parse_peppers("p1:" + base64_encode(std::string(32, 'a'))).value();
}

struct new_key {
    key_store::entry entry;
    std::string plaintext;
};

// A key of `tenant` with credits (100, refilled daily), made as key_admin makes one.
new_key fresh_key(test_support::seeded_random& random, const std::string& tenant = "acme",
                  const crypto::pepper_set& under = contract_peppers()) {
    const auto request = test_support::request();
    auto created = create_key(request, tenant_kind::restricted, random, request.active_from);
    new_key out;
    out.plaintext = created.key.take()->reveal();
    out.entry.tenant = tenant;
    out.entry.record = created.record;
    out.entry.stored_key =
        crypto::try_compute_stored_digest(under, secret(out.plaintext)).value().try_store_form().value();
    out.entry.policy.rate = rate_limit{10, std::chrono::seconds{60}, 3};
    out.entry.policy.limited_credits = true;
    out.entry.policy.initial_credits = 100;
    out.entry.policy.refill = credit_refill{refill_period::daily, 100, 1};
    out.entry.usage = key_usage::fresh(out.entry.policy, request.active_from);
    return out;
}

bool same_entry(const key_store::entry& a, const key_store::entry& b) {
    return a.tenant == b.tenant && a.record == b.record && a.stored_key == b.stored_key && a.policy == b.policy &&
           a.usage.credits == b.usage.credits && a.usage.last_used_at == b.usage.last_used_at &&
           a.record.last_used_at == b.record.last_used_at;
}

bool same_entries(const std::vector<key_store::entry>& a, const std::vector<key_store::entry>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!same_entry(a[i], b[i])) return false;
    return true;
}

// Polls `condition` until it holds or `bound` has passed (tests/interop/waits.py's wait_until).
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds bound = std::chrono::seconds{30}) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    for (;;) {
        if (condition()) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
}

const char* postgres_uri() {
    const char* uri = std::getenv("KEYHOOK_TEST_POSTGRESQL");
    return uri && *uri ? uri : nullptr;
}

#if KEYHOOK_EXAMPLES_HAVE_LIBPQ
// Runs SQL on the test's database; the first column of each row.
std::vector<std::string> run_sql(const std::string& text) {
    PGconn* c = PQconnectdb(postgres_uri());
    REQUIRE(PQstatus(c) == CONNECTION_OK);
    PQsetNoticeProcessor(
        c, [](void*, const char*) {}, nullptr);
    PGresult* r = PQexec(c, text.c_str());
    const auto status = PQresultStatus(r);
    INFO(PQerrorMessage(c));
    CHECK((status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK));
    std::vector<std::string> out;
    if (status == PGRES_TUPLES_OK)
        for (int i = 0; i < PQntuples(r); ++i) out.emplace_back(PQgetvalue(r, i, 0));
    PQclear(r);
    PQfinish(c);
    return out;
}

void drop_key_tables() { run_sql("DROP TABLE IF EXISTS keyhook_keys, keyhook_key_version, keyhook_key_schema"); }
#endif

// One backend: opens a store object on the same store each time it is called.
struct store_backend {
    std::string name;
    std::function<std::unique_ptr<key_store::key_store>()> open;
    bool database = false;
};

std::string temp_directory() {
    char pattern[] = "/tmp/keyhook-contract-test-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    return pattern;
}

// The backends this run has; each store starts empty.
std::vector<store_backend> store_backends(const std::string& dir) {
    std::vector<store_backend> out;
    const std::string path = dir + "/keys.jsonl";
    std::remove(path.c_str());
    out.push_back(
        {"jsonl",
         [path] { return std::unique_ptr<key_store::key_store>(std::make_unique<key_store::jsonl_key_store>(path)); },
         false});
#if KEYHOOK_EXAMPLES_HAVE_LIBPQ
    if (const char* uri = postgres_uri()) {
        drop_key_tables();
        std::string why;
        const auto address = examples::store::parse_store_address(uri, examples::store::store_use::keys, why);
        REQUIRE(address);
        out.push_back({"postgresql", [a = *address] { return examples::store::open_key_store(a); }, true});
    } else {
        WARN(
            "KEYHOOK_TEST_POSTGRESQL is not set: the PostgreSQL key store is not checked here "
            "(CTest's interop.key_store_postgresql checks it)");
    }
#endif
    return out;
}

void remove_directory(const std::string& dir) {
    for (const char* f : {"keys.jsonl", "keys.jsonl.lock"}) std::remove((dir + "/" + f).c_str());
    ::rmdir(dir.c_str());
}

std::vector<key_store::entry> read_all(key_store::key_store& store) {
    auto r = store.read();
    REQUIRE(r);
    return *r;
}

key_store::store_version add(key_store::key_store& store, const std::vector<key_store::entry>& entries) {
    auto r = store.update([&](std::vector<key_store::entry>& e, const key_store::store_version&) {
        e.insert(e.end(), entries.begin(), entries.end());
        return true;
    });
    INFO((r ? std::string() : r.error().what()));
    REQUIRE(r);
    return *r;
}

TEST_CASE("K18: the key store keeps what a writer writes, in order; its version moves with each change only",
          "[K18][K17][key_store][key_store_contract]") {
    const auto dir = temp_directory();
    for (const auto& b : store_backends(dir)) {
        DYNAMIC_SECTION(b.name) {
            test_support::seeded_random random{101};
            auto store = b.open();
            CHECK(read_all(*store).empty());
            const auto k1 = fresh_key(random), k2 = fresh_key(random, "globex"), k3 = fresh_key(random);
            const auto v1 = add(*store, {k1.entry, k2.entry, k3.entry});
            CHECK(same_entries(read_all(*store), {k1.entry, k2.entry, k3.entry}));
            const auto stamp = store->current_stamp();
            REQUIRE(stamp);
            CHECK(*stamp == v1);
            // Another store object (another process's view) reads the same.
            auto other = b.open();
            const auto snap = other->read_snapshot();
            REQUIRE(snap);
            CHECK(snap->stamp == v1);
            CHECK(same_entries(snap->entries, {k1.entry, k2.entry, k3.entry}));

            // A change that writes nothing leaves the version as it was.
            const auto none = store->update([](std::vector<key_store::entry>& e, const key_store::store_version& v) {
                CHECK(e.size() == 3);
                CHECK(v.exists);
                return false;
            });
            REQUIRE(none);
            CHECK(*none == v1);
            CHECK(*other->current_stamp() == v1);

            // Deactivate one, delete another, add one: the order of the rest is kept.
            const auto k4 = fresh_key(random);
            auto expected = std::vector<key_store::entry>{k1.entry, k3.entry, k4.entry};
            expected[1].record = deactivate_key(expected[1].record, test_support::at("2024-03-05T00:00:00Z"));
            expected[1].usage.credits = credit_state{7, test_support::at("2024-03-05T00:00:00Z")};
            const auto v2 = store->update([&](std::vector<key_store::entry>& e, const key_store::store_version&) {
                e.erase(e.begin() + 1);
                e[1].record = expected[1].record;
                e[1].usage.credits = expected[1].usage.credits;
                e.push_back(k4.entry);
                return true;
            });
            REQUIRE(v2);
            CHECK(*v2 != v1);
            CHECK(*other->current_stamp() == *v2);
            CHECK(same_entries(read_all(*other), expected));
        }
    }
    remove_directory(dir);
}

TEST_CASE("K18: a write that would break an invariant is refused, names no other key, and leaves the store as it was",
          "[K18][K11][key_store][key_store_contract]") {
    const auto dir = temp_directory();
    for (const auto& b : store_backends(dir)) {
        DYNAMIC_SECTION(b.name) {
            test_support::seeded_random random{102};
            auto store = b.open();
            const auto k1 = fresh_key(random, "globex"), k2 = fresh_key(random);
            const auto v1 = add(*store, {k1.entry, k2.entry});
            const auto before = read_all(*store);
            const auto refused = [&](const std::function<void(std::vector<key_store::entry>&)>& change) {
                auto r = store->update([&](std::vector<key_store::entry>& e, const key_store::store_version&) {
                    change(e);
                    return true;
                });
                REQUIRE_FALSE(r);
                CHECK(r.error().code == errc::invalid_value);
                CHECK_FALSE(key_store::is_platform_failure(r.error()));
                const auto text = r.error().what();
                CHECK_THAT(text, Catch::Contains("write refused, the store is unchanged"));
                CHECK_THAT(text, !Catch::Contains("globex") && !Catch::Contains(k1.entry.record.id.str()));
                CHECK_THAT(text, !Catch::Contains(k1.entry.stored_key.substr(7)));
                CHECK(same_entries(read_all(*store), before));
                CHECK(*store->current_stamp() == v1);
                return text;
            };
            // Two keys with one id.
            auto same_id = fresh_key(random).entry;
            same_id.record.id = k1.entry.record.id;
            CHECK_THAT(refused([&](std::vector<key_store::entry>& e) { e.push_back(same_id); }), Catch::Contains("id"));
            // Two keys with one stored key.
            auto same_digest = fresh_key(random).entry;
            same_digest.stored_key = k1.entry.stored_key;
            CHECK_THAT(refused([&](std::vector<key_store::entry>& e) { e.push_back(same_digest); }),
                       Catch::Contains("stored key"));
            // An entry the reader refuses (an empty tenant).
            auto no_tenant = fresh_key(random).entry;
            no_tenant.tenant.clear();
            CHECK_THAT(refused([&](std::vector<key_store::entry>& e) { e.push_back(no_tenant); }),
                       Catch::Contains("tenant"));
            // One plaintext key under another pepper: check_key_is_new, in the writer's change.
            test_support::seeded_random again{7777};
            const auto older = fresh_key(again, "acme", older_pepper_only());
            add(*store, {older.entry});
            const auto v2 = *store->current_stamp();
            auto same_key = fresh_key(again);  // the same plaintext, under the current pepper now
            same_key.entry.stored_key = crypto::try_compute_stored_digest(contract_peppers(), secret(older.plaintext))
                                            .value()
                                            .try_store_form()
                                            .value();
            REQUIRE(same_key.entry.stored_key != older.entry.stored_key);
            bool refused_key = false;
            try {
                (void)store->update([&](std::vector<key_store::entry>& e, const key_store::store_version&) {
                    if (auto is_new = key_store::check_key_is_new(e, contract_peppers(), secret(older.plaintext));
                        !is_new)
                        throw is_new.error();
                    e.push_back(same_key.entry);
                    return true;
                });
            } catch (const keyhook::error& e) {
                refused_key = true;
                CHECK_THAT(e.message, Catch::Contains("already stored"));
            }
            CHECK(refused_key);
            CHECK(*store->current_stamp() == v2);
            CHECK(read_all(*store).size() == 3);
        }
    }
    remove_directory(dir);
}

TEST_CASE("K18: two writers adding one key at once: exactly one succeeds", "[K18][key_store][key_store_contract]") {
    const auto dir = temp_directory();
    for (const auto& b : store_backends(dir)) {
        DYNAMIC_SECTION(b.name) {
            test_support::seeded_random random{103};
            for (int round = 0; round < 10; ++round) {
                const auto k = fresh_key(random);
                std::mutex m;
                std::condition_variable go;
                int ready = 0;
                std::atomic<int> added{0}, refused{0}, inside{0}, overlapped{0};
                const auto writer = [&] {
                    auto store = b.open();
                    {
                        std::unique_lock<std::mutex> hold(m);
                        ++ready;
                        go.notify_all();
                        go.wait(hold, [&] { return ready == 2; });
                    }
                    try {
                        auto r = store->update([&](std::vector<key_store::entry>& e, const key_store::store_version&) {
                            if (inside.fetch_add(1) != 0) overlapped.fetch_add(1);
                            const auto is_new = key_store::check_key_is_new(e, contract_peppers(), secret(k.plaintext));
                            inside.fetch_sub(1);
                            if (!is_new) throw is_new.error();
                            auto mine = k.entry;
                            mine.record.id = key_id("round-" + std::to_string(round) + "-" +
                                                    std::to_string(reinterpret_cast<std::uintptr_t>(&mine)));
                            e.push_back(mine);
                            return true;
                        });
                        if (r) added.fetch_add(1);
                    } catch (const keyhook::error&) {
                        refused.fetch_add(1);
                    }
                };
                std::thread one(writer), two(writer);
                one.join();
                two.join();
                CHECK(added.load() == 1);
                CHECK(refused.load() == 1);
                CHECK(overlapped.load() == 0);
            }
            auto store = b.open();
            CHECK(read_all(*store).size() == 10);
        }
    }
    remove_directory(dir);
}

TEST_CASE("K14, K15: a write-back spends credits, moves lastUsedAt forward only, rehashes, skips a deleted key",
          "[K14][K15][K11][key_store][key_store_contract]") {
    const auto dir = temp_directory();
    for (const auto& b : store_backends(dir)) {
        DYNAMIC_SECTION(b.name) {
            test_support::seeded_random random{104};
            auto store = b.open();
            const auto k1 = fresh_key(random), k2 = fresh_key(random), gone = fresh_key(random);
            add(*store, {k1.entry, k2.entry});
            const auto v1 = *store->current_stamp();
            const auto base = k1.entry.usage.credits;
            const auto t1 = test_support::at("2024-03-02T10:00:00Z");
            key_store::write_back w1{k1.entry.record.id, base, credit_state{97, base.last_refill}, t1, {}, {}, 3};
            key_store::write_back w2{gone.entry.record.id, base, credit_state{90, base.last_refill}, t1, {}, {}, 10};
            auto r = store->write_usage({w1, w2});
            INFO((r ? std::string() : r.error().what()));
            REQUIRE(r);
            REQUIRE(r->size() == 2);
            CHECK((*r)[0].found);
            CHECK((*r)[0].credits == w1.credits);
            CHECK((*r)[0].last_used_at == t1);
            CHECK((*r)[0].stored_key == k1.entry.stored_key);
            CHECK_FALSE((*r)[1].found);  // a deleted key is not written back
            auto now = read_all(*store);
            REQUIRE(now.size() == 2);
            CHECK(now[0].usage.credits == w1.credits);
            CHECK(now[0].record.last_used_at == t1);
            CHECK(now[0].usage.last_used_at == t1);
            CHECK(now[0].record.status == k1.entry.record.status);
            CHECK(same_entry(now[1], k2.entry));
            if (b.database) CHECK(*store->current_stamp() == v1);  // usage is no change a reader must re-read

            // lastUsedAt never moves backwards.
            key_store::write_back older{
                k1.entry.record.id, w1.credits, w1.credits, test_support::at("2024-03-02T09:00:00Z"), {}, {}, 0};
            REQUIRE(store->write_usage({older}));
            CHECK(read_all(*store)[0].record.last_used_at == t1);

            // A rehash (K11): the stored key becomes the digest under the current pepper.
            const std::string to = "kh1.p2." + std::string(43, 'Q');
            key_store::write_back rehash{k2.entry.record.id,
                                         k2.entry.usage.credits,
                                         k2.entry.usage.credits,
                                         std::nullopt,
                                         k2.entry.stored_key,
                                         to,
                                         0};
            r = store->write_usage({rehash});
            REQUIRE(r);
            CHECK((*r)[0].stored_key == to);
            CHECK(read_all(*store)[1].stored_key == to);
            CHECK(*store->current_stamp() != v1);  // readers see the new digest
            // Where the stored key is no longer the one matched, nothing moves.
            rehash.rehash_to = "kh1.p2." + std::string(43, 'R');
            r = store->write_usage({rehash});
            REQUIRE(r);
            CHECK((*r)[0].stored_key == to);
        }
    }
    remove_directory(dir);
}

TEST_CASE("K17: a store that announces nothing never makes a reader wait", "[K17][key_store][key_store_contract]") {
    const auto dir = temp_directory();
    key_store::jsonl_key_store file(dir + "/keys.jsonl");
    CHECK_FALSE(file.shared());
    const auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(file.wait_for_change(std::chrono::seconds{60}));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds{30});
    remove_directory(dir);
}

#if KEYHOOK_EXAMPLES_HAVE_LIBPQ

// The PostgreSQL backend alone, or nothing when no database is given.
std::unique_ptr<key_store::key_store> open_database() {
    const char* uri = postgres_uri();
    if (!uri) {
        WARN("KEYHOOK_TEST_POSTGRESQL is not set: nothing to check here without a database");
        SUCCEED("checked by interop.key_store_postgresql, which starts a server");  // not a case without assertions
        return nullptr;
    }
    std::string why;
    const auto address = examples::store::parse_store_address(uri, examples::store::store_use::keys, why);
    REQUIRE(address);
    return examples::store::open_key_store(*address);
}

std::unique_ptr<key_store::key_store> fresh_database() {
    if (postgres_uri()) drop_key_tables();
    return open_database();
}

TEST_CASE("K17, K14: on the database, several gateways' credits spent add up; a refill and key_admin's credits win",
          "[K17][K14][key_store][key_store_contract]") {
    auto store = fresh_database();
    if (!store) return;
    test_support::seeded_random random{105};
    const auto k = fresh_key(random);
    add(*store, {k.entry});
    const auto id = k.entry.record.id;
    const auto base = k.entry.usage.credits;  // 100, refilled at creation
    // Two gateways read 100; one spends 2, the other 5: the store holds 93.
    REQUIRE(store->write_usage({{id, base, credit_state{98, base.last_refill}, std::nullopt, {}, {}, 2}}));
    REQUIRE(store->write_usage({{id, base, credit_state{95, base.last_refill}, std::nullopt, {}, {}, 5}}));
    CHECK(read_all(*store)[0].usage.credits == credit_state{93, base.last_refill});
    // Never below 0.
    REQUIRE(store->write_usage({{id, base, credit_state{0, base.last_refill}, std::nullopt, {}, {}, 100}}));
    CHECK(read_all(*store)[0].usage.credits.remaining == 0);
    // A gateway refilled (the next day): the store takes its refill and what it spent since.
    const auto day2 = test_support::at("2024-03-02T00:00:00Z");
    REQUIRE(store->write_usage({{id, base, credit_state{99, day2}, std::nullopt, {}, {}, 1}}));
    CHECK(read_all(*store)[0].usage.credits == credit_state{99, day2});
    // Another gateway refilled at the same instant: its spending since is subtracted.
    REQUIRE(store->write_usage({{id, base, credit_state{96, day2}, std::nullopt, {}, {}, 4}}));
    CHECK(read_all(*store)[0].usage.credits == credit_state{95, day2});
    // Spending counted before a refill the store already has is dropped (the refill set, not added).
    REQUIRE(store->write_usage({{id, base, credit_state{50, base.last_refill}, std::nullopt, {}, {}, 50}}));
    CHECK(read_all(*store)[0].usage.credits == credit_state{95, day2});
    // key_admin sets credits (update --credits): a gateway's earlier count does not undo them.
    const auto set_at = test_support::at("2024-03-02T12:00:00Z");
    REQUIRE(store->update([&](std::vector<key_store::entry>& e, const key_store::store_version&) {
        e[0].usage.credits = credit_state{500, set_at};
        return true;
    }));
    REQUIRE(store->write_usage({{id, credit_state{95, day2}, credit_state{90, day2}, std::nullopt, {}, {}, 5}}));
    CHECK(read_all(*store)[0].usage.credits == credit_state{500, set_at});
    // key_admin's change in between and a gateway's usage: neither undoes the other.
    REQUIRE(store->write_usage({{id, credit_state{500, set_at}, credit_state{490, set_at}, std::nullopt, {}, {}, 10}}));
    REQUIRE(store->update([&](std::vector<key_store::entry>& e, const key_store::store_version&) {
        e[0].record = deactivate_key(e[0].record, set_at);
        return true;
    }));
    const auto now = read_all(*store);
    CHECK(now[0].record.status == key_status::revoked);
    CHECK(now[0].usage.credits == credit_state{490, set_at});
}

TEST_CASE("K17: a change is announced to every listening reader; an announcement is only a reason to read",
          "[K17][key_store][key_store_contract]") {
    auto reader = fresh_database();
    if (!reader) return;
    CHECK(reader->shared());
    auto writer = open_database();
    test_support::seeded_random random{106};
    const auto v0 = *reader->current_stamp();
    // Listening starts with the first wait; nothing happened yet.
    CHECK_FALSE(reader->wait_for_change(std::chrono::milliseconds{50}));
    const auto k = fresh_key(random);
    add(*writer, {k.entry});
    const auto start = std::chrono::steady_clock::now();
    CHECK(eventually([&] { return reader->wait_for_change(std::chrono::milliseconds{100}); }));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds{1});
    CHECK(*reader->current_stamp() != v0);
    // Anyone may NOTIFY the channel, with anything: the reader reads, and
    // finds the store as it is (the payload is never taken for content).
    const auto v1 = *reader->current_stamp();
    run_sql("NOTIFY keyhook_keys, 'version 999999: key revoked'");
    CHECK(eventually([&] { return reader->wait_for_change(std::chrono::milliseconds{100}); }));
    CHECK(*reader->current_stamp() == v1);
    const auto snap = reader->read_snapshot();
    REQUIRE(snap);
    CHECK(snap->stamp == v1);
    CHECK(snap->entries.size() == 1);
}

TEST_CASE("K17: a connection the database cut is made again by the next call, after a short pause",
          "[K17][key_store][key_store_contract]") {
    auto store = fresh_database();
    if (!store) return;
    REQUIRE(store->current_stamp());
    run_sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid()");
    const auto cut = store->current_stamp();
    REQUIRE_FALSE(cut);
    CHECK(key_store::is_platform_failure(cut.error()));
    CHECK(cut.error().path == store->path());
    // Within a few seconds it answers again (the pause doubles from 250 ms to at most 2 s).
    const auto start = std::chrono::steady_clock::now();
    CHECK(eventually([&] { return static_cast<bool>(store->current_stamp()); }));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds{5});
    // A listening reader listens again on its new connection.
    (void)store->wait_for_change(std::chrono::milliseconds{1});
    run_sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid()");
    CHECK(eventually([&] { return store->wait_for_change(std::chrono::milliseconds{100}); }));
    CHECK(eventually([&] { return static_cast<bool>(store->current_stamp()); }));
    auto writer = open_database();
    test_support::seeded_random random{107};
    add(*writer, {fresh_key(random).entry});
    CHECK(eventually([&] { return store->wait_for_change(std::chrono::milliseconds{100}); }));
}

TEST_CASE("K18: a key store of another schema version, or tables it did not make, is refused and left unchanged",
          "[K18][key_store][key_store_contract]") {
    auto store = fresh_database();
    if (!store) return;
    store.reset();
    CHECK(run_sql("SELECT version FROM keyhook_key_schema") == std::vector<std::string>{"2"});
    run_sql("UPDATE keyhook_key_schema SET version = 3");
    CHECK_THROWS_WITH(open_database(), Catch::Contains("schema version 3") &&
                                           Catch::Contains("needs schema version 2") &&
                                           Catch::Contains("newer keyhook"));
    CHECK(run_sql("SELECT version FROM keyhook_key_schema") == std::vector<std::string>{"3"});
    run_sql("DROP TABLE keyhook_key_schema");
    CHECK_THROWS_WITH(open_database(), Catch::Contains("without keyhook_key_schema"));
    CHECK(run_sql("SELECT to_regclass('keyhook_key_schema') IS NULL") == std::vector<std::string>{"t"});
}

TEST_CASE("K18, K11: the database's own refusal names no digest; an address's password is never shown",
          "[K18][K11][key_store][key_store_contract]") {
    // Without a server: libpq cannot connect, and the message has no password.
    {
        std::string why;
        const auto address = examples::store::parse_store_address(
            "postgresql://app:hunter2-Secret@/keys?host=/nonexistent-keyhook-dir&port=1",
            examples::store::store_use::keys, why);
        REQUIRE(address);
        try {
            (void)examples::store::open_key_store(*address, std::chrono::seconds{5});
            FAIL("opened");
        } catch (const std::runtime_error& e) {
            const std::string what = e.what();
            CHECK(what.rfind("postgresql://app@/keys?host=/nonexistent-keyhook-dir&port=1: cannot connect", 0) == 0);
            CHECK_THAT(what, !Catch::Contains("hunter2"));
        }
    }
    auto store = fresh_database();
    if (!store) return;
    test_support::seeded_random random{108};
    const auto k1 = fresh_key(random), k2 = fresh_key(random);
    add(*store, {k1.entry, k2.entry});
    // A usage write that moves one key's stored key onto the other's: the
    // unique index refuses it at COMMIT; the message quotes no digest.
    const auto r = store->update_usage([&](std::vector<key_store::entry>& e, const key_store::store_version&) {
        e[1].stored_key = e[0].stored_key;
        return std::vector<std::size_t>{1};
    });
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_value);
    CHECK_THAT(r.error().what(), Catch::Contains("write refused, the store is unchanged"));
    CHECK_THAT(r.error().what(), !Catch::Contains(k1.entry.stored_key.substr(7)) && !Catch::Contains("kh1."));
    const auto now = read_all(*store);
    CHECK(now[1].stored_key == k2.entry.stored_key);
}

TEST_CASE("K18: a writer waits for another's transaction and then sees its key",
          "[K18][key_store][key_store_contract]") {
    auto first = fresh_database();
    if (!first) return;
    auto second = open_database();
    test_support::seeded_random random{109};
    const auto k = fresh_key(random);
    std::atomic<bool> second_done{false};
    std::atomic<bool> second_refused{false};
    std::thread other;
    REQUIRE(first->update([&](std::vector<key_store::entry>& e, const key_store::store_version&) {
        REQUIRE(key_store::check_key_is_new(e, contract_peppers(), secret(k.plaintext)));
        e.push_back(k.entry);
        other = std::thread([&] {
            try {
                (void)second->update([&](std::vector<key_store::entry>& e2, const key_store::store_version&) {
                    if (auto is_new = key_store::check_key_is_new(e2, contract_peppers(), secret(k.plaintext)); !is_new)
                        throw is_new.error();
                    e2.push_back(k.entry);
                    return true;
                });
            } catch (const keyhook::error&) {
                second_refused = true;
            }
            second_done = true;
        });
        // The second writer is waiting on the version row's lock (seen in
        // pg_stat_activity), and has read nothing yet.
        CHECK(eventually([&] {
            return run_sql(
                       "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND wait_event_type = 'Lock'") == std::vector<std::string>{"1"};
        }));
        CHECK_FALSE(second_done.load());
        return true;
    }));
    other.join();
    CHECK(second_refused.load());
    CHECK(read_all(*first).size() == 1);
}

#endif

}  // namespace contract

#if KEYHOOK_EXAMPLES_HAVE_LIBPQ
namespace contract {

TEST_CASE("K18, K17: a key store of schema version 1 is moved to 2 (shared rate states) with its keys kept",
          "[K18][K17][key_store][key_store_contract]") {
    auto store = fresh_database();
    if (!store) return;
    test_support::seeded_random random{111};
    const auto k = fresh_key(random);
    add(*store, {k.entry});
    store.reset();
    // The layout of version 1: no rate_tat column.
    run_sql("ALTER TABLE keyhook_keys DROP COLUMN rate_tat");
    run_sql("DELETE FROM keyhook_key_schema");
    run_sql("INSERT INTO keyhook_key_schema (version) VALUES (1)");
    store = open_database();
    CHECK(run_sql("SELECT MAX(version) FROM keyhook_key_schema") == std::vector<std::string>{"2"});
    CHECK(run_sql("SELECT COUNT(*) FROM keyhook_keys WHERE rate_tat IS NULL") == std::vector<std::string>{"1"});
    CHECK(same_entries(read_all(*store), {k.entry}));
    const auto decided = store->decide_limits({{k.entry.record.id.str(), k.entry.policy, 1}});
    REQUIRE(decided);
    CHECK((*decided)[0].decision.allowed());
}

namespace {
// A key with `credits` and no refill, or a rate limit alone.
key_store::entry limited_key(test_support::seeded_random& random, std::optional<std::uint64_t> credits,
                             std::optional<rate_limit> rate) {
    auto e = fresh_key(random).entry;
    e.policy = key_policy{};
    e.policy.rate = rate;
    if (credits) {
        e.policy.limited_credits = true;
        e.policy.initial_credits = *credits;
    }
    e.usage = key_usage::fresh(e.policy, e.record.created_at.value_or(e.record.active_from));
    return e;
}

// `gateways` connections, each deciding `calls` calls of cost 1 on one key
// in batches of `per_batch`, all at once: the number allowed.
std::size_t allowed_across(const key_store::entry& e, int gateways, int calls, int per_batch) {
    std::atomic<std::size_t> allowed{0};
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    std::vector<std::string> failures(static_cast<std::size_t>(gateways));
    for (int g = 0; g < gateways; ++g)
        threads.emplace_back([&, g] {
            auto own = open_database();
            ++ready;
            while (ready.load() < gateways) std::this_thread::yield();
            for (int done = 0; done < calls; done += per_batch) {
                std::vector<key_store::limits_call> batch(static_cast<std::size_t>(per_batch),
                                                          key_store::limits_call{e.record.id.str(), e.policy, 1});
                const auto r = own->decide_limits(batch);
                if (!r) {
                    failures[static_cast<std::size_t>(g)] = r.error().what();
                    return;
                }
                for (const auto& o : *r) allowed += o.found && o.decision.allowed();
            }
        });
    for (auto& t : threads) t.join();
    for (const auto& f : failures) CHECK(f.empty());
    return allowed.load();
}
}  // namespace

TEST_CASE("K17, K14: gateways deciding one key's credits at once spend exactly its credits, never more",
          "[K17][K14][key_store][key_store_contract]") {
    auto store = fresh_database();
    if (!store) return;
    test_support::seeded_random random{112};
    const auto e = limited_key(random, 30, std::nullopt);
    add(*store, {e});
    // Three gateways, 90 calls each in batches of 5: exactly 30 allowed.
    CHECK(allowed_across(e, 3, 90, 5) == 30);
    CHECK(read_all(*store)[0].usage.credits.remaining == 0);
    // One batch past the end: every call denied, with the figures.
    const auto more = store->decide_limits({{e.record.id.str(), e.policy, 1}});
    REQUIRE(more);
    CHECK((*more)[0].decision.reason == denial_reason::usage_exceeded);
    CHECK((*more)[0].decision.credits_remaining == std::uint64_t{0});
    // key_admin sets credits again (update --credits): the next decisions spend them.
    REQUIRE(store->update([&](std::vector<key_store::entry>& all, const key_store::store_version&) {
        all[0].usage.credits.remaining = 2;
        return true;
    }));
    CHECK(allowed_across(e, 2, 10, 1) == 2);
}

TEST_CASE("K17, K13: gateways deciding one key's rate at once allow exactly its burst within a period",
          "[K17][K13][key_store][key_store_contract]") {
    auto store = fresh_database();
    if (!store) return;
    test_support::seeded_random random{113};
    // 20 per hour, burst 20: no second call comes back within the test.
    const auto e = limited_key(random, std::nullopt, rate_limit{20, std::chrono::hours{1}, 0});
    add(*store, {e});
    CHECK(allowed_across(e, 3, 30, 3) == 20);
    const auto next = store->decide_limits({{e.record.id.str(), e.policy, 1}});
    REQUIRE(next);
    const auto& o = (*next)[0];
    CHECK(o.decision.reason == denial_reason::rate_limited);
    REQUIRE(o.decision.retry_at);
    // The retry time is on the database's clock, one emission interval (3 minutes) past the first call at most.
    CHECK(*o.decision.retry_at > o.at);
    CHECK(*o.decision.retry_at - o.at <= std::chrono::minutes{3});
    // The rate state is the store's: a fresh connection sees it (the column, not a gateway's memory).
    CHECK(run_sql("SELECT COUNT(*) FROM keyhook_keys WHERE rate_tat IS NOT NULL") == std::vector<std::string>{"1"});
}

TEST_CASE("K17, K15: one batch decides its calls in order on the database's clock; a deleted key is not found",
          "[K17][K15][key_store][key_store_contract]") {
    auto store = fresh_database();
    if (!store) return;
    test_support::seeded_random random{114};
    const auto a = limited_key(random, 2, std::nullopt),
               b = limited_key(random, 1, rate_limit{5, std::chrono::hours{1}, 0});
    add(*store, {a, b});
    const auto ia = a.record.id.str(), ib = b.record.id.str();
    const auto r = store->decide_limits({{ia, a.policy, 1},
                                         {ib, b.policy, 1},
                                         {ia, a.policy, 1},
                                         {ia, a.policy, 1},
                                         {ib, b.policy, 1},
                                         {"gone", a.policy, 1}});
    REQUIRE(r);
    const auto& o = *r;
    CHECK(o[0].decision.allowed());
    CHECK(o[0].decision.credits_remaining == std::uint64_t{1});
    CHECK(o[1].decision.allowed());
    CHECK(o[2].decision.allowed());
    CHECK(o[2].decision.credits_remaining == std::uint64_t{0});
    CHECK(o[3].decision.reason == denial_reason::usage_exceeded);
    // b: its rate allows a second call, its one credit does not.
    CHECK(o[4].decision.reason == denial_reason::usage_exceeded);
    CHECK(o[4].decision.rate_remaining == std::uint64_t{4});
    CHECK_FALSE(o[5].found);
    // One clock: the database's, the same for the whole batch, and close to the database's own now().
    for (const auto& each : o) CHECK(each.at == o[0].at);
    const auto db_now = std::stoll(run_sql("SELECT floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint")[0]);
    CHECK(std::abs(db_now - o[0].at.time_since_epoch().count()) < 60 * 1000000LL);
    // lastUsedAt moved to the decision's time, for the keys with an allowed call.
    const auto now = read_all(*store);
    CHECK(now[0].record.last_used_at == o[0].at);
    CHECK(now[1].record.last_used_at == o[0].at);
}

}  // namespace contract
#endif

TEST_CASE("K17: a file store decides no shared limits; it says so, naming itself", "[K17][key_store]") {
    const auto dir = contract::temp_directory();
    key_store::jsonl_key_store store(dir + "/keys.jsonl");
    CHECK_FALSE(store.decides_limits());
    const auto r = store.decide_limits({{"k", keyhook::key_policy{}, 1}});
    REQUIRE_FALSE(r);
    CHECK(r.error().path == store.path());
    CHECK_THAT(r.error().message, Catch::Contains("no shared limits"));
    contract::remove_directory(dir);
}
