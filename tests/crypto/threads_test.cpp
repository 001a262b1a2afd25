// What docs/design.md promises about threads, exercised as a service does:
// one shared index, shared signing keys, shared webhooks, many threads. Meant
// for ThreadSanitizer (`cmake --preset tsan`); the assertions hold in any build.
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "keyhook/crypto/signing.hpp"
#include "keyhook/crypto/stored_key.hpp"
#include "keyhook/keyhook.hpp"

using namespace keyhook;

namespace {

constexpr int threads = 4;
constexpr int rounds = 300;

struct seeded_random {
    std::uint64_t state;
    void operator()(unsigned char* out, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            out[i] = static_cast<unsigned char>(state >> 56);
        }
    }
};

template <class Body>
void run_threads(Body body) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back([t, &body] { body(t); });
    for (auto& th : pool) th.join();
}

struct keys_fixture {
    seeded_random random{11};
    timestamp now = parse_timestamp("2026-03-15T00:00:00Z");
    std::vector<std::string> keys;
    std::vector<api_key> records;
    permission_policy policy;

    keys_fixture() {
        policy.groups["user:pf"].access[resource::all()] = access_level::read;
        key_request r;
        r.name = "svc";
        r.groups = {"user:pf"};
        r.active_from = now - std::chrono::hours{24};
        r.expire_at = now + std::chrono::hours{24};
        for (int i = 0; i < 8; ++i) {
            auto created = create_key(r, tenant_kind::restricted, random, now);
            records.push_back(created.record);
            keys.push_back(created.key.take()->reveal());
        }
    }
    http_headers headers(std::size_t i) const {
        return {{"x-synthetic-key", keys[i], true}, {"x-tenant-name", "acme", false}};
    }
};

}  // namespace

TEST_CASE("threads: authorize runs concurrently on one shared key_index", "[threads][K10][K15]") {
    keys_fixture f;
    key_index index(f.random);
    for (std::size_t i = 0; i < f.keys.size(); ++i) index.add("acme", f.records[i], secret(f.keys[i]), f.policy);
    std::atomic<int> allowed{0};
    run_threads([&](int t) {
        // Each thread keeps its own usage (the host's state), the index is shared.
        std::map<std::string, key_limits, std::less<>> limits;
        key_policy p;
        p.rate = rate_limit{1000000, std::chrono::seconds{1}, 0};
        for (const auto& r : f.records) limits[r.id.str()] = key_limits{p, key_usage::fresh(p, f.now)};
        const auto find = [&limits](std::string_view id) -> const key_limits* {
            const auto it = limits.find(id);
            return it == limits.end() ? nullptr : &it->second;
        };
        for (int n = 0; n < rounds; ++n) {
            const auto i = static_cast<std::size_t>(n + t) % f.keys.size();
            const auto plain =
                authorize(index, f.headers(i), api_family::execute(), resource_ref::all(), access_level::read, f.now);
            const auto limited = authorize(index, f.headers(i), api_family::execute(), resource_ref::all(),
                                           access_level::read, f.now, call_context{}, find);
            if (plain.allowed() && limited.allowed()) ++allowed;
            if (limited.usage()) limits.find(limited.key()->str())->second.usage = *limited.usage();
            (void)plain.message();
        }
    });
    CHECK(allowed == threads * rounds);
}

TEST_CASE("threads: an index built from stored digests authorizes concurrently", "[threads][K11]") {
    keys_fixture f;
    crypto::pepper_set peppers;
    peppers.add("p2", secret(std::string(32, 'b')));
    peppers.add("p1", secret(std::string(32, 'a')));
    key_index index(f.random);
    for (std::size_t i = 0; i < f.keys.size(); ++i) {
        // Half under the current pepper, half under the older one.
        crypto::pepper_set one;
        one.add(i % 2 ? "p2" : "p1", secret(std::string(32, i % 2 ? 'b' : 'a')));
        const auto stored = crypto::try_compute_stored_digest(one, secret(f.keys[i])).value();
        REQUIRE(crypto::try_add_stored(index, peppers, "acme", f.records[i], stored, f.policy));
    }
    std::atomic<int> allowed{0};
    run_threads([&](int t) {
        for (int n = 0; n < rounds; ++n) {
            const auto i = static_cast<std::size_t>(n * 3 + t) % f.keys.size();
            if (authorize(index, f.headers(i), api_family::execute(), resource_ref::all(), access_level::read, f.now))
                ++allowed;
        }
    });
    CHECK(allowed == threads * rounds);
}

TEST_CASE("threads: one signing secret signs and verifies on many threads", "[threads][B1]") {
    const auto key = crypto::generate_signing_secret(seeded_random{5});
    const auto now = parse_timestamp("2026-03-15T00:00:00Z");
    std::atomic<int> verified{0};
    run_threads([&](int t) {
        for (int n = 0; n < rounds; ++n) {
            const std::string body = "{\"n\":" + std::to_string(n * threads + t) + "}";
            const auto headers = crypto::signature_headers(key, "msg_" + std::to_string(n), now, body);
            if (crypto::try_verify_signature(key, headers, body, now)) ++verified;
        }
    });
    CHECK(verified == threads * rounds);
}

TEST_CASE("threads: dispatch reads shared validated webhooks concurrently", "[threads][H4]") {
    webhook hook;
    hook.name = "sync";
    hook.endpoint = "https://hooks.example.com/in";
    hook.events = {event_type::AddProduct};
    hook.saved = true;
    const auto webhooks = validate_webhooks({hook, [] {
                                                 webhook w;
                                                 w.name = "all";
                                                 w.endpoint = "https://hooks.example.com/all";
                                                 w.saved = true;
                                                 return w;
                                             }()});
    std::atomic<int> sent{0};
    run_threads([&](int t) {
        for (int n = 0; n < rounds; ++n) {
            notification event;
            event.user_action = event_type::AddProduct;
            event.folder_name = "f" + std::to_string(t);
            event.tenant = "acme";
            event.request_time = parse_timestamp("2026-03-15T00:00:00Z");
            sent += static_cast<int>(dispatch({"acme", true}, webhooks, event).size());
        }
    });
    CHECK(sent == threads * rounds * 2);
}
