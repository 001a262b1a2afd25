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
// Reader and writer are derived from the member tables (detail/key_policy_table.hpp);
// in compiled mode the library provides them for nlohmann::json and ordered_json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "keyhook/config.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/key_policy.hpp"
#include "keyhook/rate_limit.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// The policy of the comment above. Errors: wrong_type, missing_member,
// invalid_value (an unknown member, a range of K12 that does not parse, an
// unknown interval, a fraction or a negative number, a burst window over
// max_rate_window), out_of_range (a whole number outside its bounds).
template <class Json = nlohmann::json>
[[nodiscard]] result<key_policy> try_key_policy_from_json(const detail::non_deduced_t<Json>& j,
                                                          std::string_view path = "policy");
template <class Json = nlohmann::json>
[[nodiscard]] key_policy key_policy_from_json(const detail::non_deduced_t<Json>& j, std::string_view path = "policy") {
    return try_key_policy_from_json<Json>(j, path).value();
}

// The usage of the comment above. Errors: wrong_type, missing_member,
// invalid_value, out_of_range, invalid_timestamp.
template <class Json = nlohmann::json>
[[nodiscard]] result<key_usage> try_key_usage_from_json(const detail::non_deduced_t<Json>& j,
                                                        std::string_view path = "usage");
template <class Json = nlohmann::json>
[[nodiscard]] key_usage key_usage_from_json(const detail::non_deduced_t<Json>& j, std::string_view path = "usage") {
    return try_key_usage_from_json<Json>(j, path).value();
}

// JSON conversion (nlohmann's j.get<T>() and j = value find these by ADL).
// Members that impose nothing are left out; a refill without credits (which
// key_policy_problems reports) is not written. Reading throws keyhook::exception.
template <class Json>
void to_json(Json& j, const key_policy& p);
template <class Json>
void from_json(const Json& j, key_policy& p) {
    p = key_policy_from_json<Json>(j);
}

template <class Json>
void to_json(Json& j, const key_usage& u);
template <class Json>
void from_json(const Json& j, key_usage& u) {
    u = key_usage_from_json<Json>(j);
}

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/key_policy_json.ipp"
#endif
