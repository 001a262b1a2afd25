// keyhook: definitions of escape.hpp (see config.hpp for when they are compiled).
#pragma once

#include <ostream>
#include <string>

#include "keyhook/detail/ascii.hpp"
#include "keyhook/detail/utf8.hpp"
#include "keyhook/escape.hpp"

namespace keyhook {
namespace detail {

// Appends "\x" or "\u" and the low `digits` hex digits of c.
inline void append_hex_escape(std::string& out, char32_t c, char kind, int digits) {
    out += '\\';
    out += kind;
    for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += hex_lower[c >> shift & 0xF];
}

KEYHOOK_INLINE void append_escaped(std::string& out, std::string_view s, escape_style style) {
    for_each_utf8_unit(s, [&](const utf8_unit& u) {
        const char32_t c = u.code_point;
        if (!u.valid || c < 0x20 || c == 0x7F) {
            append_hex_escape(out, c, 'x', 2);
        } else if (is_unsafe_to_print(c)) {
            append_hex_escape(out, c, 'u', 4);
        } else if ((c == '\\' && style != escape_style::composed) || (c == '"' && style == escape_style::quoted)) {
            out += '\\';
            out += static_cast<char>(c);
        } else {
            out.append(s.data() + u.offset, u.length);
        }
    });
}

}  // namespace detail

KEYHOOK_INLINE std::string escape_text(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    detail::append_escaped(out, s);
    return out;
}

KEYHOOK_INLINE std::string escape_json_text(std::string_view json) {
    std::string out;
    out.reserve(json.size());
    detail::for_each_utf8_unit(json, [&](const detail::utf8_unit& u) {
        const char32_t c = u.code_point;
        if (!u.valid) {
            out += "\\ufffd";
        } else if (c >= 0x7F && detail::is_unsafe_to_print(c)) {
            detail::append_hex_escape(out, c, 'u', 4);
        } else {
            out.append(json.data() + u.offset, u.length);
        }
    });
    return out;
}

KEYHOOK_INLINE std::ostream& escaped_text::print_to(std::ostream& os, escaped_text e) { return os << escape_text(e.text); }

KEYHOOK_INLINE std::string quoted_input(std::string_view s, std::size_t limit) {
    const bool cut = s.size() > limit;
    if (cut) s = s.substr(0, detail::utf8_prefix_length(s, limit));
    std::string out;
    out.reserve(s.size() + 8);
    out += '"';
    detail::append_escaped(out, s, detail::escape_style::quoted);
    out += cut ? "\"..." : "\"";
    return out;
}

namespace detail {

KEYHOOK_INLINE std::string quote_input(std::string_view s, std::size_t limit) { return quoted_input(s, limit); }

KEYHOOK_INLINE void print_quoted(std::ostream& os, std::string_view text) {
    std::string out = "\"";
    append_escaped(out, text, escape_style::quoted);
    os << out << '"';
}

}  // namespace detail
}  // namespace keyhook
