// keyhook: ASCII case folding, for the protocol tokens keyhook compares
// without regard to case (header names, "success", key types, host names).
// Locale-free on purpose: these are protocol bytes, not text.
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

inline std::string ascii_lower_copy(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = ascii_lower(c);
    return out;
}

}  // namespace keyhook::detail
