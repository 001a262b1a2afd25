// keyhook: a notification body as a receiver reads it (rule H7): tolerantly,
// within limits, keeping what it does not know.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/events.hpp"
#include "keyhook/http.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/receiving.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

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

    // Its member table is in detail/received_notification_table.hpp.
    friend bool operator==(const received_notification& a, const received_notification& b) { return is_equal(a, b); }
    friend bool operator!=(const received_notification& a, const received_notification& b) { return !(a == b); }
    // One line for logs; a Data twin that differs is named.
    friend std::ostream& operator<<(std::ostream& os, const received_notification& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const received_notification& a, const received_notification& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const received_notification& x);
};

// Bounds on what a receiver reads: a larger or deeper body is refused with
// errc::limit_exceeded before or while parsing.
struct body_limits {
    std::size_t max_bytes = std::size_t{1} << 20;  // 1 MiB; a real body is under 1 KiB
    std::size_t max_depth = 16;                    // the body itself nests 2 deep
};

// H7: reads a received body. Errors: errc::limit_exceeded (too large, or too
// deep: the depth is counted before the body is parsed, H9), errc::syntax_error
// (not JSON, with the byte offset; nothing of the body is quoted),
// errc::duplicate_member (a member name repeated in one object, J1, with its
// path), errc::out_of_range (a number past what a double holds, J2, with its
// path), errc::wrong_type (the body is not an object, Data is not an object,
// or a member is not a string; the path names it, such as "Data.FileName:
// expected a string, got number").
//
// This and the other readers below are deferred definitions (config.hpp).
template <class D = void>
[[nodiscard]] KEYHOOK_INLINE result<received_notification> try_parse_notification(std::string_view body,
                                                                                  const body_limits& limits = {});
template <class D = void>
[[nodiscard]] KEYHOOK_INLINE received_notification parse_notification(std::string_view body,
                                                                      const body_limits& limits = {});

namespace detail {
// try_parse_notification's two readers, declared for the differential tests
// and the fuzzer, which check that they agree:
// - the canonical one reads only the layout try_write_notification writes
//   (H6: spec 6.2's members in order, no white space, RevisionId null) with
//   values that hold no escape sequence (any text otherwise: an unknown
//   UserAction, any RequestTimeStamp, Data twins that differ), and answers
//   false for anything else, leaving `out` unspecified; it is what the
//   platform sends, read in one pass without a parser;
// - the general one is nlohmann's SAX parser with H7's handler, for any body.
[[nodiscard]] KEYHOOK_INLINE bool read_canonical_notification(std::string_view body, received_notification& out);
template <class D = void>
[[nodiscard]] KEYHOOK_INLINE result<received_notification> parse_received_body(std::string_view body,
                                                                               std::size_t max_depth);
}  // namespace detail

// A received notification as a `notification`, when it is complete enough:
// UserAction must name a known type (errc::unknown_event, path "UserAction",
// with a suggestion) and RequestTimeStamp must be a T1 timestamp
// (errc::invalid_timestamp, path "RequestTimeStamp").
[[nodiscard]] KEYHOOK_INLINE result<notification> try_to_notification(const received_notification& r);
[[nodiscard]] KEYHOOK_INLINE notification to_notification(const received_notification& r);

// The receiving endpoint (receiving.hpp's checks, then the body): spec 4.4
// and H7 in one call, in this order: the method (POST), the key (extracted
// and checked before the body is read, so an unauthenticated caller never
// reaches the JSON parser), then the body, read tolerantly
// (try_parse_notification). The first failure is returned. Declared here,
// not in receiving.hpp, so that the checks alone need no JSON parser.
template <class D = void>
[[nodiscard]] KEYHOOK_INLINE result<received_notification> try_receive_notification(const http_request& request,
                                                                                    const secret& expected_key,
                                                                                    const body_limits& limits = {});

template <class D = void>
[[nodiscard]] KEYHOOK_INLINE received_notification receive_notification(const http_request& request,
                                                                        const secret& expected_key,
                                                                        const body_limits& limits = {});

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
// The member table, which includes the definitions (impl/received_notification.ipp) at its end.
#include "keyhook/detail/received_notification_table.hpp"
#endif
