// keyhook::crypto: definitions of stored_key.hpp (K11).
#pragma once

#include <algorithm>
#include <ostream>
#include <string>
#include <utility>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "keyhook/base64.hpp"
#include "keyhook/crypto/impl/signing.ipp"
#include "keyhook/crypto/stored_key.hpp"
#include "keyhook/detail/ascii.hpp"
#include "keyhook/detail/constant_time.hpp"

namespace keyhook::crypto {

namespace detail {

// One pepper: its id, its bytes (wiped when released) and its prepared HMAC
// context (OpenSSL cleanses its copy when the context is freed).
struct pepper {
    std::string id;
    keyhook::detail::wiped_string bytes;
    hmac_sha256_key prepared;
};

KEYHOOK_CRYPTO_INLINE pepper_ring::pepper_ring() = default;
KEYHOOK_CRYPTO_INLINE pepper_ring::~pepper_ring() = default;

KEYHOOK_CRYPTO_INLINE bool pepper_ring::digest(std::uint8_t scheme, std::string_view key,
                                               key_fingerprint& out) const noexcept {
    if (scheme == 1) {
        unsigned int n = 0;
        if (EVP_Digest(key.data(), key.size(), out.data(), &n, EVP_sha256(), nullptr) == 1 && n == out.size())
            return true;
        ERR_clear_error();
        return false;
    }
    const std::size_t i = std::size_t{scheme} - 2;
    if (scheme < 2 || i >= peppers.size()) return false;
    pepper& p = *peppers[i];
    if (hmac_sha256(&p.prepared, p.bytes.get(), {key}, out) == nullptr) return true;
    ERR_clear_error();
    return false;
}

// 1 to 32 characters of A-Z a-z 0-9 _ -.
inline bool valid_pepper_id(std::string_view id) noexcept {
    if (id.empty() || id.size() > max_pepper_id_length) return false;
    return std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
}

// The position of pepper `id` in the ring, or npos.
inline std::size_t pepper_position(const pepper_ring* ring, std::string_view id) noexcept {
    if (ring != nullptr)
        for (std::size_t i = 0; i < ring->peppers.size(); ++i)
            if (ring->peppers[i]->id == id) return i;
    return std::string_view::npos;
}

// base64url without padding of the 32 digest bytes (43 characters).
inline std::string base64url_43(const key_fingerprint& bytes) {
    std::string s = base64_encode(bytes.data(), bytes.size());
    for (auto& c : s) c = c == '+' ? '-' : c == '/' ? '_' : c;
    while (!s.empty() && s.back() == '=') s.pop_back();
    return s;
}

// The 32 bytes of a base64 text (standard alphabet, strict), or false.
inline bool decode_32(std::string_view text, key_fingerprint& out) {
    auto decoded = try_base64_decode(text);
    if (!decoded) return false;
    keyhook::detail::wiped_string bytes(std::move(*decoded));
    if (bytes.get().size() != out.size()) return false;
    std::copy(bytes.get().begin(), bytes.get().end(), out.begin());
    return true;
}

inline error malformed_digest(std::string_view where) {
    return error{errc::invalid_value, std::string(where),
                 "is not a stored digest: expected kh1.<pepper id>.<43 base64url characters>, or sha256.<64 "
                 "lowercase hex digits> or sha256.<44 characters of padded base64>"};
}

}  // namespace detail

// The one place that makes stored digests and reaches a set's ring.
struct stored_digest_access {
    static stored_digest make(digest_form form, std::string pepper_id, const key_fingerprint& bytes) {
        return stored_digest(form, std::move(pepper_id), bytes);
    }
    static const std::shared_ptr<detail::pepper_ring>& ring(const pepper_set& p) noexcept { return p.ring_; }
};

KEYHOOK_CRYPTO_INLINE std::string stored_digest::masked() const {
    switch (form_) {
        case digest_form::kh1: return std::string(stored_digest_prefix) + pepper_id_ + "." + std::string(43, '*');
        case digest_form::sha256_hex: return std::string(legacy_digest_prefix) + std::string(64, '*');
        case digest_form::sha256_base64: return std::string(legacy_digest_prefix) + std::string(44, '*');
    }
    return std::string(legacy_digest_prefix);
}

KEYHOOK_CRYPTO_INLINE result<std::string> stored_digest::try_store_form() const {
    if (legacy())
        return error{errc::invalid_value, "storedKey",
                     "a legacy sha256. digest is read, never written: store the digest under the current pepper"};
    return std::string(stored_digest_prefix) + pepper_id_ + "." + detail::base64url_43(bytes_);
}

KEYHOOK_CRYPTO_INLINE bool stored_digest::is_equal(const stored_digest& a, const stored_digest& b) noexcept {
    const bool same_bytes = keyhook::detail::constant_time_equal_bytes(a.bytes_, b.bytes_);
    return same_bytes && a.form_ == b.form_ && a.pepper_id_ == b.pepper_id_;
}

KEYHOOK_CRYPTO_INLINE std::ostream& stored_digest::print_to(std::ostream& os, const stored_digest& d) {
    return os << "stored_digest(" << d.masked() << ')';
}

KEYHOOK_CRYPTO_INLINE result<stored_digest> try_parse_stored_digest(std::string_view text, std::string_view where) {
    key_fingerprint bytes{};
    struct wipe_on_exit {
        key_fingerprint& b;
        ~wipe_on_exit() { keyhook::detail::secure_wipe(b.data(), b.size()); }
    } wipe{bytes};
    if (text.substr(0, stored_digest_prefix.size()) == stored_digest_prefix) {
        const std::string_view rest = text.substr(stored_digest_prefix.size());
        const auto dot = rest.find('.');
        if (dot == std::string_view::npos) return detail::malformed_digest(where);
        const std::string_view id = rest.substr(0, dot), digest = rest.substr(dot + 1);
        if (!detail::valid_pepper_id(id))
            return error{errc::invalid_value, std::string(where),
                         "names no valid pepper id (1 to 32 characters of A-Z a-z 0-9 _ -)"};
        if (digest.size() != 43) return detail::malformed_digest(where);
        std::array<char, 43> standard{};
        for (std::size_t i = 0; i < digest.size(); ++i) {
            const char c = digest[i];
            if (c == '+' || c == '/' || c == '=') return detail::malformed_digest(where);  // base64url only
            standard[i] = c == '-' ? '+' : c == '_' ? '/' : c;
        }
        const bool ok = detail::decode_32(std::string_view(standard.data(), standard.size()), bytes);
        keyhook::detail::secure_wipe(standard.data(), standard.size());
        if (!ok) return detail::malformed_digest(where);
        return stored_digest_access::make(digest_form::kh1, std::string(id), bytes);
    }
    if (text.substr(0, legacy_digest_prefix.size()) == legacy_digest_prefix) {
        const std::string_view digest = text.substr(legacy_digest_prefix.size());
        if (digest.size() == 64) {
            for (std::size_t i = 0; i < 32; ++i) {
                const char hi = digest[2 * i], lo = digest[2 * i + 1];
                const auto lower_hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
                if (!lower_hex(hi) || !lower_hex(lo)) return detail::malformed_digest(where);
                bytes[i] =
                    static_cast<unsigned char>(keyhook::detail::hex_value(hi) << 4 | keyhook::detail::hex_value(lo));
            }
            return stored_digest_access::make(digest_form::sha256_hex, std::string(), bytes);
        }
        // Padded standard base64, as Unkey stores its SHA-256 digests.
        if (digest.size() == 44 && digest.back() == '=' && detail::decode_32(digest, bytes))
            return stored_digest_access::make(digest_form::sha256_base64, std::string(), bytes);
    }
    return detail::malformed_digest(where);
}

KEYHOOK_CRYPTO_INLINE detail::pepper_ring& pepper_set::own() {
    if (!ring_) {
        ring_ = std::make_shared<detail::pepper_ring>();
    } else if (ring_.use_count() > 1) {
        auto copy = std::make_shared<detail::pepper_ring>();
        copy->peppers.reserve(ring_->peppers.size());
        for (const auto& p : ring_->peppers) {
            auto q = std::make_unique<detail::pepper>();
            q->id = p->id;
            q->bytes.get() = p->bytes.get();
            copy->peppers.push_back(std::move(q));
        }
        ring_ = std::move(copy);
    }
    return *ring_;
}

KEYHOOK_CRYPTO_INLINE result<void> pepper_set::try_add(std::string_view id, const secret& bytes) {
    if (!detail::valid_pepper_id(id))
        return error{errc::invalid_value, "peppers", "a pepper id has 1 to 32 characters of A-Z a-z 0-9 _ -"};
    if (contains(id))
        return error{errc::invalid_value, "peppers",
                     "the pepper id " + keyhook::detail::quote_input(id) + " is given twice"};
    if (bytes.size() < min_pepper_bytes || bytes.size() > max_pepper_bytes)
        return error{errc::invalid_value, "peppers",
                     "the pepper " + keyhook::detail::quote_input(id) + " has " + std::to_string(bytes.size()) +
                         " bytes; a pepper has 32 to 64"};
    if (size() >= max_peppers) return error{errc::limit_exceeded, "peppers", "a set holds at most 254 peppers"};
    auto p = std::make_unique<detail::pepper>();
    p->id = std::string(id);
    p->bytes.get() = bytes.reveal();
    auto& ring = own();
    ring.peppers.push_back(std::move(p));
    return {};
}

KEYHOOK_CRYPTO_INLINE result<void> pepper_set::try_make_current(std::string_view id) {
    const auto at = detail::pepper_position(ring_.get(), id);
    if (at == std::string_view::npos)
        return error{errc::invalid_value, "peppers", "the set holds no pepper " + keyhook::detail::quote_input(id)};
    if (at == 0) return {};
    auto& ring = own();
    std::rotate(ring.peppers.begin(), ring.peppers.begin() + static_cast<std::ptrdiff_t>(at),
                ring.peppers.begin() + static_cast<std::ptrdiff_t>(at) + 1);
    return {};
}

KEYHOOK_CRYPTO_INLINE std::string_view pepper_set::current_id() const noexcept {
    return empty() ? std::string_view() : std::string_view(ring_->peppers.front()->id);
}

KEYHOOK_CRYPTO_INLINE bool pepper_set::contains(std::string_view id) const noexcept {
    return detail::pepper_position(ring_.get(), id) != std::string_view::npos;
}

KEYHOOK_CRYPTO_INLINE std::ostream& pepper_set::print_to(std::ostream& os, const pepper_set& p) {
    if (p.empty()) return os << "pepper_set(empty)";
    return os << "pepper_set(current " << keyhook::detail::quote_input(p.current_id()) << ", " << p.size()
              << (p.size() == 1 ? " pepper)" : " peppers)");
}

KEYHOOK_CRYPTO_INLINE std::ostream& stored_key_match::print_to(std::ostream& os, const stored_key_match& m) {
    if (!m.matched) return os << "no match";
    return os << (m.rehash ? "matched; store again under the current pepper" : "matched");
}

namespace detail {
// The digest of `key` under `scheme` of `ring`, as a stored digest of `form`.
inline result<stored_digest> digest_under(const pepper_ring& ring, std::uint8_t scheme, std::string_view key) {
    key_fingerprint bytes{};
    if (!ring.digest(scheme, key, bytes)) return openssl_failure(errc::invalid_value, "key", "HMAC-SHA-256");
    auto d = stored_digest_access::make(digest_form::kh1, ring.peppers[std::size_t{scheme} - 2]->id, bytes);
    keyhook::detail::secure_wipe(bytes.data(), bytes.size());
    return d;
}
}  // namespace detail

KEYHOOK_CRYPTO_INLINE result<stored_digest> try_compute_stored_digest(const pepper_set& peppers, const secret& key) {
    const auto& ring = stored_digest_access::ring(peppers);
    if (peppers.empty()) return error{errc::invalid_value, "peppers", "no pepper: the set is empty"};
    if (key.empty()) return error{errc::invalid_key, "key", "a stored key must not be empty"};
    return detail::digest_under(*ring, 2, key.reveal());
}

KEYHOOK_CRYPTO_INLINE result<stored_key_match> try_verify_stored_key(const pepper_set& peppers,
                                                                     std::string_view presented,
                                                                     const stored_digest& stored) {
    const auto& ring = stored_digest_access::ring(peppers);
    std::size_t scheme = 1;
    if (!stored.legacy()) {
        const auto at = detail::pepper_position(ring.get(), stored.pepper_id());
        if (at == std::string_view::npos)
            return error{errc::invalid_value, "storedKey",
                         "names the pepper " + keyhook::detail::quote_input(stored.pepper_id()) +
                             ", which this host does not hold"};
        scheme = at + 2;
    }
    key_fingerprint bytes{};
    const detail::pepper_ring empty_ring;
    const detail::pepper_ring& digester = ring ? *ring : empty_ring;  // SHA-256 needs no pepper
    if (!digester.digest(static_cast<std::uint8_t>(scheme), presented, bytes))
        return detail::openssl_failure(errc::invalid_value, "storedKey", "digest");
    stored_key_match m;
    m.matched = keyhook::detail::constant_time_equal_bytes(bytes, stored.bytes());
    keyhook::detail::secure_wipe(bytes.data(), bytes.size());
    if (m.matched && scheme != 2 && !peppers.empty()) {
        auto current = detail::digest_under(*ring, 2, presented);
        if (!current) return current.error();
        m.rehash = std::move(*current);
    }
    return m;
}

template <class D>
KEYHOOK_CRYPTO_INLINE result<std::size_t> try_add_stored(basic_key_index<D>& index, const pepper_set& peppers,
                                                         std::string_view tenant,
                                                         const keyhook::detail::deferred_t<api_key, D>& record,
                                                         const stored_digest& stored,
                                                         const keyhook::detail::deferred_t<permission_policy, D>& policy) {
    const auto& ring = stored_digest_access::ring(peppers);
    if (peppers.empty()) return error{errc::invalid_value, "peppers", "no pepper: the set is empty"};
    std::size_t scheme = 1;
    if (!stored.legacy()) {
        const auto at = detail::pepper_position(ring.get(), stored.pepper_id());
        if (at == std::string_view::npos)
            return error{errc::invalid_value, "storedKey",
                         "names the pepper " + keyhook::detail::quote_input(stored.pepper_id()) +
                             ", which this host does not hold"};
        scheme = at + 2;
    }
    return index.try_add_digest(tenant, record, stored.bytes(), static_cast<std::uint8_t>(scheme), ring, policy);
}

template <class D>
KEYHOOK_CRYPTO_INLINE result<std::optional<stored_digest>> try_rehash_answer(
    const pepper_set& peppers, const keyhook::detail::deferred_t<authorization, D>& a, std::string_view presented) {
    if (!a.allowed() || !a.digest_outdated()) return std::optional<stored_digest>();
    if (peppers.empty()) return error{errc::invalid_value, "peppers", "no pepper: the set is empty"};
    auto d = detail::digest_under(*stored_digest_access::ring(peppers), 2, presented);
    if (!d) return d.error();
    return std::optional<stored_digest>(std::move(*d));
}

}  // namespace keyhook::crypto

#if defined(KEYHOOK_BUILDING_COMPILED_CRYPTO)
// Compiled mode: the one instantiation of each deferred definition (config.hpp).
#include "keyhook/authorization.hpp"
#include "keyhook/key_index.hpp"
namespace keyhook::crypto {
template result<std::size_t> try_add_stored<void>(key_index&, const pepper_set&, std::string_view, const api_key&,
                                                  const stored_digest&, const permission_policy&);
template result<std::optional<stored_digest>> try_rehash_answer<void>(const pepper_set&, const authorization&,
                                                                      std::string_view);
}  // namespace keyhook::crypto
#endif
