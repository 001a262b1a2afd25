// Instruction counts of keyhook's hot paths and of their in-process baselines
// (instruction-count regression guards), for scripts/icount.sh. Counts, unlike times, are the same
// on a loaded machine: the script runs each case under callgrind with
// collection off, and the case turns it on only around the measured calls.
//
//   keyhook_icount CASE N     (the cases are listed by keyhook_icount --list)
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <valgrind/callgrind.h>

#include "baselines.hpp"
#include "generator.hpp"
#include "keyhook/authorization.hpp"
#include "keyhook/key_index.hpp"
#include "keyhook/key_list.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/timestamps.hpp"
#include "notifications.hpp"
#if KEYHOOK_ICOUNT_CRYPTO
#include "baselines_crypto.hpp"
#include "keyhook/crypto/signing.hpp"
#endif

namespace {

// Whatever the measured calls produce is folded in here, so none is optimized away.
volatile std::size_t sink = 0;

// Counts what `f` executes, and only that.
template <class F>
void counted(F&& f) {
    CALLGRIND_TOGGLE_COLLECT;
    f();
    CALLGRIND_TOGGLE_COLLECT;
}

// ---- the list call: decode against a null SAX pass over the same text

void list_decode(std::size_t n) {
    const auto& text = keyhook_bench::list_response(n);
    counted([&] { sink = sink + keyhook::parse_key_list(text).records.size(); });
}

void list_null_sax(std::size_t n) {
    const auto& text = keyhook_bench::list_response(n);
    counted([&] { sink = sink + static_cast<std::size_t>(keyhook_bench::null_sax_pass(text)); });
}

// ---- authorization: an index of n keys, 4,096 allowed calls, against
// unordered_map::find of the same keys

constexpr std::size_t probe_count = 4096;
constexpr std::size_t tenant_count = 100;

struct keys_fixture {
    std::vector<std::string> keys, ids, probe_keys, tenants;
    std::vector<std::size_t> probes;
    explicit keys_fixture(std::size_t n) {
        keyhook_bench::rng r(keyhook_bench::default_seed);
        for (std::size_t i = 0; i < n; ++i) {
            keyhook_bench::append_uuid(ids.emplace_back(), r);
            keyhook_bench::append_uuid(keys.emplace_back(), r);
        }
        for (std::size_t i = 0; i < probe_count; ++i) probes.push_back(r.below(n));
        for (auto k : probes) probe_keys.push_back(keys[k]);
        for (std::size_t t = 0; t < tenant_count; ++t) tenants.push_back("tenant-" + std::to_string(t));
    }
};

void authorize(std::size_t n) {
    const keys_fixture f(n);
    keyhook::key_index index{std::array<unsigned char, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};
    keyhook::permission_policy policy;
    policy.groups["user:pf"].access[keyhook::resource::all()] = keyhook::access_level::execute;
    keyhook::api_key record;
    record.name = "benchmark key";
    record.groups = {"user:pf"};
    record.active_from = keyhook::parse_timestamp("2024-01-01T00:00:00Z");
    record.expire_at = keyhook::parse_timestamp("2030-01-01T00:00:00Z");
    index.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        record.id = keyhook::key_id(f.ids[i]);
        index.add(f.tenants[i % tenant_count], record, keyhook::secret(f.keys[i]), policy);
    }
    const auto now = keyhook::parse_timestamp("2025-06-01T12:00:00Z");
    const auto family = keyhook::api_family::execute();
    const auto resource = keyhook::resource_ref::of_service("Pricing", "Rate Calculator");
    std::size_t allowed = 0;
    counted([&] {
        for (std::size_t i = 0; i < probe_count; ++i)
            allowed +=
                static_cast<bool>(keyhook::authorize(index, f.probe_keys[i], f.tenants[f.probes[i] % tenant_count],
                                                     family, resource, keyhook::access_level::execute, now));
    });
    if (allowed != probe_count) {
        std::fprintf(stderr, "keyhook_icount: %zu of %zu calls allowed\n", allowed, probe_count);
        std::exit(1);
    }
    sink = sink + allowed;
}

void authorize_map_find(std::size_t n) {
    const keys_fixture f(n);
    struct entry {
        std::uint32_t tenant;
        std::int64_t expire_at;
    };
    std::unordered_map<std::string, entry> map;
    map.reserve(n);
    for (std::size_t i = 0; i < n; ++i) map.emplace(f.keys[i], entry{static_cast<std::uint32_t>(i % tenant_count), 0});
    std::size_t found = 0;
    counted([&] {
        for (std::size_t i = 0; i < probe_count; ++i) found += map.find(f.probe_keys[i]) != map.end();
    });
    sink = sink + found;
}

// ---- the notification body: n rounds over the realistic set

void notification_writer(std::size_t n) {
    const auto& v = keyhook_bench::notifications();
    counted([&] {
        for (std::size_t i = 0; i < n; ++i)
            for (const auto& x : v) sink = sink + keyhook::notification_body(x).size();
    });
}

void notification_ordered_json(std::size_t n) {
    const auto& v = keyhook_bench::notifications();
    counted([&] {
        for (std::size_t i = 0; i < n; ++i)
            for (const auto& x : v) sink = sink + keyhook_bench::ordered_json_body(x).size();
    });
}

// ---- timestamps: n realistic inputs

void timestamp_parse(std::size_t n) {
    const auto v = keyhook_bench::make_timestamps(n);
    counted([&] {
        for (const auto& s : v)
            sink = sink + static_cast<std::size_t>(keyhook::parse_timestamp(s).time_since_epoch().count());
    });
}

void timestamp_date_parse(std::size_t n) {
    const auto v = keyhook_bench::make_timestamps(n);
    std::istringstream in;
    counted([&] {
        for (const auto& s : v) {
            keyhook::timestamp t{};
            sink = sink + static_cast<std::size_t>(keyhook_bench::date_parse(in, s, t)) +
                   static_cast<std::size_t>(t.time_since_epoch().count());
        }
    });
}

#if KEYHOOK_ICOUNT_CRYPTO
// ---- v1 signing: n signatures of a 200-byte body, against a bare HMAC whose
// context is keyed once and restarted per call (what keyhook's prepared key does)

const keyhook::crypto::signing_secret& secret() {
    static const auto s = keyhook::crypto::parse_signing_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    return s;
}
constexpr const char* message_id = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";
const keyhook::timestamp sign_time{std::chrono::seconds{1700000000}};

void v1_sign(std::size_t n) {
    const std::string body(200, 'b');
    sink = sink + keyhook::crypto::compute_signature(secret(), message_id, sign_time, body).size();  // keys it once
    counted([&] {
        for (std::size_t i = 0; i < n; ++i)
            sink = sink + keyhook::crypto::compute_signature(secret(), message_id, sign_time, body).size();
    });
}

void v1_hmac_prekeyed(std::size_t n) {
    const std::string body(200, 'b');
    keyhook_bench::bare_hmac h(secret().key().reveal());
    h.set_key();
    counted([&] {
        for (std::size_t i = 0; i < n; ++i)
            sink = sink + h.sign([&] { h.restart(); }, message_id, "1700000000", body).size();
    });
}
#endif

const std::map<std::string, std::function<void(std::size_t)>>& cases() {
    static const std::map<std::string, std::function<void(std::size_t)>> c = {
        {"list_decode", list_decode},
        {"list_null_sax", list_null_sax},
        {"authorize", authorize},
        {"authorize_map_find", authorize_map_find},
        {"notification_writer", notification_writer},
        {"notification_ordered_json", notification_ordered_json},
        {"timestamp_parse", timestamp_parse},
        {"timestamp_date_parse", timestamp_date_parse},
#if KEYHOOK_ICOUNT_CRYPTO
        {"v1_sign", v1_sign},
        {"v1_hmac_prekeyed", v1_hmac_prekeyed},
#endif
    };
    return c;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
        for (const auto& c : cases()) std::printf("%s\n", c.first.c_str());
        return 0;
    }
    const auto it = argc == 3 ? cases().find(argv[1]) : cases().end();
    if (it == cases().end()) {
        std::fprintf(stderr, "usage: keyhook_icount CASE N (keyhook_icount --list names the cases)\n");
        return 2;
    }
    it->second(static_cast<std::size_t>(std::strtoull(argv[2], nullptr, 10)));
    return 0;
}
