// keyhook::crypto: definitions of asymmetric.hpp (v1a, B3).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "keyhook/base64.hpp"
#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/impl/signing.ipp"
#include "keyhook/detail/signing_keys.hpp"
#include "keyhook/detail/wipe.hpp"
#include "keyhook/error.hpp"
#include "keyhook/http.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook::crypto {

namespace detail {

struct evp_pkey_free {
    void operator()(EVP_PKEY* p) const noexcept { EVP_PKEY_free(p); }
};
struct evp_md_ctx_free {
    void operator()(EVP_MD_CTX* p) const noexcept { EVP_MD_CTX_free(p); }
};

// Ed25519 signatures and their base64 (88 characters and EVP_EncodeBlock's terminator).
using ed25519_base64 = std::array<unsigned char, (ed25519_signature_bytes + 2) / 3 * 4 + 1>;

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
// its EVP_PKEY built once (signing at the floor).
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

// Decodes "<prefix><base64>" into exactly `size` bytes, into `out` (wiped
// by its owner on every path); errors name `where` and never quote the text
// (it may be a private key).
inline std::optional<error> decode_prefixed_key(std::string_view text, std::string_view prefix, std::size_t size,
                                                std::string_view where, keyhook::detail::wiped_string& out) {
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
    out.get() = std::move(*decoded);
    if (out.get().size() != size)
        return error{errc::out_of_range, std::string(where),
                     "the key is " + std::to_string(out.get().size()) + " bytes; " + std::string(prefix) +
                         " keys are " + std::to_string(size)};
    return std::nullopt;
}

}  // namespace detail

KEYHOOK_CRYPTO_INLINE std::string public_key::to_string() const {
    return detail::prefixed_base64(public_key_prefix, state_->raw.data(), state_->raw.size());
}

KEYHOOK_CRYPTO_INLINE const std::array<unsigned char, ed25519_public_key_bytes>& public_key::bytes() const noexcept {
    return state_->raw;
}

KEYHOOK_CRYPTO_INLINE evp_pkey_st* public_key::native_handle() const noexcept { return state_->pkey.get(); }

KEYHOOK_CRYPTO_INLINE bool public_key::is_equal(const public_key& a, const public_key& b) noexcept {
    return a.bytes() == b.bytes();
}
KEYHOOK_CRYPTO_INLINE std::ostream& public_key::print_to(std::ostream& os, const public_key& k) {
    return os << "public_key(" << k.to_string() << ')';
}

KEYHOOK_CRYPTO_INLINE result<public_key> try_public_key_from_bytes(const unsigned char* bytes, std::size_t n) {
    if (n != ed25519_public_key_bytes)
        return error{errc::out_of_range, "public_key",
                     "the key is " + std::to_string(n) + " bytes; Ed25519 public keys are 32"};
    auto state = detail::make_public_state(bytes);
    if (!state)
        return detail::openssl_failure(errc::invalid_value, "public_key", "EVP_PKEY_new_raw_public_key(ED25519)");
    return public_key(std::move(state));
}

KEYHOOK_CRYPTO_INLINE result<public_key> try_parse_public_key(std::string_view text) {
    keyhook::detail::wiped_string bytes;
    if (auto e = detail::decode_prefixed_key(text, public_key_prefix, ed25519_public_key_bytes, "public_key", bytes))
        return std::move(*e);
    return try_public_key_from_bytes(reinterpret_cast<const unsigned char*>(bytes.get().data()), bytes.get().size());
}

KEYHOOK_CRYPTO_INLINE std::string asymmetric_signing_key::reveal() const {
    return detail::prefixed_base64(asymmetric_signing_key_prefix, state_->raw.data(), state_->raw.size());
}

KEYHOOK_CRYPTO_INLINE keyhook::crypto::public_key asymmetric_signing_key::public_key() const {
    const auto* raw = state_->raw.data() + ed25519_seed_bytes;
    return try_public_key_from_bytes(raw, ed25519_public_key_bytes).value();
}

KEYHOOK_CRYPTO_INLINE evp_pkey_st* asymmetric_signing_key::native_handle() const noexcept { return state_->pkey.get(); }

KEYHOOK_CRYPTO_INLINE bool asymmetric_signing_key::is_equal(const asymmetric_signing_key& a, const asymmetric_signing_key& b) noexcept {
    return constant_time_equal(detail::as_chars(a.state_->raw.data(), a.state_->raw.size()),
                               detail::as_chars(b.state_->raw.data(), b.state_->raw.size()));
}

KEYHOOK_CRYPTO_INLINE std::ostream& asymmetric_signing_key::print_to(std::ostream& os, const asymmetric_signing_key& k) {
    return os << "asymmetric_signing_key(" << k.masked() << ')';
}

KEYHOOK_CRYPTO_INLINE result<asymmetric_signing_key> try_asymmetric_signing_key_from_seed(const unsigned char* seed,
                                                                                          std::size_t n) {
    if (n != ed25519_seed_bytes)
        return error{errc::out_of_range, "signing_key",
                     "the seed is " + std::to_string(n) + " bytes; Ed25519 seeds are 32"};
    auto state = detail::make_private_state(seed);
    if (!state) return state.error();
    return asymmetric_signing_key(std::move(*state));
}

KEYHOOK_CRYPTO_INLINE result<asymmetric_signing_key> try_parse_asymmetric_signing_key(std::string_view text) {
    keyhook::detail::wiped_string bytes;
    if (auto e = detail::decode_prefixed_key(text, asymmetric_signing_key_prefix, asymmetric_signing_key_bytes,
                                             "signing_key", bytes))
        return std::move(*e);
    const auto* raw = reinterpret_cast<const unsigned char*>(bytes.get().data());
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

// A receiver's public keys, for the verification loop of signing.ipp.
struct public_key_verifier {
    static constexpr std::string_view version = asymmetric_signature_version;
    static constexpr std::size_t max_entries = max_asymmetric_signatures;
    const std::vector<public_key>& keys;

    [[nodiscard]] bool empty() const noexcept { return keys.empty(); }
    // 1: the base64 `value` is a valid signature of the content under one of
    // the keys; 0: it is not (or is no signature at all); -1: OpenSSL failed.
    template <class Content>
    int verify(std::string_view value, Content&& content_of, const char*& failed) const {
        const auto sig = try_base64_decode(value);
        if (!sig || sig->size() != ed25519_signature_bytes) return 0;
        const std::string& content = content_of();
        for (const auto& k : keys) {
            const int verdict = ed25519_verify_checked(
                k.native_handle(), content, reinterpret_cast<const unsigned char*>(sig->data()), sig->size(), failed);
            if (verdict != 0) return verdict;
        }
        return 0;
    }
};
}  // namespace detail

KEYHOOK_CRYPTO_INLINE ed25519_signature ed25519_sign(const asymmetric_signing_key& key, std::string_view message) {
    ed25519_signature sig{};
    if (const char* failed = detail::ed25519_sign_into(key.native_handle(), message, sig))
        throw exception(detail::openssl_failure(errc::invalid_signature, "signing_key", failed));
    return sig;
}

KEYHOOK_CRYPTO_INLINE bool ed25519_verify(const public_key& key, std::string_view message, const unsigned char* sig,
                                          std::size_t sig_size) {
    const char* failed = "";
    const int verdict = detail::ed25519_verify_checked(key.native_handle(), message, sig, sig_size, failed);
    if (verdict < 0) throw exception(detail::openssl_failure(errc::invalid_signature, "public_key", failed));
    return verdict == 1;
}

KEYHOOK_CRYPTO_INLINE std::string compute_asymmetric_signature(const asymmetric_signing_key& key,
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

KEYHOOK_CRYPTO_INLINE result<http_headers> try_signature_headers(const signing_keys& keys, std::string_view webhook_id,
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
    return detail::signed_headers(webhook_id, std::move(unix_time), std::move(signatures));
}

KEYHOOK_CRYPTO_INLINE result<http_request> try_sign_request(http_request request, const signing_keys& keys,
                                                            std::string_view webhook_id, timestamp now) {
    auto headers = try_signature_headers(keys, webhook_id, now, request.body);
    if (!headers) return headers.error();
    return detail::with_headers(std::move(request), std::move(*headers));
}

KEYHOOK_CRYPTO_INLINE result<verified_webhook> try_verify_signature(const verification_keys& keys,
                                                                    const http_headers& headers, std::string_view body,
                                                                    timestamp now, std::chrono::seconds tolerance) {
    if (keys.empty()) return error{errc::missing_member, "signingSecret", "no signing secret or public key given"};
    return detail::verify_entries(keys.secrets, detail::public_key_verifier{keys.public_keys}, headers, body, now,
                                  tolerance);
}

KEYHOOK_CRYPTO_INLINE result<signing_keys> try_parse_signing_keys(std::string_view text) {
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

KEYHOOK_CRYPTO_INLINE result<verification_keys> try_parse_verification_keys(std::string_view text) {
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
