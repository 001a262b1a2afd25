// keyhook internal: the member tables of endpoint_health.hpp's records (H10,
// H11) and the JSON forms derived from them (detail/members.hpp). Included by
// the implementation files only, so that a program built in compiled mode does
// not instantiate them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "keyhook/detail/delivery_id_form.hpp"
#include "keyhook/detail/json_members.hpp"
#include "keyhook/detail/members.hpp"
#include "keyhook/endpoint_health.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"

namespace keyhook {

namespace detail {
// An HTTP status, 100 to 599.
struct http_status_form {
    static constexpr form_kind kind = form_kind::value;
    static constexpr std::string_view expected = "an HTTP status (integer) or null";
    template <class Json>
    static std::optional<error> read(const Json& v, const std::string& path, int& out) {
        if (!v.is_number_integer()) return wrong_type(path, expected, v);
        const bool in_range = v.is_number_unsigned()
                                  ? v.template get<std::uint64_t>() - 100 <= 499
                                  : v.template get<std::int64_t>() >= 100 && v.template get<std::int64_t>() <= 599;
        if (!in_range) return error{errc::out_of_range, path, "an HTTP status is 100 to 599"};
        out = v.template get<int>();
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, int status) {
        slot = status;
    }
};

}  // namespace detail

template <>
struct detail::members_of<operational_notice> {
    using n = operational_notice;
    static constexpr auto rows =
        make_rows(row<named_enum_form<notice_type>>("type", &n::type, presence::required),
                  row<time_form>("timestamp", &n::at, presence::required),
                  group<n>("data",  //
                           row<text_form>("endpointId", &n::webhook_name, presence::required),
                           row<delivery_id_form>("msgId", &n::delivery, presence::omitted),
                           row<time_form>("failSince", &n::fail_since, presence::optional),
                           group<n>("lastAttempt",  //
                                    row<time_form>("timestamp", &n::last_attempt_at, presence::required),
                                    row<http_status_form>("responseStatusCode", &n::last_status, presence::optional))));
};
static_assert(detail::members_complete<operational_notice>());

template <>
struct detail::members_of<endpoint_health> {
    static constexpr auto rows =
        make_rows(row<time_form>("failSince", &endpoint_health::fail_since, presence::optional),
                  row<http_status_form>("lastStatus", &endpoint_health::last_status, presence::optional),
                  row<time_form>("lastFailureAt", &endpoint_health::last_failure_at, presence::optional),
                  row<time_form>("lastSuccessAt", &endpoint_health::last_success_at, presence::optional),
                  row<list_form<time_form, endpoint_health::max_failures_kept>>(
                      "failuresAfterSuccess", &endpoint_health::failures_after_success, presence::omitted));
};
static_assert(detail::members_complete<endpoint_health>());

template <>
struct detail::members_of<endpoint_state> {
    // Every member may be missing: healthy, enabled, unthrottled.
    static constexpr auto rows =
        make_rows(part(&endpoint_state::health, members_of<endpoint_health>::rows),
                  row<bool_form>("disabled", &endpoint_state::disabled, presence::optional),
                  row<time_form>("disabledAt", &endpoint_state::disabled_at, presence::optional),
                  part(&endpoint_state::throttle, row<time_form>("throttleTat", &rate_state::tat, presence::optional)));

    static std::optional<error> check(const endpoint_state& s, const std::string& base) {
        if (s.disabled_at && !s.disabled)
            return error{errc::invalid_value, path_member(base, "disabledAt"), "set, but disabled is false"};
        return std::nullopt;
    }
};
static_assert(detail::members_complete<endpoint_state>());

template <class Json>
void to_json(Json& j, const operational_notice& n) {
    detail::write_members(j, n);
}

template <class Json>
void to_json(Json& j, const endpoint_state& s) {
    detail::write_members(j, s);
}

template <class Json>
result<endpoint_state> try_endpoint_state_from_json(const detail::non_deduced_t<Json>& j, std::string_view path) {
    endpoint_state s;
    if (auto e = detail::read_members(j, std::string(path), s)) return std::move(*e);
    return s;
}

}  // namespace keyhook

// Header-only mode (and the compiled library): the record's definitions, which
// use the table. Included from here, after the table, so that this header can
// be included first as well as through endpoint_health.hpp.
#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/endpoint_health.ipp"
#endif
