// keyhook::crypto: definitions of signing.hpp, and the verification loop that
// asymmetric.hpp's v1a verification shares.
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

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/params.h>

#include "keyhook/base64.hpp"
#include "keyhook/crypto/signing.hpp"
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

namespace detail {

struct evp_mac_free {
    void operator()(EVP_MAC* p) const noexcept { EVP_MAC_free(p); }
};
struct evp_mac_ctx_free {
    void operator()(EVP_MAC_CTX* p) const noexcept { EVP_MAC_CTX_free(p); }
};

// An OpenSSL call that failed, as an error (the try_ contract: a try_ function returns
// it, never throws). OpenSSL's error queue is cleared: the host's next
// OpenSSL call must not report keyhook's failure.
inline error openssl_failure(errc code, std::string_view path, std::string_view step) {
    ERR_clear_error();
    return error{code, std::string(path), "OpenSSL " + std::string(step) + " failed"};
}

using sha256_digest = std::array<unsigned char, 32>;
// Padded base64 of a digest (44 characters) and EVP_EncodeBlock's terminator.
using sha256_base64 = std::array<unsigned char, 45>;

KEYHOOK_CRYPTO_INLINE hmac_sha256_key::~hmac_sha256_key() {
    EVP_MAC_CTX_free(pristine.load());
    EVP_MAC_CTX_free(scratch);
}

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

KEYHOOK_CRYPTO_INLINE result<signing_secret> signing_secret_access::make(std::string key) {
    keyhook::detail::wiped_string bytes(std::move(key));  // wiped if the allocation fails
    auto prepared = std::make_shared<hmac_sha256_key>();
    return signing_secret(std::move(bytes.get()), std::move(prepared));
}

KEYHOOK_CRYPTO_INLINE hmac_sha256_key* signing_secret_access::prepared(const signing_secret& s) noexcept {
    return s.prepared_.get();
}

}  // namespace detail

KEYHOOK_CRYPTO_INLINE std::string signing_secret::reveal() const {
    const auto& k = key_.reveal();
    return detail::prefixed_base64(signing_secret_prefix, reinterpret_cast<const unsigned char*>(k.data()), k.size());
}

KEYHOOK_CRYPTO_INLINE std::ostream& signing_secret::print_to(std::ostream& os, const signing_secret& s) {
    return os << "signing_secret(" << s.masked() << ')';
}

KEYHOOK_CRYPTO_INLINE result<signing_secret> try_parse_signing_secret(std::string_view text, signing_key_use use) {
    auto key = keyhook::detail::try_decode_signing_secret(text, "signingSecret", use);
    if (!key) return key.error();
    return detail::signing_secret_access::make(std::move(*key));
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

KEYHOOK_CRYPTO_INLINE bool valid_webhook_id(std::string_view id) noexcept {
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

// The three signed headers, the signature header holding `signatures`.
inline http_headers signed_headers(std::string_view webhook_id, std::string unix_time, std::string signatures) {
    return http_headers{{std::string(webhook_id_header), std::string(webhook_id), false},
                        {std::string(webhook_timestamp_header), std::move(unix_time), false},
                        {std::string(webhook_signature_header), std::move(signatures), false}};
}

// `request` with `headers` set (earlier ones of those names replaced).
inline http_request with_headers(http_request request, http_headers headers) {
    for (auto& h : headers) set_header(request.headers, h.name, std::move(h.value));
    return request;
}

inline result<http_headers> signature_headers_of(secret_list secrets, std::string_view webhook_id, timestamp now,
                                                 std::string_view body) {
    if (secrets.empty()) return error{errc::missing_member, "signingSecret", "no signing secret given"};
    for (const auto& s : secrets)
        if (!can_sign_with(s))
            return error{errc::out_of_range, "signingSecret",
                         "the key is " + std::to_string(s.key_size()) + " bytes; expected " +
                             std::to_string(min_signing_key_bytes) + " to " + std::to_string(max_signing_key_bytes) +
                             " to sign with"};
    if (!valid_webhook_id(webhook_id)) return invalid_webhook_id(webhook_id);
    const std::string unix_time = std::to_string(unix_seconds(now));
    std::string signatures;
    signatures.reserve(secrets.size() * (signature_version.size() + 1 + sha256_base64{}.size()));
    for (const auto& s : secrets) {
        sha256_base64 b64{};
        if (auto e = v1_signature_base64(s, webhook_id, unix_time, body, b64)) return std::move(*e);
        if (!signatures.empty()) signatures += ' ';
        signatures.append(signature_version).append(1, ',').append(as_view(b64));
    }
    return signed_headers(webhook_id, unix_time, std::move(signatures));
}

inline result<http_request> sign_request_with(http_request request, secret_list secrets, std::string_view webhook_id,
                                              timestamp now) {
    auto headers = signature_headers_of(secrets, webhook_id, now, request.body);
    if (!headers) return headers.error();
    return with_headers(std::move(request), std::move(*headers));
}

}  // namespace detail

KEYHOOK_CRYPTO_INLINE bool verified_webhook::is_equal(const verified_webhook& a, const verified_webhook& b) {
    return a.id == b.id && a.signed_at == b.signed_at;
}
KEYHOOK_CRYPTO_INLINE std::ostream& verified_webhook::print_to(std::ostream& os, const verified_webhook& v) {
    return os << "verified_webhook(" << escaped(v.id) << ", " << format_timestamp(v.signed_at) << ')';
}

KEYHOOK_CRYPTO_INLINE std::string compute_signature(const signing_secret& s, std::string_view webhook_id,
                                                    timestamp signed_at, std::string_view body) {
    const std::string unix_time = std::to_string(detail::unix_seconds(signed_at));
    detail::sha256_base64 b64{};
    if (auto e = detail::v1_signature_base64(s, webhook_id, unix_time, body, b64)) throw exception(std::move(*e));
    std::string out;
    out.reserve(signature_version.size() + 1 + b64.size());
    out.append(signature_version).append(1, ',').append(detail::as_view(b64));
    return out;
}

KEYHOOK_CRYPTO_INLINE result<http_headers> try_signature_headers(const std::vector<signing_secret>& secrets,
                                                                 std::string_view webhook_id, timestamp now,
                                                                 std::string_view body) {
    return detail::signature_headers_of(secrets, webhook_id, now, body);
}

KEYHOOK_CRYPTO_INLINE result<http_headers> try_signature_headers(const signing_secret& s, std::string_view webhook_id,
                                                                 timestamp now, std::string_view body) {
    return detail::signature_headers_of(s, webhook_id, now, body);
}

KEYHOOK_CRYPTO_INLINE result<http_request> try_sign_request(http_request request,
                                                            const std::vector<signing_secret>& secrets,
                                                            std::string_view webhook_id, timestamp now) {
    return detail::sign_request_with(std::move(request), secrets, webhook_id, now);
}

KEYHOOK_CRYPTO_INLINE result<http_request> try_sign_request(http_request request, const signing_secret& s,
                                                            std::string_view webhook_id, timestamp now) {
    return detail::sign_request_with(std::move(request), s, webhook_id, now);
}

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

// The checked headers of a signed request (steps 1 to 3 of try_verify_signature).
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

// `id.timestamp.body`, in one buffer: Ed25519 reads its message twice, so it
// cannot be streamed as HMAC is.
inline std::string signed_content(std::string_view id, std::string_view unix_time, std::string_view body) {
    std::string m;
    m.reserve(id.size() + unix_time.size() + body.size() + 2);
    m.append(id).append(1, '.').append(unix_time).append(1, '.').append(body);
    return m;
}

// The public keys of a receiver that has none: v1 alone.
struct no_public_keys {
    static constexpr std::string_view version{};
    static constexpr std::size_t max_entries = 0;
    [[nodiscard]] bool empty() const noexcept { return true; }
    template <class Content>
    int verify(std::string_view, Content&&, const char*&) const noexcept {
        return 0;
    }
};

// Steps 1 to 4 of try_verify_signature, for every scheme at once: the one
// loop v1 (here) and v1a (asymmetric.hpp, B3) verification run. After the
// envelope, one entry must match: a "v1," entry the HMAC under one of
// `secrets` (every candidate compared with every secret, in constant time), or
// an entry of PublicKeys::version that `public_keys.verify(value, content_of,
// failed)` accepts (1 a match, 0 none, -1 OpenSSL failed at `failed`), at most
// PublicKeys::max_entries of them. Entries of a version without keys are
// skipped. The caller refuses an empty key set (its own wording).
template <class PublicKeys>
result<verified_webhook> verify_entries(secret_list secrets, const PublicKeys& public_keys, const http_headers& headers,
                                        std::string_view body, timestamp now, std::chrono::seconds tolerance) {
    const auto envelope = check_signed_envelope(headers, now, tolerance);
    if (!envelope) return envelope.error();

    expected_v1_signatures expected;
    if (auto e = expected.compute(secrets, envelope->id, envelope->unix_time, body)) return std::move(*e);

    // Entries are expected to be few; the content is built once, on first need.
    std::string content;
    const auto content_of = [&]() -> const std::string& {
        if (content.empty()) content = signed_content(envelope->id, envelope->unix_time, body);
        return content;
    };
    bool matched = false;
    std::size_t candidates = 0, asymmetric = 0;
    std::optional<error> failure;
    for_each_signature_entry(envelope->signatures, [&](std::string_view version, std::string_view value) {
        if (version == signature_version && !expected.empty()) {
            ++candidates;
            // No early exit: every v1 candidate is compared against every secret.
            matched = expected.matches(value) || matched;
        } else if (version == PublicKeys::version && !public_keys.empty()) {
            ++candidates;
            if (++asymmetric > PublicKeys::max_entries) {
                failure = error{errc::invalid_signature, std::string(webhook_signature_header),
                                "more than " + std::to_string(PublicKeys::max_entries) + " " +
                                    std::string(PublicKeys::version) + " signatures in the header"};
                return false;
            }
            if (matched) return true;  // public data: no secret to protect by going on
            const char* failed = "";
            const int verdict = public_keys.verify(value, content_of, failed);
            if (verdict < 0) {
                failure = openssl_failure(errc::invalid_signature, webhook_signature_header, failed);
                return false;
            }
            matched = verdict == 1;
        }
        return true;
    });
    if (failure) return std::move(*failure);
    if (candidates == 0 || !matched) {
        const std::string versions = expected.empty() ? std::string(PublicKeys::version)
                                     : public_keys.empty()
                                         ? std::string(signature_version)
                                         : std::string(signature_version) + " or " + std::string(PublicKeys::version);
        return error{errc::invalid_signature, std::string(webhook_signature_header),
                     candidates == 0 ? "no " + versions + " signature in the header"
                     : candidates == 1
                         ? "the " + versions + " signature does not match"
                         : "none of the " + std::to_string(candidates) + " " + versions + " signatures matches"};
    }
    return verified_webhook{std::string(envelope->id), envelope->signed_at};
}

inline result<verified_webhook> verify_with(secret_list secrets, const http_headers& headers, std::string_view body,
                                            timestamp now, std::chrono::seconds tolerance) {
    if (secrets.empty()) return error{errc::missing_member, "signingSecret", "no signing secret given"};
    return verify_entries(secrets, no_public_keys{}, headers, body, now, tolerance);
}

}  // namespace detail

KEYHOOK_CRYPTO_INLINE result<verified_webhook> try_verify_signature(const std::vector<signing_secret>& secrets,
                                                                    const http_headers& headers, std::string_view body,
                                                                    timestamp now, std::chrono::seconds tolerance) {
    return detail::verify_with(secrets, headers, body, now, tolerance);
}

KEYHOOK_CRYPTO_INLINE result<verified_webhook> try_verify_signature(const signing_secret& s,
                                                                    const http_headers& headers, std::string_view body,
                                                                    timestamp now, std::chrono::seconds tolerance) {
    return detail::verify_with(s, headers, body, now, tolerance);
}

}  // namespace keyhook::crypto
