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

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/params.h>

#include "keyhook/base64.hpp"
#include "keyhook/detail/signing_secret.hpp"
#include "keyhook/detail/wipe.hpp"
#include "keyhook/error.hpp"
#include "keyhook/http.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/timestamps.hpp"

#if OPENSSL_VERSION_MAJOR < 3
#error "keyhook::crypto needs OpenSSL 3.0 or later (EVP_MAC)"
#endif

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

struct evp_mac_free {
    void operator()(EVP_MAC* p) const noexcept { EVP_MAC_free(p); }
};
struct evp_mac_ctx_free {
    void operator()(EVP_MAC_CTX* p) const noexcept { EVP_MAC_CTX_free(p); }
};

// An OpenSSL call that failed, as an error (issue 12: a try_ function returns
// it, never throws). OpenSSL's error queue is cleared: the host's next
// OpenSSL call must not report keyhook's failure.
inline error openssl_failure(errc code, std::string_view path, std::string_view step) {
    ERR_clear_error();
    return error{code, std::string(path), "OpenSSL " + std::string(step) + " failed"};
}

using sha256_digest = std::array<unsigned char, 32>;
// Padded base64 of a digest (44 characters) and EVP_EncodeBlock's terminator.
using sha256_base64 = std::array<unsigned char, 45>;

// The prepared form of an HMAC-SHA256 key (issue 14 item 3): a context keyed
// once, so a signature costs no MAC fetch, no digest fetch and no keying. It
// is made on first use, not when the key is read, so a parsed key list costs
// no OpenSSL memory (some 2 KB a key) until a key signs or verifies (J3).
// `pristine` never changes once set and may be duplicated from any thread at
// once; `scratch` is touched only by the call that holds `busy`, which
// re-initialises it with the same key, so the usual call makes no context.
struct hmac_sha256_key {
    std::atomic<EVP_MAC_CTX*> pristine{nullptr};
    EVP_MAC_CTX* scratch = nullptr;
    std::atomic<bool> busy{false};

    hmac_sha256_key() = default;
    hmac_sha256_key(const hmac_sha256_key&) = delete;
    hmac_sha256_key& operator=(const hmac_sha256_key&) = delete;
    // OpenSSL cleanses its copy of the key when the contexts are freed.
    ~hmac_sha256_key() {
        EVP_MAC_CTX_free(pristine.load());
        EVP_MAC_CTX_free(scratch);
    }
};

// The pristine context of `key`, made from `bytes` by the first caller (a
// caller that loses the race frees its own); the OpenSSL step that failed, or
// nullptr.
inline const char* pristine_context(hmac_sha256_key& key, const std::string& bytes, EVP_MAC_CTX*& out) noexcept {
    out = key.pristine.load(std::memory_order_acquire);
    if (out != nullptr) return nullptr;
    const std::unique_ptr<EVP_MAC, evp_mac_free> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
    if (!mac) return "EVP_MAC_fetch(HMAC)";
    std::unique_ptr<EVP_MAC_CTX, evp_mac_ctx_free> made(EVP_MAC_CTX_new(mac.get()));
    if (!made) return "EVP_MAC_CTX_new";
    char digest_name[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0),
                                 OSSL_PARAM_construct_end()};
    if (EVP_MAC_init(made.get(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), params) != 1)
        return "EVP_MAC_init";
    EVP_MAC_CTX* expected = nullptr;
    if (key.pristine.compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel))
        out = made.release();
    else
        out = expected;
    return nullptr;
}

// "<prefix>" + padded base64 of `n` bytes, encoded in place: a temporary
// holding the base64 of a key would be released unwiped.
inline std::string prefixed_base64(std::string_view prefix, const unsigned char* bytes, std::size_t n) {
    std::string out(prefix.size() + (n + 2) / 3 * 4 + 1, '\0');
    prefix.copy(out.data(), prefix.size());
    const int written =
        EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data() + prefix.size()), bytes, static_cast<int>(n));
    out.resize(prefix.size() + static_cast<std::size_t>(written));
    return out;
}

// The one way to build a signing_secret from key bytes (already checked),
// and to reach its prepared key.
struct signing_secret_access {
    static result<signing_secret> make(std::string key);
    static hmac_sha256_key* prepared(const signing_secret& s) noexcept;
};

}  // namespace detail

// A webhook signing secret: the HMAC key, written "whsec_" + base64(key),
// and its prepared OpenSSL context (shared by copies, never changed).
// Printing, JSON and comparison never show or leak the key.
class signing_secret {
public:
    // The written form, "whsec_" + padded base64. Call only to store the secret
    // or to hand it to the receiver.
    [[nodiscard]] std::string reveal() const {
        const auto& k = key_.reveal();
        return detail::prefixed_base64(signing_secret_prefix, reinterpret_cast<const unsigned char*>(k.data()),
                                       k.size());
    }
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
    friend std::ostream& operator<<(std::ostream& os, const signing_secret& s) {
        return os << "signing_secret(" << s.masked() << ')';
    }
    friend void to_json(nlohmann::json& j, const signing_secret& s) { j = s.masked(); }
    friend void to_json(nlohmann::ordered_json& j, const signing_secret& s) { j = s.masked(); }

private:
    // Marked a signing key, so that printing key() shows none of it either (B1).
    signing_secret(std::string key, std::shared_ptr<detail::hmac_sha256_key> prepared) noexcept
        : key_(std::move(key), secret_kind::signing_key), prepared_(std::move(prepared)) {}
    secret key_;
    // Null only in a moved-from secret, which then signs nothing (an error).
    // Shared by copies; filled on first use (its members are atomic).
    std::shared_ptr<detail::hmac_sha256_key> prepared_;

    friend struct detail::signing_secret_access;
};

inline result<signing_secret> detail::signing_secret_access::make(std::string key) {
    keyhook::detail::wiped_string bytes(std::move(key));  // wiped if the allocation fails
    auto prepared = std::make_shared<hmac_sha256_key>();
    return signing_secret(std::move(bytes.get()), std::move(prepared));
}

inline detail::hmac_sha256_key* detail::signing_secret_access::prepared(const signing_secret& s) noexcept {
    return s.prepared_.get();
}

// Reads "whsec_<base64>" or the bare base64 part. For verifying (the
// default) a key of any non-empty length is read; for signing, 24 to 64 bytes
// (errc::out_of_range otherwise). Errors (path "signingSecret") say what is
// wrong without quoting the text. No OpenSSL call: the key's context is made
// when it first signs or verifies.
[[nodiscard]] inline result<signing_secret> try_parse_signing_secret(std::string_view text,
                                                                     signing_key_use use = signing_key_use::verify) {
    auto key = keyhook::detail::try_decode_signing_secret(text, "signingSecret", use);
    if (!key) return key.error();
    return detail::signing_secret_access::make(std::move(*key));
}

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
// try_ function never throws (issue 12).
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

// HMAC-SHA256 of the concatenation of `parts` under a prepared key (`bytes`
// are its key, for the first use), streamed: the body is not copied. Returns
// the OpenSSL step that failed, or nullptr. Makes no context unless another
// thread holds the scratch one, when it duplicates the pristine one.
inline const char* hmac_sha256(hmac_sha256_key* key, const std::string& bytes,
                               std::initializer_list<std::string_view> parts, sha256_digest& out) noexcept {
    if (key == nullptr) return "HMAC (a moved-from signing_secret has no key)";
    EVP_MAC_CTX* pristine = nullptr;
    if (const char* failed = pristine_context(*key, bytes, pristine)) return failed;
    struct release_scratch {
        hmac_sha256_key* held = nullptr;
        ~release_scratch() {
            if (held != nullptr) held->busy.store(false, std::memory_order_release);
        }
    } lease;
    std::unique_ptr<EVP_MAC_CTX, evp_mac_ctx_free> own;
    EVP_MAC_CTX* ctx = nullptr;
    if (!key->busy.exchange(true, std::memory_order_acquire)) {
        lease.held = key;
        if (key->scratch == nullptr && (key->scratch = EVP_MAC_CTX_dup(pristine)) == nullptr) return "EVP_MAC_CTX_dup";
        ctx = key->scratch;
        // No key and no parameters: back to the keyed state, nothing fetched.
        if (EVP_MAC_init(ctx, nullptr, 0, nullptr) != 1) return "EVP_MAC_init";
    } else {
        own.reset(EVP_MAC_CTX_dup(pristine));
        if (!own) return "EVP_MAC_CTX_dup";
        ctx = own.get();
    }
    for (const auto part : parts)
        if (EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(part.data()), part.size()) != 1)
            return "EVP_MAC_update";
    std::size_t written = 0;
    if (EVP_MAC_final(ctx, out.data(), &written, out.size()) != 1 || written != out.size()) return "EVP_MAC_final";
    return nullptr;
}

// Whole Unix seconds, rounded down (the header has no fraction).
inline std::int64_t unix_seconds(timestamp t) noexcept {
    return std::chrono::floor<std::chrono::seconds>(t).time_since_epoch().count();
}

// The text of a base64 buffer filled by EVP_EncodeBlock, without its terminator.
template <std::size_t N>
std::string_view as_view(const std::array<unsigned char, N>& b) noexcept {
    return {reinterpret_cast<const char*>(b.data()), N - 1};
}

// The base64 part of a v1 signature, into `out`, for an id and a timestamp
// already written; the error of a failed OpenSSL call otherwise.
inline std::optional<error> v1_signature_base64(const signing_secret& s, std::string_view id,
                                                std::string_view unix_time, std::string_view body, sha256_base64& out) {
    sha256_digest mac{};
    if (const char* failed =
            hmac_sha256(signing_secret_access::prepared(s), s.key().reveal(), {id, ".", unix_time, ".", body}, mac))
        return openssl_failure(errc::invalid_signature, webhook_signature_header, failed);
    EVP_EncodeBlock(out.data(), mac.data(), static_cast<int>(mac.size()));
    return std::nullopt;
}

// The secrets a call signs or verifies with: one, or a vector's, never
// copied (a copy would duplicate the key bytes and cost an allocation).
class secret_list {
public:
    secret_list(const std::vector<signing_secret>& v) noexcept : first_(v.data()), count_(v.size()) {}  // NOLINT
    secret_list(const signing_secret& s) noexcept : first_(&s), count_(1) {}                            // NOLINT
    [[nodiscard]] const signing_secret* begin() const noexcept { return first_; }
    [[nodiscard]] const signing_secret* end() const noexcept { return first_ + count_; }
    [[nodiscard]] std::size_t size() const noexcept { return count_; }
    [[nodiscard]] bool empty() const noexcept { return count_ == 0; }

private:
    const signing_secret* first_;
    std::size_t count_;
};

// The expected v1 signatures of one delivery, one per secret; inline for up
// to 4 (a receiver mid-rotation holds 2), so verifying allocates none.
class expected_v1_signatures {
public:
    expected_v1_signatures() = default;
    expected_v1_signatures(const expected_v1_signatures&) = delete;
    expected_v1_signatures& operator=(const expected_v1_signatures&) = delete;

    std::optional<error> compute(secret_list secrets, std::string_view id, std::string_view unix_time,
                                 std::string_view body) {
        if (secrets.size() > inline_.size()) more_.resize(secrets.size());
        data_ = secrets.size() > inline_.size() ? more_.data() : inline_.data();
        size_ = 0;
        for (const auto& s : secrets)
            if (auto e = v1_signature_base64(s, id, unix_time, body, data_[size_++])) return e;
        return std::nullopt;
    }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    // Whether the value of a "v1," entry is one of them. No early exit: it is
    // compared with every one, in constant time.
    [[nodiscard]] bool matches(std::string_view value) const noexcept {
        bool matched = false;
        for (std::size_t i = 0; i < size_; ++i) matched = constant_time_equal(value, as_view(data_[i])) || matched;
        return matched;
    }

private:
    std::array<sha256_base64, 4> inline_{};
    std::vector<sha256_base64> more_;
    sha256_base64* data_ = inline_.data();
    std::size_t size_ = 0;
};

// Calls f(version, value) for each space-separated "version,value" entry of a
// webhook-signature header (entries without a comma are skipped) until f
// returns false.
template <class F>
void for_each_signature_entry(std::string_view header, F&& f) {
    while (!header.empty()) {
        const auto space = header.find(' ');
        const std::string_view entry = header.substr(0, space);
        header = space == std::string_view::npos ? std::string_view() : header.substr(space + 1);
        const auto comma = entry.find(',');
        if (comma != std::string_view::npos && !f(entry.substr(0, comma), entry.substr(comma + 1))) return;
    }
}

// A webhook-id must be a plain header value: 1 to 256 visible ASCII characters.
inline constexpr std::size_t max_webhook_id_length = 256;
inline bool valid_webhook_id(std::string_view id) noexcept {
    if (id.empty() || id.size() > max_webhook_id_length) return false;
    for (const char c : id)
        if (c < 0x21 || c > 0x7E) return false;
    return true;
}

inline error invalid_webhook_id(std::string_view id) {
    return error{errc::invalid_header, std::string(webhook_id_header),
                 "expected 1 to " + std::to_string(max_webhook_id_length) + " visible ASCII characters, got " +
                     keyhook::detail::quote_input(id)};
}

// Replaces every header named `name` with one header `name: value`.
inline void set_header(http_headers& headers, std::string_view name, std::string value) {
    bool placed = false;
    for (auto it = headers.begin(); it != headers.end();) {
        if (!header_name_equal(it->name, name)) {
            ++it;
        } else if (!placed) {
            it->name = std::string(name);
            it->value = std::move(value);
            it->sensitive = false;
            placed = true;
            ++it;
        } else {
            it = headers.erase(it);
        }
    }
    if (!placed) headers.push_back(http_header{std::string(name), std::move(value), false});
}

}  // namespace detail

// "v1,<base64>" for one secret. `signed_at` is written in whole seconds
// (rounded down), as the webhook-timestamp header carries it. Any key length:
// this is also what a verifier computes (sending refuses short keys, below).
[[nodiscard]] inline std::string compute_signature(const signing_secret& s, std::string_view webhook_id,
                                                   timestamp signed_at, std::string_view body) {
    const std::string unix_time = std::to_string(detail::unix_seconds(signed_at));
    detail::sha256_base64 b64{};
    if (auto e = detail::v1_signature_base64(s, webhook_id, unix_time, body, b64)) throw exception(std::move(*e));
    std::string out;
    out.reserve(signature_version.size() + 1 + b64.size());
    out.append(signature_version).append(1, ',').append(detail::as_view(b64));
    return out;
}

namespace detail {
// The three headers for a request signed with every secret in `secrets`
// (more than one while a secret is being rotated: the receiver accepts any).
// Refused: an empty list (path "signingSecret"), a secret outside 24 to 64
// bytes (B1; errc::out_of_range, path "signingSecret") and a webhook id that
// is not a plain header value (path "webhook-id").
inline result<http_headers> signature_headers_of(secret_list secrets, std::string_view webhook_id, timestamp now,
                                                 std::string_view body) {
    if (secrets.empty()) return error{errc::missing_member, "signingSecret", "no signing secret given"};
    for (const auto& s : secrets)
        if (!can_sign_with(s))
            return error{errc::out_of_range, "signingSecret",
                         "the key is " + std::to_string(s.key_size()) + " bytes; expected " +
                             std::to_string(min_signing_key_bytes) + " to " + std::to_string(max_signing_key_bytes) +
                             " to sign with"};
    if (!detail::valid_webhook_id(webhook_id)) return detail::invalid_webhook_id(webhook_id);
    const std::string unix_time = std::to_string(detail::unix_seconds(now));
    std::string signatures;
    signatures.reserve(secrets.size() * (signature_version.size() + 1 + detail::sha256_base64{}.size()));
    for (const auto& s : secrets) {
        detail::sha256_base64 b64{};
        if (auto e = detail::v1_signature_base64(s, webhook_id, unix_time, body, b64)) return std::move(*e);
        if (!signatures.empty()) signatures += ' ';
        signatures.append(signature_version).append(1, ',').append(detail::as_view(b64));
    }
    return http_headers{{std::string(webhook_id_header), std::string(webhook_id), false},
                        {std::string(webhook_timestamp_header), unix_time, false},
                        {std::string(webhook_signature_header), std::move(signatures), false}};
}

inline result<http_request> sign_request_with(http_request request, secret_list secrets, std::string_view webhook_id,
                                              timestamp now) {
    auto headers = signature_headers_of(secrets, webhook_id, now, request.body);
    if (!headers) return headers.error();
    for (auto& h : *headers) set_header(request.headers, h.name, std::move(h.value));
    return request;
}
}  // namespace detail

[[nodiscard]] inline result<http_headers> try_signature_headers(const std::vector<signing_secret>& secrets,
                                                                std::string_view webhook_id, timestamp now,
                                                                std::string_view body) {
    return detail::signature_headers_of(secrets, webhook_id, now, body);
}

[[nodiscard]] inline result<http_headers> try_signature_headers(const signing_secret& s, std::string_view webhook_id,
                                                                timestamp now, std::string_view body) {
    return detail::signature_headers_of(s, webhook_id, now, body);
}

[[nodiscard]] inline http_headers signature_headers(const signing_secret& s, std::string_view webhook_id, timestamp now,
                                                    std::string_view body) {
    return try_signature_headers(s, webhook_id, now, body).value();
}

// `request` with the three headers set from its body (any earlier ones are
// replaced, so a retry is simply signed again with a fresh `now`).
[[nodiscard]] inline result<http_request> try_sign_request(http_request request,
                                                           const std::vector<signing_secret>& secrets,
                                                           std::string_view webhook_id, timestamp now) {
    return detail::sign_request_with(std::move(request), secrets, webhook_id, now);
}

[[nodiscard]] inline result<http_request> try_sign_request(http_request request, const signing_secret& s,
                                                           std::string_view webhook_id, timestamp now) {
    return detail::sign_request_with(std::move(request), s, webhook_id, now);
}

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

    friend bool operator==(const verified_webhook& a, const verified_webhook& b) {
        return a.id == b.id && a.signed_at == b.signed_at;
    }
    friend bool operator!=(const verified_webhook& a, const verified_webhook& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const verified_webhook& v) {
        return os << "verified_webhook(" << escaped(v.id) << ", " << format_timestamp(v.signed_at) << ')';
    }
};

namespace detail {

// The value of one signed header, found under its Standard Webhooks name or
// its older Svix name. Several occurrences (either name, any case) must carry
// the same value: a proxy reading one and keyhook another must not disagree,
// so a difference is refused (errc::invalid_header, path the webhook-* name).
// Not a secret: compared plainly.
inline result<const http_header*> find_signed_header(const http_headers& headers, std::string_view name,
                                                     std::string_view svix_name) {
    const http_header* found = nullptr;
    bool svix_seen = false, standard_seen = false;
    for (const auto& h : headers) {
        const bool standard = header_name_equal(h.name, name);
        if (!standard && !header_name_equal(h.name, svix_name)) continue;
        (standard ? standard_seen : svix_seen) = true;
        if (found == nullptr) {
            found = &h;
        } else if (found->value != h.value) {
            return error{errc::invalid_header, std::string(name),
                         svix_seen && standard_seen
                             ? std::string(name) + " and " + std::string(svix_name) + " are both present and differ"
                             : "the header is repeated with different values"};
        }
    }
    if (found == nullptr)
        return error{errc::missing_member, std::string(name),
                     "header is missing (nor is " + std::string(svix_name) + " present)"};
    return found;
}

// Unix seconds: 1 to 12 digits, nothing else (no sign, no fraction, no spaces).
inline constexpr std::size_t max_unix_time_digits = 12;
inline bool parse_unix_seconds(std::string_view s, std::int64_t& out) noexcept {
    if (s.empty() || s.size() > max_unix_time_digits) return false;
    std::int64_t v = 0;
    for (const char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
    }
    out = v;
    return true;
}
}  // namespace detail

namespace detail {
// The checked headers of a signed request (steps 1 to 3 of try_verify_signature, below,
// shared with v1a verification, B3).
struct signed_envelope {
    std::string_view id;
    std::string_view unix_time;
    std::string_view signatures;
    timestamp signed_at;
};

inline result<signed_envelope> check_signed_envelope(const http_headers& headers, timestamp now,
                                                     std::chrono::seconds tolerance) {
    if (tolerance < std::chrono::seconds::zero())
        return error{errc::invalid_value, "tolerance", "must not be negative"};
    const auto id = find_signed_header(headers, webhook_id_header, svix_id_header);
    if (!id) return id.error();
    const auto ts = find_signed_header(headers, webhook_timestamp_header, svix_timestamp_header);
    if (!ts) return ts.error();
    const auto sig = find_signed_header(headers, webhook_signature_header, svix_signature_header);
    if (!sig) return sig.error();
    if (!valid_webhook_id((*id)->value)) return invalid_webhook_id((*id)->value);
    std::int64_t signed_unix = 0;
    if (!parse_unix_seconds((*ts)->value, signed_unix))
        return error{errc::invalid_timestamp, std::string(webhook_timestamp_header),
                     "expected Unix seconds (1 to 12 digits), got " + keyhook::detail::quote_input((*ts)->value)};
    const std::int64_t now_unix = unix_seconds(now);
    const std::int64_t limit = tolerance.count();
    const bool old = signed_unix < now_unix;
    const std::int64_t apart = old ? now_unix - signed_unix : signed_unix - now_unix;
    if (apart > limit)
        return error{errc::timestamp_out_of_tolerance, std::string(webhook_timestamp_header),
                     "signed " + std::to_string(apart) + " s " + (old ? "before" : "after") + " now; at most " +
                         std::to_string(limit) + " s either way is accepted"};
    return signed_envelope{(*id)->value, (*ts)->value, (*sig)->value, timestamp{std::chrono::seconds{signed_unix}}};
}

}  // namespace detail

namespace detail {
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
inline result<verified_webhook> verify_with(secret_list secrets, const http_headers& headers, std::string_view body,
                                            timestamp now, std::chrono::seconds tolerance) {
    if (secrets.empty()) return error{errc::missing_member, "signingSecret", "no signing secret given"};
    // Steps 1 to 3, shared with v1a verification (asymmetric.hpp, B3).
    const auto envelope = detail::check_signed_envelope(headers, now, tolerance);
    if (!envelope) return envelope.error();

    detail::expected_v1_signatures expected;
    if (auto e = expected.compute(secrets, envelope->id, envelope->unix_time, body)) return std::move(*e);

    bool matched = false;
    std::size_t candidates = 0;
    detail::for_each_signature_entry(envelope->signatures, [&](std::string_view version, std::string_view value) {
        if (version != signature_version) return true;
        ++candidates;
        // Every candidate is compared, against every secret: no early exit.
        matched = expected.matches(value) || matched;
        return true;
    });
    if (candidates == 0)
        return error{errc::invalid_signature, std::string(webhook_signature_header), "no v1 signature in the header"};
    if (!matched)
        return error{errc::invalid_signature, std::string(webhook_signature_header),
                     candidates == 1 ? std::string("the v1 signature does not match")
                                     : "none of the " + std::to_string(candidates) + " v1 signatures matches"};
    return verified_webhook{std::string(envelope->id), envelope->signed_at};
}
}  // namespace detail

[[nodiscard]] inline result<verified_webhook> try_verify_signature(
    const std::vector<signing_secret>& secrets, const http_headers& headers, std::string_view body, timestamp now,
    std::chrono::seconds tolerance = default_signature_tolerance) {
    return detail::verify_with(secrets, headers, body, now, tolerance);
}

[[nodiscard]] inline result<verified_webhook> try_verify_signature(
    const signing_secret& s, const http_headers& headers, std::string_view body, timestamp now,
    std::chrono::seconds tolerance = default_signature_tolerance) {
    return detail::verify_with(s, headers, body, now, tolerance);
}

[[nodiscard]] inline verified_webhook verify_signature(const signing_secret& s, const http_headers& headers,
                                                       std::string_view body, timestamp now,
                                                       std::chrono::seconds tolerance = default_signature_tolerance) {
    return try_verify_signature(s, headers, body, now, tolerance).value();
}

[[nodiscard]] inline verified_webhook verify_signature(const std::vector<signing_secret>& secrets,
                                                       const http_headers& headers, std::string_view body,
                                                       timestamp now,
                                                       std::chrono::seconds tolerance = default_signature_tolerance) {
    return try_verify_signature(secrets, headers, body, now, tolerance).value();
}

// The same for a whole received request (its headers and body bytes).
[[nodiscard]] inline result<verified_webhook> try_verify_request(
    const signing_secret& s, const http_request& request, timestamp now,
    std::chrono::seconds tolerance = default_signature_tolerance) {
    return try_verify_signature(s, request.headers, request.body, now, tolerance);
}

[[nodiscard]] inline verified_webhook verify_request(const signing_secret& s, const http_request& request,
                                                     timestamp now,
                                                     std::chrono::seconds tolerance = default_signature_tolerance) {
    return try_verify_request(s, request, now, tolerance).value();
}

}  // namespace keyhook::crypto
