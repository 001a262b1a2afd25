// keyhook: dispatch (spec 4.3, 6.3; rules H4 and H8). From a tenant's
// settings, its validated webhooks and one notification, the requests a host
// sends: one per webhook that fires, in the order given, each with a delivery
// id that stays the same across retries. The body is written once per event
// and shared by every request, as are the parts validation prepared.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/error.hpp"
#include "keyhook/events.hpp"
#include "keyhook/http.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/timestamps.hpp"
#include "keyhook/webhook.hpp"

namespace keyhook {

// ---------------------------------------------------------------------------
// Delivery ids (H8)

// Identifies one notification to one webhook: a 128-bit value derived from the
// webhook's name and the body bytes, so every retry of that delivery carries
// the same id, and a receiver can drop duplicates by it (it is the webhook-id
// header of signing, B1). Written "msg_" followed by 32 lower-case hex digits.
class delivery_id {
public:
    constexpr delivery_id() noexcept = default;
    constexpr delivery_id(std::uint64_t high, std::uint64_t low) noexcept : hi_(high), lo_(low) {}

    [[nodiscard]] constexpr std::uint64_t high() const noexcept { return hi_; }
    [[nodiscard]] constexpr std::uint64_t low() const noexcept { return lo_; }

    friend constexpr bool operator==(const delivery_id& a, const delivery_id& b) noexcept {
        return a.hi_ == b.hi_ && a.lo_ == b.lo_;
    }
    friend constexpr bool operator!=(const delivery_id& a, const delivery_id& b) noexcept { return !(a == b); }
    friend constexpr bool operator<(const delivery_id& a, const delivery_id& b) noexcept {
        return a.hi_ < b.hi_ || (a.hi_ == b.hi_ && a.lo_ < b.lo_);
    }

private:
    std::uint64_t hi_ = 0;
    std::uint64_t lo_ = 0;
};

inline constexpr std::string_view delivery_id_prefix = "msg_";
inline constexpr std::size_t delivery_id_length = 36;  // "msg_" + 32 hex digits

[[nodiscard]] inline std::string to_string(const delivery_id& id) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string s(delivery_id_length, '0');
    s.replace(0, delivery_id_prefix.size(), delivery_id_prefix);
    const std::uint64_t halves[2] = {id.high(), id.low()};
    std::size_t at = delivery_id_prefix.size();
    for (const auto half : halves)
        for (int shift = 60; shift >= 0; shift -= 4) s[at++] = hex[half >> shift & 0xF];
    return s;
}
inline std::ostream& operator<<(std::ostream& os, const delivery_id& id) { return os << to_string(id); }

// Reads the written form back (for hosts that store it as text).
[[nodiscard]] inline result<delivery_id> try_parse_delivery_id(std::string_view text) {
    const auto fail = [&text] {
        return error{errc::invalid_value, "deliveryId",
                     "expected \"msg_\" and 32 lower-case hex digits, got " + detail::quote_input(text)};
    };
    if (text.size() != delivery_id_length || text.substr(0, delivery_id_prefix.size()) != delivery_id_prefix)
        return fail();
    std::uint64_t halves[2] = {0, 0};
    for (std::size_t i = 0; i < 32; ++i) {
        const char c = text[delivery_id_prefix.size() + i];
        unsigned v = 0;
        if (c >= '0' && c <= '9')
            v = static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f')
            v = static_cast<unsigned>(c - 'a' + 10);
        else
            return fail();
        halves[i / 16] = halves[i / 16] << 4 | v;
    }
    return delivery_id(halves[0], halves[1]);
}
[[nodiscard]] inline delivery_id parse_delivery_id(std::string_view text) {
    return try_parse_delivery_id(text).value();
}

namespace detail::hooks {

inline constexpr std::uint64_t body_hash_seed = 0x626f6479'626f6479u;
inline constexpr std::uint64_t delivery_seed = 0x64656c69'76657279u;

// The id from the two hashes: both halves of each feed the result.
inline delivery_id combine_delivery_id(const hash128& name, const hash128& body) noexcept {
    const std::uint64_t a = fmix64(name.lo ^ rotl64(body.hi, 17) ^ delivery_seed);
    const std::uint64_t b = fmix64(name.hi + body.lo + a);
    return delivery_id(fmix64(a ^ rotl64(b, 32) ^ body.hi), fmix64(b ^ body.lo ^ name.lo));
}

struct webhook_access {
    static const prepared_webhook& state(const validated_webhook& w) noexcept { return *w.state_; }
};

}  // namespace detail::hooks

// H8: the delivery id of `body` sent to the webhook named `webhook_name`.
// Deterministic: the same name and bytes give the same id (so a retry keeps
// it); another webhook, or another event (its body differs, if only in
// RequestTimeStamp), gives another id.
[[nodiscard]] inline delivery_id make_delivery_id(std::string_view webhook_name, std::string_view body) noexcept {
    return detail::hooks::combine_delivery_id(detail::hooks::hash_bytes(webhook_name, detail::hooks::name_hash_seed),
                                              detail::hooks::hash_bytes(body, detail::hooks::body_hash_seed));
}

// ---------------------------------------------------------------------------
// Outbound requests

class outbound_request;
namespace detail::hooks {
struct dispatcher;
// Only dispatch can make one, so only dispatch makes outbound requests.
class dispatch_key {
    friend struct dispatcher;
    constexpr dispatch_key() noexcept {}  // user-provided: not an aggregate, so `{}` cannot bypass it
};
}  // namespace detail::hooks

// One request to send (H8): POST to the webhook's final URL, its headers, the
// body, and the delivery id. The body and the webhook's prepared parts are
// shared, not copied, between the requests of one dispatch; request() makes an
// owning http_request for the host's HTTP client or for signing (B1).
class outbound_request {
public:
    // For dispatch (emplaced, so each request takes one reference to each shared part).
    outbound_request(detail::hooks::dispatch_key, const validated_webhook& w,
                     const std::shared_ptr<const std::string>& body, delivery_id id) noexcept
        : webhook_(w), body_(body), id_(id) {}

    [[nodiscard]] const std::string& webhook_name() const noexcept { return webhook_.name(); }
    [[nodiscard]] const validated_webhook& webhook() const noexcept { return webhook_; }
    [[nodiscard]] const delivery_id& id() const noexcept { return id_; }
    [[nodiscard]] std::string_view method() const noexcept { return "POST"; }
    // The endpoint with the query authentication appended (holds secrets when
    // the webhook has query parameters).
    [[nodiscard]] const std::string& url() const noexcept { return webhook_.target_url(); }
    // Content-Type: application/json, then the authentication headers (sensitive).
    [[nodiscard]] const http_headers& headers() const noexcept { return webhook_.headers(); }
    [[nodiscard]] const std::string& body() const noexcept { return *body_; }
    // The webhook's signing secret, for the signing step (B1), if it has one.
    [[nodiscard]] const std::optional<secret>& signing_secret() const noexcept { return webhook_.signing_secret(); }

    [[nodiscard]] http_request request() const { return http_request{std::string(method()), url(), headers(), body()}; }

    friend bool operator==(const outbound_request& a, const outbound_request& b) {
        return a.id_ == b.id_ && a.webhook_ == b.webhook_ && (a.body_ == b.body_ || *a.body_ == *b.body_);
    }
    friend bool operator!=(const outbound_request& a, const outbound_request& b) { return !(a == b); }
    // The URL through redact_url (no query values, no user-info) and
    // credential headers redacted (P2), all escaped (P1): no secret is printed.
    friend std::ostream& operator<<(std::ostream& os, const outbound_request& r) {
        os << r.method() << ' ' << escaped(redact_url(r.url())) << " (webhook " << detail::quote_input(r.webhook_name())
           << ", " << r.id_ << ')';
        for (const auto& h : r.headers()) os << '\n' << h;
        return os << "\n(" << r.body().size() << " body bytes)";
    }

private:
    validated_webhook webhook_;
    std::shared_ptr<const std::string> body_;  // never null
    delivery_id id_;
};

// H4 and spec 6.3: a webhook fires for an event only when the tenant's switch
// is on, the webhook is saved (not a draft), and its filter admits the event.
[[nodiscard]] inline bool fires(const tenant_settings& tenant, const validated_webhook& w, event_type e) noexcept {
    return tenant.webhooks_enabled && w.saved() && w.admits(e);
}

namespace detail::hooks {
struct dispatcher {
    static result<std::vector<outbound_request>> run(const tenant_settings& tenant,
                                                     const std::vector<validated_webhook>& webhooks,
                                                     const notification& n) {
        // A notification of one tenant must never reach another tenant's webhooks.
        if (n.tenant != tenant.name)
            return error{errc::invalid_value, "Tenant",
                         "the notification is for tenant " + quote_input(n.tenant) +
                             ", but the webhooks belong to tenant " + quote_input(tenant.name)};
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
};
}  // namespace detail::hooks

// Spec 4.3, 6.3, H4, H8: the requests for notification `n`, one per webhook
// that fires, in the order of `webhooks`. Errors: the notification's Tenant is
// not tenant.name (errc::invalid_value, path "Tenant"), or one of its fields
// is not valid UTF-8 (errc::invalid_utf8, path the body member, such as
// "FolderName"). Nothing fires while the tenant's switch is off.
[[nodiscard]] inline result<std::vector<outbound_request>> try_dispatch(const tenant_settings& tenant,
                                                                        const std::vector<validated_webhook>& webhooks,
                                                                        const notification& n) {
    return detail::hooks::dispatcher::run(tenant, webhooks, n);
}
[[nodiscard]] inline std::vector<outbound_request> dispatch(const tenant_settings& tenant,
                                                            const std::vector<validated_webhook>& webhooks,
                                                            const notification& n) {
    return try_dispatch(tenant, webhooks, n).value();
}

// The same from webhooks as configured: they are validated first (paths
// "webhooks[1].endpoint"), which parses every URL on every call; hosts that
// dispatch often validate once and keep the validated_webhook values.
[[nodiscard]] inline result<std::vector<outbound_request>> try_dispatch(const tenant_settings& tenant,
                                                                        const std::vector<webhook>& webhooks,
                                                                        const notification& n,
                                                                        const endpoint_policy& policy = {}) {
    auto valid = try_validate_webhooks(webhooks, policy);
    if (!valid) return valid.error();
    return try_dispatch(tenant, *valid, n);
}
[[nodiscard]] inline std::vector<outbound_request> dispatch(const tenant_settings& tenant,
                                                            const std::vector<webhook>& webhooks, const notification& n,
                                                            const endpoint_policy& policy = {}) {
    return try_dispatch(tenant, webhooks, n, policy).value();
}

// ---------------------------------------------------------------------------
// Reading a dispatch from JSON (the webhook_dispatch example's input)
//
//   {"tenant": {...}, "webhooks": [...],            as webhook_settings_from_json
//    "event": {"UserAction": string (required), "FolderName", "ServiceName",
//              "EntityId", "AuditType", "FileName", "ServiceVersionId": strings (optional)}}
// The notification's Tenant is the tenant's name and its RequestTimeStamp is
// `now`. Errors carry the JSON path ("event.UserAction", "webhooks[1].endpoint").

struct dispatch_input {
    webhook_settings settings;
    notification event;

    friend bool operator==(const dispatch_input& a, const dispatch_input& b) {
        return a.settings == b.settings && a.event == b.event;
    }
    friend bool operator!=(const dispatch_input& a, const dispatch_input& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const dispatch_input& d) {
        return os << d.settings << '\n' << d.event;
    }
};

template <class Json = nlohmann::json>
[[nodiscard]] result<dispatch_input> try_dispatch_input_from_json(const detail::non_deduced_t<Json>& j, timestamp now,
                                                                  const endpoint_policy& policy = {}) {
    auto settings = try_webhook_settings_from_json<Json>(j, policy);
    if (!settings) return settings.error();
    const auto* event = detail::json_member(j, "event", false);
    if (!event) return detail::missing_member_error("event");
    if (!event->is_object()) return detail::wrong_type("event", "an object", *event);
    dispatch_input in{std::move(*settings), notification{}};
    std::string action;
    if (auto e = detail::read_member_string(*event, "UserAction", "event", true, action)) return *e;
    auto type = try_parse_event_type(action);
    if (!type) return error{type.error().code, "event.UserAction", type.error().message};
    in.event.user_action = *type;
    struct field {
        const char* name;
        std::string* target;
    };
    const field fields[] = {
        {"FolderName", &in.event.folder_name}, {"ServiceName", &in.event.service_name},
        {"EntityId", &in.event.entity_id},     {"AuditType", &in.event.audit_type},
        {"FileName", &in.event.file_name},     {"ServiceVersionId", &in.event.service_version_id},
    };
    for (const auto& f : fields)
        if (auto e = detail::read_member_string(*event, f.name, "event", false, *f.target)) return *e;
    in.event.tenant = in.settings.tenant.name;
    in.event.request_time = now;
    return in;
}
template <class Json = nlohmann::json>
[[nodiscard]] dispatch_input dispatch_input_from_json(const detail::non_deduced_t<Json>& j, timestamp now,
                                                      const endpoint_policy& policy = {}) {
    return try_dispatch_input_from_json<Json>(j, now, policy).value();
}

}  // namespace keyhook

template <>
struct std::hash<keyhook::delivery_id> {
    std::size_t operator()(const keyhook::delivery_id& id) const noexcept {
        return static_cast<std::size_t>(id.high() ^ keyhook::detail::hooks::rotl64(id.low(), 1));
    }
};
