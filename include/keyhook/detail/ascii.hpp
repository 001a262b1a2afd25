// keyhook: ASCII case folding and hex digits, for the protocol tokens keyhook
// compares without regard to case (header names, "success", key types, host
// names) and the bytes it writes or reads as hex. Locale-free on purpose:
// these are protocol bytes, not text. The only copy of each in keyhook.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace keyhook::detail {

constexpr char ascii_lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

constexpr bool ascii_iequal(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    return true;
}

// Hex digits by value, for escapes, percent-encoding and ids.
inline constexpr char hex_lower[] = "0123456789abcdef";
inline constexpr char hex_upper[] = "0123456789ABCDEF";

constexpr bool is_hex_digit(char c) noexcept {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// The value of a hex digit (is_hex_digit(c) must hold).
constexpr unsigned hex_value(char c) noexcept {
    return c <= '9' ? static_cast<unsigned>(c - '0') : static_cast<unsigned>(ascii_lower(c) - 'a' + 10);
}

inline std::string ascii_lower_copy(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = ascii_lower(c);
    return out;
}

}  // namespace keyhook::detail
