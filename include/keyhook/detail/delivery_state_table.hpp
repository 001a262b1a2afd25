// keyhook internal: the member tables of delivery_state.hpp's records (B6)
// and the JSON forms derived from them (detail/members.hpp). Included by the
// implementation files only, so that a program built in compiled mode does not
// instantiate them.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "keyhook/delivery_state.hpp"
#include "keyhook/detail/delivery_id_form.hpp"
#include "keyhook/detail/json_members.hpp"
#include "keyhook/detail/members.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"

namespace keyhook {

namespace detail {
inline std::string_view outcome_kind_name(attempt_outcome::kind k) noexcept {
    switch (k) {
        case attempt_outcome::kind::http_response: return "http";
        case attempt_outcome::kind::transport_failure: return "transport_failure";
        case attempt_outcome::kind::timed_out: return "timed_out";
    }
    return "transport_failure";
}

// An attempt's outcome spreads over two members of the attempt: "outcome"
// (its kind) and "status" (the HTTP status, for "http" only).
struct outcome_form {
    static constexpr std::string_view names[] = {"outcome", "status"};
    using status_form = integer_form<int, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()>;

    template <class Json>
    static std::optional<error> read_in(const Json& obj, const std::string& base, attempt_outcome& out) {
        std::string kind;
        if (auto e = read_member_string(obj, "outcome", base, true, kind)) return e;
        const auto* status = json_member(obj, "status");
        if (kind == "http") {
            if (!status) return missing_member_error(path_member(base, "status"));
            int code = 0;
            if (auto e = status_form::read(*status, path_member(base, "status"), code)) return e;
            out = attempt_outcome::http(code);
        } else if (kind == "transport_failure" || kind == "timed_out") {
            if (status)
                return error{errc::invalid_value, path_member(base, "status"), "only an \"http\" outcome has a status"};
            out = kind == "timed_out" ? attempt_outcome::timed_out() : attempt_outcome::transport_failure();
        } else {
            return error{errc::invalid_value, path_member(base, "outcome"),
                         "expected \"http\", \"transport_failure\" or \"timed_out\", got " + quote_input(kind)};
        }
        return std::nullopt;
    }
    template <class Json>
    static void write_in(Json& obj, const attempt_outcome& o) {
        obj["outcome"] = std::string(outcome_kind_name(o.what()));
        if (const auto status = o.status()) obj["status"] = *status;
    }
};

// {"delay": seconds >= 0} or {"at": timestamp}, exactly one.
struct retry_after_form {
    static constexpr form_kind kind = form_kind::value;
    static constexpr std::string_view expected = "an object";
    using delay_form = integer_form<std::chrono::seconds, 0, std::numeric_limits<std::int64_t>::max()>;

    template <class Json>
    static std::optional<error> read(const Json& v, const std::string& path, std::optional<retry_after>& out) {
        if (!v.is_object()) return wrong_type(path, expected, v);
        const auto* delay = json_member(v, "delay");
        const auto* at = json_member(v, "at");
        if ((delay != nullptr) == (at != nullptr))
            return error{errc::invalid_value, path, "expected exactly one of \"delay\" and \"at\""};
        if (delay) {
            std::chrono::seconds seconds{};
            if (auto e = delay_form::read(*delay, path_member(path, "delay"), seconds)) return e;
            out = retry_after::delay(seconds);
        } else {
            timestamp t{};
            if (auto e = read_value<time_form>(*at, path_member(path, "at"), t)) return e;
            out = retry_after::at(t);
        }
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, const retry_after& r) {
        slot = Json::object();
        if (r.is_delay())
            delay_form::write(slot["delay"], r.delay_value());
        else
            slot["at"] = format_timestamp(r.time_value());
    }
};
}  // namespace detail

// The member tables (detail/members.hpp): the JSON forms below are derived from them.
template <>
struct detail::members_of<delivery_attempt> {
    static constexpr auto rows = make_rows(  //
        row<time_form>("sentAt", &delivery_attempt::sent_at, presence::required),
        spread<outcome_form>(&delivery_attempt::outcome),
        row<retry_after_form>("retryAfter", &delivery_attempt::retry_after, presence::omitted));
};
static_assert(detail::members_complete<delivery_attempt>());

template <>
struct detail::members_of<delivery_state> {
    // Read in this order: the first fault is reported.
    static constexpr auto rows = make_rows(  //
        row<delivery_id_form>("id", &delivery_state::id, presence::required),
        row<text_form>("webhook", &delivery_state::webhook, presence::required),
        row<text_form>("body", &delivery_state::body, presence::required),
        row<named_enum_form<delivery_status>>("status", &delivery_state::status, presence::required),
        row<time_form>("nextDue", &delivery_state::next_due, presence::optional),
        row<list_form<record_form<delivery_attempt>>>("attempts", &delivery_state::attempts, presence::required));

    // B6's invariant: next_due set exactly while pending, attempts in time order.
    static std::optional<error> check(const delivery_state& s, const std::string& base) {
        if (s.status == delivery_status::pending && !s.next_due)
            return error{errc::missing_member, path_member(base, "nextDue"),
                         "a pending delivery needs the time its next attempt is due"};
        if (s.status != delivery_status::pending && s.next_due)
            return error{errc::invalid_value, path_member(base, "nextDue"),
                         "must be null once the delivery has ended (" + std::string(to_string(s.status)) + ")"};
        for (std::size_t i = 1; i < s.attempts.size(); ++i)
            if (s.attempts[i].sent_at < s.attempts[i - 1].sent_at)
                return error{errc::invalid_value, path_member(path_index(path_member(base, "attempts"), i), "sentAt"),
                             "earlier than the attempt before it"};
        return std::nullopt;
    }
};
static_assert(detail::members_complete<delivery_state>());

template <class Json>
void to_json(Json& j, const delivery_attempt& a) {
    detail::write_members(j, a);
}

template <class Json>
void to_json(Json& j, const delivery_state& s) {
    detail::write_members(j, s);
}

template <class Json>
result<delivery_state> try_delivery_state_from_json(const detail::non_deduced_t<Json>& j) {
    delivery_state s;
    if (auto e = detail::read_members(j, std::string(), s)) return std::move(*e);
    return s;
}

}  // namespace keyhook

// Header-only mode (and the compiled library): the record's definitions, which
// use the table. Included from here, after the table, so that this header can
// be included first as well as through delivery_state.hpp.
#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/delivery_state.ipp"
#endif
