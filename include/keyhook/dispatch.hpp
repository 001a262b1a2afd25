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
#include "keyhook/delivery_id.hpp"
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

    friend bool operator==(const outbound_request& a, const outbound_request& b) { return is_equal(a, b); }
    friend bool operator!=(const outbound_request& a, const outbound_request& b) { return !(a == b); }

private:
    validated_webhook webhook_;
    std::shared_ptr<const std::string> body_;  // never null
    delivery_id id_;

    // The URL through redact_url (no query values, no user-info) and credential
    // headers redacted (P2), all escaped (P1): no secret is printed.
    friend std::ostream& operator<<(std::ostream& os, const outbound_request& x) { return print_to(os, x); }

    static KEYHOOK_INLINE bool is_equal(const outbound_request& a, const outbound_request& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const outbound_request& x);
};

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

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/dispatch.ipp"
#endif
