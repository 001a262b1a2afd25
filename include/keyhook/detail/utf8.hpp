// keyhook: the library's one UTF-8 walker (RFC 3629). Masking (M1), text
// validation (K3, H1), escaping for printing (P1) and the JSON writer (H6)
// all split text with it, so they agree on what one character is:
// - a well-formed sequence is one code point;
// - every byte of an ill-formed one (overlong forms, surrogates, values past
//   U+10FFFF, the bytes C0, C1 and F5 to FF, stray continuation bytes, a
//   truncated sequence) is a unit of its own, one byte long, and not valid.
#pragma once

#include <cstddef>
#include <string_view>

namespace keyhook::detail {

// Length of the well-formed UTF-8 sequence starting at s[i] (1 for ASCII), or
// 0 when none starts there. Precondition: i < s.size().
constexpr std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
    const auto lead = static_cast<unsigned char>(s[i]);
    if (lead < 0x80) return 1;
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte (RFC 3629 table)
    if (lead >= 0xC2 && lead <= 0xDF) {
        n = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        n = 3;
        if (lead == 0xE0) lo = 0xA0;  // no overlong 3-byte forms
        if (lead == 0xED) hi = 0x9F;  // no surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        n = 4;
        if (lead == 0xF0) lo = 0x90;  // no overlong 4-byte forms
        if (lead == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
    } else {
        return 0;
    }
    if (s.size() - i < n) return 0;
    const auto second = static_cast<unsigned char>(s[i + 1]);
    if (second < lo || second > hi) return 0;
    for (std::size_t k = 2; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
    return n;
}

// One unit of text: a code point, or one byte that begins no well-formed sequence.
struct utf8_unit {
    std::size_t offset = 0;
    std::size_t length = 1;
    char32_t code_point = 0;  // the byte's value when !valid
    bool valid = true;
};

// The unit at s[i]. Precondition: i < s.size().
constexpr utf8_unit utf8_unit_at(std::string_view s, std::size_t i) noexcept {
    const std::size_t n = utf8_sequence_length(s, i);
    const auto lead = static_cast<unsigned char>(s[i]);
    if (n == 0) return {i, 1, lead, false};
    if (n == 1) return {i, 1, lead, true};
    char32_t cp = lead & (0x7Fu >> n);
    for (std::size_t k = 1; k < n; ++k) cp = cp << 6 | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
    return {i, n, cp, true};
}

// Calls f(utf8_unit) for each unit of s, in order; every byte belongs to exactly one.
template <class F>
constexpr void for_each_utf8_unit(std::string_view s, F&& f) {
    for (std::size_t i = 0; i < s.size();) {
        const auto u = utf8_unit_at(s, i);
        f(u);
        i += u.length;
    }
}

// Offset of the first byte that begins no well-formed sequence; npos when s is valid UTF-8.
constexpr std::size_t first_invalid_utf8(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_sequence_length(s, i);
        if (n == 0) return i;
        i += n;
    }
    return std::string_view::npos;
}

constexpr bool is_valid_utf8(std::string_view s) noexcept { return first_invalid_utf8(s) == std::string_view::npos; }

// The length of the longest prefix of s of at most `limit` bytes that splits no unit.
constexpr std::size_t utf8_prefix_length(std::string_view s, std::size_t limit) noexcept {
    std::size_t end = 0;
    while (end < s.size()) {
        const std::size_t next = end + utf8_unit_at(s, end).length;
        if (next > limit) break;
        end = next;
    }
    return end;
}

}  // namespace keyhook::detail
