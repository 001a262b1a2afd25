// Property: however a time range is cut into consecutive polls, the changes
// the polls report add up to exactly the changes of the whole range; and
// those changes are exactly where status_at and expiry_warning_at change.
#include "keyhook/expiry_notices.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "test_keys.hpp"

using keyhook::api_key;
using keyhook::key_status;
using keyhook::key_transition;
using keyhook::notice_kind;
using keyhook::warning_band;
using namespace notices_test;

namespace {

constexpr microseconds us{1};
constexpr microseconds day{days{1}};

enum class shape { one_day_exact, w1, w5, w7, w7_to_8, w8_to_23, w24_to_31, longer, empty, inverted };
constexpr std::size_t shape_count = 10;

microseconds length_of(shape s, rng& r) {
    switch (s) {
        case shape::one_day_exact: return day;
        case shape::w1: return r.duration(us, day);
        case shape::w5: return r.duration(day + us, 5 * day);
        case shape::w7: return r.duration(5 * day + us, 7 * day);
        case shape::w7_to_8: return r.duration(7 * day + us, 8 * day);
        case shape::w8_to_23: return r.duration(8 * day + us, 23 * day);
        case shape::w24_to_31: return r.duration(23 * day + us, 31 * day);
        case shape::longer: return r.duration(31 * day + us, 400 * day);
        case shape::empty: return microseconds{0};
        case shape::inverted: return -r.duration(us, 10 * day);
    }
    return day;
}

api_key random_key(rng& r, timestamp range_start, int index, shape& s) {
    s = static_cast<shape>(r.between(0, static_cast<std::int64_t>(shape_count) - 1));
    // Whole days plus an odd microsecond count, so no boundary is round.
    const auto from = range_start + r.duration(-40 * day, 90 * day);
    const auto until = from + length_of(s, r);
    const auto listed = r.chance(5) ? key_status::revoked : key_status::active;
    return make_key("id-" + std::to_string(index), "key " + std::to_string(r.between(0, 50)), from, until, listed);
}

// Cut points inside [start, end], sorted; some of them exactly on a change of
// the key, or a microsecond either side of one.
std::vector<timestamp> random_cuts(rng& r, timestamp start, timestamp end, const std::vector<key_transition>& changes) {
    std::vector<timestamp> cuts;
    const auto n = r.between(0, 12);
    for (std::int64_t i = 0; i < n; ++i) {
        timestamp c = start + r.duration(microseconds{0}, end - start);
        if (!changes.empty() && r.chance(50)) {
            const auto& ch =
                changes[static_cast<std::size_t>(r.between(0, static_cast<std::int64_t>(changes.size()) - 1))];
            c = ch.at + microseconds{r.between(-1, 1)};
        }
        cuts.push_back(std::clamp(c, start, end));
    }
    std::sort(cuts.begin(), cuts.end());
    return cuts;
}

struct derived_state {
    key_status status;
    bool warning;
    bool operator==(const derived_state& o) const { return status == o.status && warning == o.warning; }
    bool operator!=(const derived_state& o) const { return !(*this == o); }
};

derived_state state_at(const api_key& k, timestamp t) {
    return {keyhook::status_at(k, t), keyhook::expiry_warning_at(k, t)};
}

derived_state apply(derived_state s, const key_transition& t) {
    switch (t.kind) {
        case notice_kind::activated: s.status = key_status::active; break;
        case notice_kind::warning: s.warning = true; break;
        case notice_kind::expired: s = {key_status::expired, false}; break;
    }
    return s;
}

}  // namespace

TEST_CASE("property: consecutive polls report exactly the changes of the whole range", "[S1][W1][W2][W3][notices]") {
    rng r(0x6b657968u);  // fixed seed: the same keys and cuts on every run
    const timestamp base = at(2026, 1, 1);
    constexpr int key_count = 10000;
    std::array<int, shape_count> seen{};
    std::size_t changes_checked = 0;

    for (int i = 0; i < key_count; ++i) {
        const timestamp start = base + r.duration(microseconds{0}, 365 * day);
        const timestamp end = start + r.duration(microseconds{0}, 90 * day);
        shape s{};
        const auto key = random_key(r, start, i, s);
        ++seen[static_cast<std::size_t>(s)];
        const auto all = keyhook::key_transitions(key);
        const auto whole = keyhook::transitions_between(key, start, end);

        std::vector<key_transition> pieces;
        timestamp since = start;
        auto cuts = random_cuts(r, start, end, all);
        cuts.push_back(end);
        for (const auto now : cuts) {
            const auto part = keyhook::transitions_between(key, since, now);
            pieces.insert(pieces.end(), part.begin(), part.end());
            since = now;
        }
        INFO(key << ", range (" << keyhook::format_timestamp(start) << ", " << keyhook::format_timestamp(end) << "]");
        REQUIRE(pieces == whole);
        REQUIRE(std::is_sorted(whole.begin(), whole.end()));

        // Folding the reported changes onto the state at `start` gives the
        // state status.hpp derives, at every change and just before it.
        std::vector<timestamp> probes = {end};
        for (const auto& t : all) probes.insert(probes.end(), {t.at - us, t.at, t.at + us});
        for (int p = 0; p < 4; ++p) probes.push_back(start + r.duration(microseconds{0}, end - start));
        for (const auto probe : probes) {
            if (probe < start || probe > end) continue;
            derived_state folded = state_at(key, start);
            for (const auto& t : keyhook::transitions_between(key, start, probe)) folded = apply(folded, t);
            INFO("probe " << keyhook::format_timestamp(probe));
            REQUIRE(folded == state_at(key, probe));
        }
        // Every reported instant really is a change.
        for (const auto& t : all) {
            REQUIRE(state_at(key, t.at - us) != state_at(key, t.at));
            ++changes_checked;
        }
    }
    for (std::size_t s = 0; s < shape_count; ++s) {
        INFO("shape " << s);
        CHECK(seen[s] > key_count / static_cast<int>(shape_count) / 2);
    }
    CHECK(changes_checked > 2 * key_count);
}

TEST_CASE("property: digests of consecutive polls add up to the digest of the whole range", "[S1][W2][notices]") {
    rng r(0x6e6f7469u);
    const timestamp base = at(2026, 6, 1, 0, 0, 0, 1);
    for (int page_no = 0; page_no < 500; ++page_no) {
        const timestamp start = base + r.duration(microseconds{0}, 60 * day);
        const timestamp end = start + r.duration(microseconds{0}, 45 * day);
        std::vector<api_key> page;
        std::vector<key_transition> all;
        for (int i = 0; i < 20; ++i) {
            shape s{};
            page.push_back(random_key(r, start, page_no * 100 + i, s));
            const auto t = keyhook::key_transitions(page.back());
            all.insert(all.end(), t.begin(), t.end());
        }
        const auto whole = keyhook::digest_between(page, start, end);

        std::vector<keyhook::expiry_notice> pieces;
        timestamp since = start;
        auto cuts = random_cuts(r, start, end, all);
        cuts.push_back(end);
        for (const auto now : cuts) {
            const auto part = keyhook::digest_between(page, since, now);
            pieces.insert(pieces.end(), part.notices.begin(), part.notices.end());
            since = now;
        }
        INFO("page " << page_no);
        REQUIRE(pieces == whole.notices);
        REQUIRE(std::is_sorted(whole.notices.begin(), whole.notices.end(), keyhook::notice_order));

        // The digest holds each key's own notices, no more and no fewer.
        std::map<std::string, std::size_t> per_key;
        for (const auto& n : whole.notices) ++per_key[n.id.str()];
        for (const auto& k : page) REQUIRE(per_key[k.id.str()] == keyhook::notices_between(k, start, end).size());
    }
}
