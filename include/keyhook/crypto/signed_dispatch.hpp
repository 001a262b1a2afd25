// keyhook::crypto: signing what dispatch produces (rules B1, H8). A webhook with
// a signing secret gets the three Standard Webhooks headers; its delivery id is
// the webhook-id, and the timestamp is the `now` of each attempt, so a retry is
// signed again from the same outbound_request. The keys are those validation
// decoded (validated_webhook): signing does not read the secret's text again.
#pragma once

#include <iosfwd>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/signing.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/endpoint.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/http.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/timestamps.hpp"
#include "keyhook/webhook.hpp"
#include "keyhook/webhook_validation.hpp"

namespace keyhook::crypto {

// sign_request signs an http_request with keys and a webhook id the caller
// passes; sign_outbound signs what dispatch made (an outbound_request, which
// carries its delivery id and its webhook's keys).

// The request to send for `r` at `now`, signed with `s` (whatever the
// webhook's own configuration says).
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<http_request> try_sign_outbound(const outbound_request& r,
                                                                           const signing_secret& s, timestamp now);
[[nodiscard]] KEYHOOK_CRYPTO_INLINE http_request sign_outbound(const outbound_request& r, const signing_secret& s,
                                                               timestamp now);

// B1 policy: `r` signed with the keys its webhook was validated with (whsec_
// secrets for v1, whsk_ keys for v1a, B3, in the order configured), or
// unsigned when the webhook has none. Validation checked their form; refused
// here (path "signingSecret", the message naming the webhook): a whsk_ key
// whose public half is not its seed's, which only keyhook::crypto can tell,
// and an OpenSSL failure.
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<http_request> try_sign_outbound(const outbound_request& r, timestamp now);
[[nodiscard]] KEYHOOK_CRYPTO_INLINE http_request sign_outbound(const outbound_request& r, timestamp now);

// B6: a stored delivery (its id and body, delivery_state.hpp) to webhook `w`
// as configured at this attempt: POST to w's URL with w's headers, signed as
// try_sign_outbound signs, with w's keys now (a store keeps no signed request,
// so keys rotated since the delivery was enqueued sign it). Errors as
// try_sign_outbound's.
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<http_request> try_sign_delivery(const validated_webhook& w,
                                                                           const delivery_id& id,
                                                                           const std::string& body, timestamp now);

// One delivery ready to go: what dispatch made (kept for retries, which are
// signed again with sign_outbound(outbound, later)) and the request to send now.
struct signed_delivery {
    outbound_request outbound;
    http_request request;
    bool is_signed = false;

    friend bool operator==(const signed_delivery& a, const signed_delivery& b) { return is_equal(a, b); }
    friend bool operator!=(const signed_delivery& a, const signed_delivery& b) { return !(a == b); }

    // The outbound request (query values hidden, credentials redacted) and the
    // signature headers, which hold no secret.
    friend std::ostream& operator<<(std::ostream& os, const signed_delivery& x) { return print_to(os, x); }

private:
    static KEYHOOK_CRYPTO_INLINE bool is_equal(const signed_delivery& a, const signed_delivery& b);
    static KEYHOOK_CRYPTO_INLINE std::ostream& print_to(std::ostream& os, const signed_delivery& x);
};

// dispatch, then every request signed at `now` (B1 policy: those whose webhook
// has a signing secret). Every webhook's keys are prepared before any request
// is signed, so the call gives all deliveries or an error, never part. Errors:
// those of dispatch, and those of try_sign_outbound (path
// "webhooks[i].signingSecret", i its index in `webhooks`).
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<std::vector<signed_delivery>> try_dispatch_signed(
    const tenant_settings& tenant, const std::vector<validated_webhook>& webhooks, const notification& n, timestamp now,
    const dispatch_options& options = {});
[[nodiscard]] KEYHOOK_CRYPTO_INLINE std::vector<signed_delivery> dispatch_signed(
    const tenant_settings& tenant, const std::vector<validated_webhook>& webhooks, const notification& n, timestamp now,
    const dispatch_options& options = {});

// The same from webhooks as configured (validated first, as dispatch does).
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<std::vector<signed_delivery>> try_dispatch_signed(
    const tenant_settings& tenant, const std::vector<webhook>& webhooks, const notification& n, timestamp now,
    const endpoint_policy& policy = {}, const dispatch_options& options = {});
[[nodiscard]] KEYHOOK_CRYPTO_INLINE std::vector<signed_delivery> dispatch_signed(const tenant_settings& tenant,
                                                                                 const std::vector<webhook>& webhooks,
                                                                                 const notification& n, timestamp now,
                                                                                 const endpoint_policy& policy = {},
                                                                                 const dispatch_options& options = {});

}  // namespace keyhook::crypto

#if KEYHOOK_CRYPTO_DEFINITIONS
#include "keyhook/crypto/impl/signed_dispatch.ipp"
#endif
