#pragma once
// keyhook::crypto: definitions of signed_dispatch.hpp.

#include <array>
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "keyhook/crypto/signed_dispatch.hpp"
#include "keyhook/detail/constant_time.hpp"

namespace keyhook::crypto {

namespace detail {

// The keys a validated webhook signs with, made from the bytes validation
// decoded. A whsec_ key needs no check (validation bounded its size); a whsk_
// key is refused when its public half is not the one its seed derives (path
// "signingSecret", the entry's position in the message when there are several).
KEYHOOK_CRYPTO_INLINE result<signing_keys> keys_of(const validated_webhook& w) {
    const auto& decoded = keyhook::detail::hooks::webhook_access::state(w).signing_keys;
    signing_keys keys;
    for (std::size_t i = 0; i < decoded.size(); ++i) {
        const std::string& bytes = decoded[i].bytes.reveal();
        if (!decoded[i].asymmetric) {
            keys.secrets.push_back(*signing_secret_access::make(bytes));
            continue;
        }
        const std::string which = decoded.size() > 1 ? "key " + std::to_string(i + 1) + ": " : std::string();
        const auto* raw = reinterpret_cast<const unsigned char*>(bytes.data());
        auto key = try_asymmetric_signing_key_from_seed(raw, ed25519_seed_bytes);
        if (!key) return error{key.error().code, "signingSecret", which + key.error().message};
        std::array<unsigned char, ed25519_public_key_bytes> derived{};
        std::size_t n = derived.size();
        if (EVP_PKEY_get_raw_public_key(key->native_handle(), derived.data(), &n) != 1 || n != derived.size()) {
            ERR_clear_error();  // the host's next OpenSSL call must not report this failure
            return error{errc::invalid_value, "signingSecret", which + "OpenSSL EVP_PKEY_get_raw_public_key failed"};
        }
        if (!constant_time_equal(std::string_view(reinterpret_cast<const char*>(derived.data()), derived.size()),
                                 std::string_view(bytes).substr(ed25519_seed_bytes)))
            return error{errc::invalid_value, "signingSecret",
                         which +
                             "the public half (bytes 33 to 64) is not the public key of the private half "
                             "(bytes 1 to 32)"};
        keys.asymmetric.push_back(std::move(*key));
    }
    return keys;
}

}  // namespace detail

KEYHOOK_CRYPTO_INLINE result<http_request> try_sign_outbound(const outbound_request& r, const signing_secret& s,
                                                             timestamp now) {
    return try_sign_request(r.request(), s, to_string(r.id()), now);
}

KEYHOOK_CRYPTO_INLINE http_request sign_outbound(const outbound_request& r, const signing_secret& s, timestamp now) {
    return try_sign_outbound(r, s, now).value();
}

KEYHOOK_CRYPTO_INLINE result<http_request> try_sign_outbound(const outbound_request& r, timestamp now) {
    if (!r.signing_secret()) return r.request();
    auto keys = detail::keys_of(r.webhook());
    if (!keys) {
        error e = keys.error();
        e.message = "webhook " + keyhook::detail::quote_input(r.webhook_name()) + ": " + e.message;
        return e;
    }
    return try_sign_request(r.request(), *keys, to_string(r.id()), now);
}

KEYHOOK_CRYPTO_INLINE http_request sign_outbound(const outbound_request& r, timestamp now) {
    return try_sign_outbound(r, now).value();
}

KEYHOOK_CRYPTO_INLINE result<http_request> try_sign_delivery(const validated_webhook& w, const delivery_id& id,
                                                             const std::string& body, timestamp now) {
    http_request request{"POST", w.target_url(), w.headers(), body};
    if (!w.signing_secret()) return request;
    auto keys = detail::keys_of(w);
    if (!keys) {
        error e = keys.error();
        e.message = "webhook " + keyhook::detail::quote_input(w.name()) + ": " + e.message;
        return e;
    }
    return try_sign_request(std::move(request), *keys, to_string(id), now);
}

KEYHOOK_CRYPTO_INLINE bool signed_delivery::is_equal(const signed_delivery& a, const signed_delivery& b) {
    return a.outbound == b.outbound && a.request == b.request && a.is_signed == b.is_signed;
}

KEYHOOK_CRYPTO_INLINE std::ostream& signed_delivery::print_to(std::ostream& os, const signed_delivery& d) {
    os << d.outbound;
    if (!d.is_signed) return os << "\n(unsigned)";
    os << "\nsigned with:";
    for (const auto name : {webhook_id_header, webhook_timestamp_header, webhook_signature_header})
        if (const auto* h = find_header(d.request.headers, name)) os << '\n' << *h;
    return os;
}

KEYHOOK_CRYPTO_INLINE result<std::vector<signed_delivery>> try_dispatch_signed(
    const tenant_settings& tenant, const std::vector<validated_webhook>& webhooks, const notification& n, timestamp now,
    const dispatch_options& options) {
    auto requests = try_dispatch(tenant, webhooks, n, options);
    if (!requests) return requests.error();
    // The path of a request's webhook in `webhooks` (names are unique there).
    const auto path_of = [&webhooks](const std::string& name) {
        std::size_t i = 0;
        while (i < webhooks.size() && webhooks[i].name() != name) ++i;
        return keyhook::detail::path_member(keyhook::detail::path_index("webhooks", i), "signingSecret");
    };
    std::vector<std::optional<signing_keys>> keys;
    keys.reserve(requests->size());
    for (const auto& r : *requests) {
        if (!r.signing_secret()) {
            keys.emplace_back();
            continue;
        }
        auto k = detail::keys_of(r.webhook());
        if (!k) return error{k.error().code, path_of(r.webhook_name()), k.error().message};
        keys.emplace_back(std::move(*k));
    }
    std::vector<signed_delivery> out;
    out.reserve(requests->size());
    for (std::size_t i = 0; i < requests->size(); ++i) {
        auto& r = (*requests)[i];
        if (!keys[i]) {
            auto request = r.request();
            out.push_back(signed_delivery{std::move(r), std::move(request), false});
            continue;
        }
        auto request = try_sign_request(r.request(), *keys[i], to_string(r.id()), now);
        if (!request) return error{request.error().code, path_of(r.webhook_name()), request.error().message};
        out.push_back(signed_delivery{std::move(r), std::move(*request), true});
    }
    return out;
}

KEYHOOK_CRYPTO_INLINE std::vector<signed_delivery> dispatch_signed(const tenant_settings& tenant,
                                                                   const std::vector<validated_webhook>& webhooks,
                                                                   const notification& n, timestamp now,
                                                                   const dispatch_options& options) {
    return try_dispatch_signed(tenant, webhooks, n, now, options).value();
}

KEYHOOK_CRYPTO_INLINE result<std::vector<signed_delivery>> try_dispatch_signed(const tenant_settings& tenant,
                                                                               const std::vector<webhook>& webhooks,
                                                                               const notification& n, timestamp now,
                                                                               const endpoint_policy& policy,
                                                                               const dispatch_options& options) {
    auto valid = try_validate_webhooks(webhooks, policy);
    if (!valid) return valid.error();
    return try_dispatch_signed(tenant, *valid, n, now, options);
}

KEYHOOK_CRYPTO_INLINE std::vector<signed_delivery> dispatch_signed(const tenant_settings& tenant,
                                                                   const std::vector<webhook>& webhooks,
                                                                   const notification& n, timestamp now,
                                                                   const endpoint_policy& policy,
                                                                   const dispatch_options& options) {
    return try_dispatch_signed(tenant, webhooks, n, now, policy, options).value();
}

}  // namespace keyhook::crypto
