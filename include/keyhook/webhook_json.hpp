// keyhook: reading a webhook configuration from JSON (spec 2.2): a tenant's
// settings, a webhook's shape, a validated list, and both together. Templates
// on the JSON type, so this header needs only <nlohmann/json_fwd.hpp>; in
// compiled mode the library provides them for nlohmann::json and ordered_json.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "keyhook/config.hpp"
#include "keyhook/endpoint.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/events.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/webhook.hpp"
#include "keyhook/webhook_validation.hpp"

namespace keyhook {

//   tenant:  {"name": string, "webhooksEnabled": bool}
//   webhook: {"name": string, "endpoint": string, "saved": bool,
//             "events": [string...] (optional, empty or missing: every type),
//             "auth": [{"in": "header"|"query", "name": string, "value": string}] (optional),
//             "signingSecret": string (optional)}
// Unknown members are ignored; a null optional member counts as missing.
// Errors carry the JSON path ("webhooks[1].auth[0].in").

template <class Json = nlohmann::json>
[[nodiscard]] result<tenant_settings> try_tenant_settings_from_json(const detail::non_deduced_t<Json>& j,
                                                                    std::string_view path = "tenant");
template <class Json = nlohmann::json>
[[nodiscard]] tenant_settings tenant_settings_from_json(const detail::non_deduced_t<Json>& j,
                                                        std::string_view path = "tenant") {
    return try_tenant_settings_from_json<Json>(j, path).value();
}

// The shape only (types, names of events); validate_webhook checks the rest
// (validated_webhooks_from_json does both for a list).
template <class Json = nlohmann::json>
[[nodiscard]] result<webhook> try_webhook_from_json(const detail::non_deduced_t<Json>& j, std::string_view path = "");
template <class Json = nlohmann::json>
[[nodiscard]] webhook webhook_from_json(const detail::non_deduced_t<Json>& j, std::string_view path = "") {
    return try_webhook_from_json<Json>(j, path).value();
}

// An array of webhooks, read and validated element by element (the first
// problem in document order is the error): paths "webhooks[1].endpoint".
// "validated_" in the name because X_from_json gives an X: webhook_from_json
// reads the shape only.
template <class Json = nlohmann::json>
[[nodiscard]] result<std::vector<validated_webhook>> try_validated_webhooks_from_json(
    const detail::non_deduced_t<Json>& j, const endpoint_policy& policy = {}, std::string_view path = "webhooks");
template <class Json = nlohmann::json>
[[nodiscard]] std::vector<validated_webhook> validated_webhooks_from_json(const detail::non_deduced_t<Json>& j,
                                                                          const endpoint_policy& policy = {},
                                                                          std::string_view path = "webhooks") {
    return try_validated_webhooks_from_json<Json>(j, policy, path).value();
}

// A tenant's whole webhook configuration: {"tenant": {...}, "webhooks": [...]}.
struct webhook_settings {
    tenant_settings tenant;
    std::vector<validated_webhook> webhooks;

    friend bool operator==(const webhook_settings& a, const webhook_settings& b) { return is_equal(a, b); }
    friend bool operator!=(const webhook_settings& a, const webhook_settings& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const webhook_settings& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const webhook_settings& a, const webhook_settings& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const webhook_settings& x);
};

template <class Json = nlohmann::json>
[[nodiscard]] result<webhook_settings> try_webhook_settings_from_json(const detail::non_deduced_t<Json>& j,
                                                                      const endpoint_policy& policy = {});
template <class Json = nlohmann::json>
[[nodiscard]] webhook_settings webhook_settings_from_json(const detail::non_deduced_t<Json>& j,
                                                          const endpoint_policy& policy = {}) {
    return try_webhook_settings_from_json<Json>(j, policy).value();
}

// JSON conversion (nlohmann's j.get<T>() and j = value find these by ADL).
// Reading throws keyhook::exception as the X_from_json functions do; webhook
// lists are validated with the default endpoint_policy. Every record comes
// from its member table (detail/webhook_table.hpp), so reading what to_json
// wrote gives the record back, secrets aside.
//
// to_json writes no secret (M3): each authentication value and the signing
// secret as a secret's JSON form is (masked; a signing key shows its prefix
// only, B1), the endpoint through redact_url (P2: no user-info, no query
// values, where a key may sit). Its output is for logs, APIs and screens.
template <class Json>
void to_json(Json& j, const tenant_settings& t);
template <class Json>
void to_json(Json& j, const webhook& w);
template <class Json>
void to_json(Json& j, const webhook_settings& s);

// The store form: the same members with every secret and the endpoint in
// plaintext, so that the stored configuration reads back as it was given
// (webhook_from_json, webhook_settings_from_json). Only for a program's own
// store, never for output: it is the one writer that reveals secrets.
template <class Json>
void to_store_json(Json& j, const webhook& w);
template <class Json>
void to_store_json(Json& j, const webhook_settings& s);
template <class Json>
void from_json(const Json& j, tenant_settings& t) {
    t = tenant_settings_from_json<Json>(j);
}
template <class Json>
void from_json(const Json& j, webhook& w) {
    w = webhook_from_json<Json>(j);
}
template <class Json>
void from_json(const Json& j, webhook_settings& s) {
    s = webhook_settings_from_json<Json>(j);
}

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/webhook_json.ipp"
#endif
