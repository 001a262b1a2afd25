// keyhook internal: the member tables of key_policy.hpp's records (K12 to K14),
// from which their equality and their JSON forms (key_policy_json.hpp) are
// derived (detail/members.hpp). Included by the implementation files only, so
// that a program built in compiled mode does not instantiate them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "keyhook/detail/json_members.hpp"
#include "keyhook/detail/members.hpp"
#include "keyhook/error.hpp"
#include "keyhook/key_policy.hpp"
#include "keyhook/rate_limit.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

namespace detail {
inline constexpr std::uint64_t any_count = ~std::uint64_t{0};

inline bool is_monthly(const credit_refill& r) noexcept { return r.period == refill_period::monthly; }

template <>
struct members_of<credit_refill> {
    static constexpr bool closed = true;  // a misspelt member is refused, not ignored
    static constexpr auto rows =
        make_rows(row<named_enum_form<refill_period>>("interval", &credit_refill::period, presence::required),
                  row<whole_form<std::uint64_t, 0, any_count>>("amount", &credit_refill::amount, presence::required),
                  row<whole_form<unsigned, 1, 31>>("day", &credit_refill::day, presence::required)
                      .only_when(is_monthly, "only a monthly refill has a day"));
};
static_assert(members_complete<credit_refill>());
}  // namespace detail

namespace detail {
// K12's ranges in their text form ("10.0.0.0/8").
struct address_range_form {
    static constexpr form_kind kind = form_kind::value;
    static constexpr std::string_view expected = "a CIDR range";
    static constexpr std::string_view list_expected = "an array of CIDR ranges";
    template <class Json>
    static std::optional<error> read(const Json& v, const std::string& path, address_range& out) {
        if (!v.is_string()) return wrong_type(path, expected, v);
        auto r = try_parse_address_range(v.template get_ref<const std::string&>());
        if (!r) return error{r.error().code, path, r.error().message};
        out = *r;
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, const address_range& r) {
        slot = to_string(r);
    }
};

template <>
struct members_of<rate_limit> {
    static constexpr bool closed = true;
    static constexpr auto rows =
        make_rows(row<whole_form<std::uint64_t, 1, any_count>>("limit", &rate_limit::limit, presence::required),
                  row<whole_form<microseconds, 1, static_cast<std::uint64_t>(max_rate_window.count())>>(
                      "periodMicroseconds", &rate_limit::period, presence::required),
                  row<whole_form<std::uint64_t, 1, any_count>>("burst", &rate_limit::burst, presence::optional));

    // The window (burst x interval), reported at the member that makes it long.
    static std::optional<error> check(const rate_limit& l, const std::string& base) {
        auto problems = rate_limit_problems(l);
        if (problems.empty()) return std::nullopt;
        auto& e = problems.front();
        return error{e.code, path_member(base, e.path == "period" ? "periodMicroseconds" : e.path),
                     std::move(e.message)};
    }
    // Written with the burst it has in effect (the limit when unset).
    static rate_limit canonical(rate_limit l) noexcept {
        l.burst = l.effective_burst();
        return l;
    }
};
static_assert(members_complete<rate_limit>());

template <>
struct members_of<key_policy> {
    static constexpr bool closed = true;  // a misspelt "allowedAddresses" must not open a key to every address
    static constexpr auto rows = make_rows(
        row<list_form<address_range_form>>("allowedAddresses", &key_policy::addresses, presence::omitted),
        row<record_form<rate_limit>>("rateLimit", &key_policy::rate, presence::omitted),
        group("credits", &key_policy::limited_credits,
              row<whole_form<std::uint64_t, 0, any_count>>("initial", &key_policy::initial_credits, presence::required),
              row<record_form<credit_refill>>("refill", &key_policy::refill, presence::omitted)));
};
static_assert(members_complete<key_policy>());

template <>
struct members_of<key_usage> {
    static constexpr bool closed = true;
    static constexpr auto rows =
        make_rows(part(&key_usage::rate, row<time_form>("rateTat", &rate_state::tat, presence::omitted)),
                  part(&key_usage::credits,
                       row<whole_form<std::uint64_t, 0, any_count>>("creditsRemaining", &credit_state::remaining,
                                                                    presence::required),
                       row<time_form>("lastRefill", &credit_state::last_refill, presence::required)),
                  row<time_form>("lastUsedAt", &key_usage::last_used_at, presence::omitted));
};
static_assert(members_complete<key_usage>());
}  // namespace detail

}  // namespace keyhook

// Header-only mode (and the compiled library): the record's definitions, which
// use the table. Included from here, after the table, so that this header can
// be included first as well as through key_policy.hpp.
#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/key_policy.ipp"
#endif
