// Per-key policy (K12 to K14). The first byte chooses the surface; the rest is
// the input:
//  0: policy JSON through try_key_policy_from_json. An accepted policy has no
//     key_policy_problems and survives to_json and a second read unchanged; a
//     refusal names a path under "policy".
//  1: usage JSON through try_key_usage_from_json, with the same round trip.
//  2: a rate limit, a state, a cost and two instants from the bytes through
//     check_rate. Checked against K13's formula computed here in 128 bits: the
//     answer, the new state, the retry time; a retry at the retry time passes
//     and one a microsecond before does not.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include <fuzzer/FuzzedDataProvider.h>
#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/key_policy_json.hpp"
#include "keyhook/rate_limit.hpp"

namespace {

using namespace keyhook;
__extension__ typedef __int128 wide;  // K13 computed without overflow, as the reference

void policy_json(const std::string& text) {
    auto doc = try_parse_json(text);
    if (!doc) return;
    const auto p = try_key_policy_from_json(*doc);
    if (!p) {
        fuzz::check(fuzz::starts_with(p.error().path, "policy"), "a policy error's path is under policy",
                    p.error().path);
        return;
    }
    fuzz::check(key_policy_problems(*p).empty(), "an accepted policy has no problems");
    const nlohmann::json written = *p;
    const auto again = try_key_policy_from_json(parse_json(written.dump()));
    fuzz::check(again && *again == *p, "a policy survives to_json and a second read", written.dump());
}

void usage_json(const std::string& text) {
    auto doc = try_parse_json(text);
    if (!doc) return;
    const auto u = try_key_usage_from_json(*doc);
    if (!u) {
        fuzz::check(fuzz::starts_with(u.error().path, "usage"), "a usage error's path is under usage", u.error().path);
        return;
    }
    const nlohmann::json written = *u;
    const auto again = try_key_usage_from_json(parse_json(written.dump()));
    fuzz::check(again && *again == *u, "a usage survives to_json and a second read", written.dump());
}

void rate(FuzzedDataProvider& in) {
    rate_limit limit;
    limit.limit = in.ConsumeIntegralInRange<std::uint64_t>(0, 1000);
    limit.period = microseconds{in.ConsumeIntegralInRange<std::int64_t>(0, std::int64_t{1} << 40)};
    limit.burst = in.ConsumeIntegralInRange<std::uint64_t>(0, 1000);
    const auto base = std::int64_t{1700000000} * 1000000;  // 2023
    const timestamp now{microseconds{base + in.ConsumeIntegralInRange<std::int64_t>(0, std::int64_t{1} << 44)}};
    rate_state state;
    if (in.ConsumeBool())
        state.tat = timestamp{microseconds{base + in.ConsumeIntegralInRange<std::int64_t>(0, std::int64_t{1} << 45)}};
    const auto cost = in.ConsumeIntegralInRange<std::uint64_t>(0, 1100);

    const auto d = check_rate(limit, state, cost, now);
    if (!rate_limit_problems(limit).empty() || cost > limit.effective_burst()) {
        fuzz::check(!d.allowed && !d.retry_at && d.state == state, "an unusable limit or cost is denied for good");
        return;
    }
    // K13 in 128 bits: next = max(tat, now) + c x T; allowed when next - burst x T <= now.
    const wide t = limit.emission_interval().count();
    fuzz::check(t * static_cast<wide>(limit.limit) >= limit.period.count() &&
                    (t - 1) * static_cast<wide>(limit.limit) < limit.period.count(),
                "T is period / limit rounded up");
    const wide n = now.time_since_epoch().count();
    const wide from = state.tat ? std::max<wide>(state.tat->time_since_epoch().count(), n) : n;
    const wide next = from + static_cast<wide>(cost) * t;
    const wide allowed_at = next - static_cast<wide>(limit.effective_burst()) * t;
    fuzz::check(d.allowed == (allowed_at <= n), "allowed exactly when next - burst x T <= now");
    if (d.allowed) {
        const bool moved = cost != 0;
        fuzz::check(moved ? d.state.tat && d.state.tat->time_since_epoch().count() == next : d.state == state,
                    "an allowed call sets tat = next (cost 0: unchanged)");
        return;
    }
    fuzz::check(d.state == state && d.retry_at && d.retry_at->time_since_epoch().count() == allowed_at,
                "a denial keeps the state and retries at next - burst x T");
    fuzz::check(check_rate(limit, state, cost, *d.retry_at).allowed, "the retry time passes");
    fuzz::check(!check_rate(limit, state, cost, *d.retry_at - microseconds{1}).allowed,
                "a microsecond before the retry time does not");
}

}  // namespace

KEYHOOK_FUZZ_TARGET(key_policy) {
    if (size == 0) return 0;
    const auto surface = data[0] % 3;
    if (surface == 2) {
        FuzzedDataProvider in(data + 1, size - 1);
        rate(in);
        return 0;
    }
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    if (surface == 0)
        policy_json(text);
    else
        usage_json(text);
    return 0;
}
