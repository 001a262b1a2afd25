// keyhook: secrets. Masking (rules M1 to M3, and B1 for signing keys),
// constant-time comparison, and the `secret` type whose printing, JSON and
// hashing never show what it holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>

#include "keyhook/config.hpp"
#include "keyhook/detail/constant_time.hpp"
#include "keyhook/detail/utf8.hpp"
#include "keyhook/detail/wipe.hpp"
#include "keyhook/error.hpp"

namespace keyhook {

// Keys shorter than this are masked entirely (M2).
inline constexpr std::size_t min_partly_masked_length = 12;
inline constexpr std::size_t mask_visible_head = 3;
inline constexpr std::size_t mask_visible_tail = 3;

// B1: the written forms of Standard Webhooks keys. Nothing after the prefix
// is ever shown: those characters are the key itself (base64).
inline constexpr std::string_view signing_key_prefixes[] = {"whsec_", "whsk_", "whpk_"};

namespace detail {
// Splits s into units of the library's UTF-8 walker (a code point, or one byte
// of an ill-formed sequence); calls f(offset, length) for each.
template <class F>
void for_each_code_point(std::string_view s, F&& f) {
    for_each_utf8_unit(s, [&](const utf8_unit& u) { f(u.offset, u.length); });
}

// The prefix of a Standard Webhooks key that s begins with; empty when none.
inline std::string_view signing_key_prefix_of(std::string_view s) noexcept {
    for (const auto p : signing_key_prefixes)
        if (s.substr(0, p.size()) == p) return p;
    return {};
}
}  // namespace detail

// Number of code points in s (M1 counts characters, not bytes); each byte of
// an ill-formed sequence counts as one.
[[nodiscard]] KEYHOOK_INLINE std::size_t code_point_count(std::string_view s);

// M1, M2: same number of characters as the key, the first 3 and last 3 visible,
// every other one '*'; keys of fewer than 12 characters entirely '*'. A byte
// that is not part of well-formed UTF-8 counts as one character and is always
// '*', so at most 3 code points show at each end. B1: a signing key
// ("whsec_", "whsk_", "whpk_" + base64) keeps only its prefix, every character
// after it '*'. Masking a masked value changes nothing.
[[nodiscard]] KEYHOOK_INLINE std::string mask_key(std::string_view key);

// Equality whose running time depends only on the lengths, never on where the
// inputs first differ (K10, H7, B1).
// The loop and its test probe are in detail/constant_time.hpp.
[[nodiscard]] inline bool constant_time_equal(std::string_view a, std::string_view b) noexcept {
    return detail::constant_time_equal_bytes(a, b);
}

// What a secret is, which decides how much of it its masked form shows.
enum class secret_kind : unsigned char {
    api_key,      // an API key, a token, an authentication value: masked as M1, M2
    signing_key,  // a webhook signing key (B1): nothing of it is shown
};

// A secret (an API key, a webhook's authentication value, a signing secret).
// It shows only its masked form when printed or converted to JSON (M3); the
// plaintext is reached through reveal(), which is easy to search for. A value
// written "whsec_...", "whsk_..." or "whpk_..." is a signing key whatever kind
// it was given; a bare base64 signing key is marked secret_kind::signing_key.
class secret {
public:
    secret() = default;
    explicit secret(std::string plaintext, secret_kind kind = secret_kind::api_key) noexcept
        : value_(std::move(plaintext)), kind_(kind) {}
    // Wiping: every buffer that held the plaintext is wiped when
    // released, including what a move leaves behind (a short string's bytes
    // stay in the moved-from object) and what an assignment replaces.
    secret(const secret&) = default;
    secret(secret&& other) noexcept : value_(std::move(other.value_)), kind_(other.kind_) {
        detail::wipe_string(other.value_);
    }
    secret& operator=(const secret& other) {
        if (this != &other) {
            detail::wipe_string(value_);
            value_ = other.value_;
            kind_ = other.kind_;
        }
        return *this;
    }
    secret& operator=(secret&& other) noexcept {
        if (this != &other) {
            detail::wipe_string(value_);
            value_ = std::move(other.value_);
            kind_ = other.kind_;
            detail::wipe_string(other.value_);
        }
        return *this;
    }
    ~secret() { detail::wipe_string(value_); }

    // The plaintext. Call only to send it where it belongs.
    [[nodiscard]] const std::string& reveal() const noexcept { return value_; }
    [[nodiscard]] secret_kind kind() const noexcept {
        return kind_ == secret_kind::signing_key || !detail::signing_key_prefix_of(value_).empty()
                   ? secret_kind::signing_key
                   : secret_kind::api_key;
    }
    // M1, M2 for an API key; for a signing key its prefix (if written with
    // one) and a '*' for every other character (B1).
    [[nodiscard]] KEYHOOK_INLINE std::string masked() const;
    [[nodiscard]] bool empty() const noexcept { return value_.empty(); }
    [[nodiscard]] std::size_t size() const noexcept { return value_.size(); }

    // Constant-time, whatever the contents; the kind is not compared.
    friend bool operator==(const secret& a, const secret& b) noexcept {
        return constant_time_equal(a.value_, b.value_);
    }
    friend bool operator!=(const secret& a, const secret& b) noexcept { return !(a == b); }

    // JSON form: the masked form. A template on the JSON type (found by ADL),
    // so that only code converting a secret needs a JSON library. No
    // from_json: a masked form does not give the secret back.
    template <class Json>
    friend void to_json(Json& j, const secret& s) {
        j = s.masked();
    }

private:
    std::string value_;
    secret_kind kind_ = secret_kind::api_key;

    // The masked form, escaped (P1): its visible characters came from input.
    friend std::ostream& operator<<(std::ostream& os, const secret& x) { return print_to(os, x); }

    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const secret& x);
};

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/secret.ipp"
#endif
