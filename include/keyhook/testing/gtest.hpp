// keyhook for GoogleTest (with gMock's matchers): everything of
// keyhook/testing.hpp, printers, and matchers:
//
//     #include <keyhook/testing/gtest.hpp>
//     using namespace keyhook::testing::gtest;
//     EXPECT_THAT(key, HasStatusAt(keyhook::key_status::expired, now));
//     EXPECT_THAT(key, ShowsExpiryWarningAt(now));
//     EXPECT_THAT(keyhook::authorize(index, headers, family, resource, level, now),
//                 IsDeniedFor(keyhook::denial_reason::not_active));
//     EXPECT_THAT(keyhook::try_parse_timestamp("2026-13-01T00:00:00Z"),
//                 FailsWith(keyhook::errc::invalid_timestamp));
//
// Link GTest::gmock (CMake's GTest package). Printers: a keyhook::timestamp
// prints as T4 text, a result<T> as its value or its error. GoogleTest prints a
// type it has no printer for as its raw bytes, which for a type holding a
// short secret would be the secret itself; every keyhook type has an
// operator<< that masks, and result<T> gets a PrintTo here for the values that
// have none. Include this header, not <gtest/gtest.h> alone, in EVERY test
// source of a program that prints a timestamp: that printer specializes
// GoogleTest's for a std::chrono type, and two sources that disagree on it
// break the one-definition rule.
#pragma once

#include <ostream>
#include <string>
#include <type_traits>
#include <utility>

#include <gmock/gmock-matchers.h>
#include <gtest/gtest.h>

#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/testing.hpp"
#include "keyhook/testing/checks.hpp"
#include "keyhook/timestamps.hpp"

// GoogleTest finds PrintTo by argument-dependent lookup, which for a
// std::chrono type looks only in std; its UniversalPrinter is the one
// customization point left, specialized as GoogleTest does for std::optional.
namespace testing::internal {
template <>
class UniversalPrinter<keyhook::timestamp> {
public:
    static void Print(const keyhook::timestamp& t, ::std::ostream* os) { *os << keyhook::format_timestamp(t); }
};
}  // namespace testing::internal

namespace keyhook {
// A value through GoogleTest's own printer (so a string is quoted), an error
// as "[keyhook.<kind>] <path>: <message>".
template <class T>
void PrintTo(const result<T>& r, std::ostream* os) {
    if (!r.has_value()) {
        *os << r.error();
    } else if constexpr (std::is_void_v<T>) {
        *os << "ok";
    } else {
        *os << ::testing::PrintToString(*r);
    }
}
}  // namespace keyhook

namespace keyhook::testing::gtest {

namespace detail {
// A polymorphic gMock matcher over one check: MatchAndExplain tells the
// listener what the check found.
template <class Check>
class check_matcher {
public:
    explicit check_matcher(Check check) : recorded_(std::move(check)) {}

    template <class Arg>
    bool MatchAndExplain(const Arg& arg, ::testing::MatchResultListener* listener) const {
        const bool matched = recorded_.match(arg);
        *listener << recorded_.found();
        return matched;
    }
    void DescribeTo(std::ostream* os) const { *os << recorded_.check().describe(); }
    void DescribeNegationTo(std::ostream* os) const { *os << "not: " << recorded_.check().describe(); }

private:
    keyhook::testing::recorded_check<Check> recorded_;
};

template <class Check>
::testing::PolymorphicMatcher<check_matcher<Check>> make(Check check) {
    return ::testing::MakePolymorphicMatcher(check_matcher<Check>(std::move(check)));
}
}  // namespace detail

// S1: the key's status at `now` is `expected`.
[[nodiscard]] inline auto HasStatusAt(key_status expected, timestamp now) {
    return detail::make(status_check(expected, now));
}

// W1 to W3: the key shows the expiry warning at `now` (negate with Not()).
[[nodiscard]] inline auto ShowsExpiryWarningAt(timestamp now) { return detail::make(expiry_warning_check(now)); }

// K10: the call was denied, and for this reason.
[[nodiscard]] inline auto IsDeniedFor(denial_reason reason) { return detail::make(authorization_check(reason)); }

// K10: the call was allowed.
[[nodiscard]] inline auto IsAllowed() { return detail::make(authorization_check(std::nullopt)); }

// A refusal of kind `code` (at `path`, when given), from a result<T>, a
// keyhook::error or a keyhook::exception (inside ::testing::Throws<>).
[[nodiscard]] inline auto FailsWith(errc code) { return detail::make(error_check(code)); }
[[nodiscard]] inline auto FailsWith(errc code, std::string path) {
    return detail::make(error_check(code, std::move(path)));
}

}  // namespace keyhook::testing::gtest
