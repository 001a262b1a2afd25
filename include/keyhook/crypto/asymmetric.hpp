// keyhook::crypto: asymmetric webhook signatures (rule B3), the Standard
// Webhooks "v1a" scheme: Ed25519 over `id.timestamp.body`, carried in the same
// webhook-signature header as "v1a," + base64 of the 64-byte signature.
//
// Written forms, as Svix's server reads and writes them:
//   signing key  "whsk_" + base64(seed || public key)   64 bytes: the 32-byte
//                Ed25519 private key (RFC 8032's "secret key", the seed) and
//                the 32-byte public key derived from it
//   public key   "whpk_" + base64(public key)           32 bytes
// The prefix is required (a bare 64-byte base64 text could as well be an HMAC
// key), and the public half of a whsk_ key must be the one its seed derives.
//
// A receiver holds public keys only: a leaked receiver configuration cannot
// forge deliveries. Verification accepts headers that mix "v1" and "v1a"
// entries, with any mix of secrets and public keys (rotation between schemes).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/crypto/signing.hpp"
#include "keyhook/detail/wipe.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/http.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/timestamps.hpp"

// OpenSSL's EVP_PKEY: only pointers to it are named here.
struct evp_pkey_st;

namespace keyhook::crypto {

inline constexpr std::string_view asymmetric_signing_key_prefix = "whsk_";
inline constexpr std::string_view public_key_prefix = "whpk_";
inline constexpr std::string_view asymmetric_signature_version = "v1a";

inline constexpr std::size_t ed25519_seed_bytes = 32;
inline constexpr std::size_t ed25519_public_key_bytes = 32;
inline constexpr std::size_t ed25519_signature_bytes = 64;
// A whsk_ key: seed, then public key.
inline constexpr std::size_t asymmetric_signing_key_bytes = ed25519_seed_bytes + ed25519_public_key_bytes;

// A header may carry at most this many v1a entries: each costs an Ed25519
// verification per public key, so a hostile header must not buy unbounded work.
inline constexpr std::size_t max_asymmetric_signatures = 16;

using ed25519_signature = std::array<unsigned char, ed25519_signature_bytes>;

namespace detail {
// What a key holds, shared by its copies and never changed: its bytes and
// its prepared OpenSSL key (defined with the definitions).
struct ed25519_private_state;
struct ed25519_public_state;
}  // namespace detail

// A public key ("whpk_..."): what a receiver verifies v1a signatures with. Not
// a secret, so it prints and converts to JSON in full. Copies share one
// prepared OpenSSL key.
class public_key {
public:
    // "whpk_" + padded base64 of the 32 bytes.
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE std::string to_string() const;
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE const std::array<unsigned char, ed25519_public_key_bytes>& bytes()
        const noexcept;
    // The prepared OpenSSL key (EVP_PKEY_ED25519).
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE evp_pkey_st* native_handle() const noexcept;

    friend bool operator==(const public_key& a, const public_key& b) noexcept { return is_equal(a, b); }
    friend bool operator!=(const public_key& a, const public_key& b) noexcept { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const public_key& x) { return print_to(os, x); }
    // What to_json (signing.hpp) writes: the written form in full.
    friend std::string json_form(const public_key& k) { return k.to_string(); }

    // The state is shared and never changed, so a move copies it: a
    // moved-from key keeps its value and every function's contract (moved-from
    // contract: an emptied one crashed in printing, ==, signing, verifying).
    public_key(const public_key&) = default;
    public_key& operator=(const public_key&) = default;
    public_key(public_key&& other) noexcept : state_(other.state_) {}
    public_key& operator=(public_key&& other) noexcept {
        state_ = other.state_;
        return *this;
    }
    ~public_key() = default;

private:
    explicit public_key(std::shared_ptr<const detail::ed25519_public_state> s) noexcept : state_(std::move(s)) {}
    std::shared_ptr<const detail::ed25519_public_state> state_;

    friend class asymmetric_signing_key;
    friend result<public_key> try_public_key_from_bytes(const unsigned char* bytes, std::size_t n);

    static KEYHOOK_CRYPTO_INLINE bool is_equal(const public_key& a, const public_key& b) noexcept;
    static KEYHOOK_CRYPTO_INLINE std::ostream& print_to(std::ostream& os, const public_key& x);
};

// The public key with these 32 raw bytes. Refused (path "public_key"): any
// other length. Any 32 bytes are accepted: bytes that are not a point of the
// curve simply never verify.
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<public_key> try_public_key_from_bytes(const unsigned char* bytes,
                                                                                 std::size_t n);

// Reads "whpk_<base64>" (prefix required). Refused (path "public_key"): another
// prefix (a whsk_ signing key is named as such: a receiver must not hold it),
// bad base64, and a length other than 32 bytes.
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<public_key> try_parse_public_key(std::string_view text);

[[nodiscard]] inline public_key parse_public_key(std::string_view text) { return try_parse_public_key(text).value(); }

// An Ed25519 signing key ("whsk_..."): what a sender signs v1a signatures
// with. Printing, JSON and comparison never show or leak it; its bytes are
// cleansed when the last copy is released.
class asymmetric_signing_key {
public:
    // The written form, "whsk_" + padded base64 of seed || public key. Call
    // only to store the key.
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE std::string reveal() const;
    // The same, as a keyhook::secret (the type webhook configurations hold).
    [[nodiscard]] secret to_secret() const { return secret(reveal()); }
    // The public key to hand to receivers; throws keyhook::exception if
    // OpenSSL fails (try_public_key_from_bytes on bytes() does not throw).
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE keyhook::crypto::public_key public_key() const;
    // "whsk_" and a '*' for every character of the base64 part.
    [[nodiscard]] std::string masked() const {
        return std::string(asymmetric_signing_key_prefix) +
               std::string((asymmetric_signing_key_bytes + 2) / 3 * 4, '*');
    }
    // The prepared OpenSSL key (EVP_PKEY_ED25519, with its private half).
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE evp_pkey_st* native_handle() const noexcept;

    // Constant-time over the 64 bytes.
    friend bool operator==(const asymmetric_signing_key& a, const asymmetric_signing_key& b) noexcept {
        return is_equal(a, b);
    }
    friend bool operator!=(const asymmetric_signing_key& a, const asymmetric_signing_key& b) noexcept {
        return !(a == b);
    }
    friend std::ostream& operator<<(std::ostream& os, const asymmetric_signing_key& x) { return print_to(os, x); }
    // What to_json (signing.hpp) writes: the masked form.
    friend std::string json_form(const asymmetric_signing_key& k) { return k.masked(); }

    // The state is shared and never changed, so a move copies it: a
    // moved-from key keeps its value and every function's contract (moved-from
    // contract: an emptied one crashed in printing, ==, signing, verifying).
    asymmetric_signing_key(const asymmetric_signing_key&) = default;
    asymmetric_signing_key& operator=(const asymmetric_signing_key&) = default;
    asymmetric_signing_key(asymmetric_signing_key&& other) noexcept : state_(other.state_) {}
    asymmetric_signing_key& operator=(asymmetric_signing_key&& other) noexcept {
        state_ = other.state_;
        return *this;
    }
    ~asymmetric_signing_key() = default;

private:
    explicit asymmetric_signing_key(std::shared_ptr<const detail::ed25519_private_state> s) noexcept
        : state_(std::move(s)) {}
    std::shared_ptr<const detail::ed25519_private_state> state_;

    friend result<asymmetric_signing_key> try_asymmetric_signing_key_from_seed(const unsigned char* seed,
                                                                               std::size_t n);
    friend result<asymmetric_signing_key> try_parse_asymmetric_signing_key(std::string_view text);

    static KEYHOOK_CRYPTO_INLINE bool is_equal(const asymmetric_signing_key& a,
                                               const asymmetric_signing_key& b) noexcept;
    static KEYHOOK_CRYPTO_INLINE std::ostream& print_to(std::ostream& os, const asymmetric_signing_key& x);
};

// The signing key of a 32-byte Ed25519 seed (RFC 8032's secret key); its
// public half is derived. Refused (path "signing_key"): any other length.
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<asymmetric_signing_key> try_asymmetric_signing_key_from_seed(
    const unsigned char* seed, std::size_t n);

// Reads "whsk_<base64>" (prefix required). Refused (path "signing_key"):
// another prefix, bad base64, a length other than 64 bytes, and a public half
// that is not the one the seed derives (a key spliced from two pairs would
// sign with one key while announcing another). The text is never quoted.
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<asymmetric_signing_key> try_parse_asymmetric_signing_key(
    std::string_view text);

[[nodiscard]] inline asymmetric_signing_key parse_asymmetric_signing_key(std::string_view text) {
    return try_parse_asymmetric_signing_key(text).value();
}

[[nodiscard]] inline result<asymmetric_signing_key> try_parse_asymmetric_signing_key(const secret& s) {
    return try_parse_asymmetric_signing_key(std::string_view(s.reveal()));
}

// A new key pair from 32 bytes of the host's secure random source, a callable
// `void(unsigned char* out, std::size_t n)` such as keyhook::crypto::openssl_random.
// The drawn seed is wiped. Whatever the source throws becomes the error of
// the try_ form (a keyhook::exception's own error, else errc::host_failure at
// "random").
template <class RandomSource>
[[nodiscard]] result<asymmetric_signing_key> try_generate_asymmetric_signing_key(RandomSource&& random) {
    std::array<unsigned char, ed25519_seed_bytes> seed{};
    struct wipe_on_exit {
        std::array<unsigned char, ed25519_seed_bytes>& s;
        ~wipe_on_exit() { keyhook::detail::secure_wipe(s.data(), s.size()); }
    } guard{seed};
    if (auto e = detail::draw_random(random, seed.data(), seed.size())) return std::move(*e);
    return try_asymmetric_signing_key_from_seed(seed.data(), seed.size());
}

template <class RandomSource>
[[nodiscard]] asymmetric_signing_key generate_asymmetric_signing_key(RandomSource&& random) {
    return try_generate_asymmetric_signing_key(std::forward<RandomSource>(random)).value();
}

// Ed25519 (RFC 8032, pure: the message is not pre-hashed) of `message`.
// Throws keyhook::exception (path "signing_key") if OpenSSL fails.
[[nodiscard]] KEYHOOK_CRYPTO_INLINE ed25519_signature ed25519_sign(const asymmetric_signing_key& key,
                                                                   std::string_view message);

// Whether `sig` is a valid Ed25519 signature of `message` under `key`. A
// signature of another length is simply not valid. Throws keyhook::exception
// (path "public_key") if OpenSSL fails before it can tell.
[[nodiscard]] KEYHOOK_CRYPTO_INLINE bool ed25519_verify(const public_key& key, std::string_view message,
                                                        const unsigned char* sig, std::size_t sig_size);

[[nodiscard]] inline bool ed25519_verify(const public_key& key, std::string_view message,
                                         const ed25519_signature& sig) {
    return ed25519_verify(key, message, sig.data(), sig.size());
}

// "v1a,<base64>" for one key. `signed_at` is written in whole seconds (rounded
// down), as the webhook-timestamp header carries it.
[[nodiscard]] KEYHOOK_CRYPTO_INLINE std::string compute_asymmetric_signature(const asymmetric_signing_key& key,
                                                                             std::string_view webhook_id,
                                                                             timestamp signed_at,
                                                                             std::string_view body);

// What a sender signs with: symmetric secrets ("v1") and asymmetric keys
// ("v1a"), at once while a webhook moves from one scheme to the other.
struct signing_keys {
    std::vector<signing_secret> secrets;
    std::vector<asymmetric_signing_key> asymmetric;

    [[nodiscard]] bool empty() const noexcept { return secrets.empty() && asymmetric.empty(); }
};

// What a receiver verifies with: secrets for "v1" entries, public keys for
// "v1a" entries. Either may be empty, not both.
struct verification_keys {
    std::vector<signing_secret> secrets;
    std::vector<public_key> public_keys;

    [[nodiscard]] bool empty() const noexcept { return secrets.empty() && public_keys.empty(); }
};

// The three headers for a request signed with every key: the v1 entries, then
// the v1a entries, in the order given. Refused: no key at all (path
// "signingSecret"), a secret keyhook may not sign with (B1), and a webhook id
// that is not a plain header value (path "webhook-id").
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<http_headers> try_signature_headers(const signing_keys& keys,
                                                                               std::string_view webhook_id,
                                                                               timestamp now, std::string_view body);

[[nodiscard]] inline http_headers signature_headers(const signing_keys& keys, std::string_view webhook_id,
                                                    timestamp now, std::string_view body) {
    return try_signature_headers(keys, webhook_id, now, body).value();
}

// `request` with the three headers set from its body (earlier ones replaced).
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<http_request> try_sign_request(http_request request,
                                                                          const signing_keys& keys,
                                                                          std::string_view webhook_id, timestamp now);

[[nodiscard]] inline http_request sign_request(http_request request, const signing_keys& keys,
                                               std::string_view webhook_id, timestamp now) {
    return try_sign_request(std::move(request), keys, webhook_id, now).value();
}

// Verifies a received webhook with secrets and/or public keys, in the order of
// try_verify_signature (signing.hpp): headers present and consistent, id and
// timestamp well-formed, timestamp within `tolerance`; then one entry of
// webhook-signature must match: a "v1," entry the HMAC under a secret
// (compared in constant time, no early exit), or a "v1a," entry a valid
// Ed25519 signature under a public key. Entries of a version the receiver has
// no key for are skipped. Refused (errc::invalid_signature): no entry of a
// version it has keys for, none matching, more than max_asymmetric_signatures
// v1a entries when it has public keys.
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<verified_webhook> try_verify_signature(
    const verification_keys& keys, const http_headers& headers, std::string_view body, timestamp now,
    std::chrono::seconds tolerance = default_signature_tolerance);

[[nodiscard]] inline result<verified_webhook> try_verify_signature(
    const public_key& key, const http_headers& headers, std::string_view body, timestamp now,
    std::chrono::seconds tolerance = default_signature_tolerance) {
    return try_verify_signature(verification_keys{{}, {key}}, headers, body, now, tolerance);
}

// verify_signature, try_verify_request and verify_request (signing.hpp) take
// verification_keys and a public_key too.

// Reads a sender's key list, what a webhook's signing secret holds: space-
// separated "whsec_..." secrets (24 to 64 bytes, B1) and "whsk_..." signing
// keys, in any mix. Refused (path "signingSecret", the entry's position in
// the message when there are several): the core's checks
// (detail::check_signing_keys) and a whsk_ key whose halves do not match.
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<signing_keys> try_parse_signing_keys(std::string_view text);

[[nodiscard]] inline result<signing_keys> try_parse_signing_keys(const secret& s) {
    return try_parse_signing_keys(std::string_view(s.reveal()));
}

// Reads a receiver's key list: whitespace-separated "whsec_..." secrets and
// "whpk_..." public keys, in any mix (a receiver during a rotation between
// schemes holds both). Refused (path "signing_keys[i]"): an entry that is
// neither, with the reason of its parser; a "whsk_" signing key (a receiver
// must not hold one); an empty list.
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<verification_keys> try_parse_verification_keys(std::string_view text);

}  // namespace keyhook::crypto

#if KEYHOOK_CRYPTO_DEFINITIONS
#include "keyhook/crypto/impl/asymmetric.ipp"
#endif
