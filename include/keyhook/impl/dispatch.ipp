#pragma once
// keyhook: definitions of dispatch.hpp.

#include <cstddef>
#include <optional>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/detail/siphash.hpp"
#include "keyhook/dispatch.hpp"

namespace keyhook {

KEYHOOK_INLINE http_request outbound_request::request() const {
    return http_request{std::string(method()), url(), headers(), body()};
}

KEYHOOK_INLINE bool outbound_request::is_equal(const outbound_request& a, const outbound_request& b) {
    return a.id_ == b.id_ && a.webhook_ == b.webhook_ && (a.body_ == b.body_ || *a.body_ == *b.body_);
}

KEYHOOK_INLINE std::ostream& outbound_request::print_to(std::ostream& os, const outbound_request& r) {
    os << r.method() << ' ' << escaped(redact_url(r.url())) << " (webhook " << detail::quote_input(r.webhook_name())
       << ", " << r.id() << ')';
    for (const auto& h : r.headers()) os << '\n' << h;
    return os << "\n(" << r.body().size() << " body bytes)";
}

namespace detail::hooks {
KEYHOOK_INLINE result<std::vector<outbound_request>> dispatch_requests(const tenant_settings& tenant,
                                                                       const std::vector<validated_webhook>& webhooks,
                                                                       const notification& n,
                                                                       const dispatch_options& options) {
    // A notification of one tenant must never reach another tenant's webhooks.
    if (n.tenant != tenant.name)
        return error{errc::invalid_value, "Tenant",
                     "the notification is for tenant " + quote_input(n.tenant) +
                         ", but the webhooks belong to tenant " + quote_input(tenant.name)};
    if (auto e = event_value_error(n.user_action, "UserAction")) return std::move(*e);
    std::vector<outbound_request> out;
    if (!tenant.webhooks_enabled) return out;
    // The body is written once, when the first webhook fires, and shared.
    const delivery_id_key& key = options.id_key ? *options.id_key : delivery_id_key::per_process();
    std::shared_ptr<const std::string> body;
    sip_digest body_hash;
    for (const auto& w : webhooks) {
        if (!fires(tenant, w, n.user_action)) continue;
        if (options.is_disabled && options.is_disabled(w.name())) continue;  // H10
        if (!body) {
            auto text = std::make_shared<std::string>();
            if (auto written = try_write_notification(*text, n); !written) return written.error();
            body_hash = body_digest(key, *text);
            body = std::move(text);
            out.reserve(webhooks.size());
        }
        const auto id = combine_delivery_id(key, body_hash, w.name());
        out.emplace_back(dispatch_key(), w, body, id);
    }
    return out;
}
}  // namespace detail::hooks

namespace detail::hooks {
// H2, H12: names identify webhooks (delivery ids, health, B6's stores), so a
// list validated one webhook at a time is refused when a name repeats, as
// try_validate_webhooks refuses it: path "webhooks[i].name", the first i
// whose name an earlier webhook has. An open-addressing table of indices
// over the hashes validation computed: one allocation, a few nanoseconds a
// webhook, names compared only when their hashes are equal.
KEYHOOK_INLINE std::optional<error> repeated_name_error(const std::vector<validated_webhook>& webhooks) {
    if (webhooks.size() < 2) return std::nullopt;
    std::size_t slots = 4;
    while (slots < webhooks.size() + webhooks.size() / 2) slots *= 2;  // filled to 2/3 at most
    constexpr std::size_t empty = static_cast<std::size_t>(-1);
    std::vector<std::size_t> table(slots, empty);
    for (std::size_t i = 0; i < webhooks.size(); ++i) {
        const auto& w = webhook_access::state(webhooks[i]);
        for (std::size_t at = w.name_hash & (slots - 1);; at = (at + 1) & (slots - 1)) {
            const std::size_t j = table[at];
            if (j == empty) {
                table[at] = i;
                break;
            }
            const auto& earlier = webhook_access::state(webhooks[j]);
            if (earlier.name_hash == w.name_hash && earlier.config.name == w.config.name)
                return error{errc::invalid_name, path_member(path_index("webhooks", i), "name"),
                             duplicate_name_message(w.config.name, "webhooks", j)};
        }
    }
    return std::nullopt;
}
}  // namespace detail::hooks

KEYHOOK_INLINE result<std::vector<outbound_request>> try_dispatch(const tenant_settings& tenant,
                                                                  const std::vector<validated_webhook>& webhooks,
                                                                  const notification& n,
                                                                  const dispatch_options& options) {
    if (auto e = detail::hooks::repeated_name_error(webhooks)) return std::move(*e);
    return detail::hooks::dispatch_requests(tenant, webhooks, n, options);
}

KEYHOOK_INLINE std::vector<outbound_request> dispatch(const tenant_settings& tenant,
                                                      const std::vector<validated_webhook>& webhooks,
                                                      const notification& n, const dispatch_options& options) {
    return try_dispatch(tenant, webhooks, n, options).value();
}

KEYHOOK_INLINE result<std::vector<outbound_request>> try_dispatch(const tenant_settings& tenant,
                                                                  const std::vector<webhook>& webhooks,
                                                                  const notification& n, const endpoint_policy& policy,
                                                                  const dispatch_options& options) {
    auto valid = try_validate_webhooks(webhooks, policy);
    if (!valid) return valid.error();
    return detail::hooks::dispatch_requests(tenant, *valid, n, options);  // names checked already
}

KEYHOOK_INLINE std::vector<outbound_request> dispatch(const tenant_settings& tenant,
                                                      const std::vector<webhook>& webhooks, const notification& n,
                                                      const endpoint_policy& policy, const dispatch_options& options) {
    return try_dispatch(tenant, webhooks, n, policy, options).value();
}

}  // namespace keyhook
