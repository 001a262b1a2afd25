#include "keyhook/retry.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using keyhook::attempt_outcome;
using keyhook::delivery_attempt;
using keyhook::errc;
using keyhook::retry_after;
using keyhook::retry_decision;
using keyhook::retry_policy;
using keyhook::timestamp;
using action = retry_decision::action;
using duration = retry_policy::duration;

namespace {

const timestamp t0 = keyhook::parse_timestamp("2026-03-01T12:00:00Z");

// A random source that repeats one 32-bit value (big-endian) and counts the
// bytes taken.
struct fixed_source {
    std::uint32_t u = 0;
    std::size_t* taken = nullptr;
    void operator()(unsigned char* out, std::size_t n) const {
        for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<unsigned char>(u >> (8 * (3 - i % 4)));
        if (taken != nullptr) *taken += n;
    }
};
constexpr std::uint32_t u_max = 0xFFFFFFFFu;

// The jitter the rule asks for, computed independently in long double:
// floor(wait * percent/100 * u/(2^32-1)) microseconds.
duration expected_jitter(duration wait, std::uint32_t u, std::uint32_t percent = 20) {
    const long double extra = static_cast<long double>(wait.count()) * percent / 100.0L * u / 4294967295.0L;
    return duration{static_cast<std::int64_t>(extra + 1e-9L)};
}

// n attempts that all failed with `outcome`, sent exactly on the unjittered schedule from t0.
std::vector<delivery_attempt> failures(std::size_t n, attempt_outcome outcome = attempt_outcome::http(500)) {
    const retry_policy p;
    std::vector<delivery_attempt> h;
    timestamp t = t0;
    for (std::size_t i = 0; i < n; ++i) {
        t += p.schedule[i];
        h.push_back(delivery_attempt{t, outcome, std::nullopt});
    }
    return h;
}

retry_decision plan(const std::vector<delivery_attempt>& h, std::uint32_t u = 0, const retry_policy& p = {}) {
    const timestamp now = h.empty() ? t0 : h.back().sent_at;
    return keyhook::plan_next_attempt(h, fixed_source{u}, now, p);
}

}  // namespace

TEST_CASE("B2: the default schedule", "[B2][retry]") {
    const retry_policy p;
    const std::vector<duration> expected{0s, 5s, 5min, 30min, 2h, 5h, 10h, 10h};
    CHECK(p.schedule == expected);
    CHECK(p.max_attempts() == 8);
    CHECK(p.max_jitter_percent == 20);
    CHECK(p.max_retry_after == 10h);
}

TEST_CASE("B2: the first attempt is sent at once, without drawing randomness", "[B2][retry]") {
    std::size_t taken = 0;
    const auto d = keyhook::plan_next_attempt({}, fixed_source{u_max, &taken}, t0);
    CHECK(d == retry_decision{action::send, t0, 1});
    CHECK(taken == 0);
}

TEST_CASE("B2: every step of the schedule, jitter at 0 and at its maximum", "[B2][retry][jitter]") {
    const retry_policy p;
    for (std::size_t n = 1; n < p.max_attempts(); ++n) {
        INFO("after failure " << n);
        const auto h = failures(n);
        const timestamp last = h.back().sent_at;
        const duration wait = p.schedule[n];

        std::size_t taken = 0;
        const auto none = keyhook::plan_next_attempt(h, fixed_source{0, &taken}, last);
        CHECK(none == retry_decision{action::send, last + wait, n + 1});
        CHECK(taken == 4);

        // At u = 2^32 - 1 the wait is exactly 120 % of the step.
        const auto most = plan(h, u_max);
        CHECK(most.what == action::send);
        CHECK(most.send_at - last == wait * 6 / 5);
        CHECK(most.send_at - last == wait + expected_jitter(wait, u_max));

        // Just inside both ends.
        CHECK(plan(h, 1).send_at - last == wait + expected_jitter(wait, 1));
        CHECK(plan(h, u_max - 1).send_at - last == wait + expected_jitter(wait, u_max - 1));
        CHECK(plan(h, u_max - 1).send_at < most.send_at);
    }
}

TEST_CASE("B2: jitter only adds, and the same bytes give the same plan", "[B2][retry][jitter]") {
    const auto h = failures(3);
    const timestamp last = h.back().sent_at;
    const duration wait = retry_policy{}.schedule[3];  // 30 min
    for (std::uint32_t u : {0u, 1u, 0x12345678u, 0x80000000u, 0xDEADBEEFu, u_max}) {
        INFO(u);
        const auto d = plan(h, u);
        CHECK(d.send_at - last >= wait);
        CHECK(d.send_at - last <= wait * 6 / 5);
        CHECK(d.send_at - last == wait + expected_jitter(wait, u));
        CHECK(plan(h, u) == d);
    }
    CHECK(plan(h, 0x12345678u) != plan(h, 0x12345679u));
    // Half way: 30 min * 20 % * 2^31/(2^32-1), just over 3 min.
    CHECK(plan(h, 0x80000000u).send_at - last == wait + 3min);
}

TEST_CASE("B2: the 8th failure gives up", "[B2][retry]") {
    const auto seven = failures(7);
    CHECK(plan(seven) == retry_decision{action::send, seven.back().sent_at + 10h, 8});
    const auto eight = failures(8);
    CHECK(plan(eight) == retry_decision{action::give_up, {}, 8});
    CHECK(plan(failures(8, attempt_outcome::timed_out())).what == action::give_up);
}

TEST_CASE("B2: a 2xx at any attempt succeeds", "[B2][retry]") {
    for (std::size_t k = 1; k <= 8; ++k) {
        for (int status : {200, 201, 204, 299}) {
            INFO("attempt " << k << ", status " << status);
            auto h = failures(k - 1);
            h.push_back(delivery_attempt{h.empty() ? t0 : h.back().sent_at + 1min, attempt_outcome::http(status), {}});
            CHECK(plan(h) == retry_decision{action::succeeded, {}, k});
        }
    }
    // Just outside 2xx: retried.
    for (int status : {199, 300, 301, 304}) {
        INFO(status);
        const auto h = failures(1, attempt_outcome::http(status));
        CHECK(plan(h).what == action::send);
    }
}

TEST_CASE("B2: 410 Gone disables the webhook; its neighbours are retried", "[B2][retry]") {
    for (std::size_t k = 1; k <= 8; ++k) {
        INFO(k);
        auto h = failures(k);
        h.back().outcome = attempt_outcome::http(410);
        CHECK(plan(h) == retry_decision{action::disable_webhook, {}, k});
    }
    CHECK(plan(failures(1, attempt_outcome::http(409))).what == action::send);
    CHECK(plan(failures(1, attempt_outcome::http(411))).what == action::send);
    CHECK(plan(failures(1, attempt_outcome::http(404))).what == action::send);
}

TEST_CASE("B2: the first decisive attempt wins", "[B2][retry]") {
    auto h = failures(3);
    h[1].outcome = attempt_outcome::http(200);
    h[2].outcome = attempt_outcome::http(410);
    CHECK(plan(h) == retry_decision{action::succeeded, {}, 2});
    h[1].outcome = attempt_outcome::http(410);
    h[2].outcome = attempt_outcome::http(200);
    CHECK(plan(h) == retry_decision{action::disable_webhook, {}, 2});
}

TEST_CASE("B2: transport failures and time-outs are retried", "[B2][retry]") {
    for (const auto o : {attempt_outcome::transport_failure(), attempt_outcome::timed_out()}) {
        INFO(o);
        const auto h = failures(2, o);
        CHECK(plan(h) == retry_decision{action::send, h.back().sent_at + 5min, 3});
        CHECK_FALSE(o.status().has_value());
    }
}

TEST_CASE("B2: Retry-After on 429 and 503 is a minimum wait", "[B2][retry][retry_after]") {
    for (int status : {429, 503}) {
        INFO(status);
        SECTION("without Retry-After: the schedule") {
            const auto h = failures(1, attempt_outcome::http(status));
            CHECK(plan(h).send_at == h.back().sent_at + 5s);
        }
        SECTION("longer than the step: the server's wait") {
            auto h = failures(1, attempt_outcome::http(status));
            h.back().retry_after = retry_after::delay(120s);
            CHECK(plan(h) == retry_decision{action::send, h.back().sent_at + 120s, 2});
            // A jittered step still longer than the server's wait wins.
            h.back().retry_after = retry_after::delay(5s);
            CHECK(plan(h, u_max).send_at == h.back().sent_at + 6s);
            h.back().retry_after = retry_after::delay(7s);
            CHECK(plan(h, u_max).send_at == h.back().sent_at + 7s);
        }
        SECTION("shorter than the step: the schedule") {
            auto h = failures(2, attempt_outcome::http(status));
            h.back().retry_after = retry_after::delay(120s);
            CHECK(plan(h).send_at == h.back().sent_at + 5min);
        }
        SECTION("an absolute time") {
            auto h = failures(1, attempt_outcome::http(status));
            h.back().retry_after = retry_after::at(h.back().sent_at + 1h);
            CHECK(plan(h).send_at == h.back().sent_at + 1h);
            h.back().retry_after = retry_after::at(h.back().sent_at - 1h);  // already past
            CHECK(plan(h).send_at == h.back().sent_at + 5s);
        }
        SECTION("capped at max_retry_after") {
            auto h = failures(1, attempt_outcome::http(status));
            h.back().retry_after = retry_after::delay(10h);
            CHECK(plan(h).send_at == h.back().sent_at + 10h);
            h.back().retry_after = retry_after::delay(10h + 1s);
            CHECK(plan(h).send_at == h.back().sent_at + 10h);
            h.back().retry_after = retry_after::at(h.back().sent_at + 24h * 30);
            CHECK(plan(h).send_at == h.back().sent_at + 10h);
            retry_policy p;
            p.max_retry_after = 1h;
            CHECK(plan(h, 0, p).send_at == h.back().sent_at + 1h);
        }
    }
    SECTION("ignored on other statuses") {
        for (int status : {500, 502, 504, 428, 430}) {
            INFO(status);
            auto h = failures(1, attempt_outcome::http(status));
            h.back().retry_after = retry_after::delay(120s);
            CHECK(plan(h).send_at == h.back().sent_at + 5s);
        }
    }
}

TEST_CASE("B2: never earlier than now", "[B2][retry]") {
    const auto h = failures(2);
    const timestamp due = h.back().sent_at + 5min;
    CHECK(keyhook::plan_next_attempt(h, fixed_source{}, due - 1s).send_at == due);
    CHECK(keyhook::plan_next_attempt(h, fixed_source{}, due).send_at == due);
    CHECK(keyhook::plan_next_attempt(h, fixed_source{}, due + 1s).send_at == due + 1s);
}

TEST_CASE("B2: the host's own policy", "[B2][retry][policy]") {
    retry_policy p;
    p.schedule = {1s, 1min, 1h};
    p.max_jitter_percent = 100;
    CHECK(p.max_attempts() == 3);

    // The first wait is counted from now.
    CHECK(keyhook::plan_next_attempt({}, fixed_source{u_max}, t0, p).send_at == t0 + 2s);
    std::vector<delivery_attempt> h{{t0, attempt_outcome::http(500), {}}};
    CHECK(plan(h, u_max, p).send_at == t0 + 2min);
    CHECK(plan(h, 0, p).send_at == t0 + 1min);
    h.push_back({t0 + 1min, attempt_outcome::http(500), {}});
    CHECK(plan(h, u_max, p).send_at == t0 + 1min + 2h);
    h.push_back({t0 + 2h, attempt_outcome::http(500), {}});
    CHECK(plan(h, u_max, p).what == action::give_up);

    SECTION("no jitter draws no randomness") {
        p.max_jitter_percent = 0;
        std::size_t taken = 0;
        const std::vector<delivery_attempt> one{{t0, attempt_outcome::http(500), {}}};
        CHECK(keyhook::plan_next_attempt(one, fixed_source{u_max, &taken}, t0, p).send_at == t0 + 1min);
        CHECK(taken == 0);
    }
}

TEST_CASE("B2: an invalid policy or history is refused, saying where", "[B2][retry][policy]") {
    auto refused = [](const std::vector<delivery_attempt>& h, const retry_policy& p, const std::string& path) {
        INFO(path);
        const auto r = keyhook::try_plan_next_attempt(h, fixed_source{}, t0, p);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().path == path);
        CHECK_THROWS_AS(keyhook::plan_next_attempt(h, fixed_source{}, t0, p), keyhook::exception);
    };
    retry_policy p;
    p.schedule.clear();
    refused({}, p, "policy.schedule");
    p = {};
    p.schedule[3] = -1s;
    refused({}, p, "policy.schedule[3]");
    p = {};
    p.max_jitter_percent = 101;
    refused({}, p, "policy.max_jitter_percent");
    p.max_jitter_percent = 100;
    CHECK(keyhook::try_plan_next_attempt({}, fixed_source{}, t0, p).has_value());
    p = {};
    p.max_retry_after = -1s;
    refused({}, p, "policy.max_retry_after");

    auto h = failures(3);
    h[2].sent_at = h[1].sent_at - 1us;
    refused(h, {}, "history[2].sent_at");
    h[2].sent_at = h[1].sent_at;  // the same instant is allowed
    CHECK(keyhook::try_plan_next_attempt(h, fixed_source{}, t0).has_value());
}

TEST_CASE("B2: a failing random source is reported", "[B2][retry]") {
    auto failing = [](unsigned char*, std::size_t) {
        throw keyhook::exception(keyhook::error{errc::invalid_value, "random", "no entropy"});
    };
    const auto r = keyhook::try_plan_next_attempt(failures(1), failing, t0);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().path == "random");
    // Nothing to draw for the first attempt or a decided delivery.
    CHECK(keyhook::try_plan_next_attempt({}, failing, t0).has_value());
    CHECK(keyhook::try_plan_next_attempt(failures(8), failing, t0).has_value());
}

TEST_CASE("B2: decisions and attempts print what they mean", "[B2][retry]") {
    auto str = [](const auto& v) {
        std::ostringstream os;
        os << v;
        return os.str();
    };
    CHECK(str(retry_decision{action::send, t0, 3}) == "send attempt 3 at 2026-03-01T12:00:00.000Z");
    CHECK(str(retry_decision{action::give_up, {}, 8}) == "give up after attempt 8");
    CHECK(str(retry_decision{action::disable_webhook, {}, 2}) == "disable the webhook (410 on attempt 2)");
    CHECK(str(delivery_attempt{t0, attempt_outcome::http(429), retry_after::delay(30s)}) ==
          "attempt(2026-03-01T12:00:00.000Z, HTTP 429, retry_after(30 s))");
}

TEST_CASE("B2: Retry-After header values", "[B2][retry_after]") {
    CHECK(keyhook::parse_retry_after("120") == retry_after::delay(120s));
    CHECK(keyhook::parse_retry_after("0") == retry_after::delay(0s));
    CHECK(keyhook::parse_retry_after(" \t7 ") == retry_after::delay(7s));
    CHECK(keyhook::parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") ==
          retry_after::at(keyhook::parse_timestamp("2015-10-21T07:28:00Z")));
    CHECK(keyhook::parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT") ==
          retry_after::at(keyhook::parse_timestamp("1994-11-06T08:49:37Z")));
    CHECK(keyhook::parse_retry_after("Thu, 29 Feb 2024 23:59:59 GMT") ==
          retry_after::at(keyhook::parse_timestamp("2024-02-29T23:59:59Z")));
    // Too large to represent: 2^31 s (RFC 9110).
    CHECK(keyhook::parse_retry_after("2147483647") == retry_after::delay(2147483647s));
    CHECK(keyhook::parse_retry_after("2147483648") == retry_after::delay(2147483648s));
    CHECK(keyhook::parse_retry_after("99999999999999999999999") == retry_after::delay(2147483648s));

    for (const char* bad :
         {"", " ", "-1", "+5", "1.5", "5s", "1 2", "Thu, 21 Oct 2015 07:28:00 GMT", "Wed, 21 Oct 2015 07:28:00 UTC",
          "Wed, 21 Oct 2015 24:00:00 GMT", "Wed, 32 Oct 2015 07:28:00 GMT", "Sat, 29 Feb 2025 07:28:00 GMT",
          "Wed, 21 oct 2015 07:28:00 GMT", "Wed,  21 Oct 2015 07:28:00 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
          "Sun Nov  6 08:49:37 1994", "2015-10-21T07:28:00Z"}) {
        INFO(bad);
        const auto r = keyhook::try_parse_retry_after(bad);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::invalid_header);
        CHECK(r.error().path == "Retry-After");
        CHECK(r.error().message ==
              "expected delta-seconds or an IMF-fixdate, got " + keyhook::detail::quote_input(bad));
        CHECK_THROWS_AS(keyhook::parse_retry_after(bad), keyhook::exception);
    }
}

TEST_CASE("B2: a Retry-After resolves against the response time", "[B2][retry_after]") {
    CHECK(retry_after::delay(30s).resolve(t0) == t0 + 30s);
    CHECK(retry_after::at(t0 + 1h).resolve(t0 + 5h) == t0 + 1h);
    CHECK(retry_after::delay(30s) != retry_after::at(t0 + 30s));
    CHECK(retry_after::delay(30s).is_delay());
    CHECK_FALSE(retry_after::at(t0).is_delay());
}

// --- every sum of a time and a caller's duration saturates -------------------

// Regression test: time arithmetic: a time plus a caller's duration overflowed (T3, saturating sums).
TEST_CASE("B2, T3: a Retry-After delay of seconds::max() resolves to the end of time", "[B2][T3][retry_after]") {
    CHECK(retry_after::delay(std::chrono::seconds::max()).resolve(t0) == timestamp::max());
    CHECK(retry_after::delay(std::chrono::seconds::min()).resolve(t0) == t0);  // a negative delay is 0 (attack F4)
    CHECK(retry_after::delay(1s).resolve(timestamp::max()) == timestamp::max());
    // one step before the end: exact
    CHECK(retry_after::delay(1s).resolve(timestamp::max() - 1s) == timestamp::max());
    CHECK(retry_after::delay(2s).resolve(timestamp::max() - 1s) == timestamp::max());
}

// Regression test: time arithmetic: a time plus a caller's duration overflowed (T3, saturating sums).
TEST_CASE("B2, T3: waits and caps of duration::max() plan for the end of time, never the past",
          "[B2][T3][retry][policy]") {
    SECTION("a wait of duration::max(), with the largest jitter") {
        retry_policy p;
        p.schedule = {duration::max()};
        const auto d = keyhook::plan_next_attempt({}, fixed_source{u_max}, t0, p);
        CHECK(d.what == action::send);
        CHECK(d.send_at == timestamp::max());
    }
    SECTION("a wait that fits, whose jitter would not") {
        retry_policy p;
        p.schedule = {0s, duration::max() - duration{1}};
        const auto d = plan({delivery_attempt{t0, attempt_outcome::http(500), std::nullopt}}, u_max, p);
        CHECK(d.send_at == timestamp::max());
        // without jitter the same wait is exact only if it fits after t0: it does not, so it saturates too
        CHECK(plan({delivery_attempt{t0, attempt_outcome::http(500), std::nullopt}}, 0, p).send_at == timestamp::max());
    }
    SECTION("attempts sent at the end of time") {
        const std::vector<delivery_attempt> h{{timestamp::max() - 1s, attempt_outcome::http(500), std::nullopt}};
        const auto d = keyhook::plan_next_attempt(h, fixed_source{u_max}, timestamp::max() - 1s);
        CHECK(d.what == action::send);
        CHECK(d.send_at == timestamp::max());
    }
    SECTION("Retry-After of seconds::max() with a cap of duration::max()") {
        retry_policy p;
        p.max_retry_after = duration::max();
        const std::vector<delivery_attempt> h{
            {t0, attempt_outcome::http(503), retry_after::delay(std::chrono::seconds::max())}};
        CHECK(plan(h, 0, p).send_at == timestamp::max());
        // the default cap (10 h) still applies to the same answer
        CHECK(plan(h, 0).send_at == t0 + 10h);
    }
    SECTION("a cap of duration::max() after an attempt at the end of time") {
        retry_policy p;
        p.max_retry_after = duration::max();
        const std::vector<delivery_attempt> h{
            {timestamp::max() - 1h, attempt_outcome::http(429), retry_after::at(timestamp::max())}};
        CHECK(keyhook::plan_next_attempt(h, fixed_source{0}, timestamp::max() - 1h, p).send_at == timestamp::max());
    }
}

// Regression test: the leap second: :60 was accepted at any minute (T2).
TEST_CASE("B2, T2: a Retry-After date has a leap second only at 23:59:60 GMT", "[B2][T2][retry_after]") {
    // GMT is UTC: the rule of T2, read as 23:59:59.
    CHECK(keyhook::parse_retry_after("Sat, 31 Dec 2016 23:59:60 GMT") ==
          retry_after::at(keyhook::parse_timestamp("2016-12-31T23:59:59Z")));
    CHECK(keyhook::parse_retry_after("Mon, 23 Nov 2026 23:59:60 GMT") ==
          retry_after::at(keyhook::parse_timestamp("2026-11-23T23:59:59Z")));
    for (const char* bad :
         {"Sat, 31 Dec 2016 12:34:60 GMT", "Sat, 31 Dec 2016 23:58:60 GMT", "Sat, 31 Dec 2016 22:59:60 GMT",
          "Sat, 31 Dec 2016 00:00:60 GMT", "Sat, 31 Dec 2016 23:59:61 GMT"}) {
        INFO(bad);
        CHECK_FALSE(keyhook::try_parse_retry_after(bad).has_value());
    }
}
