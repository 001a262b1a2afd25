// keyhook: the JSON form of a key's policy and usage (K12 to K14), as a host's
// key store keeps them beside the key's record. Templates on the JSON type, so
// this header needs only <nlohmann/json_fwd.hpp>.
//
//   policy: {"allowedAddresses": ["10.0.0.0/8", "2001:db8::/32"],     K12; missing or []: any address
//            "rateLimit": {"limit": 100,                              K13; calls per period, at least 1
//                          "periodMicroseconds": 60000000,            1 to 100 years
//                          "burst": 20},                              optional: the limit
//            "credits": {"initial": 1000,                             K14; a new key's credits
//                        "refill": {"interval": "daily" | "monthly",  optional
//                                   "amount": 1000,                   what `remaining` is set to
//                                   "day": 31}}}                      monthly only: 1 to 31
//   usage:  {"rateTat": timestamp,                                    optional: unset
//            "creditsRemaining": 990, "lastRefill": timestamp,
//            "lastUsedAt": timestamp}                                 optional: never used
//
// Members not named here are refused, unlike elsewhere in keyhook: a misspelt
// "allowedAddresses" must not open a key to every address. null counts as
// missing. Errors carry the JSON path ("policy.rateLimit.burst") and say why.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "keyhook/config.hpp"
#include "keyhook/detail/json_members.hpp"
#include "keyhook/error.hpp"
#include "keyhook/key_policy.hpp"
#include "keyhook/rate_limit.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

namespace detail::policy_json {

// Refuses a member of `obj` whose name is not in `known`.
template <class Json>
std::optional<error> only_members(const Json& obj, const std::string& base,
                                  std::initializer_list<std::string_view> known) {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        bool found = false;
        for (const auto name : known) found = found || it.key() == name;
        if (found) continue;
        std::string expected;
        for (const auto name : known) expected += (expected.empty() ? "\"" : ", \"") + std::string(name) + "\"";
        return error{errc::invalid_value, path_member(base, it.key()),
                     "is not a member keyhook knows here; expected " + expected};
    }
    return std::nullopt;
}

// A whole number in [least, most]; absent or null leaves out alone unless required.
template <class Json>
std::optional<error> read_count(const Json& obj, const char* name, const std::string& base, bool required,
                                std::uint64_t least, std::uint64_t most, std::uint64_t& out) {
    const auto* m = json_member(obj, name);
    std::string path = path_member(base, name);
    if (!m) return required ? std::optional<error>(missing_member_error(std::move(path))) : std::nullopt;
    if (!m->is_number()) return wrong_type(std::move(path), "a whole number", *m);
    // A DOM built in memory holds signed integers; parsed text holds unsigned ones.
    const bool whole = m->is_number_unsigned() || (m->is_number_integer() && m->template get<std::int64_t>() >= 0);
    const auto value = whole ? m->template get<std::uint64_t>() : 0;
    if (!whole || value < least || value > most)
        return error{whole ? errc::out_of_range : errc::invalid_value, std::move(path),
                     "expected a whole number from " + std::to_string(least) + " to " + std::to_string(most) +
                         ", got " + m->dump()};
    out = value;
    return std::nullopt;
}

template <class Json>
std::optional<error> read_instant(const Json& obj, const char* name, const std::string& base, bool required,
                                  std::optional<timestamp>& out) {
    const auto* m = json_member(obj, name);
    std::string path = path_member(base, name);
    if (!m) return required ? std::optional<error>(missing_member_error(std::move(path))) : std::nullopt;
    if (!m->is_string()) return wrong_type(std::move(path), "an ISO 8601 timestamp", *m);
    const auto& text = m->template get_ref<const std::string&>();
    auto t = try_parse_timestamp(text);
    if (!t) return timestamp_error(std::move(path), text);
    out = *t;
    return std::nullopt;
}

constexpr std::uint64_t any_count = ~std::uint64_t{0};

template <class Json>
result<rate_limit> read_rate_limit(const Json& j, const std::string& base) {
    if (!j.is_object()) return wrong_type(base, "an object", j);
    if (auto e = only_members(j, base, {"limit", "periodMicroseconds", "burst"})) return *e;
    rate_limit l;
    std::uint64_t period = 0;
    if (auto e = read_count(j, "limit", base, true, 1, any_count, l.limit)) return *e;
    if (auto e = read_count(j, "periodMicroseconds", base, true, 1, static_cast<std::uint64_t>(max_rate_window.count()),
                            period))
        return *e;
    l.period = microseconds{static_cast<microseconds::rep>(period)};
    if (auto e = read_count(j, "burst", base, false, 1, any_count, l.burst)) return *e;
    // What is left to check is the window (burst x interval), reported at the member that makes it long.
    auto problems = rate_limit_problems(l);
    if (problems.empty()) return l;
    auto& e = problems.front();
    return error{e.code, path_member(base, e.path == "period" ? "periodMicroseconds" : e.path), std::move(e.message)};
}

template <class Json>
std::optional<error> read_credits(const Json& j, const std::string& base, key_policy& p) {
    if (!j.is_object()) return wrong_type(base, "an object", j);
    if (auto e = only_members(j, base, {"initial", "refill"})) return e;
    p.limited_credits = true;
    if (auto e = read_count(j, "initial", base, true, 0, any_count, p.initial_credits)) return e;
    const auto* refill = json_member(j, "refill");
    if (!refill) return std::nullopt;
    const std::string refill_path = path_member(base, "refill");
    if (!refill->is_object()) return wrong_type(refill_path, "an object", *refill);
    if (auto e = only_members(*refill, refill_path, {"interval", "amount", "day"})) return e;
    credit_refill r;
    std::string interval;
    if (auto e = read_member_string(*refill, "interval", refill_path, true, interval)) return e;
    if (interval == "monthly")
        r.period = refill_period::monthly;
    else if (interval != "daily")
        return error{errc::invalid_value, path_member(refill_path, "interval"),
                     "expected \"daily\" or \"monthly\", got " + quote_input(interval)};
    if (auto e = read_count(*refill, "amount", refill_path, true, 0, any_count, r.amount)) return e;
    if (r.period == refill_period::monthly) {
        std::uint64_t day = 0;
        if (auto e = read_count(*refill, "day", refill_path, true, 1, 31, day)) return e;
        r.day = static_cast<unsigned>(day);
    } else if (json_member(*refill, "day")) {
        return error{errc::invalid_value, path_member(refill_path, "day"), "only a monthly refill has a day"};
    }
    p.refill = r;
    return std::nullopt;
}

}  // namespace detail::policy_json

// The policy of the comment above. Errors: wrong_type, missing_member,
// invalid_value (an unknown member, a range of K12 that does not parse, an
// unknown interval, a fraction or a negative number, a burst window over
// max_rate_window), out_of_range (a whole number outside its bounds).
template <class Json = nlohmann::json>
[[nodiscard]] result<key_policy> try_key_policy_from_json(const detail::non_deduced_t<Json>& j,
                                                          std::string_view path = "policy") {
    namespace pj = detail::policy_json;
    const std::string base(path);
    if (!j.is_object()) return detail::wrong_type(base, "an object", j);
    if (auto e = pj::only_members(j, base, {"allowedAddresses", "rateLimit", "credits"})) return *e;
    key_policy p;
    if (const auto* list = detail::json_member(j, "allowedAddresses")) {
        const std::string list_path = detail::path_member(base, "allowedAddresses");
        if (!list->is_array()) return detail::wrong_type(list_path, "an array of CIDR ranges", *list);
        p.addresses.reserve(list->size());
        for (std::size_t i = 0; i < list->size(); ++i) {
            const auto& item = (*list)[i];
            std::string item_path = detail::path_index(list_path, i);
            if (!item.is_string()) return detail::wrong_type(std::move(item_path), "a CIDR range", item);
            auto r = try_parse_address_range(item.template get_ref<const std::string&>());
            if (!r) return error{r.error().code, std::move(item_path), r.error().message};
            p.addresses.push_back(*r);
        }
    }
    if (const auto* rate = detail::json_member(j, "rateLimit")) {
        auto l = pj::read_rate_limit(*rate, detail::path_member(base, "rateLimit"));
        if (!l) return l.error();
        p.rate = *l;
    }
    if (const auto* credits = detail::json_member(j, "credits"))
        if (auto e = pj::read_credits(*credits, detail::path_member(base, "credits"), p)) return *e;
    return p;
}
template <class Json = nlohmann::json>
[[nodiscard]] key_policy key_policy_from_json(const detail::non_deduced_t<Json>& j, std::string_view path = "policy") {
    return try_key_policy_from_json<Json>(j, path).value();
}

// The usage of the comment above. Errors: wrong_type, missing_member,
// invalid_value, out_of_range, invalid_timestamp.
template <class Json = nlohmann::json>
[[nodiscard]] result<key_usage> try_key_usage_from_json(const detail::non_deduced_t<Json>& j,
                                                        std::string_view path = "usage") {
    namespace pj = detail::policy_json;
    const std::string base(path);
    if (!j.is_object()) return detail::wrong_type(base, "an object", j);
    if (auto e = pj::only_members(j, base, {"rateTat", "creditsRemaining", "lastRefill", "lastUsedAt"})) return *e;
    key_usage u;
    std::optional<timestamp> last_refill;
    if (auto e = pj::read_instant(j, "rateTat", base, false, u.rate.tat)) return *e;
    if (auto e = pj::read_count(j, "creditsRemaining", base, true, 0, pj::any_count, u.credits.remaining)) return *e;
    if (auto e = pj::read_instant(j, "lastRefill", base, true, last_refill)) return *e;
    u.credits.last_refill = *last_refill;
    if (auto e = pj::read_instant(j, "lastUsedAt", base, false, u.last_used_at)) return *e;
    return u;
}
template <class Json = nlohmann::json>
[[nodiscard]] key_usage key_usage_from_json(const detail::non_deduced_t<Json>& j, std::string_view path = "usage") {
    return try_key_usage_from_json<Json>(j, path).value();
}

// JSON conversion (nlohmann's j.get<T>() and j = value find these by ADL).
// Members that impose nothing are left out; a refill without credits (which
// key_policy_problems reports) is not written. Reading throws keyhook::exception.
template <class Json>
void to_json(Json& j, const key_policy& p) {
    j = Json::object();
    if (!p.addresses.empty()) {
        auto& list = j["allowedAddresses"] = Json::array();
        for (const auto& r : p.addresses) list.push_back(to_string(r));
    }
    if (p.rate) {
        auto& rate = j["rateLimit"] = Json::object();
        rate["limit"] = p.rate->limit;
        rate["periodMicroseconds"] = static_cast<std::uint64_t>(p.rate->period.count());
        rate["burst"] = p.rate->effective_burst();
    }
    if (p.limited_credits) {
        auto& credits = j["credits"] = Json::object();
        credits["initial"] = p.initial_credits;
        if (p.refill) {
            auto& refill = credits["refill"] = Json::object();
            const bool monthly = p.refill->period == refill_period::monthly;
            refill["interval"] = monthly ? "monthly" : "daily";
            refill["amount"] = p.refill->amount;
            if (monthly) refill["day"] = p.refill->day;
        }
    }
}
template <class Json>
void from_json(const Json& j, key_policy& p) {
    p = key_policy_from_json<Json>(j);
}

template <class Json>
void to_json(Json& j, const key_usage& u) {
    j = Json::object();
    if (u.rate.tat) j["rateTat"] = format_timestamp(*u.rate.tat);
    j["creditsRemaining"] = u.credits.remaining;
    j["lastRefill"] = format_timestamp(u.credits.last_refill);
    if (u.last_used_at) j["lastUsedAt"] = format_timestamp(*u.last_used_at);
}
template <class Json>
void from_json(const Json& j, key_usage& u) {
    u = key_usage_from_json<Json>(j);
}

}  // namespace keyhook
