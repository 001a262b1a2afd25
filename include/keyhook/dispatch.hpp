// keyhook: dispatch (spec 4.3, 6.3; rules H4 and H8). From a tenant's
// settings, its validated webhooks and one notification, the requests a host
// sends: one per webhook that fires, in the order given, each with a delivery
// id that stays the same across retries. The body is written once per event
// and shared by every request, as are the parts validation prepared.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/detail/std_function.hpp"
#include "keyhook/endpoint.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/events.hpp"
#include "keyhook/http.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/timestamps.hpp"
#include "keyhook/webhook.hpp"
#include "keyhook/webhook_validation.hpp"

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

[[nodiscard]] KEYHOOK_INLINE std::string to_string(const delivery_id& id);
KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const delivery_id& id);

// Reads the written form back (for hosts that store it as text).
[[nodiscard]] KEYHOOK_INLINE result<delivery_id> try_parse_delivery_id(std::string_view text);
[[nodiscard]] KEYHOOK_INLINE delivery_id parse_delivery_id(std::string_view text);

// JSON form: the written form, as a string (nlohmann finds these by ADL).
template <class Json>
void to_json(Json& j, const delivery_id& id) {
    j = to_string(id);
}
template <class Json>
void from_json(const Json& j, delivery_id& id) {
    id = parse_delivery_id(j.template get_ref<const typename Json::string_t&>());
}

// H12: the key of the delivery id PRF. Ids are SipHash-2-4-128 under this
// key, so nobody without it can compute an id, let alone make two bodies share
// one. Every producer of one host's deliveries must use the same key (ids stay
// the same across retries, restarts and machines only then); the host keeps it
// as it keeps other secrets. Never printed; wiped when destroyed.
class delivery_id_key {
public:
    static constexpr std::size_t size = 16;

    explicit delivery_id_key(const std::array<unsigned char, size>& bytes) noexcept : bytes_(bytes) {}
    delivery_id_key(const delivery_id_key&) = default;
    delivery_id_key& operator=(const delivery_id_key&) = default;
    KEYHOOK_INLINE ~delivery_id_key();

    // Exactly 16 bytes (errc::invalid_value otherwise; the bytes are not echoed).
    [[nodiscard]] static KEYHOOK_INLINE result<delivery_id_key> try_from_bytes(std::string_view bytes);
    // 32 hex digits, as a host keeps it in configuration (errors name the path
    // "deliveryIdKey" and the reason, never the text).
    [[nodiscard]] static KEYHOOK_INLINE result<delivery_id_key> try_from_hex(std::string_view hex);
    // A random key made once per process (getrandom on Linux, std::random_device
    // elsewhere): what dispatch uses when the host passes none. Ids are then
    // stable only within this process; a host that retries after a restart or
    // from another machine must pass its own key (docs/webhooks.md).
    [[nodiscard]] static KEYHOOK_INLINE const delivery_id_key& per_process();

    // Compares every byte whatever they are.
    friend KEYHOOK_INLINE bool operator==(const delivery_id_key& a, const delivery_id_key& b) noexcept;
    friend bool operator!=(const delivery_id_key& a, const delivery_id_key& b) noexcept { return !(a == b); }
    // Prints "delivery_id_key(hidden)": no key material.
    friend KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const delivery_id_key& k);

    // The SipHash key words (first and last 8 bytes, little-endian).
    [[nodiscard]] KEYHOOK_INLINE std::uint64_t k0() const noexcept;
    [[nodiscard]] KEYHOOK_INLINE std::uint64_t k1() const noexcept;

private:
    std::array<unsigned char, size> bytes_;
};

// H8, H12: the delivery id of `body` sent to the webhook named `webhook_name`,
// under `key`. Deterministic: the same key, name and bytes give the same id (so
// a retry keeps it); another webhook, another body or another key gives another
// id, except with the probability of a 128-bit PRF collision. Without a key:
// delivery_id_key::per_process().
[[nodiscard]] KEYHOOK_INLINE delivery_id make_delivery_id(const delivery_id_key& key, std::string_view webhook_name,
                                                          std::string_view body) noexcept;
[[nodiscard]] KEYHOOK_INLINE delivery_id make_delivery_id(std::string_view webhook_name,
                                                          std::string_view body) noexcept;

// ---------------------------------------------------------------------------
// Outbound requests

class outbound_request;
struct dispatch_options;
namespace detail::hooks {
// The body of try_dispatch for validated webhooks: the one maker of outbound requests.
KEYHOOK_INLINE result<std::vector<outbound_request>> dispatch_requests(const tenant_settings& tenant,
                                                                       const std::vector<validated_webhook>& webhooks,
                                                                       const notification& n,
                                                                       const dispatch_options& options);
// Only dispatch can make one, so only dispatch makes outbound requests.
class dispatch_key {
    friend result<std::vector<outbound_request>> dispatch_requests(const tenant_settings& tenant,
                                                                   const std::vector<validated_webhook>& webhooks,
                                                                   const notification& n,
                                                                   const dispatch_options& options);
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

    [[nodiscard]] KEYHOOK_INLINE http_request request() const;

    friend KEYHOOK_INLINE bool operator==(const outbound_request& a, const outbound_request& b);
    friend bool operator!=(const outbound_request& a, const outbound_request& b) { return !(a == b); }

private:
    validated_webhook webhook_;
    std::shared_ptr<const std::string> body_;  // never null
    delivery_id id_;
};

// The URL through redact_url (no query values, no user-info) and credential
// headers redacted (P2), all escaped (P1): no secret is printed.
KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const outbound_request& r);

// H4 and spec 6.3: a webhook fires for an event only when the tenant's switch
// is on, the webhook is saved (not a draft), and its filter admits the event.
[[nodiscard]] inline bool fires(const tenant_settings& tenant, const validated_webhook& w, event_type e) noexcept {
    return tenant.webhooks_enabled && w.saved() && w.admits(e);
}

// What a host passes to dispatch beyond the webhooks: the delivery id key
// (H12; none: delivery_id_key::per_process()) and which webhooks are disabled
// (H10; empty: none). A disabled webhook gets no request even when it fires.
struct dispatch_options {
    std::optional<delivery_id_key> id_key;
    std::function<bool(const std::string& webhook_name)> is_disabled;
};

// Spec 4.3, 6.3, H4, H8: the requests for notification `n`, one per webhook
// that fires, in the order of `webhooks`. Errors: the notification's Tenant is
// not tenant.name (errc::invalid_value, path "Tenant"), its UserAction is not
// one of the 53 types (errc::unknown_event, path "UserAction"), or one of its
// fields is not valid UTF-8 (errc::invalid_utf8, path the body member, such as
// "FolderName"). Nothing fires while the tenant's switch is off.
[[nodiscard]] KEYHOOK_INLINE result<std::vector<outbound_request>> try_dispatch(
    const tenant_settings& tenant, const std::vector<validated_webhook>& webhooks, const notification& n,
    const dispatch_options& options = {});
[[nodiscard]] KEYHOOK_INLINE std::vector<outbound_request> dispatch(const tenant_settings& tenant,
                                                                    const std::vector<validated_webhook>& webhooks,
                                                                    const notification& n,
                                                                    const dispatch_options& options = {});

// The same from webhooks as configured: they are validated first (paths
// "webhooks[1].endpoint"), which parses every URL on every call; hosts that
// dispatch often validate once and keep the validated_webhook values.
[[nodiscard]] KEYHOOK_INLINE result<std::vector<outbound_request>> try_dispatch(const tenant_settings& tenant,
                                                                                const std::vector<webhook>& webhooks,
                                                                                const notification& n,
                                                                                const endpoint_policy& policy = {},
                                                                                const dispatch_options& options = {});
[[nodiscard]] KEYHOOK_INLINE std::vector<outbound_request> dispatch(const tenant_settings& tenant,
                                                                    const std::vector<webhook>& webhooks,
                                                                    const notification& n,
                                                                    const endpoint_policy& policy = {},
                                                                    const dispatch_options& options = {});

}  // namespace keyhook

template <>
struct std::hash<keyhook::delivery_id> {
    std::size_t operator()(const keyhook::delivery_id& id) const noexcept {
        return static_cast<std::size_t>(id.high() ^ (id.low() << 1 | id.low() >> 63));
    }
};

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/dispatch.ipp"
#endif
