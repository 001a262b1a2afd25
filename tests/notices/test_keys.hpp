// Helpers shared by the notices tests: instants, records, and a small
// deterministic random source (the same numbers with every standard library).
#pragma once

#include "keyhook/api_key.hpp"
#include "keyhook/timestamps.hpp"

#include <date/date.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace notices_test {

using keyhook::timestamp;
using std::chrono::hours;
using std::chrono::microseconds;
using days = date::days;

inline timestamp at(int y, unsigned m, unsigned d, int hh = 0, int mm = 0, int ss = 0, long long us = 0) {
    return timestamp{date::sys_days{date::year{y} / date::month{m} / date::day{d}}.time_since_epoch() +
                     std::chrono::hours{hh} + std::chrono::minutes{mm} + std::chrono::seconds{ss} +
                     std::chrono::microseconds{us}};
}

inline keyhook::api_key make_key(std::string id, std::string name, timestamp from, timestamp until,
                                 keyhook::key_status listed = keyhook::key_status::active,
                                 std::optional<std::string> masked = std::nullopt) {
    keyhook::api_key k;
    k.id = keyhook::key_id(std::move(id));
    k.name = std::move(name);
    k.status = listed;
    k.active_from = from;
    k.expire_at = until;
    k.masked = std::move(masked);
    return k;
}

// splitmix64: fixed output for a fixed seed, unlike std's distributions.
class rng {
public:
    explicit rng(std::uint64_t seed) noexcept : state_(seed) {}
    std::uint64_t next() noexcept {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    // Uniform enough in [lo, hi] for tests (hi - lo far below 2^64).
    std::int64_t between(std::int64_t lo, std::int64_t hi) noexcept {
        const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
        return lo + static_cast<std::int64_t>(next() % span);
    }
    microseconds duration(microseconds lo, microseconds hi) noexcept {
        return microseconds{between(lo.count(), hi.count())};
    }
    bool chance(int percent) noexcept { return between(0, 99) < percent; }

private:
    std::uint64_t state_;
};

}  // namespace notices_test
