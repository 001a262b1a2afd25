// keyhook internal: the member table of a tenant's whole webhook configuration
// (webhook_settings) and the JSON forms webhook_json.hpp declares, derived
// from it and from detail/webhook_table.hpp. Included by the implementation
// files only; in compiled mode the library instantiates the JSON forms for
// nlohmann::json and nlohmann::ordered_json.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "keyhook/detail/json_members.hpp"
#include "keyhook/detail/members.hpp"
#include "keyhook/detail/webhook_table.hpp"
#include "keyhook/endpoint.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/webhook.hpp"
#include "keyhook/webhook_json.hpp"
#include "keyhook/webhook_validation.hpp"

namespace keyhook {

namespace detail {
// A list of webhooks, each read by its table and validated as it arrives, so
// that the first problem in document order is the one reported. The reader's
// context is the endpoint_policy (the default policy without one). Written
// as each webhook's configuration.
struct validated_webhooks_form {
    static constexpr form_kind kind = form_kind::value;
    static constexpr std::string_view expected = "an array of webhooks";
    template <class Json>
    static std::optional<error> read(const Json& v, const std::string& path, std::vector<validated_webhook>& out,
                                     const endpoint_policy& policy) {
        if (!v.is_array()) return wrong_type(path, expected, v);
        hooks::list_validator list(v.size(), policy, path);
        for (std::size_t i = 0; i < v.size(); ++i) {
            webhook w;
            if (auto e = read_members(v[i], path_index(path, i), w)) return e;
            if (auto e = list.add(w, i)) return e;
        }
        out = list.take();
        return std::nullopt;
    }
    template <class Json>
    static std::optional<error> read(const Json& v, const std::string& path, std::vector<validated_webhook>& out) {
        return read(v, path, out, endpoint_policy{});
    }
    template <class Json, class Ctx = no_context>
    static void write(Json& slot, const std::vector<validated_webhook>& in, const Ctx& ctx = {}) {
        slot = Json::array();
        for (const auto& w : in) {
            Json one;
            write_members(one, w.config(), ctx);
            slot.push_back(std::move(one));
        }
    }
};
}  // namespace detail

// Both members required; a null one is refused by its type, not read as missing.
template <>
struct detail::members_of<webhook_settings> {
    static constexpr auto rows = make_rows(
        row<null_refused<record_form<tenant_settings>>>("tenant", &webhook_settings::tenant, presence::required),
        row<null_refused<validated_webhooks_form>>("webhooks", &webhook_settings::webhooks, presence::required));
};
static_assert(detail::members_complete<webhook_settings>());

template <class Json>
result<tenant_settings> try_tenant_settings_from_json(const detail::non_deduced_t<Json>& j, std::string_view path) {
    tenant_settings t;
    if (auto e = detail::read_members(j, std::string(path), t)) return std::move(*e);
    return t;
}

template <class Json>
result<webhook> try_webhook_from_json(const detail::non_deduced_t<Json>& j, std::string_view path) {
    webhook w;
    if (auto e = detail::read_members(j, std::string(path), w)) return std::move(*e);
    return w;
}

template <class Json>
result<std::vector<validated_webhook>> try_validated_webhooks_from_json(const detail::non_deduced_t<Json>& j,
                                                                        const endpoint_policy& policy,
                                                                        std::string_view path) {
    std::vector<validated_webhook> list;
    if (auto e = detail::validated_webhooks_form::read(j, std::string(path), list, policy)) return std::move(*e);
    return list;
}

template <class Json>
result<webhook_settings> try_webhook_settings_from_json(const detail::non_deduced_t<Json>& j,
                                                        const endpoint_policy& policy) {
    webhook_settings s;
    if (auto e = detail::read_members(j, std::string(), s, policy)) return std::move(*e);
    return s;
}

template <class Json>
void to_json(Json& j, const tenant_settings& t) {
    detail::write_members(j, t);
}
template <class Json>
void to_json(Json& j, const webhook& w) {
    detail::write_members(j, w);
}
template <class Json>
void to_json(Json& j, const webhook_settings& s) {
    detail::write_members(j, s);
}
template <class Json>
void to_store_json(Json& j, const webhook& w) {
    detail::write_members(j, w, detail::reveal_secrets{});
}
template <class Json>
void to_store_json(Json& j, const webhook_settings& s) {
    detail::write_members(j, s, detail::reveal_secrets{});
}

}  // namespace keyhook
