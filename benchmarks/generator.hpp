// Deterministic inputs for the benchmarks: list-call responses (spec 4.1) whose
// records look like the platform's (UUIDs, names, descriptions, groups,
// timestamps with 3 to 7 fraction digits), about 500 bytes each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace keyhook_bench {

// splitmix64: tiny, and the same sequence with every standard library (the
// <random> distributions are not specified bit for bit).
class rng {
public:
    explicit rng(std::uint64_t seed) noexcept : state_(seed) {}
    std::uint64_t next() noexcept {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    // Uniform enough in [0, n) for picking words.
    std::size_t below(std::size_t n) noexcept { return static_cast<std::size_t>(next() % n); }

private:
    std::uint64_t state_;
};

inline constexpr std::uint64_t default_seed = 20240611;

inline void append_uuid(std::string& out, rng& r) {
    static constexpr char hex[] = "0123456789abcdef";
    const std::uint64_t hi = r.next(), lo = r.next();
    for (int i = 0; i < 32; ++i) {
        if (i == 8 || i == 12 || i == 16 || i == 20) out += '-';
        const std::uint64_t word = i < 16 ? hi : lo;
        unsigned nibble = static_cast<unsigned>((word >> ((i % 16) * 4)) & 0xF);
        if (i == 12) nibble = 4;                 // version 4
        if (i == 16) nibble = 8 | (nibble & 3);  // RFC 4122 variant
        out += hex[nibble];
    }
}

inline void append_2(std::string& out, unsigned v) {
    out += static_cast<char>('0' + v / 10 % 10);
    out += static_cast<char>('0' + v % 10);
}

// "YYYY-MM-DDTHH:MM:SS.fffffffZ" with 3 to 7 fraction digits, as real data has.
// Days stop at 28 so every generated date exists.
inline void append_timestamp(std::string& out, rng& r, unsigned year_from = 2022, unsigned years = 5) {
    const auto year = year_from + static_cast<unsigned>(r.below(years));
    append_2(out, year / 100);
    append_2(out, year % 100);
    out += '-';
    append_2(out, 1 + static_cast<unsigned>(r.below(12)));
    out += '-';
    append_2(out, 1 + static_cast<unsigned>(r.below(28)));
    out += 'T';
    append_2(out, static_cast<unsigned>(r.below(24)));
    out += ':';
    append_2(out, static_cast<unsigned>(r.below(60)));
    out += ':';
    append_2(out, static_cast<unsigned>(r.below(60)));
    out += '.';
    const auto digits = 3 + r.below(5);
    for (std::size_t i = 0; i < digits; ++i) out += static_cast<char>('0' + r.below(10));
    out += 'Z';
}

// A rotating set of realistic timestamps for the timestamp benchmarks.
inline std::vector<std::string> make_timestamps(std::size_t n, std::uint64_t seed = default_seed) {
    rng r(seed);
    std::vector<std::string> v;
    v.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::string s;
        append_timestamp(s, r);
        v.push_back(std::move(s));
    }
    return v;
}

namespace words {
inline constexpr const char* adjectives[] = {"nightly", "billing", "primary",  "backup",   "reporting", "staging",
                                             "partner", "legacy",  "internal", "external", "pricing",   "quarterly"};
inline constexpr const char* nouns[] = {"sync",      "export",    "integration", "pipeline",
                                        "connector", "batch job", "dashboard",   "scheduler",
                                        "gateway",   "validator", "importer",    "webhook relay"};
inline constexpr const char* clauses[] = {
    "Pulls rates every night",
    "Partner integration, rotate before renewal",
    "Execute API from the CI pipeline",
    "Temporary, for the pricing migration",
    "Owned by the data platform group",
    "Batch access to underwriting services",
    "Load testing only",
    "Reads service metadata for the catalogue",
};
inline constexpr const char* groups[] = {"user:pf",           "tenant-viewer", "tenant-moderator", "user:pricing",
                                         "user:underwriting", "supervisor:pf", "tenant-admin",     "user:reporting"};
inline constexpr const char* users[] = {"jane.doe@example.com", "ops-bot@example.com", "r.ivanova@example.org",
                                        "k.nakamura@example.net", "svc-integration@example.com"};
}  // namespace words

template <class T, std::size_t N>
constexpr std::size_t count_of(const T (&)[N]) noexcept {
    return N;
}

// One record of the list call, about 500 bytes. Most keys are Active; some are
// revoked or expired and some optional members are null, so every branch of a
// decoder and of the default view gets exercised.
inline void append_record(std::string& out, rng& r, std::size_t index) {
    out += "{\"id\":\"";
    append_uuid(out, r);
    out += "\",\"userId\":\"";
    append_uuid(out, r);
    out += "\",\"name\":\"";
    out += words::adjectives[r.below(count_of(words::adjectives))];
    out += ' ';
    out += words::nouns[r.below(count_of(words::nouns))];
    out += ' ';
    out += std::to_string(index % 997);
    out += "\",\"description\":";
    if (const auto pick = r.below(10); pick == 0) {
        out += "null";
    } else {
        out += '"';
        out += words::clauses[r.below(count_of(words::clauses))];
        if (pick > 6) {
            out += "; ";
            out += words::clauses[r.below(count_of(words::clauses))];
        }
        out += '.';
        out += '"';
    }
    out += ",\"masked\":\"";
    {
        std::string key;
        append_uuid(key, r);
        out.append(key, 0, 3);
        out.append(30, '*');
        out.append(key, 33, 3);
    }
    const auto status_pick = r.below(20);
    out += "\",\"status\":\"";
    out += status_pick < 15   ? "Active"
           : status_pick < 17 ? "Revoked"
           : status_pick < 19 ? "Expired"
                              : "Active in the future";
    out += "\",\"type\":\"Synthetic\",\"groups\":[";
    const auto group_count = 1 + r.below(2);
    for (std::size_t g = 0; g < group_count; ++g) {
        if (g) out += ',';
        out += '"';
        out += words::groups[r.below(count_of(words::groups))];
        out += '"';
    }
    out += "],\"createdAt\":\"";
    append_timestamp(out, r, 2021, 2);
    out += "\",\"createdBy\":\"";
    out += words::users[r.below(count_of(words::users))];
    out += "\",\"updatedAt\":\"";
    append_timestamp(out, r, 2023, 1);
    out += "\",\"activeFrom\":\"";
    append_timestamp(out, r, 2023, 2);
    out += "\",\"expireAt\":\"";
    append_timestamp(out, r, 2025, 3);
    out += "\",\"lastUsedAt\":";
    if (r.below(8) == 0) {
        out += "null";
    } else {
        out += '"';
        append_timestamp(out, r, 2024, 2);
        out += '"';
    }
    out += '}';
}

// A whole list-call response with `records` records in one page.
inline std::string make_list_response(std::size_t records, std::uint64_t seed = default_seed) {
    rng r(seed);
    std::string out;
    out.reserve(records * 560 + 128);
    out += "{\"status\":\"success\",\"data\":{\"count\":";
    out += std::to_string(records);
    out += ",\"page\":1,\"pageSize\":";
    out += std::to_string(records);
    out += ",\"result\":[";
    for (std::size_t i = 0; i < records; ++i) {
        if (i) out += ',';
        append_record(out, r, i);
    }
    out += "]}}";
    return out;
}

// Responses are large (100,000 records are ~50 MB): build each size once.
// Not thread-safe; the benchmarks run on one thread.
inline const std::string& list_response(std::size_t records) {
    static std::map<std::size_t, std::string> cache;
    auto it = cache.find(records);
    if (it == cache.end()) it = cache.emplace(records, make_list_response(records)).first;
    return it->second;
}

}  // namespace keyhook_bench
