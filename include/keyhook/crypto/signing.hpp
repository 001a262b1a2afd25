// keyhook::crypto: Standard Webhooks signing and verification (rule B1).
//
// A signed request carries three headers:
//   webhook-id         the delivery id (the same on every retry)
//   webhook-timestamp  when it was signed, in Unix seconds
//   webhook-signature  "v1," + base64(HMAC-SHA256(key, id + "." + timestamp + "." + body)),
//                      possibly several, separated by spaces
// where the key is the base64-decoded part of a "whsec_..." secret. A receiver
// also accepts the older names svix-id, svix-timestamp and svix-signature.
// (An asymmetric "v1a," scheme, B3, would live in a header of its own; its
// entries in webhook-signature are skipped here.)
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/detail/signing_secret.hpp"
#include "keyhook/detail/wipe.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/http.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/timestamps.hpp"

// OpenSSL's EVP_MAC_CTX: only pointers to it are named here.
struct evp_mac_ctx_st;

namespace keyhook::crypto {

inline constexpr std::string_view signing_secret_prefix = keyhook::detail::signing_secret_prefix;
inline constexpr std::string_view signature_version = "v1";

// Key sizes the Standard Webhooks specification recommends. B1: keyhook
// enforces them for every key it signs with (generated, or configured on a
// webhook); a key read only to verify may have any non-empty length.
using signing_key_use = keyhook::detail::signing_key_use;
inline constexpr std::size_t min_signing_key_bytes = keyhook::detail::min_signing_key_bytes;
inline constexpr std::size_t max_signing_key_bytes = keyhook::detail::max_signing_key_bytes;
inline constexpr std::size_t default_signing_key_bytes = 32;

// B1 policy: a signed timestamp may be this far from `now`, either way.
inline constexpr std::chrono::seconds default_signature_tolerance = std::chrono::minutes{5};

inline constexpr std::string_view webhook_id_header = "webhook-id";
inline constexpr std::string_view webhook_timestamp_header = "webhook-timestamp";
inline constexpr std::string_view webhook_signature_header = "webhook-signature";
// The names Svix used before Standard Webhooks; accepted when receiving, never sent.
inline constexpr std::string_view svix_id_header = "svix-id";
inline constexpr std::string_view svix_timestamp_header = "svix-timestamp";
inline constexpr std::string_view svix_signature_header = "svix-signature";

class signing_secret;

namespace detail {

// The prepared form of an HMAC-SHA256 key (signing at the floor): a context keyed
// once, so a signature costs no MAC fetch, no digest fetch and no keying. It
// is made on first use, not when the key is read, so a parsed key list costs
// no OpenSSL memory (some 2 KB a key) until a key signs or verifies (J3).
// `pristine` never changes once set and may be duplicated from any thread at
// once; `scratch` is touched only by the call that holds `busy`, which
// re-initialises it with the same key, so the usual call makes no context.
struct hmac_sha256_key {
    std::atomic<evp_mac_ctx_st*> pristine{nullptr};
    evp_mac_ctx_st* scratch = nullptr;
    std::atomic<bool> busy{false};

    hmac_sha256_key() = default;
    hmac_sha256_key(const hmac_sha256_key&) = delete;
    hmac_sha256_key& operator=(const hmac_sha256_key&) = delete;
    // OpenSSL cleanses its copy of the key when the contexts are freed.
    KEYHOOK_CRYPTO_INLINE ~hmac_sha256_key();
};

// The one way to build a signing_secret from key bytes (already checked),
// and to reach its prepared key.
struct signing_secret_access {
    KEYHOOK_CRYPTO_INLINE static result<signing_secret> make(std::string key);
    KEYHOOK_CRYPTO_INLINE static hmac_sha256_key* prepared(const signing_secret& s) noexcept;
};

}  // namespace detail

// A webhook signing secret: the HMAC key, written "whsec_" + base64(key),
// and its prepared OpenSSL context (shared by copies, never changed).
// Printing, JSON and comparison never show or leak the key.
class signing_secret {
public:
    // The written form, "whsec_" + padded base64. Call only to store the secret
    // or to hand it to the receiver.
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE std::string reveal() const;
    // The same, as a keyhook::secret (the type webhook configurations hold).
    [[nodiscard]] secret to_secret() const { return secret(reveal()); }
    // The raw HMAC key bytes.
    [[nodiscard]] const secret& key() const noexcept { return key_; }
    [[nodiscard]] std::size_t key_size() const noexcept { return key_.size(); }
    // "whsec_" and a '*' for every character of the base64 part.
    [[nodiscard]] std::string masked() const {
        return std::string(signing_secret_prefix) + std::string((key_.size() + 2) / 3 * 4, '*');
    }

    friend bool operator==(const signing_secret& a, const signing_secret& b) noexcept { return a.key_ == b.key_; }
    friend bool operator!=(const signing_secret& a, const signing_secret& b) noexcept { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const signing_secret& x) { return print_to(os, x); }
    // What to_json writes: the masked form only.
    friend std::string json_form(const signing_secret& s) { return s.masked(); }

private:
    // Marked a signing key, so that printing key() shows none of it either (B1).
    signing_secret(std::string key, std::shared_ptr<detail::hmac_sha256_key> prepared) noexcept
        : key_(std::move(key), secret_kind::signing_key), prepared_(std::move(prepared)) {}
    secret key_;
    // Null only in a moved-from secret, which then signs nothing (an error).
    // Shared by copies; filled on first use (its members are atomic).
    std::shared_ptr<detail::hmac_sha256_key> prepared_;

    friend struct detail::signing_secret_access;

    static KEYHOOK_CRYPTO_INLINE std::ostream& print_to(std::ostream& os, const signing_secret& x);
};

// JSON conversion of every key type of keyhook::crypto (nlohmann's j = key
// finds it by ADL): what the type's json_form gives, a public key in full,
// secrets and signing keys masked. There is no from_json (B1: a key comes
// from its checked parsers).
template <class Json, class Key, class = decltype(json_form(std::declval<const Key&>()))>
void to_json(Json& j, const Key& k) {
    j = json_form(k);
}

// Reads "whsec_<base64>" or the bare base64 part. For verifying (the
// default) a key of any non-empty length is read; for signing, 24 to 64 bytes
// (errc::out_of_range otherwise). Errors (path "signingSecret") say what is
// wrong without quoting the text. No OpenSSL call: the key's context is made
// when it first signs or verifies.
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<signing_secret> try_parse_signing_secret(
    std::string_view text, signing_key_use use = signing_key_use::verify);

[[nodiscard]] inline signing_secret parse_signing_secret(std::string_view text,
                                                         signing_key_use use = signing_key_use::verify) {
    return try_parse_signing_secret(text, use).value();
}

// The same, from the keyhook::secret a webhook configuration holds.
[[nodiscard]] inline result<signing_secret> try_parse_signing_secret(const secret& s,
                                                                     signing_key_use use = signing_key_use::verify) {
    return try_parse_signing_secret(std::string_view(s.reveal()), use);
}
[[nodiscard]] inline signing_secret parse_signing_secret(const secret& s,
                                                         signing_key_use use = signing_key_use::verify) {
    return try_parse_signing_secret(s, use).value();
}

// B1: whether keyhook may sign with this secret (24 to 64 key bytes).
[[nodiscard]] inline bool can_sign_with(const signing_secret& s) noexcept {
    return s.key_size() >= min_signing_key_bytes && s.key_size() <= max_signing_key_bytes;
}

namespace detail {
// Runs the host's random source; whatever it throws becomes an error (a
// keyhook::exception's own, else errc::host_failure at "random"), since a
// try_ function never throws (the try_ contract).
template <class RandomSource>
std::optional<error> draw_random(RandomSource& random, unsigned char* out, std::size_t n) {
    try {
        random(out, n);
        return std::nullopt;
    } catch (...) {
        return keyhook::detail::current_host_error("random");
    }
}
}  // namespace detail

// A new secret of `key_bytes` random bytes (24 to 64) from the host's secure
// random source, a callable `void(unsigned char* out, std::size_t n)` such as
// keyhook::crypto::openssl_random. Whatever the source throws becomes the
// error of the try_ form (a keyhook::exception's own error, else
// errc::host_failure at "random").
template <class RandomSource>
[[nodiscard]] result<signing_secret> try_generate_signing_secret(RandomSource&& random,
                                                                 std::size_t key_bytes = default_signing_key_bytes) {
    if (key_bytes < min_signing_key_bytes || key_bytes > max_signing_key_bytes)
        return error{errc::out_of_range, "key_bytes",
                     std::to_string(key_bytes) + " bytes asked for; expected " + std::to_string(min_signing_key_bytes) +
                         " to " + std::to_string(max_signing_key_bytes)};
    keyhook::detail::wiped_string key(std::string(key_bytes, '\0'));
    if (auto e = detail::draw_random(random, reinterpret_cast<unsigned char*>(key.get().data()), key_bytes))
        return std::move(*e);
    return detail::signing_secret_access::make(std::move(key.get()));
}

template <class RandomSource>
[[nodiscard]] signing_secret generate_signing_secret(RandomSource&& random,
                                                     std::size_t key_bytes = default_signing_key_bytes) {
    return try_generate_signing_secret(std::forward<RandomSource>(random), key_bytes).value();
}

namespace detail {
// A webhook-id must be a plain header value: 1 to 256 visible ASCII characters.
inline constexpr std::size_t max_webhook_id_length = 256;
KEYHOOK_CRYPTO_INLINE bool valid_webhook_id(std::string_view id) noexcept;
}  // namespace detail

// "v1,<base64>" for one secret. `signed_at` is written in whole seconds
// (rounded down), as the webhook-timestamp header carries it. Any key length:
// this is also what a verifier computes (sending refuses short keys, below).
[[nodiscard]] KEYHOOK_CRYPTO_INLINE std::string compute_signature(const signing_secret& s, std::string_view webhook_id,
                                                                  timestamp signed_at, std::string_view body);

// The three headers for a request signed with every secret in `secrets`
// (more than one while a secret is being rotated: the receiver accepts any).
// Refused: an empty list (path "signingSecret"), a secret outside 24 to 64
// bytes (B1; errc::out_of_range, path "signingSecret") and a webhook id that
// is not a plain header value (path "webhook-id").
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<http_headers> try_signature_headers(
    const std::vector<signing_secret>& secrets, std::string_view webhook_id, timestamp now, std::string_view body);

[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<http_headers> try_signature_headers(const signing_secret& s,
                                                                               std::string_view webhook_id,
                                                                               timestamp now, std::string_view body);

[[nodiscard]] inline http_headers signature_headers(const signing_secret& s, std::string_view webhook_id, timestamp now,
                                                    std::string_view body) {
    return try_signature_headers(s, webhook_id, now, body).value();
}

// `request` with the three headers set from its body (any earlier ones are
// replaced, so a retry is simply signed again with a fresh `now`).
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<http_request> try_sign_request(http_request request,
                                                                          const std::vector<signing_secret>& secrets,
                                                                          std::string_view webhook_id, timestamp now);

[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<http_request> try_sign_request(http_request request, const signing_secret& s,
                                                                          std::string_view webhook_id, timestamp now);

[[nodiscard]] inline http_request sign_request(http_request request, const signing_secret& s,
                                               std::string_view webhook_id, timestamp now) {
    return try_sign_request(std::move(request), s, webhook_id, now).value();
}

[[nodiscard]] inline http_request sign_request(http_request request, const std::vector<signing_secret>& secrets,
                                               std::string_view webhook_id, timestamp now) {
    return try_sign_request(std::move(request), secrets, webhook_id, now).value();
}

// What a successful verification established.
struct verified_webhook {
    std::string id;       // webhook-id: deduplicate deliveries with it
    timestamp signed_at;  // webhook-timestamp

    friend bool operator==(const verified_webhook& a, const verified_webhook& b) { return is_equal(a, b); }
    friend bool operator!=(const verified_webhook& a, const verified_webhook& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const verified_webhook& x) { return print_to(os, x); }

private:
    static KEYHOOK_CRYPTO_INLINE bool is_equal(const verified_webhook& a, const verified_webhook& b);
    static KEYHOOK_CRYPTO_INLINE std::ostream& print_to(std::ostream& os, const verified_webhook& x);
};

// Verifies a received webhook against one or several secrets (a receiver that
// rotates its secret accepts either while both are valid), in this order:
//   1. the three headers are present, each under its webhook-* name or its
//      older svix-* name (errc::missing_member, path = the webhook-* name); a
//      header present more than once, under either name, with different
//      values is refused (errc::invalid_header);
//   2. webhook-id is a plain value (errc::invalid_header) and webhook-timestamp
//      is Unix seconds, digits only (errc::invalid_timestamp);
//   3. the timestamp is at most `tolerance` before or after `now`, compared in
//      whole seconds with `now` rounded down; exactly `tolerance` away is
//      accepted, and any tolerance up to seconds::max() works without
//      overflow (errc::timestamp_out_of_tolerance);
//   4. one of the space-separated "v1," signatures equals the HMAC of the exact
//      `body` bytes under one of the secrets, compared in constant time; entries
//      of other versions ("v1a,...") are ignored (errc::invalid_signature).
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<verified_webhook> try_verify_signature(
    const std::vector<signing_secret>& secrets, const http_headers& headers, std::string_view body, timestamp now,
    std::chrono::seconds tolerance = default_signature_tolerance);

[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<verified_webhook> try_verify_signature(
    const signing_secret& s, const http_headers& headers, std::string_view body, timestamp now,
    std::chrono::seconds tolerance = default_signature_tolerance);

namespace detail {
// What try_verify_signature returns for `Keys`: only key sets it takes (a
// secret, a vector of secrets; with asymmetric.hpp, public keys and
// verification_keys) name a type.
template <class Keys>
using verification_of = decltype(try_verify_signature(std::declval<const Keys&>(), std::declval<const http_headers&>(),
                                                      std::string_view(), timestamp(), std::chrono::seconds()));
}  // namespace detail

// The throwing form, for every key set try_verify_signature takes (a braced
// list is read as secrets).
template <class Keys = std::vector<signing_secret>, class = detail::verification_of<Keys>>
[[nodiscard]] verified_webhook verify_signature(const Keys& keys, const http_headers& headers, std::string_view body,
                                                timestamp now,
                                                std::chrono::seconds tolerance = default_signature_tolerance) {
    return try_verify_signature(keys, headers, body, now, tolerance).value();
}

// The same for a whole received request (its headers and body bytes).
template <class Keys = std::vector<signing_secret>, class = detail::verification_of<Keys>>
[[nodiscard]] result<verified_webhook> try_verify_request(
    const Keys& keys, const http_request& request, timestamp now,
    std::chrono::seconds tolerance = default_signature_tolerance) {
    return try_verify_signature(keys, request.headers, request.body, now, tolerance);
}

template <class Keys = std::vector<signing_secret>, class = detail::verification_of<Keys>>
[[nodiscard]] verified_webhook verify_request(const Keys& keys, const http_request& request, timestamp now,
                                              std::chrono::seconds tolerance = default_signature_tolerance) {
    return try_verify_request(keys, request, now, tolerance).value();
}

}  // namespace keyhook::crypto

#if KEYHOOK_CRYPTO_DEFINITIONS
#include "keyhook/crypto/impl/signing.ipp"
#endif
