// Shared by the lifecycle suite: deterministic random sources and short
// builders. Deterministic sources are for tests only; hosts pass a secure one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "keyhook/api_key.hpp"
#include "keyhook/creation.hpp"
#include "keyhook/timestamps.hpp"

namespace test_support {

// splitmix64: a different, reproducible byte stream per seed.
struct seeded_random {
    std::uint64_t state = 0;
    std::size_t calls = 0;
    std::size_t bytes = 0;

    explicit seeded_random(std::uint64_t seed) : state(seed) {}
    void operator()(unsigned char* out, std::size_t n) {
        ++calls;
        bytes += n;
        for (std::size_t i = 0; i < n; ++i) {
            state += 0x9E3779B97F4A7C15ULL;
            std::uint64_t z = state;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
            out[i] = static_cast<unsigned char>((z ^ (z >> 31)) & 0xFF);
        }
    }
};

// Hands out 0, 1, 2, ... so a test can tell which draw became what.
struct counting_random {
    unsigned char next = 0;
    void operator()(unsigned char* out, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) out[i] = next++;
    }
};

inline keyhook::timestamp at(const char* text) { return keyhook::parse_timestamp(text); }

inline constexpr keyhook::microseconds one_us{1};

// A stored record with the given id, the same in every test that needs one.
inline keyhook::api_key record_with_id(std::string id) {
    keyhook::api_key k;
    k.id = keyhook::key_id(std::move(id));
    k.name = "k";
    k.active_from = at("2024-01-01T00:00:00Z");
    k.expire_at = at("2025-01-01T00:00:00Z");
    k.groups = {"user:pf"};
    return k;
}

inline keyhook::key_request request(std::string name = "Billing integration") {
    keyhook::key_request r;
    r.name = std::move(name);
    r.description = "Nightly batch upload";
    r.active_from = at("2024-03-01T00:00:00Z");
    r.expire_at = at("2024-03-31T00:00:00Z");
    r.groups = {"user:pf"};
    return r;
}

}  // namespace test_support
