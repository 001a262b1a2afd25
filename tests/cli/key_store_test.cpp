// The key store key_admin writes and key_gateway reads
// (examples/shared/key_store.hpp): its lines, the gateway's merge, the file.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "keyhook/base64.hpp"
#include "keyhook/creation.hpp"
#include "keyhook/lifecycle.hpp"
#include "shared/key_store.hpp"
#include "../lifecycle/helpers.hpp"

using namespace keyhook;

namespace {

const std::string pepper_a = base64_encode(std::string(32, 'a'));
const std::string pepper_b = base64_encode(std::string(48, 'b'));

crypto::pepper_set peppers() { return key_store::parse_peppers("p2:" + pepper_b + " p1:" + pepper_a).value(); }

// A key of "acme" with every kind of policy, made as key_admin makes one.
struct made_key {
    key_store::entry entry;
    std::string plaintext;
};

made_key make_key(test_support::seeded_random& random) {
    const auto request = test_support::request();
    auto created = create_key(request, tenant_kind::restricted, random, request.active_from);
    made_key out;
    out.plaintext = created.key.take()->reveal();
    out.entry.tenant = "acme";
    out.entry.record = created.record;
    out.entry.stored_key =
        crypto::try_compute_stored_digest(peppers(), secret(out.plaintext)).value().try_store_form().value();
    out.entry.policy.addresses = {parse_address_range("10.0.0.0/8"), parse_address_range("2001:db8::/32")};
    out.entry.policy.rate = rate_limit{10, std::chrono::seconds{60}, 3};
    out.entry.policy.limited_credits = true;
    out.entry.policy.initial_credits = 100;
    out.entry.policy.refill = credit_refill{refill_period::monthly, 100, 31};
    out.entry.usage = key_usage::fresh(out.entry.policy, request.active_from);
    return out;
}

std::string temp_dir() {
    char pattern[] = "/tmp/keyhook-store-test-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    return pattern;
}

std::string file_text(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("K16: a stored key's line reads back as it was written", "[K16][K11][K12][K13][K14][key_store]") {
    test_support::seeded_random random{7};
    auto k = make_key(random);
    k.entry.usage.credits.remaining = 42;
    k.entry.record.last_used_at = k.entry.usage.last_used_at = test_support::at("2024-03-02T10:00:00.5Z");
    const auto text = key_store::format_store({k.entry, make_key(random).entry});
    const auto back = key_store::parse_store(text, "keys.jsonl");
    REQUIRE(back);
    REQUIRE(back->size() == 2);
    const auto& e = back->front();
    CHECK(e.tenant == "acme");
    CHECK(e.record == k.entry.record);
    CHECK(e.stored_key == k.entry.stored_key);
    CHECK(e.policy == k.entry.policy);
    CHECK(e.usage == k.entry.usage);
    CHECK(key_store::format_store(*back) == text);
    // A line without usage starts with the policy's credits, refilled last at creation.
    auto j = key_store::to_line(k.entry);
    j.erase("usage");
    const auto fresh = key_store::parse_line(j.dump(), "f:1");
    REQUIRE(fresh);
    CHECK(fresh->usage.credits.remaining == 100);
    CHECK(fresh->usage.credits.last_refill == *k.entry.record.created_at);
    // And so does a line whose usage is null; the record's lastUsedAt is the usage's.
    j["usage"] = nullptr;
    const auto null_usage = key_store::parse_line(j.dump(), "f:1");
    REQUIRE(null_usage);
    CHECK(null_usage->usage.credits.remaining == 100);
    CHECK(null_usage->usage.last_used_at == k.entry.record.last_used_at);
}

// The line as key_store::to_line wrote it before the store's line had a
// member table: kept here, so that stores written then are known to read and
// rewrite byte for byte.
nlohmann::json earlier_to_line(const key_store::entry& e) {
    nlohmann::json j = e.record;
    j["tenant"] = e.tenant;
    j["storedKey"] = e.stored_key;
    j["policy"] = e.policy;
    nlohmann::json usage = e.usage;
    usage.erase("lastUsedAt");
    usage.erase("rateTat");
    j["usage"] = std::move(usage);
    return j;
}

TEST_CASE("K16: a line the earlier writer wrote reads back and is written again byte for byte",
          "[K16][K11][K14][key_store]") {
    test_support::seeded_random random{11};
    std::vector<key_store::entry> entries;
    auto full = make_key(random).entry;
    full.usage.credits.remaining = 42;
    full.record.last_used_at = full.usage.last_used_at = test_support::at("2024-03-02T10:00:00.5Z");
    entries.push_back(full);
    auto bare = make_key(random).entry;  // no policy, the fewest record members
    bare.policy = key_policy{};
    bare.usage = key_usage::fresh(bare.policy, bare.record.active_from);
    bare.record.user_id = bare.record.description = bare.record.masked = bare.record.type = std::nullopt;
    bare.record.created_by = std::nullopt;
    bare.record.groups.clear();
    bare.record.created_at = bare.record.updated_at = bare.record.last_used_at = std::nullopt;
    entries.push_back(bare);
    auto legacy = make_key(random).entry;  // a SHA-256 digest a host migrated
    legacy.stored_key = "sha256." + std::string(64, 'a');
    entries.push_back(legacy);
    for (const auto& e : entries) {
        const auto earlier = earlier_to_line(e).dump();
        INFO(earlier);
        CHECK(key_store::to_line(e).dump() == earlier);
        const auto back = key_store::parse_line(earlier, "keys.jsonl:1");
        REQUIRE(back);
        CHECK(key_store::to_line(*back).dump() == earlier);
    }
    // A line as a host writes it by hand, without usage (a fresh one is
    // derived) and without the record's optional members: read, then written
    // in the writer's form, which reads back to the same entry.
    const std::string by_hand =
        R"({"id":"5b0e5d1c-2b0f-4d36-9a57-8f4a5d0e4c11","name":"n","status":"Active","activeFrom":"2026-01-01T00:00:00Z",)"
        R"("expireAt":"2027-01-01T00:00:00Z","tenant":"acme","storedKey":"kh1.p1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","policy":{}})";
    const auto read = key_store::parse_line(by_hand, "keys.jsonl:1");
    REQUIRE(read);
    const auto written = key_store::to_line(*read).dump();
    CHECK(written == earlier_to_line(*read).dump());
    const auto again = key_store::parse_line(written, "keys.jsonl:1");
    REQUIRE(again);
    CHECK(key_store::to_line(*again).dump() == written);
}

TEST_CASE("K16: the line's table names every member of the record it spreads", "[K16][key_store]") {
    // The line is closed: a member api_key gains must be named in
    // key_store::api_key_form too, or every line would be refused.
    test_support::seeded_random random{12};
    const nlohmann::json record = make_key(random).entry.record;
    std::set<std::string> names;
    for (const auto name : key_store::api_key_form::names) names.emplace(name);
    CHECK(names.size() == std::size(key_store::api_key_form::names));
    for (auto it = record.begin(); it != record.end(); ++it) CHECK(names.count(it.key()) == 1);
    CHECK(names.size() == record.size());
}

TEST_CASE("K11: the store holds the digest, never the key", "[K11][K16][key_store]") {
    test_support::seeded_random random{8};
    const auto k = make_key(random);
    const auto text = key_store::format_store({k.entry});
    CHECK(text.find(k.plaintext) == std::string::npos);
    CHECK(text.find("\"storedKey\":\"kh1.p2.") != std::string::npos);
    // The record's masked form stays masked.
    CHECK(text.find(*k.entry.record.masked) != std::string::npos);
    // And the digest verifies the key (and only it).
    const auto digest = crypto::try_parse_stored_digest(k.entry.stored_key).value();
    CHECK(crypto::try_verify_stored_key(peppers(), k.plaintext, digest).value().matched);
    CHECK_FALSE(crypto::try_verify_stored_key(peppers(), k.plaintext + "x", digest).value().matched);
}

TEST_CASE("K16: a bad line is refused with the file, the line and the member", "[K16][K11][key_store]") {
    test_support::seeded_random random{9};
    const auto good = key_store::to_line(make_key(random).entry);
    const auto refused = [&](const nlohmann::json& line, const std::string& path, const std::string& why) {
        const auto text = good.dump() + "\n\n" + line.dump() + "\n";
        const auto r = key_store::parse_store(text, "keys.jsonl");
        INFO(line.dump());
        REQUIRE_FALSE(r);
        CHECK(r.error().path == path);
        CHECK_THAT(r.error().message, Catch::Contains(why));
        return r.error();
    };
    auto other = make_key(random).entry;
    auto j = key_store::to_line(other);
    auto bad = j;
    bad["polcy"] = bad["policy"];
    CHECK_THAT(refused(bad, "keys.jsonl:3: polcy", "not a member").message, Catch::Contains("\"policy\""));
    bad = j;
    bad.erase("storedKey");
    refused(bad, "keys.jsonl:3: storedKey", "required");
    bad = j;
    bad["tenant"] = 5;
    refused(bad, "keys.jsonl:3: tenant", "non-empty string");
    bad["tenant"] = "";
    refused(bad, "keys.jsonl:3: tenant", "non-empty string");
    bad = j;
    bad["storedKey"] = "";
    refused(bad, "keys.jsonl:3: storedKey", "non-empty string");
    bad = j;
    bad["storedKey"] = "kh1.p2.not-a-digest";
    const auto e = refused(bad, "keys.jsonl:3: storedKey", "");
    CHECK(e.message.find("not-a-digest") == std::string::npos);  // a digest is never quoted
    bad = j;
    bad["policy"]["rateLimit"]["burst"] = 0;
    refused(bad, "keys.jsonl:3: policy.rateLimit.burst", "from 1");
    bad = j;
    bad["policy"]["allowedAddresses"][0] = "10.0.0.0/33";
    refused(bad, "keys.jsonl:3: policy.allowedAddresses[0]", "");
    bad = j;
    bad["usage"]["rateTat"] = "2024-03-01T00:00:00Z";
    refused(bad, "keys.jsonl:3: usage", "rateTat");
    bad = j;
    bad["usage"]["lastUsedAt"] = "2024-03-01T00:00:00Z";
    refused(bad, "keys.jsonl:3: usage", "lastUsedAt");
    bad = j;
    bad["usage"]["creditsRemaining"] = "many";
    refused(bad, "keys.jsonl:3: usage.creditsRemaining", "");
    bad = j;
    bad["status"] = "Deleted";
    refused(bad, "keys.jsonl:3: status", "");
    bad = j;
    bad["id"] = good["id"];
    refused(bad, "keys.jsonl:3: id", "another line");
    bad = j;
    bad["storedKey"] = good["storedKey"];
    refused(bad, "keys.jsonl:3: storedKey", "another line");
    refused(nlohmann::json::array(), "keys.jsonl:3: (line)", "object");
    const auto r = key_store::parse_store(good.dump() + "\n{\"id\": ", "keys.jsonl");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::syntax_error);
    CHECK(r.error().path.rfind("keys.jsonl:2: ", 0) == 0);
    // The legacy forms are read (a host migrating from a SHA-256 store).
    auto legacy = j;
    legacy["storedKey"] = "sha256." + std::string(64, 'a');
    CHECK(key_store::parse_line(legacy.dump(), "f:1"));
    legacy["storedKey"] = "sha256." + std::string(64, 'A');
    CHECK_FALSE(key_store::parse_line(legacy.dump(), "f:1"));
}

TEST_CASE("K16: the gateway's write-back never undoes key_admin's changes", "[K16][K14][K15][K11][key_store]") {
    test_support::seeded_random random{10};
    auto a = make_key(random).entry, b = make_key(random).entry, c = make_key(random).entry;
    const auto t0 = test_support::at("2024-03-02T00:00:00Z");
    const auto t1 = t0 + std::chrono::seconds{1};
    std::vector<key_store::entry> store{a, b, c};
    // b was deactivated and c deleted by key_admin since the gateway read them.
    store[1].record = deactivate_key(store[1].record, t0);
    store.pop_back();
    const auto spent = credit_state{a.usage.credits.remaining - 1, a.usage.credits.last_refill};
    std::vector<key_store::write_back> changes{{a.record.id, a.usage.credits, spent, t1, std::nullopt, std::nullopt},
                                               {b.record.id, b.usage.credits, spent, t1, std::nullopt, std::nullopt},
                                               {c.record.id, c.usage.credits, spent, t1, std::nullopt, std::nullopt}};
    CHECK(key_store::apply_write_backs(store, changes));
    REQUIRE(store.size() == 2);  // the deleted key stays deleted
    CHECK(store[0].usage.credits == spent);
    CHECK(store[0].record.last_used_at == t1);
    CHECK(store[1].record.status == key_status::revoked);  // the deactivation stays
    CHECK(store[1].usage.credits == spent);

    // Credits key_admin set in between win; lastUsedAt never moves backwards.
    store[0].usage.credits = credit_state{500, t1};
    const auto before = store[0];
    changes = {{a.record.id, spent, credit_state{98, a.usage.credits.last_refill}, t0, std::nullopt, std::nullopt}};
    CHECK_FALSE(key_store::apply_write_backs(store, changes));
    CHECK(store[0].usage.credits == before.usage.credits);
    CHECK(store[0].record.last_used_at == t1);
    // Exactly at the stored base, the gateway's credits are written.
    changes[0].base = store[0].usage.credits;
    CHECK(key_store::apply_write_backs(store, changes));
    CHECK(store[0].usage.credits.remaining == 98);

    // A rehash replaces the stored key only where it is still the one matched.
    const std::string rotated_away = "kh1.p1." + std::string(43, 'A');
    changes = {{a.record.id, store[0].usage.credits, store[0].usage.credits, std::nullopt, rotated_away,
                std::string("kh1.p2.") + std::string(43, 'B')}};
    CHECK_FALSE(key_store::apply_write_backs(store, changes));
    CHECK(store[0].stored_key == a.stored_key);
    changes[0].rehash_from = a.stored_key;
    CHECK(key_store::apply_write_backs(store, changes));
    CHECK(store[0].stored_key == *changes[0].rehash_to);
}

TEST_CASE("K16: the store file is replaced whole, under its lock", "[K16][key_store]") {
    test_support::seeded_random random{11};
    const auto dir = temp_dir();
    const auto path = dir + "/keys.jsonl";
    key_store::jsonl_key_store store(path);
    // A missing file is an empty store; a change that writes nothing leaves no file.
    const auto none = store.update([](std::vector<key_store::entry>& e, const key_store::store_version& s) {
        CHECK(e.empty());
        CHECK_FALSE(s.exists);
        return false;
    });
    REQUIRE(none);
    CHECK_FALSE(none->exists);
    const auto k = make_key(random);
    const auto written = store.update([&](std::vector<key_store::entry>& e, const key_store::store_version&) {
        e.push_back(k.entry);
        return true;
    });
    REQUIRE(written);
    CHECK(written->exists);
    CHECK(*written == key_store::stamp_of(path));
    CHECK(file_text(path) == key_store::format_store({k.entry}));
    CHECK(::access((path + ".lock").c_str(), F_OK) == 0);
    CHECK(::access((path + ".tmp").c_str(), F_OK) != 0);  // renamed into place
    const auto back = store.read();
    REQUIRE(back);
    REQUIRE(back->size() == 1);
    CHECK(back->front().record == k.entry.record);
    // Each write is a new file (a reader holding the old one keeps reading it whole).
    const auto again =
        store.update([](std::vector<key_store::entry>&, const key_store::store_version&) { return true; });
    REQUIRE(again);
    CHECK(again->ino != written->ino);
    // A store that does not parse is reported with its path, and not written over.
    {
        std::ofstream out(path, std::ios::app);
        out << "{\"id\": 1}\n";
    }
    const auto broken =
        store.update([](std::vector<key_store::entry>&, const key_store::store_version&) { return true; });
    REQUIRE_FALSE(broken);
    CHECK(broken.error().path == path + ":2: id");
    CHECK(file_text(path).find("{\"id\": 1}") != std::string::npos);
    std::remove(path.c_str());
    std::remove((path + ".lock").c_str());
    ::rmdir(dir.c_str());
}

TEST_CASE("K11: KEYHOOK_PEPPERS: the first is current, errors never show a pepper", "[K11][key_store]") {
    const auto set = key_store::parse_peppers("  p2:" + pepper_b + "\tp1:" + pepper_a + " ");
    REQUIRE(set);
    CHECK(set->current_id() == "p2");
    CHECK(set->size() == 2);
    CHECK(set->contains("p1"));
    const auto check = [](const std::string& text, const std::string& path) {
        const auto r = key_store::parse_peppers(text);
        INFO(text);
        REQUIRE_FALSE(r);
        CHECK(r.error().path == path);
        CHECK(r.error().message.find(pepper_a) == std::string::npos);
        CHECK(r.error().what().find(pepper_a.substr(0, 12)) == std::string::npos);
    };
    check("", "KEYHOOK_PEPPERS");
    check("p1" + pepper_a, "KEYHOOK_PEPPERS[0]");
    check("p1:" + pepper_a + " p1:" + pepper_a, "KEYHOOK_PEPPERS[1]");  // an id twice
    check("p1:" + base64_encode(std::string(31, 'a')), "KEYHOOK_PEPPERS[0]");
    check("p1:" + pepper_a.substr(1), "KEYHOOK_PEPPERS[0]");
    check("bad id:" + pepper_a, "KEYHOOK_PEPPERS[0]");
}

TEST_CASE("K18: a write the reader would refuse is refused, and the store is left as it was", "[K18][K16][key_store]") {
    const auto dir = temp_dir();
    const auto path = dir + "/keys.jsonl";
    key_store::jsonl_key_store store(path);
    test_support::seeded_random random{31};
    auto a = make_key(random);
    a.entry.tenant = "tenant-of-a";
    REQUIRE(store.update([&](std::vector<key_store::entry>& es, const key_store::store_version&) {
        es.push_back(a.entry);
        return true;
    }));
    const auto before = file_text(path);

    SECTION("a second line with the same stored key (another tenant)") {
        auto b = make_key(random);
        b.entry.tenant = "tenant-of-b";
        b.entry.stored_key = a.entry.stored_key;
        const auto r = store.update([&](std::vector<key_store::entry>& es, const key_store::store_version&) {
            es.push_back(b.entry);
            return true;
        });
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("write refused, the store is unchanged") != std::string::npos);
        CHECK(r.error().message.find("stored key") != std::string::npos);
    }
    SECTION("a second line with the same id") {
        auto b = make_key(random);
        b.entry.record.id = a.entry.record.id;
        const auto r = store.update([&](std::vector<key_store::entry>& es, const key_store::store_version&) {
            es.push_back(b.entry);
            return true;
        });
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("another line has this id") != std::string::npos);
    }
    SECTION("the same plaintext stored under an older pepper, or as a legacy digest") {
        // Stored while p1 was current; p2 is current now (peppers()): the digest strings differ.
        const auto p1_only = key_store::parse_peppers("p1:" + pepper_a).value();
        std::vector<key_store::entry> rotated{a.entry};
        rotated.front().stored_key =
            crypto::try_compute_stored_digest(p1_only, secret(a.plaintext)).value().try_store_form().value();
        REQUIRE(rotated.front().stored_key != a.entry.stored_key);
        const auto r = key_store::check_key_is_new(rotated, peppers(), secret(a.plaintext));
        REQUIRE_FALSE(r);
        CHECK(r.error().path == "key");
        CHECK(r.error().message.find("already stored") != std::string::npos);
        CHECK(r.error().message.find("tenant-of-a") == std::string::npos);
        CHECK(r.error().message.find(a.entry.record.id.str()) == std::string::npos);
        // A digest under a pepper the set lacks cannot be checked: refused too.
        CHECK_FALSE(key_store::check_key_is_new(store.read().value(), p1_only, secret("another key 0123456789")));
        // Legacy SHA-256 ("hello"), hex.
        std::vector<key_store::entry> legacy{a.entry};
        legacy.front().stored_key = "sha256.2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
        CHECK_FALSE(key_store::check_key_is_new(legacy, peppers(), secret("hello")));
        CHECK(key_store::check_key_is_new(legacy, peppers(), secret("hello, world")));
        CHECK(key_store::check_key_is_new(store.read().value(), peppers(), secret(make_key(random).plaintext)));
    }
    // Whatever was refused: the file is as it was, and reads back.
    CHECK(file_text(path) == before);
    CHECK(store.read());
    for (const auto* f : {"keys.jsonl", "keys.jsonl.lock"}) ::unlink((dir + "/" + f).c_str());
    ::rmdir(dir.c_str());
}

TEST_CASE("K14, K17: try_update never waits for the lock; read_snapshot reads without it", "[K14][K17][key_store]") {
    test_support::seeded_random random{12};
    const auto dir = temp_dir();
    const auto path = dir + "/keys.jsonl";
    key_store::jsonl_key_store store(path);
    // A missing store: read_snapshot says so (a gateway never serves it as empty).
    CHECK_FALSE(store.read_snapshot());
    CHECK_FALSE(store.current_stamp());
    const auto k = make_key(random);
    REQUIRE(store.update([&](std::vector<key_store::entry>& e, const key_store::store_version&) {
        e.push_back(k.entry);
        return true;
    }));
    // Another writer holds the lock (flock on FILE.lock, another open file description).
    const int held = ::open((path + ".lock").c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(held >= 0);
    REQUIRE(::flock(held, LOCK_EX) == 0);
    bool called = false;
    const auto busy = store.try_update([&](std::vector<key_store::entry>&, const key_store::store_version&) {
        called = true;
        return true;
    });
    REQUIRE(busy);
    CHECK_FALSE(busy->has_value());  // deferred: nothing read, nothing written
    CHECK_FALSE(called);
    // Reading does not need the lock: one whole version, and its stamp.
    const auto snap = store.read_snapshot();
    REQUIRE(snap);
    REQUIRE(snap->entries.size() == 1);
    CHECK(snap->entries.front().record == k.entry.record);
    CHECK(snap->stamp == key_store::stamp_of(path));
    CHECK(*store.current_stamp() == snap->stamp);
    ::close(held);  // releases the lock
    const auto done = store.try_update([&](std::vector<key_store::entry>&, const key_store::store_version&) {
        called = true;
        return true;
    });
    REQUIRE(done);
    REQUIRE(done->has_value());
    CHECK(called);
    CHECK(**done == key_store::stamp_of(path));
    for (const auto* f : {"keys.jsonl", "keys.jsonl.lock"}) ::unlink((dir + "/" + f).c_str());
    ::rmdir(dir.c_str());
}

TEST_CASE("K18, K14: a usage write-back formats and checks only the changed lines", "[K18][K14][K15][key_store]") {
    const auto dir = temp_dir();
    const auto path = dir + "/keys.jsonl";
    test_support::seeded_random random{41};
    const auto a = make_key(random).entry, b = make_key(random).entry, c = make_key(random).entry;
    // Lines as another writer formatted them (valid, but not as to_line writes them).
    const auto other_form = [](const key_store::entry& e) { return "{ " + key_store::to_line(e).dump().substr(1); };
    {
        std::ofstream out(path);
        out << other_form(a) << "\n\n" << other_form(b) << "\n" << other_form(c) << "\n";
    }
    const auto lines_of = [&] {
        std::vector<std::string> out;
        std::istringstream in(file_text(path));
        for (std::string l; std::getline(in, l);) out.push_back(l);
        return out;
    };
    key_store::jsonl_key_store store(path);
    store.keep_last_version(true);
    const auto t1 = test_support::at("2024-03-02T00:00:00Z");
    const auto spend = [&](const key_store::entry& e, std::uint64_t left) {
        return key_store::write_back{e.record.id, e.usage.credits, credit_state{left, e.usage.credits.last_refill},
                                     t1,          std::nullopt,    std::nullopt};
    };
    const auto merge = [](std::vector<key_store::write_back> changes) {
        return [changes](std::vector<key_store::entry>& es, const key_store::store_version&) {
            return key_store::merge_write_backs(es, changes);
        };
    };

    // Only b's line is written anew; a's and c's are the bytes that were read.
    REQUIRE(store.update_usage(merge({spend(b, 7)})));
    auto lines = lines_of();
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == other_form(a));
    CHECK(lines[2] == other_form(c));
    auto b_now = b;
    b_now.usage.credits.remaining = 7;
    b_now.record.last_used_at = b_now.usage.last_used_at = t1;
    CHECK(lines[1] == key_store::to_line(b_now).dump());
    // The next write-back starts from what was written (nothing read again); no change, no write.
    const auto stamp = key_store::stamp_of(path);
    const auto same = store.try_update_usage(merge({spend(b, 7)}));
    REQUIRE(same);
    REQUIRE(same->has_value());
    CHECK(**same == stamp);
    CHECK(key_store::stamp_of(path) == stamp);
    REQUIRE(store.try_update_usage(merge({spend(c, 3)})));
    lines = lines_of();
    CHECK(lines[0] == other_form(a));
    CHECK(lines[1] == key_store::to_line(b_now).dump());
    CHECK(lines[2] != other_form(c));
    // What was written reads back whole with the reader (K18), usage exact (K14).
    const auto back = key_store::parse_store(file_text(path), path);
    REQUIRE(back);
    REQUIRE(back->size() == 3);
    CHECK((*back)[1].usage.credits.remaining == 7);
    CHECK((*back)[2].usage.credits.remaining == 3);
    CHECK((*back)[0].usage.credits == a.usage.credits);

    const auto before = file_text(path);
    SECTION("a change of id is refused") {
        const auto r = store.update_usage([](std::vector<key_store::entry>& es, const key_store::store_version&) {
            es[1].record.id = es[0].record.id;
            return std::vector<std::size_t>{1};
        });
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("write refused, the store is unchanged: line:2: id") != std::string::npos);
        CHECK(file_text(path) == before);
    }
    SECTION("a rehash onto another line's stored key is refused by the whole-store check") {
        auto w = spend(c, 3);
        w.base = w.credits;
        w.rehash_from = c.stored_key;
        w.rehash_to = a.stored_key;
        const auto r = store.update_usage(merge({w}));
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("another line has this stored key") != std::string::npos);
        CHECK(file_text(path) == before);
    }
    SECTION("a line the reader would refuse is refused") {
        const auto r = store.update_usage([](std::vector<key_store::entry>& es, const key_store::store_version&) {
            es[2].tenant.clear();
            return std::vector<std::size_t>{2};
        });
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("line:3: tenant") != std::string::npos);
        CHECK(file_text(path) == before);
    }
    SECTION("another writer's version is read again, and its lines kept") {
        key_store::jsonl_key_store admin(path);
        REQUIRE(admin.update([](std::vector<key_store::entry>&, const key_store::store_version&) { return true; }));
        const auto admin_lines = lines_of();
        REQUIRE(store.update_usage(merge({spend(a, 1)})));
        lines = lines_of();
        CHECK(lines[0] != admin_lines[0]);
        CHECK(lines[1] == admin_lines[1]);
        CHECK(lines[2] == admin_lines[2]);
    }
    for (const auto* f : {"keys.jsonl", "keys.jsonl.lock"}) ::unlink((dir + "/" + f).c_str());
    ::rmdir(dir.c_str());
}
