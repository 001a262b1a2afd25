// keyhook internal: the notification body's member table (detail/members.hpp),
// each member with its path in the body in the order of spec 6.2, and its
// layout (H6). Equality, the writers and the UTF-8 check of
// try_write_notification come from the table; notification_layout places each
// member (and its Data twin) in the body. Included by the implementation files
// only, so that a program built in compiled mode does not instantiate them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "keyhook/detail/members.hpp"
#include "keyhook/error.hpp"
#include "keyhook/events.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

namespace detail {

inline std::string_view event_text(event_type e) noexcept { return to_string(e); }
inline error unknown_event_text(std::string path, std::string_view) {
    return error{errc::unknown_event, std::move(path), "not one of the 53 event types of spec 6.1"};
}
using event_type_form = enum_form<event_type, find_event_type, unknown_event_text, event_text>;

// RequestTimeStamp: written with exactly 3 fraction digits (H6).
struct millis_time_form : time_form {
    static std::string write(timestamp t) { return format_timestamp_millis(t); }
};

template <>
struct members_of<notification> {
    static constexpr auto rows = make_rows(  //
        row<text_form>("FolderName", &notification::folder_name, presence::required),
        row<text_form>("ServiceName", &notification::service_name, presence::required),
        row<text_form>("EntityId", &notification::entity_id, presence::required),
        row<event_type_form>("UserAction", &notification::user_action, presence::required),
        row<text_form>("AuditType", &notification::audit_type, presence::required),
        row<text_form>("Data.FileName", &notification::file_name, presence::required),
        row<text_form>("Data.ServiceVersionId", &notification::service_version_id, presence::required),
        row<text_form>("Tenant", &notification::tenant, presence::required),
        row<millis_time_form>("RequestTimeStamp", &notification::request_time, presence::required));
};
static_assert(members_complete<notification>());

using notification_fields = member_index<notification>;

constexpr std::size_t notification_row(std::string_view path) noexcept {
    for (std::size_t i = 0; i < notification_fields::count; ++i)
        if (notification_fields::names[i] == path) return i;
    return notification_fields::none;
}

// The body in order (H6): each slot is fixed text, then one member's value
// (`row` of the table) at `path`. The Data twins repeat a top-level member.
struct body_slot {
    std::string_view before;
    std::string_view path;
    std::size_t row;
};

inline constexpr body_slot notification_layout[] = {
    {R"({"FolderName":")", "FolderName", notification_row("FolderName")},
    {R"(","ServiceName":")", "ServiceName", notification_row("ServiceName")},
    {R"(","EntityId":")", "EntityId", notification_row("EntityId")},
    {R"(","UserAction":")", "UserAction", notification_row("UserAction")},
    {R"(","AuditType":")", "AuditType", notification_row("AuditType")},
    {R"(","Data":{"ProductName":")", "Data.ProductName", notification_row("FolderName")},
    {R"(","EngineName":")", "Data.EngineName", notification_row("ServiceName")},
    {R"(","FileName":")", "Data.FileName", notification_row("Data.FileName")},
    {R"(","ProductId":")", "Data.ProductId", notification_row("EntityId")},
    {R"(","ServiceVersionId":")", "Data.ServiceVersionId", notification_row("Data.ServiceVersionId")},
    {R"("},"Tenant":")", "Tenant", notification_row("Tenant")},
    {R"(","RequestTimeStamp":")", "RequestTimeStamp", notification_row("RequestTimeStamp")},
};
inline constexpr std::string_view notification_end = R"(","RevisionId":null})";

// Every slot names a row, and every row has a slot.
constexpr bool notification_layout_complete() noexcept {
    for (const auto& slot : notification_layout)
        if (slot.row >= notification_fields::count) return false;
    for (std::size_t i = 0; i < notification_fields::count; ++i) {
        bool placed = false;
        for (const auto& slot : notification_layout) placed = placed || slot.row == i;
        if (!placed) return false;
    }
    return true;
}
static_assert(notification_layout_complete(), "every member of notification has its place in notification_layout");

}  // namespace detail

template <class Json>
void to_json(Json& j, const notification& n) {
    if (auto bad = detail::event_value_error(n.user_action, "UserAction")) throw exception(std::move(*bad));
    Json flat;  // the members by their table path ("Data.FileName"), as written
    detail::write_members(flat, n);
    j = Json::object();
    for (const auto& slot : detail::notification_layout) {
        const auto& value = flat[std::string(detail::notification_fields::names[slot.row])];
        if (slot.path.substr(0, 5) == "Data.") {
            auto& data = j["Data"];
            if (data.is_null()) data = Json::object();
            data[std::string(slot.path.substr(5))] = value;
        } else {
            j[std::string(slot.path)] = value;
        }
    }
    j["RevisionId"] = nullptr;
}

}  // namespace keyhook

// Header-only mode (and the compiled library): the record's definitions, which
// use the table. Included from here, after the table, so that this header can
// be included first as well as through notification.hpp.
#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/notification.ipp"
#endif
