// keyhook: errors. One error value (kind, where, why), an exception that carries
// it, a std::error_code category for the kind, the one wording of the faults
// several readers report, and JSON path helpers. This header also provides
// P1 escaping (keyhook/escape.hpp). result<T>, the non-throwing twin of every
// fallible call, is in keyhook/result.hpp, which includes this header (one way:
// this header does not include it).
#pragma once

#include <cstddef>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include "keyhook/config.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/detail/utf8.hpp"
#include "keyhook/escape.hpp"

namespace keyhook {

// What went wrong, independent of where. Values are stable: append, never
// reorder (they appear in std::error_code values hosts may log).
enum class errc {
    syntax_error = 1,            // the input is not well-formed JSON (or not a URL, ...)
    missing_member,              // a required member is absent
    wrong_type,                  // a member has the wrong JSON type
    invalid_timestamp,           // not a timestamp of rule T1, or out of range (T2, T3)
    invalid_value,               // right type, value not allowed (unknown status, bad UUID, ...)
    out_of_range,                // a number outside its allowed range (page < 1, ...)
    not_success,                 // the list call's envelope says the call failed (L2)
    limit_exceeded,              // input larger or deeper than keyhook accepts
    invalid_utf8,                // a string is not valid UTF-8
    unknown_event,               // an event name that is not one of the 53 (H3, H5)
    invalid_endpoint,            // a webhook endpoint that breaks H1
    forbidden_address,           // an endpoint address in a refused range (H1)
    invalid_header,              // a header name or value that breaks H2
    invalid_parameter,           // a query parameter that breaks H2
    invalid_name,                // a name or description that breaks K3
    invalid_key,                 // an own key that breaks K2
    invalid_period,              // activeFrom >= expireAt (K3)
    invalid_group,               // a group name that breaks K3
    not_confirmed,               // an action that needs confirmation was not confirmed (K8)
    invalid_signature,           // a signature that does not verify (B1)
    timestamp_out_of_tolerance,  // a signed timestamp too old or too new (B1)
    unauthorized,                // a receiving-side key check failed (H7)
    conflicting_keys,            // x-api-key and api_key both present and different (H7)
    method_not_allowed,          // a received webhook call whose method is not POST (spec 4.4)
    duplicate_member,            // a member name repeated in one JSON object (J1)
    host_failure,                // a callable the host supplied (a random source) threw
};

// to_string(errc): a short, stable spelling of each kind ("invalid_timestamp").
namespace detail {
template <>
struct enum_names<errc> {
    static constexpr errc first = errc::syntax_error;
    static constexpr std::string_view values[] = {
        "syntax_error",      "missing_member",    "wrong_type",
        "invalid_timestamp", "invalid_value",     "out_of_range",
        "not_success",       "limit_exceeded",    "invalid_utf8",
        "unknown_event",     "invalid_endpoint",  "forbidden_address",
        "invalid_header",    "invalid_parameter", "invalid_name",
        "invalid_key",       "invalid_period",    "invalid_group",
        "not_confirmed",     "invalid_signature", "timestamp_out_of_tolerance",
        "unauthorized",      "conflicting_keys",  "method_not_allowed",
        "duplicate_member",  "host_failure"};
};
}  // namespace detail

[[nodiscard]] KEYHOOK_INLINE const std::error_category& error_category() noexcept;

[[nodiscard]] inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

// An error: its kind, where it is (a JSON path such as "data.result[3].expireAt",
// or a field name such as "endpoint"; empty for the whole input) and why.
// Messages never contain a secret: code that builds them quotes input through
// quoted_input, and never quotes a key. path and message keep the
// bytes they were given; what() and operator<< escape them (P1), since a path
// holds member names read from input.
struct error {
    errc code = errc::invalid_value;
    std::string path;
    std::string message;

    [[nodiscard]] KEYHOOK_INLINE std::string what() const;

    friend bool operator==(const error& a, const error& b) { return is_equal(a, b); }
    friend bool operator!=(const error& a, const error& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const error& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const error& a, const error& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const error& x);
};

// Thrown by the throwing forms. what() is "[keyhook.<kind>] <path>: <message>".
class exception : public std::runtime_error {
public:
    KEYHOOK_INLINE explicit exception(keyhook::error e);

    [[nodiscard]] const keyhook::error& error() const noexcept { return error_; }
    [[nodiscard]] errc code() const noexcept { return error_.code; }
    [[nodiscard]] const std::string& path() const noexcept { return error_.path; }

private:
    keyhook::error error_;
};

// JSON paths as keyhook's errors spell them: json_path_member("webhooks[2]",
// "endpoint") is "webhooks[2].endpoint" (no dot after an empty base, so the
// first member of a document is just its name), json_path_index("events", 3)
// is "events[3]". The member name is kept as it is (a path keeps the bytes it
// was given; error::what() and operator<< escape it, P1).
[[nodiscard]] KEYHOOK_INLINE std::string json_path_member(std::string_view base, std::string_view member);
[[nodiscard]] KEYHOOK_INLINE std::string json_path_index(std::string_view base, std::size_t index);

namespace detail {

// The error of a try_ function whose host callable threw, for its catch (...)
// block (the try_ contract: nothing escapes). A keyhook::exception passes its
// error on; any other exception becomes errc::host_failure at `callable` (the
// parameter's name, such as "random") with its what() quoted (P1).
KEYHOOK_INLINE error current_host_error(std::string_view callable);

// The one wording of each fault that several parsers report: a
// missing member, a member of the wrong JSON type (`found` is nlohmann's
// type_name(): "number", "array", ...) and text that is not a T1 timestamp.
KEYHOOK_INLINE error missing_member_error(std::string path);
KEYHOOK_INLINE error wrong_type_error(std::string path, std::string_view expected, std::string_view found);
template <class Json>
error wrong_type(std::string path, std::string_view expected, const Json& found) {
    return wrong_type_error(std::move(path), expected, found.type_name());
}
KEYHOOK_INLINE error timestamp_error(std::string path, std::string_view text);

// json_path_member and json_path_index, under the names the library's own
// code uses.
KEYHOOK_INLINE std::string path_member(std::string_view base, std::string_view member);
KEYHOOK_INLINE std::string path_index(std::string_view base, std::size_t index);

// The parameter type of a DOM reader declared `template <class Json =
// nlohmann::json> f(const non_deduced_t<Json>&)`: it accepts what a plain
// `const nlohmann::json&` did, and its body is compiled only where it is called.
template <class T>
struct non_deduced {
    using type = T;
};
template <class T>
using non_deduced_t = typename non_deduced<T>::type;

}  // namespace detail
}  // namespace keyhook

template <>
struct std::is_error_code_enum<keyhook::errc> : std::true_type {};

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/error.ipp"
#endif
