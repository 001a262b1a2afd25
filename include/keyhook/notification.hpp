// keyhook: the webhook notification body of spec 6.2 as the sender writes it,
// byte for byte (rule H6), with a direct writer. Reading a received body is
// received_notification.hpp.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "keyhook/config.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
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

    friend bool operator==(const notification& a, const notification& b) { return is_equal(a, b); }
    friend bool operator!=(const notification& a, const notification& b) { return !(a == b); }
    // One line for logs: the event, tenant, folder, service and time.
    friend std::ostream& operator<<(std::ostream& os, const notification& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const notification& a, const notification& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const notification& x);
};

// The body's member table and layout are in detail/notification_table.hpp.

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
// In compiled mode the library provides it for nlohmann::json and ordered_json.
template <class Json>
void to_json(Json& j, const notification& n);

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
// The member table, which includes the definitions (impl/notification.ipp) at its end.
#include "keyhook/detail/notification_table.hpp"
#endif
