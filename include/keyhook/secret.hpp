// keyhook: secrets. Masking (rules M1 to M3), constant-time comparison, and the
// `secret` type whose printing, JSON and hashing never show what it holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "keyhook/detail/wipe.hpp"

#include "keyhook/detail/constant_time.hpp"

namespace keyhook {

// Keys shorter than this are masked entirely (M2).
inline constexpr std::size_t min_partly_masked_length = 12;
inline constexpr std::size_t mask_visible_head = 3;
inline constexpr std::size_t mask_visible_tail = 3;

namespace detail {
// Length of the UTF-8 sequence that starts with lead byte c; 1 for a stray
// continuation or invalid byte, so every byte belongs to exactly one unit.
constexpr std::size_t utf8_unit_length(unsigned char c) noexcept {
    if (c < 0xC0) return 1;
    if (c < 0xE0) return 2;
    if (c < 0xF0) return 3;
    if (c < 0xF8) return 4;
    return 1;
}

// Splits s into code points (invalid bytes count one each); calls f(offset, length).
template <class F>
void for_each_code_point(std::string_view s, F&& f) {
    std::size_t i = 0;
    while (i < s.size()) {
        std::size_t n = utf8_unit_length(static_cast<unsigned char>(s[i]));
        if (n > s.size() - i) n = 1;
        for (std::size_t k = 1; k < n; ++k) {
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) {
                n = 1;
                break;
            }
        }
        f(i, n);
        i += n;
    }
}
}  // namespace detail

// Number of code points in s (M1 counts characters, not bytes).
[[nodiscard]] inline std::size_t code_point_count(std::string_view s) {
    std::size_t n = 0;
    detail::for_each_code_point(s, [&](std::size_t, std::size_t) { ++n; });
    return n;
}

// M1, M2: same number of characters as the key, the first 3 and last 3 visible,
// every other one '*'; keys of fewer than 12 characters entirely '*'.
[[nodiscard]] inline std::string mask_key(std::string_view key) {
    const std::size_t count = code_point_count(key);
    std::string out;
    out.reserve(key.size());
    const bool partly = count >= min_partly_masked_length;
    std::size_t index = 0;
    detail::for_each_code_point(key, [&](std::size_t offset, std::size_t length) {
        if (partly && (index < mask_visible_head || index >= count - mask_visible_tail))
            out.append(key.data() + offset, length);
        else
            out += '*';
        ++index;
    });
    return out;
}

// Equality whose running time depends only on the lengths, never on where the
// inputs first differ (K10, H7, B1).
// The loop and its test probe are in detail/constant_time.hpp (finding 19).
[[nodiscard]] inline bool constant_time_equal(std::string_view a, std::string_view b) noexcept {
    return detail::constant_time_equal_bytes(a, b);
}

// A secret (an API key, a webhook's authentication value, a signing secret).
// It shows only its masked form when printed or converted to JSON (M3); the
// plaintext is reached through reveal(), which is easy to search for.
class secret {
public:
    secret() = default;
    explicit secret(std::string plaintext) noexcept : value_(std::move(plaintext)) {}
    // Issue 14 item 4: every buffer that held the plaintext is wiped when
    // released, including what a move leaves behind (a short string's bytes
    // stay in the moved-from object) and what an assignment replaces.
    secret(const secret&) = default;
    secret(secret&& other) noexcept : value_(std::move(other.value_)) {
        detail::wipe_string(other.value_);
    }
    secret& operator=(const secret& other) {
        if (this != &other) {
            detail::wipe_string(value_);
            value_ = other.value_;
        }
        return *this;
    }
    secret& operator=(secret&& other) noexcept {
        if (this != &other) {
            detail::wipe_string(value_);
            value_ = std::move(other.value_);
            detail::wipe_string(other.value_);
        }
        return *this;
    }
    ~secret() { detail::wipe_string(value_); }

    // The plaintext. Call only to send it where it belongs.
    [[nodiscard]] const std::string& reveal() const noexcept { return value_; }
    [[nodiscard]] std::string masked() const { return mask_key(value_); }
    [[nodiscard]] bool empty() const noexcept { return value_.empty(); }
    [[nodiscard]] std::size_t size() const noexcept { return value_.size(); }

    // Constant-time, whatever the contents.
    friend bool operator==(const secret& a, const secret& b) noexcept {
        return constant_time_equal(a.value_, b.value_);
    }
    friend bool operator!=(const secret& a, const secret& b) noexcept { return !(a == b); }

    friend std::ostream& operator<<(std::ostream& os, const secret& s) { return os << "secret(" << s.masked() << ')'; }
    // A template, so that a JSON type is instantiated only by code that uses it.
    template <class Json>
    friend void to_json(Json& j, const secret& s) {
        j = s.masked();
    }

private:
    std::string value_;
};

}  // namespace keyhook
