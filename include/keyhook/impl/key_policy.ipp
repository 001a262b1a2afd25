#pragma once
// keyhook: definitions of key_policy.hpp.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

#include "keyhook/escape.hpp"
#include "keyhook/key_policy.hpp"
#include "keyhook/detail/key_policy_table.hpp"

namespace keyhook {

namespace detail::policy {

// The address as K12 compares it: an IPv4-mapped IPv6 address becomes IPv4.
inline ip_address unmapped(const ip_address& ip) noexcept {
    if (ip.family != ip_family::v6) return ip;
    const auto& o = ip.octets;
    for (std::size_t i = 0; i < 10; ++i)
        if (o[i] != 0) return ip;
    if (o[10] != 0xFF || o[11] != 0xFF) return ip;
    return ip_address::v4(o[12], o[13], o[14], o[15]);
}

inline unsigned max_prefix(ip_family f) noexcept { return f == ip_family::v4 ? 32 : 128; }

// Whether the first `prefix` bits of a and b agree (both of one family).
inline bool same_prefix(const ip_address& a, const ip_address& b, unsigned prefix) noexcept {
    std::size_t i = 0;
    for (; prefix >= 8; prefix -= 8, ++i)
        if (a.octets[i] != b.octets[i]) return false;
    if (prefix == 0) return true;
    const auto mask = static_cast<std::uint8_t>(0xFF << (8 - prefix));
    return (a.octets[i] & mask) == (b.octets[i] & mask);
}

// Refills fall on calendar days, computed with the civil-calendar arithmetic
// of timestamps.hpp (T3's range: years 1 to 9999).
inline std::int64_t day_number(timestamp t) noexcept {  // days since 1970-01-01, rounded down
    return std::chrono::floor<calendar_days>(t).time_since_epoch().count();
}

inline timestamp start_of_day(std::int64_t day) noexcept {
    return timestamp{std::chrono::microseconds{day * micros_per_day}};
}

// The monthly refill of month y-m: day d, or the month's last day when it is shorter.
inline timestamp monthly_refill(unsigned y, unsigned m, unsigned d) noexcept {
    return start_of_day(days_from_civil(y, m, std::min(d, days_in_month(y, m))));
}

}  // namespace detail::policy

KEYHOOK_INLINE result<address_range> address_range::try_make(const ip_address& address, unsigned prefix) {
    const unsigned most = detail::policy::max_prefix(address.family);
    if (prefix > most)
        return error{
            errc::invalid_value, "range",
            "a prefix length of " + std::to_string(prefix) + " is longer than " + std::to_string(most) + " bits"};
    address_range r;
    r.prefix_ = prefix;
    r.network_ = address;
    if (prefix >= 96) {
        const auto v4 = detail::policy::unmapped(address);
        if (v4.family == ip_family::v4 && address.family == ip_family::v6) {
            r.network_ = v4;
            r.prefix_ = prefix - 96;
            prefix = r.prefix_;
        }
    }
    std::size_t i = prefix / 8;
    if (i < 16 && prefix % 8) r.network_.octets[i++] &= static_cast<std::uint8_t>(0xFF << (8 - prefix % 8));
    for (; i < 16; ++i) r.network_.octets[i] = 0;
    return r;
}

KEYHOOK_INLINE bool address_range::contains(const ip_address& ip) const noexcept {
    // A mapped caller is in an IPv4 range by the address it carries, and in an
    // IPv6 range (such as ::/0) by its own form; ::ffff:0:0/96 is made an IPv4 range.
    const auto in = [this](const ip_address& a) {
        return a.family == network_.family && detail::policy::same_prefix(a, network_, prefix_);
    };
    return in(ip) || in(detail::policy::unmapped(ip));
}

KEYHOOK_INLINE result<address_range> try_parse_address_range(std::string_view text) {
    const auto slash = text.find('/');
    const auto bad = [&text](const std::string& why) {
        return error{errc::invalid_value, "range", why + ", got " + detail::quote_input(text)};
    };
    auto address = try_parse_ip_address(text.substr(0, slash));
    if (!address) return bad("expected an IPv4 or IPv6 address, optionally followed by /prefix-length");
    unsigned prefix = detail::policy::max_prefix(address->family);
    if (slash != std::string_view::npos) {
        const auto digits = text.substr(slash + 1);
        if (digits.empty() || digits.size() > 3 || (digits.size() > 1 && digits[0] == '0'))
            return bad("expected a prefix length of 1 to 3 digits without leading zeros after '/'");
        prefix = 0;
        for (const char c : digits) {
            if (c < '0' || c > '9') return bad("expected a prefix length of 1 to 3 digits after '/'");
            prefix = prefix * 10 + static_cast<unsigned>(c - '0');
        }
    }
    auto r = address_range::try_make(*address, prefix);
    if (!r) return bad(r.error().message);
    return r;
}

KEYHOOK_INLINE address_range parse_address_range(std::string_view text) {
    return try_parse_address_range(text).value();
}

KEYHOOK_INLINE std::string to_string(const address_range& r) {
    return to_string(r.network()) + "/" + std::to_string(r.prefix_length());
}

KEYHOOK_INLINE std::ostream& address_range::print_to(std::ostream& os, const address_range& r) { return os << to_string(r); }

KEYHOOK_INLINE bool address_allowed(const std::vector<address_range>& ranges, const ip_address& caller) noexcept {
    if (ranges.empty()) return true;
    return std::any_of(ranges.begin(), ranges.end(), [&caller](const address_range& r) { return r.contains(caller); });
}

KEYHOOK_INLINE timestamp last_refill_at_or_before(const credit_refill& refill, timestamp t) noexcept {
    using namespace detail::policy;
    const std::int64_t day = day_number(std::clamp(t, min_timestamp, max_timestamp));
    if (refill.period == refill_period::daily) return start_of_day(day);
    const auto c = detail::civil_from_days(day);
    const unsigned d = std::clamp(refill.day, 1u, 31u);
    const timestamp this_month = monthly_refill(c.year, c.month, d);
    if (this_month <= start_of_day(day)) return this_month;
    if (c.year == 1 && c.month == 1) return min_timestamp;  // before the first instant keyhook knows
    return c.month == 1 ? monthly_refill(c.year - 1, 12, d) : monthly_refill(c.year, c.month - 1, d);
}

KEYHOOK_INLINE timestamp next_refill_after(const credit_refill& refill, timestamp t) noexcept {
    using namespace detail::policy;
    t = std::clamp(t, min_timestamp, max_timestamp);
    const std::int64_t day = day_number(t);
    if (refill.period == refill_period::daily) return std::min(start_of_day(day + 1), max_timestamp);
    const auto c = detail::civil_from_days(day);
    const unsigned d = std::clamp(refill.day, 1u, 31u);
    const timestamp this_month = monthly_refill(c.year, c.month, d);
    if (this_month > t) return this_month;
    if (c.year == 9999 && c.month == 12) return max_timestamp;  // past the last instant keyhook knows
    return c.month == 12 ? monthly_refill(c.year + 1, 1, d) : monthly_refill(c.year, c.month + 1, d);
}

KEYHOOK_INLINE credit_decision spend_credits(const std::optional<credit_refill>& refill, const credit_state& state,
                                             std::uint64_t cost, timestamp now) noexcept {
    credit_decision out;
    out.state = state;
    credit_state s = state;
    if (refill) {
        const auto last = last_refill_at_or_before(*refill, now);
        if (last > s.last_refill) {
            s.remaining = refill->amount;
            s.last_refill = last;
        }
    }
    if (cost <= s.remaining) {
        out.allowed = true;
        s.remaining -= cost;
        out.state = s;
    } else if (refill) {
        // After now and after the last refill (which a skewed clock may have put later).
        out.retry_at = next_refill_after(*refill, std::max(now, s.last_refill));
    }
    return out;
}

KEYHOOK_INLINE bool credit_refill::is_equal(const credit_refill& a, const credit_refill& b) noexcept {
    return detail::members_equal(a, b);
}

KEYHOOK_INLINE bool key_usage::is_equal(const key_usage& a, const key_usage& b) noexcept { return detail::members_equal(a, b); }

KEYHOOK_INLINE bool key_policy::is_equal(const key_policy& a, const key_policy& b) noexcept {
    return detail::members_equal(a, b);
}

KEYHOOK_INLINE std::vector<error> key_policy_problems(const key_policy& policy) {
    std::vector<error> out;
    if (policy.rate)
        for (auto e : rate_limit_problems(*policy.rate)) {
            e.path = "rate." + e.path;
            out.push_back(std::move(e));
        }
    if (policy.refill) {
        if (!policy.limited_credits)
            out.push_back({errc::invalid_value, "refill", "a refill needs usage credits (limited_credits)"});
        if (policy.refill->period == refill_period::monthly && (policy.refill->day < 1 || policy.refill->day > 31))
            out.push_back({errc::invalid_value, "refill.day",
                           "a monthly refill's day must be 1 to 31, got " + std::to_string(policy.refill->day)});
    }
    return out;
}

}  // namespace keyhook
