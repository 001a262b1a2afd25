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
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/params.h>

#include "keyhook/base64.hpp"
#include "keyhook/detail/signing_secret.hpp"
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
// The one way to build a signing_secret from key bytes (already checked).
struct signing_secret_access {
    static signing_secret make(std::string key) noexcept;
};
}  // namespace detail

// A webhook signing secret: the HMAC key, written "whsec_" + base64(key).
// Printing, JSON and comparison never show or leak the key.
class signing_secret {
public:
    // The written form, "whsec_" + padded base64. Call only to store the secret
    // or to hand it to the receiver.
    [[nodiscard]] std::string reveal() const {
        return std::string(signing_secret_prefix) + base64_encode(key_.reveal());
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
    explicit signing_secret(std::string key) noexcept : key_(std::move(key), secret_kind::signing_key) {}
    secret key_;

    friend struct detail::signing_secret_access;
};

inline signing_secret detail::signing_secret_access::make(std::string key) noexcept {
    return signing_secret(std::move(key));
}

// Reads "whsec_<base64>" or the bare base64 part. For verifying (the
// default) a key of any non-empty length is read; for signing, 24 to 64 bytes
// (errc::out_of_range otherwise). Errors (path "signing_secret") say what is
// wrong without quoting the text.
[[nodiscard]] inline result<signing_secret> try_parse_signing_secret(std::string_view text,
                                                                     signing_key_use use = signing_key_use::verify) {
    auto key = keyhook::detail::try_decode_signing_secret(text, "signing_secret", use);
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

// A new secret of `key_bytes` random bytes (24 to 64) from the host's secure
// random source, a callable `void(unsigned char* out, std::size_t n)` such as
// keyhook::crypto::openssl_random. A keyhook::exception thrown by the source
// becomes the error of the try_ form.
template <class RandomSource>
[[nodiscard]] result<signing_secret> try_generate_signing_secret(RandomSource&& random,
                                                                 std::size_t key_bytes = default_signing_key_bytes) {
    if (key_bytes < min_signing_key_bytes || key_bytes > max_signing_key_bytes)
        return error{errc::out_of_range, "key_bytes",
                     std::to_string(key_bytes) + " bytes asked for; expected " + std::to_string(min_signing_key_bytes) +
                         " to " + std::to_string(max_signing_key_bytes)};
    std::string key(key_bytes, '\0');
    try {
        random(reinterpret_cast<unsigned char*>(key.data()), key.size());
    } catch (const exception& e) {
        return e.error();
    }
    return detail::signing_secret_access::make(std::move(key));
}

template <class RandomSource>
[[nodiscard]] signing_secret generate_signing_secret(RandomSource&& random,
                                                     std::size_t key_bytes = default_signing_key_bytes) {
    return try_generate_signing_secret(std::forward<RandomSource>(random), key_bytes).value();
}

namespace detail {

struct evp_mac_free {
    void operator()(EVP_MAC* p) const noexcept { EVP_MAC_free(p); }
};
struct evp_mac_ctx_free {
    void operator()(EVP_MAC_CTX* p) const noexcept { EVP_MAC_CTX_free(p); }
};

[[noreturn]] inline void throw_openssl_failure(const char* step) {
    throw exception(error{errc::invalid_signature, "webhook-signature", std::string("OpenSSL ") + step + " failed"});
}

using sha256_digest = std::array<unsigned char, 32>;

// HMAC-SHA256 of the concatenation of `parts`, streamed (the body is not copied).
inline sha256_digest hmac_sha256(const secret& key, std::initializer_list<std::string_view> parts) {
    const std::unique_ptr<EVP_MAC, evp_mac_free> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
    if (!mac) throw_openssl_failure("EVP_MAC_fetch(HMAC)");
    const std::unique_ptr<EVP_MAC_CTX, evp_mac_ctx_free> ctx(EVP_MAC_CTX_new(mac.get()));
    if (!ctx) throw_openssl_failure("EVP_MAC_CTX_new");
    char digest_name[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0),
                                 OSSL_PARAM_construct_end()};
    const auto& k = key.reveal();
    if (EVP_MAC_init(ctx.get(), reinterpret_cast<const unsigned char*>(k.data()), k.size(), params) != 1)
        throw_openssl_failure("EVP_MAC_init");
    for (const auto part : parts)
        if (EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(part.data()), part.size()) != 1)
            throw_openssl_failure("EVP_MAC_update");
    sha256_digest out{};
    std::size_t written = 0;
    if (EVP_MAC_final(ctx.get(), out.data(), &written, out.size()) != 1 || written != out.size())
        throw_openssl_failure("EVP_MAC_final");
    return out;
}

// Whole Unix seconds, rounded down (the header has no fraction).
inline std::int64_t unix_seconds(timestamp t) noexcept {
    return std::chrono::floor<std::chrono::seconds>(t).time_since_epoch().count();
}

// The base64 part of a v1 signature for an id and a timestamp already written.
inline std::string signature_base64(const signing_secret& s, std::string_view id, std::string_view unix_time,
                                    std::string_view body) {
    const auto mac = hmac_sha256(s.key(), {id, ".", unix_time, ".", body});
    return base64_encode(mac.data(), mac.size());
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
    return std::string(signature_version) + ',' + detail::signature_base64(s, webhook_id, unix_time, body);
}

// The three headers for a request signed with every secret in `secrets`
// (more than one while a secret is being rotated: the receiver accepts any).
// Refused: an empty list (path "signing_secret"), a secret outside 24 to 64
// bytes (B1; errc::out_of_range, path "signing_secret") and a webhook id that
// is not a plain header value (path "webhook-id").
[[nodiscard]] inline result<http_headers> try_signature_headers(const std::vector<signing_secret>& secrets,
                                                                std::string_view webhook_id, timestamp now,
                                                                std::string_view body) {
    if (secrets.empty()) return error{errc::missing_member, "signing_secret", "no signing secret given"};
    for (const auto& s : secrets)
        if (!can_sign_with(s))
            return error{errc::out_of_range, "signing_secret",
                         "the key is " + std::to_string(s.key_size()) + " bytes; expected " +
                             std::to_string(min_signing_key_bytes) + " to " + std::to_string(max_signing_key_bytes) +
                             " to sign with"};
    if (!detail::valid_webhook_id(webhook_id)) return detail::invalid_webhook_id(webhook_id);
    const std::string unix_time = std::to_string(detail::unix_seconds(now));
    std::string signatures;
    for (const auto& s : secrets) {
        if (!signatures.empty()) signatures += ' ';
        signatures += signature_version;
        signatures += ',';
        signatures += detail::signature_base64(s, webhook_id, unix_time, body);
    }
    return http_headers{{std::string(webhook_id_header), std::string(webhook_id), false},
                        {std::string(webhook_timestamp_header), unix_time, false},
                        {std::string(webhook_signature_header), std::move(signatures), false}};
}

[[nodiscard]] inline result<http_headers> try_signature_headers(const signing_secret& s, std::string_view webhook_id,
                                                                timestamp now, std::string_view body) {
    return try_signature_headers(std::vector<signing_secret>{s}, webhook_id, now, body);
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
    auto headers = try_signature_headers(secrets, webhook_id, now, request.body);
    if (!headers) return headers.error();
    for (auto& h : *headers) detail::set_header(request.headers, h.name, std::move(h.value));
    return request;
}

[[nodiscard]] inline result<http_request> try_sign_request(http_request request, const signing_secret& s,
                                                           std::string_view webhook_id, timestamp now) {
    return try_sign_request(std::move(request), std::vector<signing_secret>{s}, webhook_id, now);
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
[[nodiscard]] inline result<verified_webhook> try_verify_signature(
    const std::vector<signing_secret>& secrets, const http_headers& headers, std::string_view body, timestamp now,
    std::chrono::seconds tolerance = default_signature_tolerance) {
    if (secrets.empty()) return error{errc::missing_member, "signing_secret", "no signing secret given"};
    // Steps 1 to 3, shared with v1a verification (asymmetric.hpp, B3).
    const auto envelope = detail::check_signed_envelope(headers, now, tolerance);
    if (!envelope) return envelope.error();

    std::vector<std::string> expected;
    expected.reserve(secrets.size());
    for (const auto& s : secrets)
        expected.push_back(detail::signature_base64(s, envelope->id, envelope->unix_time, body));

    bool matched = false;
    std::size_t candidates = 0;
    std::string_view rest = envelope->signatures;
    while (!rest.empty()) {
        const auto space = rest.find(' ');
        const std::string_view entry = rest.substr(0, space);
        rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
        const auto comma = entry.find(',');
        if (comma == std::string_view::npos || entry.substr(0, comma) != signature_version) continue;
        ++candidates;
        // No early exit: every candidate is compared against every secret.
        for (const auto& e : expected) matched = constant_time_equal(entry.substr(comma + 1), e) || matched;
    }
    if (candidates == 0)
        return error{errc::invalid_signature, std::string(webhook_signature_header), "no v1 signature in the header"};
    if (!matched)
        return error{errc::invalid_signature, std::string(webhook_signature_header),
                     candidates == 1 ? std::string("the v1 signature does not match")
                                     : "none of the " + std::to_string(candidates) + " v1 signatures matches"};
    return verified_webhook{std::string(envelope->id), envelope->signed_at};
}

[[nodiscard]] inline result<verified_webhook> try_verify_signature(
    const signing_secret& s, const http_headers& headers, std::string_view body, timestamp now,
    std::chrono::seconds tolerance = default_signature_tolerance) {
    return try_verify_signature(std::vector<signing_secret>{s}, headers, body, now, tolerance);
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
