// keyhook: the webhook notification body of spec 6.2 as the sender writes it,
// byte for byte (rule H6), with a direct writer. Reading a received body is
// received_notification.hpp.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "keyhook/config.hpp"
#include "keyhook/detail/members.hpp"
#include "keyhook/error.hpp"
#include "keyhook/events.hpp"
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
};

// The body's member table (detail/members.hpp): each member with its path in
// the body, in the order of spec 6.2. Equality, the writers and the UTF-8
// check of try_write_notification come from it; notification_layout below
// places each member (and its Data twin) in the body.
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
    static constexpr auto rows = std::make_tuple(  //
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

[[nodiscard]] KEYHOOK_INLINE bool operator==(const notification& a, const notification& b);
[[nodiscard]] KEYHOOK_INLINE bool operator!=(const notification& a, const notification& b);

// One line for logs: the event, tenant, folder, service and time.
KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const notification& n);

// H6: appends the notification's body to `out`: compact UTF-8 JSON, members in
// the order of spec 6.2, every member a string except "RevisionId": null, the
// Data twins derived, RequestTimeStamp with exactly 3 fraction digits.
// Escaping is exactly that of nlohmann::json::dump() with its defaults.
// A field that is not valid UTF-8 gives errc::invalid_utf8 with the field's
// name as path ("FolderName", "Data.FileName") and the offset, counted from 0,
// of the first byte that does not begin well-formed UTF-8; `out` is then left
// as it was. Returns the number of bytes appended.
[[nodiscard]] KEYHOOK_INLINE result<std::size_t> try_write_notification(std::string& out, const notification& n);

// Throwing form of try_write_notification.
KEYHOOK_INLINE void write_notification(std::string& out, const notification& n);

// The body as a new string.
[[nodiscard]] KEYHOOK_INLINE result<std::string> try_notification_body(const notification& n);
[[nodiscard]] KEYHOOK_INLINE std::string notification_body(const notification& n);

// The same document as nlohmann JSON, members in order (for hosts that want to
// edit or embed it). Dumping an ordered_json gives notification_body()'s
// bytes. A template, so that ordered_json is instantiated only where used.
// An event type outside the 53 is refused as try_write_notification refuses it
// (keyhook::exception, errc::unknown_event at "UserAction").
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

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/notification.ipp"
#endif
