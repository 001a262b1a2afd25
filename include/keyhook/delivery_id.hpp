// keyhook: delivery ids (rules H8, H12). A delivery id names one notification
// to one webhook and stays the same across retries; it is a keyed SipHash of
// the webhook's name and the body bytes, written "msg_" and 32 hex digits.
// Dispatch makes them; a delivery's state, the endpoint health notices and a
// receiver's duplicate check read them, and need nothing else of dispatch.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "keyhook/config.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"

namespace keyhook {

// Identifies one notification to one webhook: a 128-bit value derived from the
// webhook's name and the body bytes, so every retry of that delivery carries
// the same id, and a receiver can drop duplicates by it (it is the webhook-id
// header of signing, B1). Written "msg_" followed by 32 lower-case hex digits.
class delivery_id {
public:
    constexpr delivery_id() noexcept = default;
    constexpr delivery_id(std::uint64_t high, std::uint64_t low) noexcept : hi_(high), lo_(low) {}

    [[nodiscard]] constexpr std::uint64_t high() const noexcept { return hi_; }
    [[nodiscard]] constexpr std::uint64_t low() const noexcept { return lo_; }

    friend constexpr bool operator==(const delivery_id& a, const delivery_id& b) noexcept {
        return a.hi_ == b.hi_ && a.lo_ == b.lo_;
    }
    friend constexpr bool operator!=(const delivery_id& a, const delivery_id& b) noexcept { return !(a == b); }
    friend constexpr bool operator<(const delivery_id& a, const delivery_id& b) noexcept {
        return a.hi_ < b.hi_ || (a.hi_ == b.hi_ && a.lo_ < b.lo_);
    }

private:
    std::uint64_t hi_ = 0;
    std::uint64_t lo_ = 0;

    friend std::ostream& operator<<(std::ostream& os, const delivery_id& x) { return print_to(os, x); }

    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const delivery_id& x);
};

inline constexpr std::string_view delivery_id_prefix = "msg_";
inline constexpr std::size_t delivery_id_length = 36;  // "msg_" + 32 hex digits

[[nodiscard]] KEYHOOK_INLINE std::string to_string(const delivery_id& id);

// Reads the written form back (for hosts that store it as text).
[[nodiscard]] KEYHOOK_INLINE result<delivery_id> try_parse_delivery_id(std::string_view text);
[[nodiscard]] KEYHOOK_INLINE delivery_id parse_delivery_id(std::string_view text);

// JSON form: the written form, as a string (nlohmann finds these by ADL).
template <class Json>
void to_json(Json& j, const delivery_id& id) {
    j = to_string(id);
}
template <class Json>
void from_json(const Json& j, delivery_id& id) {
    id = parse_delivery_id(j.template get_ref<const typename Json::string_t&>());
}

// H12: the key of the delivery id PRF. Ids are SipHash-2-4-128 under this
// key, so nobody without it can compute an id, let alone make two bodies share
// one. Every producer of one host's deliveries must use the same key (ids stay
// the same across retries, restarts and machines only then); the host keeps it
// as it keeps other secrets. Never printed; wiped when destroyed.
class delivery_id_key {
public:
    static constexpr std::size_t size = 16;

    explicit delivery_id_key(const std::array<unsigned char, size>& bytes) noexcept : bytes_(bytes) {}
    delivery_id_key(const delivery_id_key&) = default;
    delivery_id_key& operator=(const delivery_id_key&) = default;
    KEYHOOK_INLINE ~delivery_id_key();

    // Exactly 16 bytes (errc::invalid_value otherwise; the bytes are not echoed).
    [[nodiscard]] static KEYHOOK_INLINE result<delivery_id_key> try_from_bytes(std::string_view bytes);
    // 32 hex digits, as a host keeps it in configuration (errors name the path
    // "deliveryIdKey" and the reason, never the text).
    [[nodiscard]] static KEYHOOK_INLINE result<delivery_id_key> try_from_hex(std::string_view hex);
    // A random key made once per process (getrandom on Linux, std::random_device
    // elsewhere): what dispatch uses when the host passes none. Ids are then
    // stable only within this process; a host that retries after a restart or
    // from another machine must pass its own key (docs/webhooks.md).
    [[nodiscard]] static KEYHOOK_INLINE const delivery_id_key& per_process();

    // Compares every byte whatever they are.
    friend bool operator==(const delivery_id_key& a, const delivery_id_key& b) noexcept { return is_equal(a, b); }
    friend bool operator!=(const delivery_id_key& a, const delivery_id_key& b) noexcept { return !(a == b); }
    // Prints "delivery_id_key(hidden)": no key material.
    friend std::ostream& operator<<(std::ostream& os, const delivery_id_key& x) { return print_to(os, x); }

    // The SipHash key words (first and last 8 bytes, little-endian).
    [[nodiscard]] KEYHOOK_INLINE std::uint64_t k0() const noexcept;
    [[nodiscard]] KEYHOOK_INLINE std::uint64_t k1() const noexcept;

private:
    std::array<unsigned char, size> bytes_;

    static KEYHOOK_INLINE bool is_equal(const delivery_id_key& a, const delivery_id_key& b) noexcept;
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const delivery_id_key& x);
};

// H8, H12: the delivery id of `body` sent to the webhook named `webhook_name`,
// under `key`. Deterministic: the same key, name and bytes give the same id (so
// a retry keeps it); another webhook, another body or another key gives another
// id, except with the probability of a 128-bit PRF collision. Without a key:
// delivery_id_key::per_process().
[[nodiscard]] KEYHOOK_INLINE delivery_id make_delivery_id(const delivery_id_key& key, std::string_view webhook_name,
                                                          std::string_view body) noexcept;
[[nodiscard]] KEYHOOK_INLINE delivery_id make_delivery_id(std::string_view webhook_name,
                                                          std::string_view body) noexcept;

}  // namespace keyhook

template <>
struct std::hash<keyhook::delivery_id> {
    std::size_t operator()(const keyhook::delivery_id& id) const noexcept {
        return static_cast<std::size_t>(id.high() ^ (id.low() << 1 | id.low() >> 63));
    }
};

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/delivery_id.ipp"
#endif
