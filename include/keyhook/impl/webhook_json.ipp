#pragma once
// keyhook: definitions of webhook_json.hpp.

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/detail/json_members.hpp"

#include "keyhook/webhook_json.hpp"

namespace keyhook {

template <class Json>
result<tenant_settings> try_tenant_settings_from_json(const detail::non_deduced_t<Json>& j,
                                                                    std::string_view path) {
    const std::string base(path);
    if (!j.is_object()) return detail::wrong_type(base, "an object", j);
    tenant_settings t;
    if (auto e = detail::read_member_string(j, "name", base, true, t.name)) return *e;
    if (auto e = detail::read_member_bool(j, "webhooksEnabled", base, t.webhooks_enabled)) return *e;
    return t;
}

template <class Json>
result<webhook> try_webhook_from_json(const detail::non_deduced_t<Json>& j, std::string_view path) {
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

template <class Json>
result<std::vector<validated_webhook>> try_validated_webhooks_from_json(
    const detail::non_deduced_t<Json>& j, const endpoint_policy& policy, std::string_view path) {
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

template <class Json>
result<webhook_settings> try_webhook_settings_from_json(const detail::non_deduced_t<Json>& j,
                                                                      const endpoint_policy& policy) {
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

template <class Json>
void to_json(Json& j, const tenant_settings& t) {
    j = Json::object();
    j["name"] = t.name;
    j["webhooksEnabled"] = t.webhooks_enabled;
}


KEYHOOK_INLINE bool operator==(const webhook_settings& a, const webhook_settings& b) {
    return a.tenant == b.tenant && a.webhooks == b.webhooks;
}
KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const webhook_settings& s) {
    os << s.tenant;
    for (const auto& w : s.webhooks) os << '\n' << w;
    return os;
}

}  // namespace keyhook

#if defined(KEYHOOK_BUILDING_COMPILED) && !defined(KEYHOOK_BUILDING_COMPILED_CRYPTO)
// Compiled mode: the JSON forms a program's translation units only declare.
#include <nlohmann/json.hpp>
namespace keyhook {
#define KEYHOOK_WEBHOOK_JSON(Json)                                                                             \
    template result<tenant_settings> try_tenant_settings_from_json<Json>(const Json&, std::string_view);     \
    template result<webhook> try_webhook_from_json<Json>(const Json&, std::string_view);                     \
    template result<std::vector<validated_webhook>> try_validated_webhooks_from_json<Json>(                  \
        const Json&, const endpoint_policy&, std::string_view);                                              \
    template result<webhook_settings> try_webhook_settings_from_json<Json>(const Json&, const endpoint_policy&); \
    template void to_json<Json>(Json&, const tenant_settings&);
KEYHOOK_WEBHOOK_JSON(nlohmann::json)
KEYHOOK_WEBHOOK_JSON(nlohmann::ordered_json)
#undef KEYHOOK_WEBHOOK_JSON
}  // namespace keyhook
#endif
