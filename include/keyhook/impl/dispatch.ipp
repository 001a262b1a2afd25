#pragma once
// keyhook: definitions of dispatch.hpp.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/detail/ascii.hpp"
#include "keyhook/dispatch.hpp"

namespace keyhook {

KEYHOOK_INLINE std::string to_string(const delivery_id& id) {
    std::string s(delivery_id_length, '0');
    s.replace(0, delivery_id_prefix.size(), delivery_id_prefix);
    const std::uint64_t halves[2] = {id.high(), id.low()};
    std::size_t at = delivery_id_prefix.size();
    for (const auto half : halves)
        for (int shift = 60; shift >= 0; shift -= 4) s[at++] = detail::hex_lower[half >> shift & 0xF];
    return s;
}

KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const delivery_id& id) { return os << to_string(id); }

KEYHOOK_INLINE result<delivery_id> try_parse_delivery_id(std::string_view text) {
    const auto fail = [&text] {
        return error{errc::invalid_value, "deliveryId",
                     "expected \"msg_\" and 32 lower-case hex digits, got " + detail::quote_input(text)};
    };
    if (text.size() != delivery_id_length || text.substr(0, delivery_id_prefix.size()) != delivery_id_prefix)
        return fail();
    std::uint64_t halves[2] = {0, 0};
    for (std::size_t i = 0; i < 32; ++i) {
        const char c = text[delivery_id_prefix.size() + i];
        if (!detail::is_hex_digit(c) || (c >= 'A' && c <= 'F')) return fail();  // lower case only
        halves[i / 16] = halves[i / 16] << 4 | detail::hex_value(c);
    }
    return delivery_id(halves[0], halves[1]);
}

KEYHOOK_INLINE delivery_id parse_delivery_id(std::string_view text) { return try_parse_delivery_id(text).value(); }

namespace detail::hooks {

inline constexpr std::uint64_t body_hash_seed = 0x626f6479'626f6479u;
inline constexpr std::uint64_t delivery_seed = 0x64656c69'76657279u;

// The id from the two hashes: both halves of each feed the result.
KEYHOOK_INLINE delivery_id combine_delivery_id(const hash128& name, const hash128& body) noexcept {
    const std::uint64_t a = fmix64(name.lo ^ rotl64(body.hi, 17) ^ delivery_seed);
    const std::uint64_t b = fmix64(name.hi + body.lo + a);
    return delivery_id(fmix64(a ^ rotl64(b, 32) ^ body.hi), fmix64(b ^ body.lo ^ name.lo));
}

}  // namespace detail::hooks

KEYHOOK_INLINE delivery_id make_delivery_id(std::string_view webhook_name, std::string_view body) noexcept {
    return detail::hooks::combine_delivery_id(detail::hooks::hash_bytes(webhook_name, detail::hooks::name_hash_seed),
                                              detail::hooks::hash_bytes(body, detail::hooks::body_hash_seed));
}

KEYHOOK_INLINE http_request outbound_request::request() const {
    return http_request{std::string(method()), url(), headers(), body()};
}

KEYHOOK_INLINE bool operator==(const outbound_request& a, const outbound_request& b) {
    return a.id_ == b.id_ && a.webhook_ == b.webhook_ && (a.body_ == b.body_ || *a.body_ == *b.body_);
}

KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const outbound_request& r) {
    os << r.method() << ' ' << escaped(redact_url(r.url())) << " (webhook " << detail::quote_input(r.webhook_name())
       << ", " << r.id() << ')';
    for (const auto& h : r.headers()) os << '\n' << h;
    return os << "\n(" << r.body().size() << " body bytes)";
}

namespace detail::hooks {
KEYHOOK_INLINE result<std::vector<outbound_request>> dispatch_requests(const tenant_settings& tenant,
                                                                       const std::vector<validated_webhook>& webhooks,
                                                                       const notification& n) {
    // A notification of one tenant must never reach another tenant's webhooks.
    if (n.tenant != tenant.name)
        return error{errc::invalid_value, "Tenant",
                     "the notification is for tenant " + quote_input(n.tenant) +
                         ", but the webhooks belong to tenant " + quote_input(tenant.name)};
    if (auto e = event_value_error(n.user_action, "UserAction")) return std::move(*e);
    std::vector<outbound_request> out;
    if (!tenant.webhooks_enabled) return out;
    // The body is written once, when the first webhook fires, and shared.
    std::shared_ptr<const std::string> body;
    hash128 body_hash;
    for (const auto& w : webhooks) {
        if (!fires(tenant, w, n.user_action)) continue;
        if (!body) {
            auto text = std::make_shared<std::string>();
            if (auto written = try_write_notification(*text, n); !written) return written.error();
            body_hash = hash_bytes(*text, body_hash_seed);
            body = std::move(text);
            out.reserve(webhooks.size());
        }
        const auto id = combine_delivery_id(webhook_access::state(w).name_hash, body_hash);
        out.emplace_back(dispatch_key(), w, body, id);
    }
    return out;
}
}  // namespace detail::hooks

KEYHOOK_INLINE result<std::vector<outbound_request>> try_dispatch(const tenant_settings& tenant,
                                                                  const std::vector<validated_webhook>& webhooks,
                                                                  const notification& n) {
    return detail::hooks::dispatch_requests(tenant, webhooks, n);
}

KEYHOOK_INLINE std::vector<outbound_request> dispatch(const tenant_settings& tenant,
                                                      const std::vector<validated_webhook>& webhooks,
                                                      const notification& n) {
    return try_dispatch(tenant, webhooks, n).value();
}

KEYHOOK_INLINE result<std::vector<outbound_request>> try_dispatch(const tenant_settings& tenant,
                                                                  const std::vector<webhook>& webhooks,
                                                                  const notification& n,
                                                                  const endpoint_policy& policy) {
    auto valid = try_validate_webhooks(webhooks, policy);
    if (!valid) return valid.error();
    return try_dispatch(tenant, *valid, n);
}

KEYHOOK_INLINE std::vector<outbound_request> dispatch(const tenant_settings& tenant,
                                                      const std::vector<webhook>& webhooks, const notification& n,
                                                      const endpoint_policy& policy) {
    return try_dispatch(tenant, webhooks, n, policy).value();
}

}  // namespace keyhook
