// keyhook::crypto: signing what dispatch produces (rules B1, H8). A webhook with
// a signing secret gets the three Standard Webhooks headers; its delivery id is
// the webhook-id, and the timestamp is the `now` of each attempt, so a retry is
// signed again from the same outbound_request.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/signing.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/error.hpp"
#include "keyhook/http.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/timestamps.hpp"
#include "keyhook/webhook.hpp"

namespace keyhook::crypto {

// sign_request signs an http_request with keys and a webhook id the caller
// passes; sign_outbound signs what dispatch made (an outbound_request, which
// carries its delivery id and its webhook's keys).

// The request to send for `r` at `now`, signed with `s` (whatever the
// webhook's own configuration says).
[[nodiscard]] inline result<http_request> try_sign_outbound(const outbound_request& r, const signing_secret& s,
                                                            timestamp now) {
    return try_sign_request(r.request(), s, to_string(r.id()), now);
}

[[nodiscard]] inline http_request sign_outbound(const outbound_request& r, const signing_secret& s, timestamp now) {
    return try_sign_outbound(r, s, now).value();
}

// B1 policy: `r` signed with its webhook's signing secret, or unsigned when the
// webhook has none. The secret may hold several space-separated keys, whsec_
// (v1) and whsk_ (v1a, B3) in any mix. Refused: a key that is not whsec_ +
// base64 of 24 to 64 bytes nor a whsk_ key (path "signingSecret", the
// message naming the webhook).
[[nodiscard]] inline result<http_request> try_sign_outbound(const outbound_request& r, timestamp now) {
    const auto& configured = r.signing_secret();
    if (!configured) return r.request();
    auto s = try_parse_signing_keys(*configured);  // B1 whsec_ and B3 whsk_ keys
    if (!s) {
        error e = s.error();
        e.message = "webhook " + keyhook::detail::quote_input(r.webhook_name()) + ": " + e.message;
        return e;
    }
    return try_sign_request(r.request(), *s, to_string(r.id()), now);
}

[[nodiscard]] inline http_request sign_outbound(const outbound_request& r, timestamp now) {
    return try_sign_outbound(r, now).value();
}

// One delivery ready to go: what dispatch made (kept for retries, which are
// signed again with sign_outbound(outbound, later)) and the request to send now.
struct signed_delivery {
    outbound_request outbound;
    http_request request;
    bool is_signed = false;

    friend bool operator==(const signed_delivery& a, const signed_delivery& b) {
        return a.outbound == b.outbound && a.request == b.request && a.is_signed == b.is_signed;
    }
    friend bool operator!=(const signed_delivery& a, const signed_delivery& b) { return !(a == b); }
    // The outbound request (query values hidden, credentials redacted) and the
    // signature headers, which hold no secret.
    friend std::ostream& operator<<(std::ostream& os, const signed_delivery& d) {
        os << d.outbound;
        if (!d.is_signed) return os << "\n(unsigned)";
        os << "\nsigned with:";
        for (const auto name : {webhook_id_header, webhook_timestamp_header, webhook_signature_header})
            if (const auto* h = find_header(d.request.headers, name)) os << '\n' << *h;
        return os;
    }
};

namespace detail {

// Signs every request of a dispatch at `now`. Every secret is read before any
// request is signed, so the call gives all deliveries or an error, never part.
// `path_of` maps a webhook name to the path of its configuration.
template <class PathOf>
result<std::vector<signed_delivery>> sign_all(std::vector<outbound_request> requests, timestamp now, PathOf&& path_of) {
    std::vector<std::optional<signing_keys>> secrets;
    secrets.reserve(requests.size());
    for (const auto& r : requests) {
        if (!r.signing_secret()) {
            secrets.emplace_back();
            continue;
        }
        auto s = try_parse_signing_keys(*r.signing_secret());
        if (!s) return error{s.error().code, path_of(r.webhook_name()), s.error().message};
        secrets.emplace_back(std::move(*s));
    }
    std::vector<signed_delivery> out;
    out.reserve(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (!secrets[i]) {
            auto request = requests[i].request();
            out.push_back(signed_delivery{std::move(requests[i]), std::move(request), false});
            continue;
        }
        auto request = try_sign_request(requests[i].request(), *secrets[i], to_string(requests[i].id()), now);
        if (!request) return error{request.error().code, path_of(requests[i].webhook_name()), request.error().message};
        out.push_back(signed_delivery{std::move(requests[i]), std::move(*request), true});
    }
    return out;
}

}  // namespace detail

// dispatch, then every request signed at `now` (B1 policy: those whose webhook
// has a signing secret). Errors: those of dispatch, and a malformed secret
// (path "webhooks[i].signingSecret", i its index in `webhooks`).
[[nodiscard]] inline result<std::vector<signed_delivery>> try_dispatch_signed(
    const tenant_settings& tenant, const std::vector<validated_webhook>& webhooks, const notification& n,
    timestamp now) {
    auto requests = try_dispatch(tenant, webhooks, n);
    if (!requests) return requests.error();
    return detail::sign_all(std::move(*requests), now, [&webhooks](const std::string& name) {
        std::size_t i = 0;
        while (i < webhooks.size() && webhooks[i].name() != name) ++i;
        return keyhook::detail::path_member(keyhook::detail::path_index("webhooks", i), "signingSecret");
    });
}

[[nodiscard]] inline std::vector<signed_delivery> dispatch_signed(const tenant_settings& tenant,
                                                                  const std::vector<validated_webhook>& webhooks,
                                                                  const notification& n, timestamp now) {
    return try_dispatch_signed(tenant, webhooks, n, now).value();
}

// The same from webhooks as configured (validated first, as dispatch does).
[[nodiscard]] inline result<std::vector<signed_delivery>> try_dispatch_signed(const tenant_settings& tenant,
                                                                              const std::vector<webhook>& webhooks,
                                                                              const notification& n, timestamp now,
                                                                              const endpoint_policy& policy = {}) {
    auto valid = try_validate_webhooks(webhooks, policy);
    if (!valid) return valid.error();
    return try_dispatch_signed(tenant, *valid, n, now);
}

[[nodiscard]] inline std::vector<signed_delivery> dispatch_signed(const tenant_settings& tenant,
                                                                  const std::vector<webhook>& webhooks,
                                                                  const notification& n, timestamp now,
                                                                  const endpoint_policy& policy = {}) {
    return try_dispatch_signed(tenant, webhooks, n, now, policy).value();
}

}  // namespace keyhook::crypto
