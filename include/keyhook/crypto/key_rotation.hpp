// keyhook::crypto: a webhook's signing keys over time (rule B5). A set holds
// at most one current key per scheme (a whsec_ secret for v1, a whsk_ key for
// v1a, B3) and the old keys a rotation retired, each until its expiry. A
// delivery is signed with every current key and every old key not yet
// expired, one webhook-signature entry each, so a receiver holding only the
// old key or only the new one verifies it during the grace period.
//
//   auto set = keyhook::crypto::signing_key_set::make(current_secret);
//   set.rotate(new_secret, now);                       // old one kept 24 h
//   auto request = set.sign_outbound(outbound, now);   // drops expired keys
//   host_store.put(name, store_signing_key_set(set).reveal());
#pragma once

#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/signing.hpp"
#include "keyhook/detail/deferred.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/http.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {
class outbound_request;  // dispatch.hpp
}  // namespace keyhook

namespace keyhook::crypto {

// B5 policy bounds.
inline constexpr std::chrono::hours default_rotation_grace{24};
inline constexpr std::chrono::hours max_rotation_grace{24 * 7};
inline constexpr std::size_t max_old_signing_keys = 10;

// One key of either scheme.
struct rotated_key {
    std::optional<signing_secret> secret;              // set for whsec_
    std::optional<asymmetric_signing_key> asymmetric;  // set for whsk_
    timestamp expires_at{};                            // valid while now < expires_at

    [[nodiscard]] bool is_asymmetric() const noexcept { return asymmetric.has_value(); }
};

namespace detail {
// What a signing_key_set holds: its store form is derived from this
// aggregate's member table (below), so a member added here and not there
// does not compile.
struct key_set_members {
    std::optional<signing_secret> secret;
    std::optional<asymmetric_signing_key> asymmetric;
    std::vector<rotated_key> old;  // by expiry, soonest first
};
}  // namespace detail

class signing_key_set;

// The store form (below), declared here for the friend declarations: deferred
// definitions (config.hpp), whose JSON is compiled only where they are called.
template <class D = void>
[[nodiscard]] KEYHOOK_CRYPTO_INLINE secret store_signing_key_set(const signing_key_set& s);
template <class D = void>
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<signing_key_set> try_load_signing_key_set(std::string_view stored);

class signing_key_set {
public:
    // A set whose only key is `current`. Refused (errc::out_of_range, path
    // "signingSecret"): a secret keyhook may not sign with (B1: 24 to 64
    // bytes; a moved-from secret has none), since the set could never sign.
    [[nodiscard]] static KEYHOOK_CRYPTO_INLINE result<signing_key_set> try_make(const signing_secret& current);
    // The same; throws keyhook::exception.
    [[nodiscard]] static KEYHOOK_CRYPTO_INLINE signing_key_set make(const signing_secret& current);
    [[nodiscard]] static KEYHOOK_CRYPTO_INLINE signing_key_set make(const asymmetric_signing_key& current);

    // Keys are shared, never-changing values, so a move copies: a moved-from
    // set keeps its keys and every function's contract (moved-from contract; an
    // emptied one held a current secret of 0 bytes that could not sign).
    signing_key_set(const signing_key_set&) = default;
    signing_key_set& operator=(const signing_key_set&) = default;
    signing_key_set(signing_key_set&& other) : signing_key_set(static_cast<const signing_key_set&>(other)) {}
    signing_key_set& operator=(signing_key_set&& other) { return *this = static_cast<const signing_key_set&>(other); }
    ~signing_key_set() = default;

    // B5: `next` becomes the current key of its scheme; the key it replaces
    // is kept until now + grace (not kept when grace is 0; the end of time
    // when now + grace is past it). Expired old keys are dropped first. The
    // set never holds a key twice: rotating to the current key changes
    // nothing, and rotating to an old key the set still holds makes it
    // current again and drops its old entry. Refused, with the set unchanged:
    // a grace outside 0 to 7 days (errc::out_of_range, path "grace"), a
    // rotation that would keep an 11th unexpired old key
    // (errc::limit_exceeded, path "oldKeys"), a secret keyhook may not sign
    // with (B1, path "signingSecret").
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE result<void> try_rotate(const signing_secret& next, timestamp now,
                                                                timestamp::duration grace = default_rotation_grace);
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE result<void> try_rotate(const asymmetric_signing_key& next, timestamp now,
                                                                timestamp::duration grace = default_rotation_grace);
    void rotate(const signing_secret& next, timestamp now, timestamp::duration grace = default_rotation_grace) {
        try_rotate(next, now, grace).value();
    }
    void rotate(const asymmetric_signing_key& next, timestamp now, timestamp::duration grace = default_rotation_grace) {
        try_rotate(next, now, grace).value();
    }

    // Drops the old keys expired at `now` (now >= expires_at).
    KEYHOOK_CRYPTO_INLINE void drop_expired(timestamp now);

    // The keys that sign at `now`: the current ones and the old ones not yet
    // expired (v1 secrets then v1a keys; current first, then old by expiry),
    // each once (a stored set written by hand may repeat a key).
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE signing_keys keys_at(timestamp now) const;

    // Drops expired keys, then signs with keys_at(now): one entry per key.
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE result<http_request> try_sign_request(http_request request,
                                                                              std::string_view webhook_id,
                                                                              timestamp now);
    // The same for one request of dispatch (its request() and delivery id). A
    // deferred definition (config.hpp): this header needs outbound_request
    // declared only, so it does not bring dispatch.hpp.
    template <class D = void>
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE result<http_request> try_sign_outbound(
        const keyhook::detail::deferred_t<outbound_request, D>& r, timestamp now);

    [[nodiscard]] const std::optional<signing_secret>& current_secret() const noexcept { return keys_.secret; }
    [[nodiscard]] const std::optional<asymmetric_signing_key>& current_asymmetric() const noexcept {
        return keys_.asymmetric;
    }
    [[nodiscard]] const std::vector<rotated_key>& old_keys() const noexcept { return keys_.old; }

    // Masked keys and expiries only (B1).
    friend std::ostream& operator<<(std::ostream& os, const signing_key_set& x) { return print_to(os, x); }
    friend bool operator==(const signing_key_set& a, const signing_key_set& b) noexcept { return is_equal(a, b); }
    friend bool operator!=(const signing_key_set& a, const signing_key_set& b) noexcept { return !(a == b); }

private:
    signing_key_set() = default;
    detail::key_set_members keys_;  // every member is in there (it has a member table)
    template <class D>
    friend secret store_signing_key_set(const signing_key_set& s);
    template <class D>
    friend result<signing_key_set> try_load_signing_key_set(std::string_view stored);

    static KEYHOOK_CRYPTO_INLINE std::ostream& print_to(std::ostream& os, const signing_key_set& x);
    static KEYHOOK_CRYPTO_INLINE bool is_equal(const signing_key_set& a, const signing_key_set& b) noexcept;
};

// to_json (a printable form with no key material):
//   {"current": ["whsec_****...", "whsk_****..."], "oldKeys": [{"key": "whsec_****...", "expiresAt": T4}]}
template <class Json>
void to_json(Json& j, const signing_key_set& s) {
    Json current = Json::array();
    if (s.current_secret()) current.push_back(s.current_secret()->masked());
    if (s.current_asymmetric()) current.push_back(s.current_asymmetric()->masked());
    Json old = Json::array();
    for (const auto& k : s.old_keys()) {
        Json e = Json::object();
        e["key"] = k.secret ? k.secret->masked() : k.asymmetric->masked();
        e["expiresAt"] = format_timestamp(k.expires_at);
        old.push_back(std::move(e));
    }
    j = Json::object();
    j["current"] = std::move(current);
    j["oldKeys"] = std::move(old);
}

// The member tables of the stored form are in crypto/detail/key_rotation_table.hpp.

}  // namespace keyhook::crypto

namespace keyhook::crypto {

// The store-only serializer: the same shape with the keys written in full,
// as a keyhook::secret (so it prints masked too); only for the host's store.
template <class D>
secret store_signing_key_set(const signing_key_set& s);

// Reads the stored form back. Refused, with the JSON path and the reason but
// never a key's text: not that shape, no current key, two current keys of one
// scheme ("current[1]"), a key that does not parse ("oldKeys[2].key"), a bad
// expiry, more than 10 old keys. J1 to J3 hold (strict reader).
template <class D>
result<signing_key_set> try_load_signing_key_set(std::string_view stored);

}  // namespace keyhook::crypto

#if KEYHOOK_CRYPTO_DEFINITIONS
// The member table, which includes the definitions (impl/key_rotation.ipp) at its end.
#include "keyhook/crypto/detail/key_rotation_table.hpp"
#endif
