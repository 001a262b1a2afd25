// Per-key policy: address ranges (K12), rate limits (K13), usage credits
// (K14), and the order authorize() checks them in (K15).
#include <catch2/catch.hpp>

#include <date/date.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "keyhook/authorization.hpp"
#include "keyhook/key_policy.hpp"
#include "keyhook/lifecycle.hpp"
#include "keyhook/rate_limit.hpp"

using namespace keyhook;
using std::chrono::seconds;
using test_support::at;

namespace {

constexpr microseconds us(std::int64_t n) { return microseconds{n}; }

}  // namespace

TEST_CASE("K12: a CIDR range holds the addresses of its prefix and no other", "[K12][policy]") {
    const auto r = parse_address_range("10.1.2.0/24");
    CHECK(r.contains(parse_ip_address("10.1.2.0")));
    CHECK(r.contains(parse_ip_address("10.1.2.255")));
    CHECK_FALSE(r.contains(parse_ip_address("10.1.1.255")));
    CHECK_FALSE(r.contains(parse_ip_address("10.1.3.0")));
    // Host bits are cleared: the same range.
    CHECK(parse_address_range("10.1.2.77/24") == r);
    CHECK(to_string(parse_address_range("10.1.2.77/24")) == "10.1.2.0/24");
    // Odd prefix lengths.
    const auto r9 = parse_address_range("10.128.0.0/9");
    CHECK(r9.contains(parse_ip_address("10.255.255.255")));
    CHECK_FALSE(r9.contains(parse_ip_address("10.127.255.255")));
    // /32 and a bare address are one address; /0 is every address of the family.
    CHECK(parse_address_range("192.0.2.7") == parse_address_range("192.0.2.7/32"));
    CHECK(parse_address_range("192.0.2.7").contains(parse_ip_address("192.0.2.7")));
    CHECK_FALSE(parse_address_range("192.0.2.7").contains(parse_ip_address("192.0.2.8")));
    CHECK(parse_address_range("0.0.0.0/0").contains(parse_ip_address("255.255.255.255")));
    CHECK_FALSE(parse_address_range("0.0.0.0/0").contains(parse_ip_address("2001:db8::1")));
}

TEST_CASE("K12: IPv6 ranges; an IPv4-mapped IPv6 address matches IPv4 ranges", "[K12][policy]") {
    const auto r = parse_address_range("2001:db8::/32");
    CHECK(r.contains(parse_ip_address("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff")));
    CHECK_FALSE(r.contains(parse_ip_address("2001:db9::")));
    CHECK(r.contains(parse_ip_address("2001:db8::")));
    CHECK_FALSE(r.contains(parse_ip_address("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff")));
    CHECK_FALSE(parse_address_range("::1/128").contains(parse_ip_address("::")));
    CHECK_FALSE(parse_address_range("::/0").contains(parse_ip_address("10.0.0.1")));
    CHECK(parse_address_range("::1/128").contains(parse_ip_address("::1")));
    CHECK_FALSE(parse_address_range("::1/128").contains(parse_ip_address("::2")));
    CHECK(parse_address_range("::/0").contains(parse_ip_address("ff02::1")));

    const auto v4 = parse_address_range("203.0.113.0/24");
    CHECK(v4.contains(parse_ip_address("::ffff:203.0.113.9")));
    CHECK_FALSE(v4.contains(parse_ip_address("::ffff:203.0.114.9")));
    // A mapped caller is also in IPv6 ranges by its own form, and a range
    // written in the mapped block is the IPv4 range it names.
    CHECK(parse_address_range("::/0").contains(parse_ip_address("::ffff:1.2.3.4")));
    CHECK(parse_address_range("::ffff:0:0/96").contains(parse_ip_address("::ffff:1.2.3.4")));
    CHECK(parse_address_range("::ffff:10.0.0.0/104") == parse_address_range("10.0.0.0/8"));
    CHECK(parse_address_range("::ffff:10.0.0.0/104").contains(parse_ip_address("10.1.2.3")));
    CHECK(parse_address_range("::ffff:10.0.0.0/104").contains(parse_ip_address("::ffff:10.1.2.3")));
    CHECK(to_string(parse_address_range("::ffff:192.0.2.1")) == "192.0.2.1/32");
    CHECK_FALSE(parse_address_range("::/0").contains(parse_ip_address("1.2.3.4")));
    // Only the mapped form: an IPv4-compatible or NAT64 address is IPv6.
    CHECK_FALSE(v4.contains(parse_ip_address("::203.0.113.9")));
    CHECK_FALSE(v4.contains(parse_ip_address("64:ff9b::203.0.113.9")));
    // A range in the mapped block: both forms of its ends, and just outside it.
    const auto mapped = parse_address_range("::ffff:203.0.113.0/120");
    CHECK(mapped == parse_address_range("203.0.113.0/24"));
    CHECK(mapped.contains(parse_ip_address("::ffff:203.0.113.255")));
    CHECK(mapped.contains(parse_ip_address("203.0.113.0")));
    CHECK_FALSE(mapped.contains(parse_ip_address("::ffff:203.0.114.0")));
    CHECK_FALSE(mapped.contains(parse_ip_address("203.0.112.255")));
    CHECK(parse_address_range("::ffff:0:0/96").contains(parse_ip_address("::ffff:0.0.0.0")));
    CHECK_FALSE(parse_address_range("::ffff:0:0/96").contains(parse_ip_address("::fffe:ffff:ffff")));
}

TEST_CASE("K12: malformed ranges are refused with the input named", "[K12][policy]") {
    for (const char* bad : {"10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/08", "10.0.0.0/-1", "10.0.0.0/1a",
                            "10.0.0/8", "", "/8", "10.0.0.0/8/8", "10.0.0.0/0008"}) {
        const auto r = try_parse_address_range(bad);
        INFO(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_value);
        CHECK(r.error().path == "range");
        CHECK(r.error().message.find("got") != std::string::npos);
    }
    CHECK(try_parse_address_range("10.0.0.0/32"));
    CHECK(try_parse_address_range("::/128"));
    CHECK_THROWS_AS(parse_address_range("nope"), keyhook::exception);
}

TEST_CASE("K12: an empty list allows every address; otherwise one range must hold it", "[K12][policy]") {
    CHECK(address_allowed({}, parse_ip_address("198.51.100.1")));
    const std::vector<address_range> ranges{parse_address_range("10.0.0.0/8"), parse_address_range("2001:db8::/32")};
    CHECK(address_allowed(ranges, parse_ip_address("10.9.9.9")));
    CHECK(address_allowed(ranges, parse_ip_address("2001:db8::5")));
    CHECK_FALSE(address_allowed(ranges, parse_ip_address("11.0.0.0")));
}

TEST_CASE("K13: the emission interval is period / limit, rounded up to whole microseconds", "[K13][policy]") {
    CHECK(rate_limit{10, seconds{1}, 0}.emission_interval() == us(100000));
    CHECK(rate_limit{3, seconds{1}, 0}.emission_interval() == us(333334));  // not divisible: up
    CHECK(rate_limit{3, us(3), 0}.emission_interval() == us(1));
    CHECK(rate_limit{2, us(3), 0}.emission_interval() == us(2));
    CHECK(rate_limit{5, seconds{1}, 0}.effective_burst() == 5);
    CHECK(rate_limit{5, seconds{1}, 2}.effective_burst() == 2);
}

TEST_CASE("K13: a full burst is allowed at once, the next call waits one interval", "[K13][policy]") {
    const rate_limit limit{10, seconds{1}, 3};  // T = 100 ms, burst 3
    const auto t0 = at("2024-05-01T00:00:00Z");
    rate_state s;
    for (int i = 0; i < 3; ++i) {
        const auto d = check_rate(limit, s, 1, t0);
        REQUIRE(d.allowed);
        CHECK(d.remaining == static_cast<std::uint64_t>(2 - i));
        s = d.state;
    }
    CHECK(s.tat == t0 + us(300000));
    // The 4th at t0: next = t0 + 400 ms, allowed at next - 300 ms = t0 + 100 ms.
    const auto denied = check_rate(limit, s, 1, t0);
    CHECK_FALSE(denied.allowed);
    CHECK(denied.state == s);
    REQUIRE(denied.retry_at);
    CHECK(*denied.retry_at == t0 + us(100000));
    // One microsecond before the retry time: still denied; at it: allowed.
    CHECK_FALSE(check_rate(limit, s, 1, t0 + us(99999)).allowed);
    const auto later = check_rate(limit, s, 1, t0 + us(100000));
    CHECK(later.allowed);
    CHECK(later.state.tat == t0 + us(400000));
    CHECK(later.reset == t0 + us(400000));
}

TEST_CASE("K13: costs: exactly the burst, above the burst, and 0", "[K13][policy]") {
    const rate_limit limit{4, seconds{4}, 0};  // T = 1 s, burst 4
    const auto t0 = at("2024-05-01T00:00:00Z");
    const auto whole = check_rate(limit, {}, 4, t0);
    CHECK(whole.allowed);
    CHECK(whole.remaining == 0);
    CHECK(whole.state.tat == t0 + seconds{4});

    const auto above = check_rate(limit, {}, 5, t0);
    CHECK_FALSE(above.allowed);
    CHECK_FALSE(above.retry_at);  // never fits
    CHECK(above.state == rate_state{});
    // ... and still reports the room there is.
    CHECK(above.remaining == 4);
    CHECK(above.reset == t0);
    const auto above_later = check_rate(limit, rate_state{t0 + seconds{1}}, 5, t0);
    CHECK(above_later.remaining == 3);
    CHECK(above_later.reset == t0 + seconds{1});

    // Cost 0 checks without spending: allowed while the state has room, the state unchanged.
    const auto peek = check_rate(limit, whole.state, 0, t0);
    CHECK(peek.allowed);
    CHECK(peek.state == whole.state);
    CHECK(peek.remaining == 0);
    // ... and says how many calls fit once time has passed.
    CHECK(check_rate(limit, whole.state, 0, t0 + seconds{2}).remaining == 2);
}

TEST_CASE("K13: an unset state reads as now; time passing refills the burst", "[K13][policy]") {
    const rate_limit limit{2, seconds{1}, 0};  // T = 500 ms
    const auto t0 = at("2024-05-01T00:00:00Z");
    auto s = check_rate(limit, {}, 2, t0).state;
    CHECK(s.tat == t0 + seconds{1});
    CHECK_FALSE(check_rate(limit, s, 1, t0 + us(499999)).allowed);
    CHECK(check_rate(limit, s, 1, t0 + us(500000)).allowed);
    // Long after: as if unset (max(tat, now)).
    const auto d = check_rate(limit, s, 2, t0 + seconds{60});
    CHECK(d.allowed);
    CHECK(d.state.tat == t0 + seconds{61});
}

TEST_CASE("K13: period not divisible by limit spends the rounded-up interval", "[K13][policy]") {
    const rate_limit limit{3, seconds{1}, 1};  // T = 333,334 us, burst 1
    const auto t0 = at("2024-05-01T00:00:00Z");
    auto s = check_rate(limit, {}, 1, t0).state;
    CHECK(s.tat == t0 + us(333334));
    const auto d = check_rate(limit, s, 1, t0);
    REQUIRE(d.retry_at);
    CHECK(*d.retry_at == t0 + us(333334));
    CHECK_FALSE(check_rate(limit, s, 1, t0 + us(333333)).allowed);
    CHECK(check_rate(limit, s, 1, t0 + us(333334)).allowed);
}

TEST_CASE("K13: over random calls, no window lets more through than burst + elapsed / T", "[K13][policy]") {
    // The GCRA's promise, checked on every pair of allowed calls; and every
    // retry time is exact: one microsecond earlier is denied, at it allowed.
    const rate_limit limit{7, seconds{2}, 4};  // T = 285,715 us (rounded up), burst 4
    const auto t = limit.emission_interval().count();
    std::mt19937_64 random(13);
    auto now = at("2024-05-01T00:00:00Z");
    rate_state s;
    struct call {
        timestamp at;
        std::uint64_t cost;
    };
    std::vector<call> allowed;
    for (int i = 0; i < 600; ++i) {
        now += microseconds{static_cast<std::int64_t>(random() % 400000)};
        const auto cost = random() % 4;
        const auto d = check_rate(limit, s, cost, now);
        if (d.allowed) {
            s = d.state;
            allowed.push_back({now, cost});
            continue;
        }
        CHECK(d.state == s);
        REQUIRE(d.retry_at);
        CHECK(*d.retry_at > now);
        CHECK_FALSE(check_rate(limit, s, cost, *d.retry_at - microseconds{1}).allowed);
        CHECK(check_rate(limit, s, cost, *d.retry_at).allowed);
    }
    CHECK(allowed.size() > 100);
    CHECK(allowed.size() < 600);
    for (std::size_t i = 0; i < allowed.size(); ++i) {
        std::uint64_t spent = 0;
        for (std::size_t j = i; j < allowed.size(); ++j) {
            spent += allowed[j].cost;
            const auto elapsed = (allowed[j].at - allowed[i].at).count();
            REQUIRE(spent <= 4 + static_cast<std::uint64_t>(elapsed / t));
        }
    }
}

TEST_CASE("K13: unusable limits are reported and deny without a retry time", "[K13][policy]") {
    CHECK(rate_limit_problems({10, seconds{1}, 0}).empty());
    const auto zero = rate_limit_problems({0, seconds{1}, 0});
    REQUIRE(zero.size() == 1);
    CHECK(zero[0].path == "limit");
    CHECK(rate_limit_problems({1, us(0), 0})[0].path == "period");
    // burst x T at 100 years is accepted, one more interval is not.
    const auto hundred_years = max_rate_window;
    CHECK(rate_limit_problems({1, hundred_years, 1}).empty());
    const auto too_long = rate_limit_problems({1, hundred_years, 2});
    REQUIRE(too_long.size() == 1);
    CHECK(too_long[0].path == "burst");
    const auto d = check_rate({0, seconds{1}, 0}, {}, 1, at("2024-05-01T00:00:00Z"));
    CHECK_FALSE(d.allowed);
    CHECK_FALSE(d.retry_at);
    // The clock's far ends cannot overflow.
    CHECK_FALSE(check_rate({1, seconds{1}, 0}, {}, 1, timestamp::max()).allowed);
    CHECK_FALSE(check_rate({1, seconds{1}, 0}, rate_state{timestamp::max()}, 1, at("2024-05-01T00:00:00Z")).allowed);
}

TEST_CASE("K14: credits are spent while they last; a denial spends nothing", "[K14][policy]") {
    const auto t0 = at("2024-05-01T10:00:00Z");
    const credit_state s{3, t0};
    const auto two = spend_credits(std::nullopt, s, 2, t0);
    CHECK(two.allowed);
    CHECK(two.state.remaining == 1);
    const auto exact = spend_credits(std::nullopt, two.state, 1, t0);
    CHECK(exact.allowed);
    CHECK(exact.state.remaining == 0);
    const auto over = spend_credits(std::nullopt, two.state, 2, t0);
    CHECK_FALSE(over.allowed);
    CHECK(over.state == two.state);
    CHECK_FALSE(over.retry_at);                                      // no refill: no retry time
    CHECK(spend_credits(std::nullopt, exact.state, 0, t0).allowed);  // cost 0 at 0 left
}

TEST_CASE("K14: a daily refill sets (does not add) the amount at 00:00:00 UTC", "[K14][policy]") {
    const credit_refill daily{refill_period::daily, 5, 1};
    const auto created = at("2024-05-01T10:00:00Z");
    const credit_state s{1, created};
    // Before midnight: no refill.
    const auto before = spend_credits(daily, s, 2, at("2024-05-01T23:59:59.999999Z"));
    CHECK_FALSE(before.allowed);
    REQUIRE(before.retry_at);
    CHECK(*before.retry_at == at("2024-05-02T00:00:00Z"));
    // At midnight: set to 5, not 1 + 5.
    const auto at_midnight = spend_credits(daily, s, 2, at("2024-05-02T00:00:00Z"));
    REQUIRE(at_midnight.allowed);
    CHECK(at_midnight.state.remaining == 3);
    CHECK(at_midnight.state.last_refill == at("2024-05-02T00:00:00Z"));
    // Several missed refills are one refill.
    const auto week_later = spend_credits(daily, s, 1, at("2024-05-09T12:00:00Z"));
    CHECK(week_later.state.remaining == 4);
    CHECK(week_later.state.last_refill == at("2024-05-09T00:00:00Z"));
    // A last refill a skewed clock put after now: the retry time is the refill after it.
    const credit_state ahead{0, at("2024-05-02T00:00:00Z")};
    const auto skewed = spend_credits(daily, ahead, 1, at("2024-05-01T23:59:59Z"));
    REQUIRE(skewed.retry_at);
    CHECK(*skewed.retry_at == at("2024-05-03T00:00:00Z"));
    CHECK(spend_credits(daily, ahead, 1, *skewed.retry_at).allowed);
    // The same day again: no second refill.
    CHECK(spend_credits(daily, at_midnight.state, 3, at("2024-05-02T23:00:00Z")).state.remaining == 0);
    CHECK_FALSE(spend_credits(daily, at_midnight.state, 4, at("2024-05-02T23:00:00Z")).allowed);
}

TEST_CASE("K14: monthly refills on day d, clamped to a shorter month's last day", "[K14][policy]") {
    const credit_refill on31{refill_period::monthly, 100, 31};
    CHECK(next_refill_after(on31, at("2024-01-31T00:00:00Z")) == at("2024-02-29T00:00:00Z"));  // leap year
    CHECK(next_refill_after(on31, at("2023-01-31T00:00:00Z")) == at("2023-02-28T00:00:00Z"));
    CHECK(next_refill_after(on31, at("2024-02-29T00:00:00Z")) == at("2024-03-31T00:00:00Z"));
    CHECK(next_refill_after(on31, at("2024-04-01T00:00:00Z")) == at("2024-04-30T00:00:00Z"));
    CHECK(next_refill_after(on31, at("2024-12-31T00:00:00Z")) == at("2025-01-31T00:00:00Z"));
    CHECK(last_refill_at_or_before(on31, at("2024-03-30T23:59:59Z")) == at("2024-02-29T00:00:00Z"));
    CHECK(last_refill_at_or_before(on31, at("2024-03-31T00:00:00Z")) == at("2024-03-31T00:00:00Z"));
    CHECK(last_refill_at_or_before(on31, at("2024-01-15T00:00:00Z")) == at("2023-12-31T00:00:00Z"));

    const credit_refill on1{refill_period::monthly, 10, 1};
    CHECK(next_refill_after(on1, at("2024-05-01T00:00:00Z")) == at("2024-06-01T00:00:00Z"));
    CHECK(next_refill_after(on1, at("2024-04-30T23:59:59.999999Z")) == at("2024-05-01T00:00:00Z"));
    CHECK(next_refill_after(on1, at("2024-12-15T00:00:00Z")) == at("2025-01-01T00:00:00Z"));

    const credit_refill on30{refill_period::monthly, 7, 30};
    const credit_state s{0, at("2024-01-30T00:00:00Z")};
    CHECK_FALSE(spend_credits(on30, s, 1, at("2024-02-28T23:59:59Z")).allowed);
    CHECK(*spend_credits(on30, s, 1, at("2024-02-28T23:59:59Z")).retry_at == at("2024-02-29T00:00:00Z"));
    CHECK(spend_credits(on30, s, 1, at("2024-02-29T00:00:00Z")).state.remaining == 6);

    // The ends of the calendar keyhook knows (years 1 to 9999) stay inside it.
    const credit_refill on15{refill_period::monthly, 1, 15};
    CHECK(last_refill_at_or_before(on15, at("0001-01-14T23:59:59Z")) == min_timestamp);
    CHECK(last_refill_at_or_before(on15, at("0001-01-15T00:00:00Z")) == at("0001-01-15T00:00:00Z"));
    CHECK(next_refill_after(on15, at("9999-12-15T00:00:00Z")) == max_timestamp);
    CHECK(next_refill_after(on15, at("9999-12-14T23:59:59Z")) == at("9999-12-15T00:00:00Z"));
    CHECK(next_refill_after(credit_refill{}, at("9999-12-31T12:00:00Z")) == max_timestamp);
    CHECK(next_refill_after(credit_refill{}, at("9999-12-30T12:00:00Z")) == at("9999-12-31T00:00:00Z"));

    // A new key's last refill is its creation: no refill before the first instant after it.
    const credit_state fresh{5, at("2024-02-29T12:00:00Z")};
    CHECK(spend_credits(on30, fresh, 1, at("2024-03-29T23:00:00Z")).state.remaining == 4);
    CHECK(spend_credits(on30, fresh, 1, at("2024-03-30T00:00:00Z")).state.remaining == 6);
}

// The refill calendar against Howard Hinnant's date library as the reference:
// every day of 1896 to 2104 (before 1970 too, where rounding down to the day
// matters) and the first and last years keyhook knows, at the start of the day,
// a microsecond before it and at noon, for each refill day that a month can cut
// short.
TEST_CASE("K14: refill days agree with date.h's calendar", "[K14][policy]") {
    const auto reference_monthly = [](date::year_month ym, unsigned d) {
        const auto last = date::year_month_day_last{ym.year(), date::month_day_last{ym.month()}}.day();
        return timestamp{date::sys_days{ym / std::min(date::day{d}, last)}};
    };
    const auto reference_last = [&](const credit_refill& r, timestamp t) {
        const auto day = date::floor<date::days>(t);
        if (r.period == refill_period::daily) return timestamp{day};
        const date::year_month_day ymd{day};
        const auto month = ymd.year() / ymd.month();
        const auto this_month = reference_monthly(month, r.day);
        if (this_month <= day) return this_month;
        if (month == date::year{1} / date::January) return min_timestamp;
        return reference_monthly(month - date::months{1}, r.day);
    };
    const auto reference_next = [&](const credit_refill& r, timestamp t) {
        const auto day = date::floor<date::days>(t);
        if (r.period == refill_period::daily) return std::min<timestamp>(day + date::days{1}, max_timestamp);
        const date::year_month_day ymd{day};
        const auto month = ymd.year() / ymd.month();
        const auto this_month = reference_monthly(month, r.day);
        if (this_month > t) return this_month;
        if (month == date::year{9999} / date::December) return max_timestamp;
        return reference_monthly(month + date::months{1}, r.day);
    };
    std::vector<credit_refill> refills{credit_refill{}};
    for (unsigned d : {1u, 15u, 28u, 29u, 30u, 31u}) refills.push_back({refill_period::monthly, 1, d});
    std::size_t compared = 0;
    const auto check_days = [&](date::sys_days first, date::sys_days last) {
        for (auto day = first; day <= last; day += date::days{1}) {
            for (const timestamp t : {timestamp{day}, timestamp{day} - std::chrono::microseconds{1},
                                      timestamp{day} + std::chrono::hours{12}}) {
                if (t < min_timestamp || t > max_timestamp) continue;
                for (const auto& r : refills) {
                    if (last_refill_at_or_before(r, t) != reference_last(r, t) ||
                        next_refill_after(r, t) != reference_next(r, t)) {
                        FAIL_CHECK("day " << format_timestamp(t) << ", refill day " << r.day);
                        return;
                    }
                    ++compared;
                }
            }
        }
    };
    using namespace date::literals;
    check_days(date::sys_days{1896_y / date::January / 1}, date::sys_days{2104_y / date::December / 31});
    check_days(date::sys_days{date::year{1} / date::January / 1}, date::sys_days{date::year{2} / date::March / 31});
    check_days(date::sys_days{date::year{9998} / date::November / 1},
               date::sys_days{date::year{9999} / date::December / 31});
    CHECK(compared > 1600000);
}

TEST_CASE("K14: policy problems name the member", "[K14][K13][policy]") {
    key_policy p;
    CHECK(key_policy_problems(p).empty());
    p.refill = credit_refill{refill_period::monthly, 1, 0};
    auto problems = key_policy_problems(p);
    REQUIRE(problems.size() == 2);
    CHECK(problems[0].path == "refill");
    CHECK(problems[1].path == "refill.day");
    p.limited_credits = true;
    p.refill->day = 31;
    CHECK(key_policy_problems(p).empty());
    p.refill->day = 32;
    CHECK(key_policy_problems(p).size() == 1);
    p.refill->day = 1;
    p.rate = rate_limit{0, seconds{1}, 0};
    problems = key_policy_problems(p);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].path == "rate.limit");
}

namespace {

permission_policy reader_policy() {
    permission_policy p;
    p.groups["user:pf"].access[resource::all()] = access_level::read;
    return p;
}

// One key of tenant "acme" with limits the host keeps in a map.
struct policy_fixture {
    test_support::seeded_random random{77};
    key_index index{random};
    api_key record;
    std::string key;
    std::map<std::string, key_limits, std::less<>> limits;
    timestamp now = at("2024-03-15T08:00:00Z");
    ip_address inside = parse_ip_address("10.0.0.5");

    policy_fixture() {
        auto r = test_support::request();
        r.active_from = at("2024-03-01T00:00:00Z");
        r.expire_at = at("2024-04-01T00:00:00Z");
        r.groups = {"user:pf"};
        auto created = create_key(r, tenant_kind::restricted, random, r.active_from);
        record = created.record;
        key = created.key.take()->reveal();
        index.add("acme", record, secret(key), reader_policy());
        key_policy p;
        p.addresses = {parse_address_range("10.0.0.0/8")};
        p.rate = rate_limit{2, seconds{1}, 0};
        p.limited_credits = true;
        p.initial_credits = 3;
        limits[record.id.str()] = key_limits{p, key_usage::fresh(p, r.active_from)};
    }

    authorization call(access_level needed = access_level::read, const api_family& family = api_family::execute(),
                       ip_address from = {}, std::uint64_t cost = 1) {
        if (from == ip_address{}) from = inside;
        const http_headers h{{"x-synthetic-key", key, true}, {"x-tenant-name", "acme", false}};
        const auto find = [this](std::string_view id) -> const key_limits* {
            const auto it = limits.find(id);
            return it == limits.end() ? nullptr : &it->second;
        };
        auto a = authorize(index, h, family, resource_ref::all(), needed, now, call_context{from, cost}, find);
        if (a.usage()) limits.begin()->second.usage = *a.usage();
        return a;
    }
};

}  // namespace

TEST_CASE("K15: an allowed call returns the new usage and sets lastUsedAt", "[K15][K13][K14][policy]") {
    policy_fixture f;
    const auto before = f.limits.begin()->second.usage;
    const auto a = f.call();
    REQUIRE(a.allowed());
    REQUIRE(a.usage());
    CHECK(a.usage()->last_used_at == f.now);
    CHECK(a.usage()->credits.remaining == 2);
    CHECK(a.usage()->rate.tat == f.now + microseconds{500000});
    CHECK(a.rate_remaining() == std::uint64_t{1});
    CHECK(a.credits_remaining() == std::uint64_t{2});
    CHECK(a.usage() != before);
}

TEST_CASE("K15: the checks run in order; a denial changes no state", "[K15][K12][K13][K14][policy]") {
    policy_fixture f;
    const auto outside = parse_ip_address("192.0.2.1");
    // Address before family and access: a call from outside with a family not granted says address.
    CHECK(f.call(access_level::admin, api_family("Reports"), outside).reason() == denial_reason::address_not_allowed);
    CHECK(f.call(access_level::admin, api_family("Reports")).reason() == denial_reason::family_not_allowed);
    CHECK(f.call(access_level::admin).reason() == denial_reason::insufficient_access);
    // None of those spent anything.
    CHECK(f.limits.begin()->second.usage == key_usage::fresh(f.limits.begin()->second.policy, f.record.active_from));

    // Mapped IPv6 form of an inside address is inside.
    CHECK(f.call(access_level::read, api_family::execute(), parse_ip_address("::ffff:10.1.2.3")).allowed());
    CHECK(f.call().allowed());  // burst 2 spent
    const auto limited = f.call();
    CHECK(limited.reason() == denial_reason::rate_limited);
    REQUIRE(limited.retry_at());
    CHECK(*limited.retry_at() == f.now + microseconds{500000});
    CHECK_FALSE(limited.usage());
    CHECK(limited.message().find("retry at 2024-03-15T08:00:00.5") != std::string::npos);
    CHECK(f.limits.begin()->second.usage.credits.remaining == 1);  // the rate denial spent no credit

    // Rate before credits: once time passes, the last credit goes, then usage is exceeded.
    f.now += seconds{1};
    CHECK(f.call().allowed());
    f.now += seconds{1};
    const auto spent = f.call();
    CHECK(spent.reason() == denial_reason::usage_exceeded);
    CHECK_FALSE(spent.retry_at());  // no refill
    CHECK(spent.credits_remaining() == std::uint64_t{0});
    // The rate state did not move for the credit denial.
    CHECK(f.limits.begin()->second.usage.rate.tat == f.now - seconds{1} + microseconds{500000});
}

TEST_CASE("K15: without limits for the key, authorize with a policy is K10's answer", "[K15][K10][policy]") {
    policy_fixture f;
    f.limits.clear();
    const auto a = f.call(access_level::read, api_family::execute(), parse_ip_address("192.0.2.1"));
    CHECK(a.allowed());
    CHECK_FALSE(a.usage());
    CHECK_FALSE(a.rate_remaining());
    CHECK_FALSE(a.credits_remaining());
    // Headers and key checks come before any lookup of limits.
    const auto none = authorize(f.index, http_headers{}, api_family::execute(), resource_ref::all(), access_level::read,
                                f.now, call_context{}, [](std::string_view) -> const key_limits* {
                                    FAIL("limits looked up for a call without a key");
                                    return nullptr;
                                });
    CHECK(none.reason() == denial_reason::missing_key);
}

TEST_CASE("K15: a cost above the burst is denied with no retry time; cost 0 spends nothing",
          "[K15][K13][K14][policy]") {
    policy_fixture f;
    const auto big = f.call(access_level::read, api_family::execute(), {}, 3);
    CHECK(big.reason() == denial_reason::rate_limited);
    CHECK_FALSE(big.retry_at());
    CHECK(big.message().find("never fits") != std::string::npos);
    const auto peek = f.call(access_level::read, api_family::execute(), {}, 0);
    CHECK(peek.allowed());
    REQUIRE(peek.usage());
    CHECK(peek.usage()->credits.remaining == 3);
    CHECK_FALSE(peek.usage()->rate.tat);
    CHECK(peek.usage()->last_used_at == f.now);
}

TEST_CASE("K15: a credit denial reports the figures with nothing spent", "[K15][K13][K14][policy]") {
    policy_fixture f;
    auto& limits = f.limits.begin()->second;
    limits.policy.refill = credit_refill{refill_period::daily, 1, 1};
    limits.usage.credits.remaining = 0;
    const auto before = limits.usage;
    // Rate allows a cost of 2 (burst 2); the refill due today sets 1 credit, short of 2.
    const auto a = f.call(access_level::read, api_family::execute(), {}, 2);
    CHECK(a.reason() == denial_reason::usage_exceeded);
    REQUIRE(a.retry_at());
    CHECK(*a.retry_at() == at("2024-03-16T00:00:00Z"));
    CHECK(a.credits_remaining() == std::uint64_t{1});  // after the refill due now
    CHECK(a.rate_remaining() == std::uint64_t{2});     // the rate state did not move
    CHECK(a.rate_reset() == f.now);
    CHECK(limits.usage == before);
    // A cost the refill covers passes.
    const auto one = f.call();
    REQUIRE(one.allowed());
    CHECK(one.credits_remaining() == std::uint64_t{0});
    CHECK(one.usage()->credits.last_refill == at("2024-03-15T00:00:00Z"));
}

TEST_CASE("K15: check_limits alone makes authorize's last two checks, call for call", "[K15][K13][K14][policy]") {
    // Two hosts: one asks authorize() with the limits in memory, the other
    // keeps the usage elsewhere and asks check_limits() after the key's other
    // checks (a database deciding for many gateways, K17). Over random calls,
    // costs and refills, both answer alike and keep the same usage.
    policy_fixture f;
    auto& limits = f.limits.begin()->second;
    limits.policy.rate = rate_limit{3, seconds{2}, 4};
    limits.policy.initial_credits = 40;
    limits.policy.refill = credit_refill{refill_period::daily, 7, 1};
    limits.usage = key_usage::fresh(limits.policy, f.record.active_from);
    key_limits elsewhere = limits;
    std::mt19937_64 rng(2024);
    std::size_t allowed = 0, rate_denied = 0, credit_denied = 0;
    for (int i = 0; i < 3000; ++i) {
        f.now += microseconds{static_cast<std::int64_t>(rng() % 900000)};
        const std::uint64_t cost = rng() % 7 == 0 ? 0 : 1 + rng() % 5;
        const auto a = f.call(access_level::read, api_family::execute(), {}, cost);
        const auto d = check_limits(elsewhere, cost, f.now);
        REQUIRE(d.allowed() == a.allowed());
        CHECK(d.reason == a.reason());
        CHECK(d.retry_at == a.retry_at());
        CHECK(d.rate_remaining == a.rate_remaining());
        CHECK(d.rate_reset == a.rate_reset());
        CHECK(d.credits_remaining == a.credits_remaining());
        if (d.allowed()) {
            REQUIRE(a.usage());
            CHECK(d.usage == *a.usage());
            CHECK(d.usage.last_used_at == f.now);
            elsewhere.usage = d.usage;
            ++allowed;
        } else {
            CHECK(d.usage == elsewhere.usage);  // a denial changes nothing
            ++(d.reason == denial_reason::rate_limited ? rate_denied : credit_denied);
        }
        REQUIRE(elsewhere.usage == limits.usage);
    }
    // Every outcome was exercised.
    CHECK(allowed > 100);
    CHECK(rate_denied > 100);
    CHECK(credit_denied > 10);
}

TEST_CASE("K15: check_limits on both sides of the credits and the burst", "[K15][K13][K14][policy]") {
    key_policy p;
    p.rate = rate_limit{2, seconds{1}, 0};
    p.limited_credits = true;
    p.initial_credits = 2;
    const auto t0 = at("2024-03-15T08:00:00Z");
    key_limits k{p, key_usage::fresh(p, t0)};
    // Exactly the credits and the burst: allowed; one more: denied by the rate limit first.
    auto d = check_limits(k, 2, t0);
    REQUIRE(d.allowed());
    CHECK(d.credits_remaining == std::uint64_t{0});
    CHECK(d.rate_remaining == std::uint64_t{0});
    k.usage = d.usage;
    d = check_limits(k, 1, t0);
    CHECK(d.reason == denial_reason::rate_limited);
    CHECK(d.retry_at == t0 + microseconds{500000});
    CHECK_FALSE(d.credits_remaining);  // the rate limit answered first
    // Past the interval the rate allows it, and the credits deny it.
    d = check_limits(k, 1, t0 + microseconds{500000});
    CHECK(d.reason == denial_reason::usage_exceeded);
    CHECK_FALSE(d.retry_at);  // no refill
    CHECK(d.credits_remaining == std::uint64_t{0});
    // Without limits in the policy every cost passes and only lastUsedAt moves.
    key_limits none{key_policy{}, key_usage{}};
    d = check_limits(none, 1000, t0);
    REQUIRE(d.allowed());
    CHECK(d.usage.last_used_at == t0);
    CHECK_FALSE(d.rate_remaining);
    CHECK_FALSE(d.credits_remaining);
}
