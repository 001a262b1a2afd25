// keyhook: reading a webhook configuration from JSON (spec 2.2): a tenant's
// settings, a webhook's shape, a validated list, and both together. Templates
// on the JSON type, so this header needs only <nlohmann/json_fwd.hpp>.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "keyhook/config.hpp"
#include "keyhook/detail/json_members.hpp"
#include "keyhook/endpoint.hpp"
#include "keyhook/error.hpp"
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
                                                                    std::string_view path = "tenant") {
    const std::string base(path);
    if (!j.is_object()) return detail::wrong_type(base, "an object", j);
    tenant_settings t;
    if (auto e = detail::read_member_string(j, "name", base, true, t.name)) return *e;
    if (auto e = detail::read_member_bool(j, "webhooksEnabled", base, t.webhooks_enabled)) return *e;
    return t;
}
template <class Json = nlohmann::json>
[[nodiscard]] tenant_settings tenant_settings_from_json(const detail::non_deduced_t<Json>& j,
                                                        std::string_view path = "tenant") {
    return try_tenant_settings_from_json<Json>(j, path).value();
}

// The shape only (types, names of events); validate_webhook checks the rest
// (validated_webhooks_from_json does both for a list).
template <class Json = nlohmann::json>
[[nodiscard]] result<webhook> try_webhook_from_json(const detail::non_deduced_t<Json>& j, std::string_view path = "") {
    const std::string base(path);
    if (!j.is_object()) return detail::wrong_type(base, "an object", j);
    webhook w;
    if (auto e = detail::read_member_string(j, "name", base, true, w.name)) return *e;
    if (auto e = detail::read_member_string(j, "endpoint", base, true, w.endpoint)) return *e;
    if (auto e = detail::read_member_bool(j, "saved", base, w.saved)) return *e;
    if (const auto* events = detail::json_member(j, "events")) {
        const std::string events_path = detail::path_member(base, "events");
        if (!events->is_array()) return detail::wrong_type(events_path, "an array of event type names", *events);
        for (std::size_t i = 0; i < events->size(); ++i) {
            const auto& item = (*events)[i];
            const std::string item_path = detail::path_index(events_path, i);
            if (!item.is_string()) return detail::wrong_type(item_path, "an event type name", item);
            auto e = try_parse_event_type(item.template get_ref<const std::string&>());
            if (!e) return error{e.error().code, item_path, e.error().message};
            w.events.insert(*e);
        }
    }
    if (const auto* auth = detail::json_member(j, "auth")) {
        const std::string auth_path = detail::path_member(base, "auth");
        if (!auth->is_array()) return detail::wrong_type(auth_path, "an array of authentication parameters", *auth);
        if (auth->size() > max_auth_parameters)
            return error{errc::limit_exceeded, auth_path,
                         "has " + std::to_string(auth->size()) + " authentication parameters; at most " +
                             std::to_string(max_auth_parameters) + " are allowed"};
        w.auth.reserve(auth->size());
        for (std::size_t i = 0; i < auth->size(); ++i) {
            const auto& item = (*auth)[i];
            const std::string item_path = detail::path_index(auth_path, i);
            if (!item.is_object()) return detail::wrong_type(item_path, "an object", item);
            auth_parameter p;
            std::string in;
            if (auto e = detail::read_member_string(item, "in", item_path, true, in)) return *e;
            if (in == "header")
                p.in = auth_location::header;
            else if (in == "query")
                p.in = auth_location::query;
            else
                return error{errc::invalid_value, detail::path_member(item_path, "in"),
                             "expected \"header\" or \"query\", got " + detail::quote_input(in)};
            if (auto e = detail::read_member_string(item, "name", item_path, true, p.name)) return *e;
            std::string value;
            // The value is a secret: a type error must not show it, and does not (types only).
            if (auto e = detail::read_member_string(item, "value", item_path, true, value)) return *e;
            p.value = secret(std::move(value));
            w.auth.push_back(std::move(p));
        }
    }
    std::string signing;
    const bool has_signing = detail::json_member(j, "signingSecret") != nullptr;
    if (auto e = detail::read_member_string(j, "signingSecret", base, false, signing)) return *e;
    if (has_signing) w.signing_secret = secret(std::move(signing), secret_kind::signing_key);
    return w;
}
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
    const detail::non_deduced_t<Json>& j, const endpoint_policy& policy = {}, std::string_view path = "webhooks") {
    const std::string base(path);
    if (!j.is_array()) return detail::wrong_type(base, "an array of webhooks", j);
    detail::hooks::list_validator list(j.size(), policy, base);
    // Read and validate element by element, so the first problem in document order is the one reported.
    for (std::size_t i = 0; i < j.size(); ++i) {
        auto w = try_webhook_from_json<Json>(j[i], detail::path_index(base, i));
        if (!w) return w.error();
        if (auto e = list.add(*w, i)) return std::move(*e);
    }
    return list.take();
}
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

    friend KEYHOOK_INLINE bool operator==(const webhook_settings& a, const webhook_settings& b);
    friend bool operator!=(const webhook_settings& a, const webhook_settings& b) { return !(a == b); }
    friend KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const webhook_settings& s);
};

template <class Json = nlohmann::json>
[[nodiscard]] result<webhook_settings> try_webhook_settings_from_json(const detail::non_deduced_t<Json>& j,
                                                                      const endpoint_policy& policy = {}) {
    if (!j.is_object()) return detail::wrong_type("", "an object", j);
    const auto* tenant = detail::json_member(j, "tenant", false);
    if (!tenant) return detail::missing_member_error("tenant");
    auto t = try_tenant_settings_from_json<Json>(*tenant, "tenant");
    if (!t) return t.error();
    const auto* hooks = detail::json_member(j, "webhooks", false);
    if (!hooks) return detail::missing_member_error("webhooks");
    auto list = try_validated_webhooks_from_json<Json>(*hooks, policy, "webhooks");
    if (!list) return list.error();
    return webhook_settings{std::move(*t), std::move(*list)};
}
template <class Json = nlohmann::json>
[[nodiscard]] webhook_settings webhook_settings_from_json(const detail::non_deduced_t<Json>& j,
                                                          const endpoint_policy& policy = {}) {
    return try_webhook_settings_from_json<Json>(j, policy).value();
}

// JSON conversion (nlohmann's j.get<T>() and j = value find these by ADL).
// Reading throws keyhook::exception as the X_from_json functions do; webhook
// lists are validated with the default endpoint_policy.
template <class Json>
void to_json(Json& j, const tenant_settings& t) {
    j = Json::object();
    j["name"] = t.name;
    j["webhooksEnabled"] = t.webhooks_enabled;
}
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
