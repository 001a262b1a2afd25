// keyhook internal: received_notification's member table (detail/members.hpp).
// Included by the implementation files only, so that a program built in
// compiled mode does not instantiate it.
#pragma once

#include <tuple>

#include "keyhook/detail/members.hpp"
#include "keyhook/received_notification.hpp"

namespace keyhook {

// The member table (detail/members.hpp), in the order type errors are
// reported: the top-level members, then those of Data (the path is the
// member's place in the body). The members a reader computes are derived rows.
template <>
struct detail::members_of<received_notification> {
    static constexpr auto rows = make_rows(  //
        row<text_form>("FolderName", &received_notification::folder_name, presence::optional),
        row<text_form>("ServiceName", &received_notification::service_name, presence::optional),
        row<text_form>("EntityId", &received_notification::entity_id, presence::optional),
        row<text_form>("UserAction", &received_notification::user_action, presence::optional),
        derived_row("event", &received_notification::event),
        row<text_form>("AuditType", &received_notification::audit_type, presence::optional),
        row<text_form>("Tenant", &received_notification::tenant, presence::optional),
        row<text_form>("RequestTimeStamp", &received_notification::request_time_text, presence::optional),
        derived_row("request_time", &received_notification::request_time),
        row<text_form>("Data.FileName", &received_notification::file_name, presence::optional),
        row<text_form>("Data.ServiceVersionId", &received_notification::service_version_id, presence::optional),
        derived_row("mismatches", &received_notification::mismatches));
};
static_assert(detail::members_complete<received_notification>());

}  // namespace keyhook

// Header-only mode (and the compiled library): the record's definitions, which
// use the table. Included from here, after the table, so that this header can
// be included first as well as through received_notification.hpp.
#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/received_notification.ipp"
#endif
