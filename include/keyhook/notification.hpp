// keyhook: the webhook notification body of spec 6.2. Writing it byte for byte
// (rule H6) with a direct writer, and reading a received body tolerantly (H7).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/error.hpp"
#include "keyhook/events.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// Usual values of AuditType (spec 6.2): a folder, or a service.
inline constexpr std::string_view audit_type_product = "Product";
inline constexpr std::string_view audit_type_product_engine = "ProductEngine";

// One event as the platform sends it. Data.ProductName, Data.EngineName and
// Data.ProductId are not stored: H6 makes them equal to folder_name,
// service_name and entity_id, so the writer derives them (one source of truth).
// An empty string is written as "" (H6: a value not given).
struct notification {
    std::string folder_name;                             // FolderName, and Data.ProductName
    std::string service_name;                            // ServiceName, and Data.EngineName
    std::string entity_id;                               // EntityId (the folder's id), and Data.ProductId
    event_type user_action = event_type::PlatformLogin;  // UserAction
    std::string audit_type;                              // AuditType, e.g. "Product" or "ProductEngine"
    std::string file_name;                               // Data.FileName
    std::string service_version_id;                      // Data.ServiceVersionId
    std::string tenant;                                  // Tenant
    timestamp request_time{};                            // RequestTimeStamp, written with 3 fraction digits

    friend bool operator==(const notification& a, const notification& b) {
        return a.folder_name == b.folder_name && a.service_name == b.service_name && a.entity_id == b.entity_id &&
               a.user_action == b.user_action && a.audit_type == b.audit_type && a.file_name == b.file_name &&
               a.service_version_id == b.service_version_id && a.tenant == b.tenant && a.request_time == b.request_time;
    }
    friend bool operator!=(const notification& a, const notification& b) { return !(a == b); }

    // One line for logs: the event, tenant, folder, service and time.
    friend std::ostream& operator<<(std::ostream& os, const notification& n) {
        return os << "notification(" << n.user_action << ", tenant " << detail::quote_input(n.tenant) << ", folder "
                  << detail::quote_input(n.folder_name) << ", service " << detail::quote_input(n.service_name)
                  << ", at " << format_timestamp_millis(n.request_time) << ')';
    }
};

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
inline std::optional<std::size_t> escaped_json_length(std::string_view s, std::size_t& bad_at) noexcept {
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
inline char* write_escaped_json(char* p, std::string_view s) noexcept {
    static constexpr char hex[] = "0123456789abcdef";
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
                p[3] = hex[c >> 4];
                p[4] = hex[c & 0xF];
                p += 5;
                break;
        }
    }
    return p;
}

inline char* write_raw(char* p, std::string_view s) noexcept {
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

// H6: appends the notification's body to `out`: compact UTF-8 JSON, members in
// the order of spec 6.2, every member a string except "RevisionId": null, the
// Data twins derived, RequestTimeStamp with exactly 3 fraction digits.
// Escaping is exactly that of nlohmann::json::dump() with its defaults.
// A field that is not valid UTF-8 gives errc::invalid_utf8 with the field's
// name as path ("FolderName", "Data.FileName") and the offset, counted from 0,
// of the first byte that does not begin well-formed UTF-8; `out` is then left
// as it was. Returns the number of bytes appended.
[[nodiscard]] inline result<std::size_t> try_write_notification(std::string& out, const notification& n) {
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

// Throwing form of try_write_notification.
inline void write_notification(std::string& out, const notification& n) {
    (void)try_write_notification(out, n).value();
}

// The body as a new string.
[[nodiscard]] inline result<std::string> try_notification_body(const notification& n) {
    std::string body;
    if (auto written = try_write_notification(body, n); !written) return written.error();
    return body;
}

[[nodiscard]] inline std::string notification_body(const notification& n) {
    std::string body;
    write_notification(body, n);
    return body;
}

// The same document as nlohmann JSON, members in order (for hosts that want to
// edit or embed it). Dumping an ordered_json gives notification_body()'s
// bytes. A template, so that ordered_json is instantiated only where used.
template <class Json>
void to_json(Json& j, const notification& n) {
    j = Json::object();
    j["FolderName"] = n.folder_name;
    j["ServiceName"] = n.service_name;
    j["EntityId"] = n.entity_id;
    j["UserAction"] = std::string(to_string(n.user_action));
    j["AuditType"] = n.audit_type;
    auto& data = j["Data"];
    data = Json::object();
    data["ProductName"] = n.folder_name;
    data["EngineName"] = n.service_name;
    data["FileName"] = n.file_name;
    data["ProductId"] = n.entity_id;
    data["ServiceVersionId"] = n.service_version_id;
    j["Tenant"] = n.tenant;
    j["RequestTimeStamp"] = format_timestamp_millis(n.request_time);
    j["RevisionId"] = nullptr;
}

// ---------------------------------------------------------------------------
// Reading a received body (H7).

// A body as received. Tolerant (H7): unknown members are ignored, missing (or
// null) members read as "", RevisionId is ignored whatever it holds. UserAction
// is kept as sent, with `event` set only when it names one of the 53 types,
// and RequestTimeStamp likewise with `request_time` set only when it reads as
// a T1 timestamp: a receiver can still log and route what it does not know.
// The Data twins: the top-level member wins; when it is missing or empty, its
// Data twin fills in; when both are non-empty and differ, the Data member's
// path ("Data.ProductName", ...) is listed in `mismatches` (not an error).
struct received_notification {
    std::string folder_name;
    std::string service_name;
    std::string entity_id;
    std::string user_action;
    std::optional<event_type> event;
    std::string audit_type;
    std::string file_name;
    std::string service_version_id;
    std::string tenant;
    std::string request_time_text;
    std::optional<timestamp> request_time;
    std::vector<std::string> mismatches;

    friend bool operator==(const received_notification& a, const received_notification& b) {
        return a.folder_name == b.folder_name && a.service_name == b.service_name && a.entity_id == b.entity_id &&
               a.user_action == b.user_action && a.event == b.event && a.audit_type == b.audit_type &&
               a.file_name == b.file_name && a.service_version_id == b.service_version_id && a.tenant == b.tenant &&
               a.request_time_text == b.request_time_text && a.request_time == b.request_time &&
               a.mismatches == b.mismatches;
    }
    friend bool operator!=(const received_notification& a, const received_notification& b) { return !(a == b); }

    friend std::ostream& operator<<(std::ostream& os, const received_notification& n) {
        os << "received_notification(" << detail::quote_input(n.user_action) << (n.event ? "" : " (unknown)")
           << ", tenant " << detail::quote_input(n.tenant) << ", folder " << detail::quote_input(n.folder_name)
           << ", service " << detail::quote_input(n.service_name) << ", at "
           << detail::quote_input(n.request_time_text);
        for (const auto& m : n.mismatches) os << ", " << escaped(m) << " differs";
        return os << ')';
    }
};

// Bounds on what a receiver reads: a larger or deeper body is refused with
// errc::limit_exceeded before or while parsing.
struct body_limits {
    std::size_t max_bytes = std::size_t{1} << 20;  // 1 MiB; a real body is under 1 KiB
    std::size_t max_depth = 16;                    // the body itself nests 2 deep
};

namespace detail {

// The string at `key` of object j, moved out (J3: the body is held once), or
// nullopt when absent or null; any other JSON type is an error naming `path`.
inline std::optional<error> read_string_member(nlohmann::json& j, const char* key, std::string_view path,
                                               std::string& out) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) return wrong_type(std::string(path), "a string", *it);
    out = std::move(it->get_ref<std::string&>());
    return std::nullopt;
}

}  // namespace detail

// H7: reads a received body. Errors: errc::limit_exceeded (too large or too
// deep), errc::syntax_error (not JSON, with the byte offset; nothing of the
// body is quoted), errc::wrong_type (the body is not an object, Data is not an
// object, or a member is not a string; the path names it, such as
// "Data.FileName: expected a string, got number").
[[nodiscard]] inline result<received_notification> try_parse_notification(std::string_view body,
                                                                          const body_limits& limits = {}) {
    if (body.size() > limits.max_bytes)
        return error{errc::limit_exceeded,
                     {},
                     "body of " + std::to_string(body.size()) + " bytes exceeds the limit of " +
                         std::to_string(limits.max_bytes)};
    // nlohmann's lexer takes a NUL byte for the end of input and would ignore
    // what follows; JSON text never holds a raw NUL, so refuse it here.
    if (const auto nul = body.find('\0'); nul != std::string_view::npos)
        return error{errc::syntax_error,
                     {},
                     "expected a JSON body, syntax error at byte " + std::to_string(nul + 1) + " (a NUL byte)"};
    // The strict reader (J1-J3): depth checked before each container opens,
    // repeated member names and numbers out of range refused with their path.
    json_limits strict;
    strict.max_bytes = limits.max_bytes;
    strict.max_depth = limits.max_depth;
    auto parsed = try_parse_json(body, strict);
    if (!parsed) {
        error e = parsed.error();
        if (e.code == errc::limit_exceeded && e.message.rfind("nested deeper", 0) == 0)
            return error{
                errc::limit_exceeded, {}, "body nests deeper than the limit of " + std::to_string(limits.max_depth)};
        // Malformed text (invalid UTF-8 included): nothing of the body is quoted.
        if (e.code == errc::syntax_error || e.code == errc::invalid_utf8)
            return error{errc::syntax_error, {}, "expected a JSON body, " + e.message};
        return e;
    }
    nlohmann::json& j = *parsed;
    if (!j.is_object()) return detail::wrong_type({}, "a JSON object", j);

    received_notification r;
    struct member {
        const char* key;
        std::string* target;
    };
    const member top[] = {
        {"FolderName", &r.folder_name},
        {"ServiceName", &r.service_name},
        {"EntityId", &r.entity_id},
        {"UserAction", &r.user_action},
        {"AuditType", &r.audit_type},
        {"Tenant", &r.tenant},
        {"RequestTimeStamp", &r.request_time_text},
    };
    for (const auto& m : top)
        if (auto e = detail::read_string_member(j, m.key, m.key, *m.target)) return std::move(*e);

    if (const auto data = j.find("Data"); data != j.end() && !data->is_null()) {
        if (!data->is_object())
            return error{errc::wrong_type, "Data", std::string("expected an object, got ") + data->type_name()};
        for (const auto& m : {member{"FileName", &r.file_name}, member{"ServiceVersionId", &r.service_version_id}})
            if (auto e = detail::read_string_member(*data, m.key, detail::path_member("Data", m.key), *m.target))
                return std::move(*e);
        struct twin {
            const char* key;
            std::string* top_level;
        };
        for (const auto& t : {twin{"ProductName", &r.folder_name}, twin{"EngineName", &r.service_name},
                              twin{"ProductId", &r.entity_id}}) {
            const auto path = detail::path_member("Data", t.key);
            std::string value;
            if (auto e = detail::read_string_member(*data, t.key, path, value)) return std::move(*e);
            if (t.top_level->empty())
                *t.top_level = std::move(value);
            else if (!value.empty() && value != *t.top_level)
                r.mismatches.push_back(path);
        }
    }
    r.event = find_event_type(r.user_action);
    timestamp t{};
    if (detail::parse_timestamp_into(r.request_time_text, t)) r.request_time = t;
    return r;
}

[[nodiscard]] inline received_notification parse_notification(std::string_view body, const body_limits& limits = {}) {
    return try_parse_notification(body, limits).value();
}

// A received notification as a `notification`, when it is complete enough:
// UserAction must name a known type (errc::unknown_event, path "UserAction",
// with a suggestion) and RequestTimeStamp must be a T1 timestamp
// (errc::invalid_timestamp, path "RequestTimeStamp").
[[nodiscard]] inline result<notification> try_to_notification(const received_notification& r) {
    notification n;
    auto event = r.event ? result<event_type>(*r.event) : try_parse_event_type(r.user_action);
    if (!event) {
        error e = event.error();
        e.path = "UserAction";
        return e;
    }
    n.user_action = *event;
    auto when = r.request_time ? result<timestamp>(*r.request_time) : try_parse_timestamp(r.request_time_text);
    if (!when) {
        error e = when.error();
        e.path = "RequestTimeStamp";
        return e;
    }
    n.request_time = *when;
    n.folder_name = r.folder_name;
    n.service_name = r.service_name;
    n.entity_id = r.entity_id;
    n.audit_type = r.audit_type;
    n.file_name = r.file_name;
    n.service_version_id = r.service_version_id;
    n.tenant = r.tenant;
    return n;
}

[[nodiscard]] inline notification to_notification(const received_notification& r) {
    return try_to_notification(r).value();
}

}  // namespace keyhook
