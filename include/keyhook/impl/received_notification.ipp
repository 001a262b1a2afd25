#pragma once
// keyhook: definitions of received_notification.hpp.

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "keyhook/detail/json_members.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/received_notification.hpp"
#include "keyhook/receiving.hpp"

namespace keyhook {

KEYHOOK_INLINE bool operator==(const received_notification& a, const received_notification& b) {
    return a.folder_name == b.folder_name && a.service_name == b.service_name && a.entity_id == b.entity_id &&
           a.user_action == b.user_action && a.event == b.event && a.audit_type == b.audit_type &&
           a.file_name == b.file_name && a.service_version_id == b.service_version_id && a.tenant == b.tenant &&
           a.request_time_text == b.request_time_text && a.request_time == b.request_time &&
           a.mismatches == b.mismatches;
}

KEYHOOK_INLINE bool operator!=(const received_notification& a, const received_notification& b) { return !(a == b); }

KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const received_notification& n) {
    os << "received_notification(" << detail::quote_input(n.user_action) << (n.event ? "" : " (unknown)") << ", tenant "
       << detail::quote_input(n.tenant) << ", folder " << detail::quote_input(n.folder_name) << ", service "
       << detail::quote_input(n.service_name) << ", at " << detail::quote_input(n.request_time_text);
    for (const auto& m : n.mismatches) os << ", " << escaped(m) << " differs";
    return os << ')';
}

KEYHOOK_INLINE result<received_notification> try_parse_notification(std::string_view body, const body_limits& limits) {
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
        if (auto e = detail::take_member_string(j, m.key, std::string(), *m.target)) return std::move(*e);

    if (const auto data = j.find("Data"); data != j.end() && !data->is_null()) {
        if (!data->is_object())
            return error{errc::wrong_type, "Data", std::string("expected an object, got ") + data->type_name()};
        for (const auto& m : {member{"FileName", &r.file_name}, member{"ServiceVersionId", &r.service_version_id}})
            if (auto e = detail::take_member_string(*data, m.key, "Data", *m.target)) return std::move(*e);
        struct twin {
            const char* key;
            std::string* top_level;
        };
        for (const auto& t : {twin{"ProductName", &r.folder_name}, twin{"EngineName", &r.service_name},
                              twin{"ProductId", &r.entity_id}}) {
            const auto path = detail::path_member("Data", t.key);
            std::string value;
            if (auto e = detail::take_member_string(*data, t.key, "Data", value)) return std::move(*e);
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

KEYHOOK_INLINE received_notification parse_notification(std::string_view body, const body_limits& limits) {
    return try_parse_notification(body, limits).value();
}

KEYHOOK_INLINE result<notification> try_to_notification(const received_notification& r) {
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

KEYHOOK_INLINE notification to_notification(const received_notification& r) { return try_to_notification(r).value(); }

KEYHOOK_INLINE result<received_notification> try_receive_notification(const http_request& request,
                                                                      const secret& expected_key,
                                                                      const body_limits& limits) {
    if (auto method = try_check_method(request); !method) return method.error();
    if (auto key = try_authenticate(request, expected_key); !key) return key.error();
    return try_parse_notification(request.body, limits);
}

KEYHOOK_INLINE received_notification receive_notification(const http_request& request, const secret& expected_key,
                                                          const body_limits& limits) {
    return try_receive_notification(request, expected_key, limits).value();
}

}  // namespace keyhook
