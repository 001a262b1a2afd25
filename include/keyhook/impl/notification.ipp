#pragma once
// keyhook: definitions of notification.hpp.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "keyhook/detail/ascii.hpp"
#include "keyhook/detail/utf8.hpp"
#include "keyhook/notification.hpp"

namespace keyhook {

KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const notification& n) {
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

// The body's fixed text, in order; each piece is followed by one value.
inline constexpr std::string_view notification_pieces[] = {
    R"({"FolderName":")",      R"(","ServiceName":")",         R"(","EntityId":")",   R"(","UserAction":")",
    R"(","AuditType":")",      R"(","Data":{"ProductName":")", R"(","EngineName":")", R"(","FileName":")",
    R"(","ProductId":")",      R"(","ServiceVersionId":")",    R"("},"Tenant":")",    R"(","RequestTimeStamp":")",
    R"(","RevisionId":null})",
};

constexpr std::size_t notification_fixed_length() noexcept {
    std::size_t n = 0;
    for (auto piece : notification_pieces) n += piece.size();
    return n;
}

inline constexpr std::size_t millis_timestamp_length = 24;  // "YYYY-MM-DDTHH:MM:SS.mmmZ"

}  // namespace detail

KEYHOOK_INLINE result<std::size_t> try_write_notification(std::string& out, const notification& n) {
    // H6: a UserAction outside the 53 (a cast from an integer) has no name to write.
    if (auto e = detail::event_value_error(n.user_action, "UserAction")) return std::move(*e);
    struct field {
        std::string_view path;
        std::string_view value;
    };
    const std::array<field, 8> fields{{
        {"FolderName", n.folder_name},
        {"ServiceName", n.service_name},
        {"EntityId", n.entity_id},
        {"AuditType", n.audit_type},
        {"Data.FileName", n.file_name},
        {"Data.ServiceVersionId", n.service_version_id},
        {"Tenant", n.tenant},
        {"UserAction", to_string(n.user_action)},
    }};
    std::array<std::size_t, 8> lengths{};
    for (std::size_t i = 0; i < fields.size(); ++i) {
        std::size_t bad_at = 0;
        const auto length = detail::escaped_json_length(fields[i].value, bad_at);
        if (!length)
            return error{errc::invalid_utf8, std::string(fields[i].path),
                         "invalid UTF-8 at byte " + std::to_string(bad_at)};
        lengths[i] = *length;
    }
    // Folder, service and entity id appear twice (their Data twins).
    const std::size_t total = detail::notification_fixed_length() + 2 * (lengths[0] + lengths[1] + lengths[2]) +
                              lengths[3] + lengths[4] + lengths[5] + lengths[6] + lengths[7] +
                              detail::millis_timestamp_length;
    // Sized once, then written through a pointer: the size is exact.
    const std::size_t start = out.size();
    out.resize(start + total);
    char* p = &out[start];
    const auto* piece = detail::notification_pieces;
    auto put = [&](std::string_view value) {
        p = detail::write_raw(p, *piece++);
        p = detail::write_escaped_json(p, value);
    };
    put(n.folder_name);
    put(n.service_name);
    put(n.entity_id);
    p = detail::write_raw(p, *piece++);
    p = detail::write_raw(p, to_string(n.user_action));  // a known name: nothing to escape
    put(n.audit_type);
    put(n.folder_name);   // Data.ProductName
    put(n.service_name);  // Data.EngineName
    put(n.file_name);
    put(n.entity_id);  // Data.ProductId
    put(n.service_version_id);
    put(n.tenant);
    p = detail::write_raw(p, *piece++);
    p = detail::write_timestamp(p, detail::clamp_to_range(n.request_time), 3);
    detail::write_raw(p, *piece);
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

KEYHOOK_INLINE bool operator==(const notification& a, const notification& b) {
    return a.folder_name == b.folder_name && a.service_name == b.service_name && a.entity_id == b.entity_id &&
           a.user_action == b.user_action && a.audit_type == b.audit_type && a.file_name == b.file_name &&
           a.service_version_id == b.service_version_id && a.tenant == b.tenant && a.request_time == b.request_time;
}

KEYHOOK_INLINE bool operator!=(const notification& a, const notification& b) { return !(a == b); }

}  // namespace keyhook
