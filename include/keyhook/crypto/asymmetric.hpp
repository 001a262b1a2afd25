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
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "keyhook/base64.hpp"
#include "keyhook/crypto/signing.hpp"
#include "keyhook/detail/signing_keys.hpp"
#include "keyhook/error.hpp"
#include "keyhook/http.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/timestamps.hpp"

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

struct evp_pkey_free {
    void operator()(EVP_PKEY* p) const noexcept { EVP_PKEY_free(p); }
};
struct evp_md_ctx_free {
    void operator()(EVP_MD_CTX* p) const noexcept { EVP_MD_CTX_free(p); }
};

// Ed25519 signatures and their base64 (88 characters and EVP_EncodeBlock's terminator).
using ed25519_base64 = std::array<unsigned char, (ed25519_signature_bytes + 2) / 3 * 4 + 1>;

// OPENSSL_cleanse over a string's whole buffer, then empty it.
inline void cleanse_string(std::string& s) noexcept {
    s.resize(s.capacity());
    OPENSSL_cleanse(s.data(), s.size());
    s.clear();
}

// A string of key bytes that is cleansed when it goes out of scope.
struct cleansed_string {
    std::string value;
    cleansed_string() = default;
    explicit cleansed_string(std::string s) noexcept : value(std::move(s)) {}
    cleansed_string(cleansed_string&& other) noexcept : value(std::move(other.value)) { cleanse_string(other.value); }
    cleansed_string(const cleansed_string&) = delete;
    cleansed_string& operator=(const cleansed_string&) = delete;
    cleansed_string& operator=(cleansed_string&&) = delete;
    ~cleansed_string() { cleanse_string(value); }
};

// What a signing key holds, shared by its copies and never changed: the
// written bytes (cleansed on release) and the prepared OpenSSL key, which
// frees its own copy of the private key with OPENSSL_secure_clear_free.
struct ed25519_private_state {
    std::array<unsigned char, asymmetric_signing_key_bytes> raw{};  // seed || public key
    std::unique_ptr<EVP_PKEY, evp_pkey_free> pkey;

    ed25519_private_state() = default;
    ed25519_private_state(const ed25519_private_state&) = delete;
    ed25519_private_state& operator=(const ed25519_private_state&) = delete;
    ~ed25519_private_state() { OPENSSL_cleanse(raw.data(), raw.size()); }
};

struct ed25519_public_state {
    std::array<unsigned char, ed25519_public_key_bytes> raw{};
    std::unique_ptr<EVP_PKEY, evp_pkey_free> pkey;
};

inline std::string_view as_chars(const unsigned char* p, std::size_t n) noexcept {
    return {reinterpret_cast<const char*>(p), n};
}

// The private state for a 32-byte seed, its public half derived by OpenSSL,
// its EVP_PKEY built once (issue 14 item 3).
inline result<std::shared_ptr<const ed25519_private_state>> make_private_state(const unsigned char* seed) {
    auto state = std::make_shared<ed25519_private_state>();
    state->pkey.reset(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed, ed25519_seed_bytes));
    if (!state->pkey)
        return openssl_failure(errc::invalid_value, "signing_key", "EVP_PKEY_new_raw_private_key(ED25519)");
    std::size_t n = ed25519_public_key_bytes;
    if (EVP_PKEY_get_raw_public_key(state->pkey.get(), state->raw.data() + ed25519_seed_bytes, &n) != 1 ||
        n != ed25519_public_key_bytes)
        return openssl_failure(errc::invalid_value, "signing_key", "EVP_PKEY_get_raw_public_key");
    for (std::size_t i = 0; i < ed25519_seed_bytes; ++i) state->raw[i] = seed[i];
    return std::shared_ptr<const ed25519_private_state>(std::move(state));
}

inline std::shared_ptr<const ed25519_public_state> make_public_state(const unsigned char* bytes) {
    auto state = std::make_shared<ed25519_public_state>();
    for (std::size_t i = 0; i < ed25519_public_key_bytes; ++i) state->raw[i] = bytes[i];
    state->pkey.reset(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, bytes, ed25519_public_key_bytes));
    if (!state->pkey) return nullptr;
    return state;
}

// Decodes "<prefix><base64>" into exactly `size` bytes; errors name `where`
// and never quote the text (it may be a private key).
inline result<cleansed_string> decode_prefixed_key(std::string_view text, std::string_view prefix, std::size_t size,
                                                   std::string_view where) {
    if (text.substr(0, prefix.size()) != prefix) {
        std::string_view other;
        for (const std::string_view known : {signing_secret_prefix, asymmetric_signing_key_prefix, public_key_prefix})
            if (text.substr(0, known.size()) == known) other = known;
        std::string why = "expected " + std::string(prefix) + " + base64";
        if (other == asymmetric_signing_key_prefix && prefix == public_key_prefix)
            why += ", got a signing key (whsk_): a receiver needs only the public key (whpk_)";
        else if (!other.empty())
            why += ", got a " + std::string(other) + " key";
        return error{errc::invalid_value, std::string(where), std::move(why)};
    }
    text.remove_prefix(prefix.size());
    auto decoded = try_base64_decode(text);
    if (!decoded)
        return error{errc::invalid_value, std::string(where),
                     "not " + std::string(prefix) + " + base64: " + decoded.error().message};
    cleansed_string bytes(std::move(*decoded));
    if (bytes.value.size() != size)
        return error{errc::out_of_range, std::string(where),
                     "the key is " + std::to_string(bytes.value.size()) + " bytes; " + std::string(prefix) +
                         " keys are " + std::to_string(size)};
    return bytes;
}

}  // namespace detail

// A public key ("whpk_..."): what a receiver verifies v1a signatures with. Not
// a secret, so it prints and converts to JSON in full. Copies share one
// prepared OpenSSL key.
class public_key {
public:
    // "whpk_" + padded base64 of the 32 bytes.
    [[nodiscard]] std::string to_string() const {
        return detail::prefixed_base64(public_key_prefix, state_->raw.data(), state_->raw.size());
    }
    [[nodiscard]] const std::array<unsigned char, ed25519_public_key_bytes>& bytes() const noexcept {
        return state_->raw;
    }
    // The prepared OpenSSL key (EVP_PKEY_ED25519).
    [[nodiscard]] EVP_PKEY* native_handle() const noexcept { return state_->pkey.get(); }

    friend bool operator==(const public_key& a, const public_key& b) noexcept { return a.bytes() == b.bytes(); }
    friend bool operator!=(const public_key& a, const public_key& b) noexcept { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const public_key& k) {
        return os << "public_key(" << k.to_string() << ')';
    }
    template <class Json>
    friend void to_json(Json& j, const public_key& k) {
        j = k.to_string();
    }

private:
    explicit public_key(std::shared_ptr<const detail::ed25519_public_state> s) noexcept : state_(std::move(s)) {}
    std::shared_ptr<const detail::ed25519_public_state> state_;

    friend class asymmetric_signing_key;
    friend result<public_key> try_public_key_from_bytes(const unsigned char* bytes, std::size_t n);
};

// The public key with these 32 raw bytes. Refused (path "public_key"): any
// other length. Any 32 bytes are accepted: bytes that are not a point of the
// curve simply never verify.
[[nodiscard]] inline result<public_key> try_public_key_from_bytes(const unsigned char* bytes, std::size_t n) {
    if (n != ed25519_public_key_bytes)
        return error{errc::out_of_range, "public_key",
                     "the key is " + std::to_string(n) + " bytes; Ed25519 public keys are 32"};
    auto state = detail::make_public_state(bytes);
    if (!state)
        return detail::openssl_failure(errc::invalid_value, "public_key", "EVP_PKEY_new_raw_public_key(ED25519)");
    return public_key(std::move(state));
}

// Reads "whpk_<base64>" (prefix required). Refused (path "public_key"): another
// prefix (a whsk_ signing key is named as such: a receiver must not hold it),
// bad base64, and a length other than 32 bytes.
[[nodiscard]] inline result<public_key> try_parse_public_key(std::string_view text) {
    auto bytes = detail::decode_prefixed_key(text, public_key_prefix, ed25519_public_key_bytes, "public_key");
    if (!bytes) return bytes.error();
    return try_public_key_from_bytes(reinterpret_cast<const unsigned char*>(bytes->value.data()), bytes->value.size());
}

[[nodiscard]] inline public_key parse_public_key(std::string_view text) { return try_parse_public_key(text).value(); }

// An Ed25519 signing key ("whsk_..."): what a sender signs v1a signatures
// with. Printing, JSON and comparison never show or leak it; its bytes are
// cleansed when the last copy is released.
class asymmetric_signing_key {
public:
    // The written form, "whsk_" + padded base64 of seed || public key. Call
    // only to store the key.
    [[nodiscard]] std::string reveal() const {
        return detail::prefixed_base64(asymmetric_signing_key_prefix, state_->raw.data(), state_->raw.size());
    }
    // The same, as a keyhook::secret (the type webhook configurations hold).
    [[nodiscard]] secret to_secret() const { return secret(reveal()); }
    // The public key to hand to receivers; throws keyhook::exception if
    // OpenSSL fails (try_public_key_from_bytes on bytes() does not throw).
    [[nodiscard]] keyhook::crypto::public_key public_key() const {
        const auto* raw = state_->raw.data() + ed25519_seed_bytes;
        return try_public_key_from_bytes(raw, ed25519_public_key_bytes).value();
    }
    // "whsk_" and a '*' for every character of the base64 part.
    [[nodiscard]] std::string masked() const {
        return std::string(asymmetric_signing_key_prefix) +
               std::string((asymmetric_signing_key_bytes + 2) / 3 * 4, '*');
    }
    // The prepared OpenSSL key (EVP_PKEY_ED25519, with its private half).
    [[nodiscard]] EVP_PKEY* native_handle() const noexcept { return state_->pkey.get(); }

    // Constant-time over the 64 bytes.
    friend bool operator==(const asymmetric_signing_key& a, const asymmetric_signing_key& b) noexcept {
        return constant_time_equal(detail::as_chars(a.state_->raw.data(), a.state_->raw.size()),
                                   detail::as_chars(b.state_->raw.data(), b.state_->raw.size()));
    }
    friend bool operator!=(const asymmetric_signing_key& a, const asymmetric_signing_key& b) noexcept {
        return !(a == b);
    }
    friend std::ostream& operator<<(std::ostream& os, const asymmetric_signing_key& k) {
        return os << "asymmetric_signing_key(" << k.masked() << ')';
    }
    template <class Json>
    friend void to_json(Json& j, const asymmetric_signing_key& k) {
        j = k.masked();
    }

private:
    explicit asymmetric_signing_key(std::shared_ptr<const detail::ed25519_private_state> s) noexcept
        : state_(std::move(s)) {}
    std::shared_ptr<const detail::ed25519_private_state> state_;

    friend result<asymmetric_signing_key> try_asymmetric_signing_key_from_seed(const unsigned char* seed,
                                                                               std::size_t n);
    friend result<asymmetric_signing_key> try_parse_asymmetric_signing_key(std::string_view text);
};

// The signing key of a 32-byte Ed25519 seed (RFC 8032's secret key); its
// public half is derived. Refused (path "signing_key"): any other length.
[[nodiscard]] inline result<asymmetric_signing_key> try_asymmetric_signing_key_from_seed(const unsigned char* seed,
                                                                                         std::size_t n) {
    if (n != ed25519_seed_bytes)
        return error{errc::out_of_range, "signing_key",
                     "the seed is " + std::to_string(n) + " bytes; Ed25519 seeds are 32"};
    auto state = detail::make_private_state(seed);
    if (!state) return state.error();
    return asymmetric_signing_key(std::move(*state));
}

// Reads "whsk_<base64>" (prefix required). Refused (path "signing_key"):
// another prefix, bad base64, a length other than 64 bytes, and a public half
// that is not the one the seed derives (a key spliced from two pairs would
// sign with one key while announcing another). The text is never quoted.
[[nodiscard]] inline result<asymmetric_signing_key> try_parse_asymmetric_signing_key(std::string_view text) {
    auto bytes =
        detail::decode_prefixed_key(text, asymmetric_signing_key_prefix, asymmetric_signing_key_bytes, "signing_key");
    if (!bytes) return bytes.error();
    const auto* raw = reinterpret_cast<const unsigned char*>(bytes->value.data());
    auto prepared = detail::make_private_state(raw);
    if (!prepared) return prepared.error();
    auto& state = *prepared;
    const auto derived = detail::as_chars(state->raw.data() + ed25519_seed_bytes, ed25519_public_key_bytes);
    const auto given = detail::as_chars(raw + ed25519_seed_bytes, ed25519_public_key_bytes);
    if (derived != given)
        return error{errc::invalid_value, "signing_key",
                     "the public half (bytes 33 to 64) is not the public key of the private half (bytes 1 to 32)"};
    return asymmetric_signing_key(std::move(state));
}

[[nodiscard]] inline asymmetric_signing_key parse_asymmetric_signing_key(std::string_view text) {
    return try_parse_asymmetric_signing_key(text).value();
}

[[nodiscard]] inline result<asymmetric_signing_key> try_parse_asymmetric_signing_key(const secret& s) {
    return try_parse_asymmetric_signing_key(std::string_view(s.reveal()));
}

// A new key pair from 32 bytes of the host's secure random source, a callable
// `void(unsigned char* out, std::size_t n)` such as keyhook::crypto::openssl_random.
// The drawn seed is cleansed. Whatever the source throws becomes the error of
// the try_ form (a keyhook::exception's own error, else errc::host_failure at
// "random").
template <class RandomSource>
[[nodiscard]] result<asymmetric_signing_key> try_generate_asymmetric_signing_key(RandomSource&& random) {
    std::array<unsigned char, ed25519_seed_bytes> seed{};
    struct cleanse_on_exit {
        std::array<unsigned char, ed25519_seed_bytes>& s;
        ~cleanse_on_exit() { OPENSSL_cleanse(s.data(), s.size()); }
    } guard{seed};
    if (auto e = detail::draw_random(random, seed.data(), seed.size())) return std::move(*e);
    return try_asymmetric_signing_key_from_seed(seed.data(), seed.size());
}

template <class RandomSource>
[[nodiscard]] asymmetric_signing_key generate_asymmetric_signing_key(RandomSource&& random) {
    return try_generate_asymmetric_signing_key(std::forward<RandomSource>(random)).value();
}

namespace detail {
// Ed25519 of `message` into `sig` with the prepared key; the OpenSSL step that
// failed, or nullptr. A context per call, as OpenSSL 3.0's Ed25519 is one-shot.
inline const char* ed25519_sign_into(EVP_PKEY* key, std::string_view message, ed25519_signature& sig) noexcept {
    const std::unique_ptr<EVP_MD_CTX, evp_md_ctx_free> ctx(EVP_MD_CTX_new());
    if (!ctx) return "EVP_MD_CTX_new";
    if (EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key) != 1) return "EVP_DigestSignInit";
    std::size_t n = sig.size();
    if (EVP_DigestSign(ctx.get(), sig.data(), &n, reinterpret_cast<const unsigned char*>(message.data()),
                       message.size()) != 1 ||
        n != sig.size())
        return "EVP_DigestSign";
    return nullptr;
}

// 1: `sig` is a valid signature of `message`; 0: it is not; -1: OpenSSL
// failed before it could tell, `failed` naming the step.
inline int ed25519_verify_checked(EVP_PKEY* key, std::string_view message, const unsigned char* sig,
                                  std::size_t sig_size, const char*& failed) noexcept {
    if (sig_size != ed25519_signature_bytes) return 0;
    const std::unique_ptr<EVP_MD_CTX, evp_md_ctx_free> ctx(EVP_MD_CTX_new());
    if (!ctx) return failed = "EVP_MD_CTX_new", -1;
    if (EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key) != 1)
        return failed = "EVP_DigestVerifyInit", -1;
    const int verdict = EVP_DigestVerify(ctx.get(), sig, sig_size,
                                         reinterpret_cast<const unsigned char*>(message.data()), message.size());
    // A bad signature leaves an entry in OpenSSL's error queue: not the host's concern.
    if (verdict != 1) ERR_clear_error();
    return verdict == 1 ? 1 : 0;
}
}  // namespace detail

// Ed25519 (RFC 8032, pure: the message is not pre-hashed) of `message`.
// Throws keyhook::exception (path "signing_key") if OpenSSL fails.
[[nodiscard]] inline ed25519_signature ed25519_sign(const asymmetric_signing_key& key, std::string_view message) {
    ed25519_signature sig{};
    if (const char* failed = detail::ed25519_sign_into(key.native_handle(), message, sig))
        throw exception(detail::openssl_failure(errc::invalid_signature, "signing_key", failed));
    return sig;
}

// Whether `sig` is a valid Ed25519 signature of `message` under `key`. A
// signature of another length is simply not valid. Throws keyhook::exception
// (path "public_key") if OpenSSL fails before it can tell.
[[nodiscard]] inline bool ed25519_verify(const public_key& key, std::string_view message, const unsigned char* sig,
                                         std::size_t sig_size) {
    const char* failed = "";
    const int verdict = detail::ed25519_verify_checked(key.native_handle(), message, sig, sig_size, failed);
    if (verdict < 0) throw exception(detail::openssl_failure(errc::invalid_signature, "public_key", failed));
    return verdict == 1;
}

[[nodiscard]] inline bool ed25519_verify(const public_key& key, std::string_view message,
                                         const ed25519_signature& sig) {
    return ed25519_verify(key, message, sig.data(), sig.size());
}

namespace detail {
// `id.timestamp.body`, in one buffer: Ed25519 reads its message twice, so it
// cannot be streamed as HMAC is.
inline std::string signed_content(std::string_view id, std::string_view unix_time, std::string_view body) {
    std::string m;
    m.reserve(id.size() + unix_time.size() + body.size() + 2);
    m.append(id).append(1, '.').append(unix_time).append(1, '.').append(body);
    return m;
}

// The base64 part of a v1a signature of `content`, into `out`; the error of a
// failed OpenSSL call otherwise.
inline std::optional<error> asymmetric_signature_base64(const asymmetric_signing_key& key, std::string_view content,
                                                        ed25519_base64& out) {
    ed25519_signature sig{};
    if (const char* failed = ed25519_sign_into(key.native_handle(), content, sig))
        return openssl_failure(errc::invalid_signature, webhook_signature_header, failed);
    EVP_EncodeBlock(out.data(), sig.data(), static_cast<int>(sig.size()));
    return std::nullopt;
}
}  // namespace detail

// "v1a,<base64>" for one key. `signed_at` is written in whole seconds (rounded
// down), as the webhook-timestamp header carries it.
[[nodiscard]] inline std::string compute_asymmetric_signature(const asymmetric_signing_key& key,
                                                              std::string_view webhook_id, timestamp signed_at,
                                                              std::string_view body) {
    const std::string unix_time = std::to_string(detail::unix_seconds(signed_at));
    detail::ed25519_base64 b64{};
    if (auto e = detail::asymmetric_signature_base64(key, detail::signed_content(webhook_id, unix_time, body), b64))
        throw exception(std::move(*e));
    std::string out;
    out.reserve(asymmetric_signature_version.size() + 1 + b64.size());
    out.append(asymmetric_signature_version).append(1, ',').append(detail::as_view(b64));
    return out;
}

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
[[nodiscard]] inline result<http_headers> try_signature_headers(const signing_keys& keys, std::string_view webhook_id,
                                                                timestamp now, std::string_view body) {
    if (keys.empty()) return error{errc::missing_member, "signingSecret", "no signing secret or signing key given"};
    std::string signatures;
    std::string unix_time = std::to_string(detail::unix_seconds(now));
    if (!keys.secrets.empty()) {
        // The v1 part, with all of B1's checks.
        auto symmetric = try_signature_headers(keys.secrets, webhook_id, now, body);
        if (!symmetric) return symmetric.error();
        for (auto& h : *symmetric)
            if (header_name_equal(h.name, webhook_signature_header)) signatures = std::move(h.value);
    } else if (!detail::valid_webhook_id(webhook_id)) {
        return detail::invalid_webhook_id(webhook_id);
    }
    if (!keys.asymmetric.empty()) {
        const std::string content = detail::signed_content(webhook_id, unix_time, body);
        for (const auto& k : keys.asymmetric) {
            detail::ed25519_base64 b64{};
            if (auto e = detail::asymmetric_signature_base64(k, content, b64)) return std::move(*e);
            if (!signatures.empty()) signatures += ' ';
            signatures.append(asymmetric_signature_version).append(1, ',').append(detail::as_view(b64));
        }
    }
    return http_headers{{std::string(webhook_id_header), std::string(webhook_id), false},
                        {std::string(webhook_timestamp_header), std::move(unix_time), false},
                        {std::string(webhook_signature_header), std::move(signatures), false}};
}

[[nodiscard]] inline http_headers signature_headers(const signing_keys& keys, std::string_view webhook_id,
                                                    timestamp now, std::string_view body) {
    return try_signature_headers(keys, webhook_id, now, body).value();
}

// `request` with the three headers set from its body (earlier ones replaced).
[[nodiscard]] inline result<http_request> try_sign_request(http_request request, const signing_keys& keys,
                                                           std::string_view webhook_id, timestamp now) {
    auto headers = try_signature_headers(keys, webhook_id, now, request.body);
    if (!headers) return headers.error();
    for (auto& h : *headers) detail::set_header(request.headers, h.name, std::move(h.value));
    return request;
}

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
[[nodiscard]] inline result<verified_webhook> try_verify_signature(
    const verification_keys& keys, const http_headers& headers, std::string_view body, timestamp now,
    std::chrono::seconds tolerance = default_signature_tolerance) {
    if (keys.empty()) return error{errc::missing_member, "signingSecret", "no signing secret or public key given"};
    auto envelope = detail::check_signed_envelope(headers, now, tolerance);
    if (!envelope) return envelope.error();
    const std::string_view id = envelope->id;
    const std::string_view unix_time = envelope->unix_time;

    detail::expected_v1_signatures expected;
    if (auto e = expected.compute(keys.secrets, id, unix_time, body)) return std::move(*e);

    // Several entries are expected to be few; the content is built once, on first need.
    std::string content;
    bool matched = false;
    std::size_t candidates = 0, asymmetric = 0;
    std::optional<error> failure;
    detail::for_each_signature_entry(envelope->signatures, [&](std::string_view version, std::string_view value) {
        if (version == signature_version && !expected.empty()) {
            ++candidates;
            // No early exit: every v1 candidate is compared against every secret.
            matched = expected.matches(value) || matched;
        } else if (version == asymmetric_signature_version && !keys.public_keys.empty()) {
            ++candidates;
            if (++asymmetric > max_asymmetric_signatures) {
                failure =
                    error{errc::invalid_signature, std::string(webhook_signature_header),
                          "more than " + std::to_string(max_asymmetric_signatures) + " v1a signatures in the header"};
                return false;
            }
            if (matched) return true;  // public data: no secret to protect by going on
            auto sig = try_base64_decode(value);
            if (!sig || sig->size() != ed25519_signature_bytes) return true;
            if (content.empty()) content = detail::signed_content(id, unix_time, body);
            for (const auto& k : keys.public_keys) {
                const char* failed = "";
                const int verdict = detail::ed25519_verify_checked(k.native_handle(), content,
                                                                   reinterpret_cast<const unsigned char*>(sig->data()),
                                                                   sig->size(), failed);
                if (verdict < 0) {
                    failure = detail::openssl_failure(errc::invalid_signature, webhook_signature_header, failed);
                    return false;
                }
                if (verdict == 1) {
                    matched = true;
                    break;
                }
            }
        }
        return true;
    });
    if (failure) return std::move(*failure);
    const std::string versions = !expected.empty() && !keys.public_keys.empty() ? "v1 or v1a"
                                 : expected.empty()                             ? "v1a"
                                                                                : "v1";
    if (candidates == 0)
        return error{errc::invalid_signature, std::string(webhook_signature_header),
                     "no " + versions + " signature in the header"};
    if (!matched)
        return error{errc::invalid_signature, std::string(webhook_signature_header),
                     candidates == 1
                         ? "the " + versions + " signature does not match"
                         : "none of the " + std::to_string(candidates) + " " + versions + " signatures matches"};
    return verified_webhook{std::string(id), envelope->signed_at};
}

[[nodiscard]] inline result<verified_webhook> try_verify_signature(
    const public_key& key, const http_headers& headers, std::string_view body, timestamp now,
    std::chrono::seconds tolerance = default_signature_tolerance) {
    return try_verify_signature(verification_keys{{}, {key}}, headers, body, now, tolerance);
}

[[nodiscard]] inline verified_webhook verify_signature(const verification_keys& keys, const http_headers& headers,
                                                       std::string_view body, timestamp now,
                                                       std::chrono::seconds tolerance = default_signature_tolerance) {
    return try_verify_signature(keys, headers, body, now, tolerance).value();
}

[[nodiscard]] inline verified_webhook verify_signature(const public_key& key, const http_headers& headers,
                                                       std::string_view body, timestamp now,
                                                       std::chrono::seconds tolerance = default_signature_tolerance) {
    return try_verify_signature(key, headers, body, now, tolerance).value();
}

[[nodiscard]] inline result<verified_webhook> try_verify_request(
    const verification_keys& keys, const http_request& request, timestamp now,
    std::chrono::seconds tolerance = default_signature_tolerance) {
    return try_verify_signature(keys, request.headers, request.body, now, tolerance);
}

[[nodiscard]] inline verified_webhook verify_request(const verification_keys& keys, const http_request& request,
                                                     timestamp now,
                                                     std::chrono::seconds tolerance = default_signature_tolerance) {
    return try_verify_request(keys, request, now, tolerance).value();
}

// Reads a sender's key list, what a webhook's signing secret holds: space-
// separated "whsec_..." secrets (24 to 64 bytes, B1) and "whsk_..." signing
// keys, in any mix. Refused (path "signingSecret", the entry's position in
// the message when there are several): the core's checks
// (detail::check_signing_keys) and a whsk_ key whose halves do not match.
[[nodiscard]] inline result<signing_keys> try_parse_signing_keys(std::string_view text) {
    if (auto e = keyhook::detail::check_signing_keys(text, "signingSecret")) return std::move(*e);
    signing_keys keys;
    std::size_t count = 0;
    keyhook::detail::for_each_signing_key(text, [&](std::string_view, std::size_t) { ++count; });
    std::optional<error> failed;
    keyhook::detail::for_each_signing_key(text, [&](std::string_view entry, std::size_t index) {
        if (failed) return;
        const std::string which = count > 1 ? "key " + std::to_string(index + 1) + ": " : std::string();
        if (entry.substr(0, asymmetric_signing_key_prefix.size()) == asymmetric_signing_key_prefix) {
            auto k = try_parse_asymmetric_signing_key(entry);
            if (!k)
                failed = error{k.error().code, "signingSecret", which + k.error().message};
            else
                keys.asymmetric.push_back(std::move(*k));
        } else {
            auto s = try_parse_signing_secret(entry, signing_key_use::sign);
            if (!s)
                failed = error{s.error().code, "signingSecret", which + s.error().message};
            else
                keys.secrets.push_back(std::move(*s));
        }
    });
    if (failed) return std::move(*failed);
    return keys;
}

[[nodiscard]] inline result<signing_keys> try_parse_signing_keys(const secret& s) {
    return try_parse_signing_keys(std::string_view(s.reveal()));
}

// Reads a receiver's key list: whitespace-separated "whsec_..." secrets and
// "whpk_..." public keys, in any mix (a receiver during a rotation between
// schemes holds both). Refused (path "signing_keys[i]"): an entry that is
// neither, with the reason of its parser; a "whsk_" signing key (a receiver
// must not hold one); an empty list.
[[nodiscard]] inline result<verification_keys> try_parse_verification_keys(std::string_view text) {
    verification_keys keys;
    std::size_t index = 0;
    std::size_t i = 0;
    while (i < text.size()) {
        const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
        while (i < text.size() && is_space(text[i])) ++i;
        std::size_t j = i;
        while (j < text.size() && !is_space(text[j])) ++j;
        if (j == i) break;
        const auto entry = text.substr(i, j - i);
        const std::string path = keyhook::detail::path_index("signing_keys", index);
        if (entry.substr(0, public_key_prefix.size()) == public_key_prefix ||
            entry.substr(0, asymmetric_signing_key_prefix.size()) == asymmetric_signing_key_prefix) {
            auto k = try_parse_public_key(entry);
            if (!k) return error{k.error().code, path, k.error().message};
            keys.public_keys.push_back(std::move(*k));
        } else {
            auto s = try_parse_signing_secret(entry);
            if (!s) return error{s.error().code, path, s.error().message};
            keys.secrets.push_back(std::move(*s));
        }
        ++index;
        i = j;
    }
    if (keys.empty()) return error{errc::missing_member, "signing_keys", "no whsec_ secret or whpk_ public key given"};
    return keys;
}

}  // namespace keyhook::crypto
