// Helpers shared by the fuzz targets (not a target itself: the glob takes
// fuzz_*.cpp only). Reference checks here are written independently of the
// library, so that a fuzzer compares two implementations, not one with itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/error.hpp"

// A target's entry point: KEYHOOK_FUZZ_TARGET(key_list) { ... } in
// fuzz_key_list.cpp. The targets are compiled a few to an object, so that the
// templates they share are instantiated once (fuzz/CMakeLists.txt); each
// therefore has a name of its own, and each executable's
// LLVMFuzzerTestOneInput calls its target's.
#define KEYHOOK_FUZZ_TARGET(name) extern "C" int keyhook_fuzz_##name(const std::uint8_t* data, std::size_t size)

namespace fuzz {

// A property failed: say which, and abort so libFuzzer saves the input.
[[noreturn]] inline void fail(const char* what, std::string_view detail = {}) {
    std::fprintf(stderr, "property violated: %s\n", what);
    if (!detail.empty())
        std::fprintf(stderr, "  %.*s\n", static_cast<int>(detail.size() > 400 ? 400 : detail.size()), detail.data());
    std::abort();
}

inline void check(bool ok, const char* what, std::string_view detail = {}) {
    if (!ok) fail(what, detail);
}

inline bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

inline bool has_cr_lf_nul(std::string_view s) {
    return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

// Offset of the first byte that does not start a well-formed UTF-8 sequence
// (RFC 3629 table 3-7), or npos when s is valid.
inline std::size_t first_invalid_utf8(std::string_view s) {
    std::size_t i = 0;
    const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    while (i < s.size()) {
        const unsigned char b = at(i);
        std::size_t n = 0;
        unsigned char lo = 0x80, hi = 0xBF;
        if (b <= 0x7F) {
            ++i;
            continue;
        }
        if (b >= 0xC2 && b <= 0xDF)
            n = 2;
        else if (b == 0xE0) {
            n = 3;
            lo = 0xA0;
        } else if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF)
            n = 3;
        else if (b == 0xED) {
            n = 3;
            hi = 0x9F;
        } else if (b == 0xF0) {
            n = 4;
            lo = 0x90;
        } else if (b >= 0xF1 && b <= 0xF3)
            n = 4;
        else if (b == 0xF4) {
            n = 4;
            hi = 0x8F;
        } else
            return i;
        if (i + n > s.size()) return i;
        if (at(i + 1) < lo || at(i + 1) > hi) return i;
        for (std::size_t k = 2; k < n; ++k)
            if (at(i + k) < 0x80 || at(i + k) > 0xBF) return i;
        i += n;
    }
    return std::string_view::npos;
}

// Every string value and member name in j, depth first.
inline void collect_strings(const nlohmann::json& j, std::vector<std::string>& out, std::size_t depth = 0) {
    if (depth > 200) return;
    if (j.is_string()) {
        out.push_back(j.get<std::string>());
    } else if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            out.push_back(it.key());
            collect_strings(it.value(), out, depth + 1);
        }
    } else if (j.is_array()) {
        for (const auto& v : j) collect_strings(v, out, depth + 1);
    }
}

// Messages quote at most 64 bytes of untrusted input: no message may hold a
// whole string longer than that. A string is quoted whole when its escaped
// form (quote_input without a limit, quotes stripped) appears: the raw bytes
// can appear by chance inside the escaping of a shorter prefix (64 '\' are
// written as 128), whatever the escaping is (P1).
inline bool quotes_whole(const keyhook::error& e, const std::string& s) {
    if (s.size() <= 64) return false;
    const std::string quoted = keyhook::detail::quote_input(s, static_cast<std::size_t>(-1));
    if (quoted.size() < 2) return false;
    const std::string_view escaped = std::string_view(quoted).substr(1, quoted.size() - 2);
    return e.message.find(escaped) != std::string::npos;
}
inline void check_no_long_quote(const keyhook::error& e, const std::vector<std::string>& strings) {
    for (const auto& s : strings)
        if (quotes_whole(e, s)) fail("an error message quotes more than 64 bytes", e.message);
}

// Parses JSON without exceptions, refusing deep nesting first (nlohmann's DOM
// parser is iterative, but the DOM's destructor recurses).
inline bool parse_json(std::string_view text, nlohmann::json& out, std::size_t max_depth = 128) {
    // nlohmann's lexer takes a NUL byte for the end of the input; keyhook refuses the text
    // (JSON never holds a raw NUL), so nlohmann's reading is no oracle for it.
    if (text.find('\0') != std::string_view::npos) return false;
    std::size_t depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (char c : text) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '[' || c == '{') {
            if (++depth > deepest) deepest = depth;
        } else if ((c == ']' || c == '}') && depth > 0)
            --depth;
    }
    if (deepest > max_depth) return false;
    out = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    return !out.is_discarded();
}

}  // namespace fuzz
