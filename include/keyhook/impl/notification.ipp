#pragma once
// keyhook: definitions of notification.hpp.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>

#include "keyhook/detail/ascii.hpp"
#include "keyhook/detail/utf8.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/detail/notification_table.hpp"

namespace keyhook {

KEYHOOK_INLINE std::ostream& notification::print_to(std::ostream& os, const notification& n) {
    return os << "notification(" << n.user_action << ", tenant " << detail::quote_input(n.tenant) << ", folder "
              << detail::quote_input(n.folder_name) << ", service " << detail::quote_input(n.service_name) << ", at "
              << format_timestamp_millis(n.request_time) << ')';
}

namespace detail {

// How the writer treats each byte, exactly as nlohmann::json::dump() does with
// its defaults: 0 copied, 1 a two-character escape, 2 \u00xx, 3 the lead of a
// multi-byte UTF-8 sequence (validated, then copied), 4 never valid in UTF-8.
enum : std::uint8_t { json_copy = 0, json_short_escape = 1, json_unicode_escape = 2, json_utf8 = 3, json_bad = 4 };

constexpr std::array<std::uint8_t, 256> build_json_byte_classes() noexcept {
    std::array<std::uint8_t, 256> t{};
    for (std::size_t c = 0; c < 0x20; ++c) t[c] = json_unicode_escape;
    for (char c : {'\b', '\t', '\n', '\f', '\r', '"', '\\'}) t[static_cast<unsigned char>(c)] = json_short_escape;
    for (std::size_t c = 0x80; c < 0x100; ++c) t[c] = json_bad;
    for (std::size_t c = 0xC2; c <= 0xF4; ++c) t[c] = json_utf8;
    return t;
}

inline constexpr std::array<std::uint8_t, 256> json_byte_classes = build_json_byte_classes();

// utf8_sequence_length: the library's one UTF-8 walker (detail/utf8.hpp).

// The length of s once escaped, or nullopt with `bad_at` set to the offset of
// the first byte that does not begin well-formed UTF-8.
KEYHOOK_INLINE std::optional<std::size_t> escaped_json_length(std::string_view s, std::size_t& bad_at) noexcept {
    std::size_t length = s.size();
    for (std::size_t i = 0; i < s.size();) {
        switch (json_byte_classes[static_cast<unsigned char>(s[i])]) {
            case json_copy: ++i; break;
            case json_short_escape:
                ++length;
                ++i;
                break;
            case json_unicode_escape:
                length += 5;
                ++i;
                break;
            case json_utf8: {
                const std::size_t n = utf8_sequence_length(s, i);
                if (n == 0) {
                    bad_at = i;
                    return std::nullopt;
                }
                i += n;
                break;
            }
            default: bad_at = i; return std::nullopt;
        }
    }
    return length;
}

// Writes s escaped at p and returns the end. Precondition: escaped_json_length(s)
// succeeded (so multi-byte sequences are valid and copied as they are) and p
// has room for that many bytes.
KEYHOOK_INLINE char* write_escaped_json(char* p, std::string_view s) noexcept {
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        const auto cls = json_byte_classes[c];
        if (cls != json_short_escape && cls != json_unicode_escape) {
            *p++ = ch;
            continue;
        }
        *p++ = '\\';
        switch (c) {
            case '\b': *p++ = 'b'; break;
            case '\t': *p++ = 't'; break;
            case '\n': *p++ = 'n'; break;
            case '\f': *p++ = 'f'; break;
            case '\r': *p++ = 'r'; break;
            case '"': *p++ = '"'; break;
            case '\\': *p++ = '\\'; break;
            default:
                p[0] = 'u';
                p[1] = '0';
                p[2] = '0';
                p[3] = hex_lower[c >> 4];
                p[4] = hex_lower[c & 0xF];
                p += 5;
                break;
        }
    }
    return p;
}

KEYHOOK_INLINE char* write_raw(char* p, std::string_view s) noexcept {
    for (char c : s) *p++ = c;
    return p;
}

constexpr std::size_t notification_fixed_length() noexcept {
    std::size_t n = notification_end.size();
    for (const auto& slot : notification_layout) n += slot.before.size();
    return n;
}

// A member's text as the body holds it (the time is written apart).
inline std::string_view body_text(const std::string& s) noexcept { return s; }
inline std::string_view body_text(event_type e) noexcept { return to_string(e); }
inline std::string_view body_text(timestamp) noexcept { return {}; }

inline constexpr std::size_t millis_timestamp_length = 24;  // "YYYY-MM-DDTHH:MM:SS.mmmZ"

}  // namespace detail

KEYHOOK_INLINE result<std::size_t> try_write_notification(std::string& out, const notification& n) {
    // H6: a UserAction outside the 53 (a cast from an integer) has no name to write.
    if (auto e = detail::event_value_error(n.user_action, "UserAction")) return std::move(*e);
    using fields = detail::notification_fields;
    constexpr std::size_t time_row = detail::notification_row("RequestTimeStamp");
    std::array<std::string_view, fields::count> texts{};
    detail::apply_rows(
        [&](const auto&... r) {
            std::size_t i = 0;
            ((texts[i++] = detail::body_text(n.*(r.ptr))), ...);
        },
        detail::members_of<notification>::rows);
    // The escaped length of each member, checking UTF-8 in table order.
    std::array<std::size_t, fields::count> lengths{};
    for (std::size_t i = 0; i < fields::count; ++i) {
        if (i == time_row) {
            lengths[i] = detail::millis_timestamp_length;
            continue;
        }
        std::size_t bad_at = 0;
        const auto length = detail::escaped_json_length(texts[i], bad_at);
        if (!length)
            return error{errc::invalid_utf8, std::string(fields::names[i]),
                         "invalid UTF-8 at byte " + std::to_string(bad_at)};
        lengths[i] = *length;
    }
    std::size_t total = detail::notification_fixed_length();
    for (const auto& slot : detail::notification_layout) total += lengths[slot.row];
    // Sized once, then written through a pointer: the size is exact.
    const std::size_t start = out.size();
    out.resize(start + total);
    char* p = &out[start];
    for (const auto& slot : detail::notification_layout) {
        p = detail::write_raw(p, slot.before);
        if (slot.row == time_row)
            p = detail::write_timestamp(p, detail::clamp_to_range(n.request_time), 3);
        else
            p = detail::write_escaped_json(p, texts[slot.row]);  // an event name has nothing to escape
    }
    detail::write_raw(p, detail::notification_end);
    return total;
}

KEYHOOK_INLINE void write_notification(std::string& out, const notification& n) {
    (void)try_write_notification(out, n).value();
}

KEYHOOK_INLINE result<std::string> try_notification_body(const notification& n) {
    std::string body;
    if (auto written = try_write_notification(body, n); !written) return written.error();
    return body;
}

KEYHOOK_INLINE std::string notification_body(const notification& n) {
    std::string body;
    write_notification(body, n);
    return body;
}

KEYHOOK_INLINE bool notification::is_equal(const notification& a, const notification& b) { return detail::members_equal(a, b); }

}  // namespace keyhook

#if defined(KEYHOOK_BUILDING_COMPILED) && !defined(KEYHOOK_BUILDING_COMPILED_CRYPTO)
// Compiled mode: the JSON form a program's translation units only declare.
#include <nlohmann/json.hpp>
namespace keyhook {
template void to_json<nlohmann::json>(nlohmann::json&, const notification&);
template void to_json<nlohmann::ordered_json>(nlohmann::ordered_json&, const notification&);
}  // namespace keyhook
#endif
