// keyhook for Catch2 v2 tests: everything of keyhook/testing.hpp, Catch
// printing a keyhook::timestamp as T4 text, and matchers:
//
//     #include <keyhook/testing/catch2.hpp>
//     using namespace keyhook::testing::catch2;
//     CHECK_THAT(key, HasStatusAt(keyhook::key_status::expired, now));
//     CHECK_THAT(key, ShowsExpiryWarningAt(now));
//     CHECK_THAT(keyhook::authorize(index, headers, family, resource, level, now),
//                IsDeniedFor(keyhook::denial_reason::not_active));
//     CHECK_THAT(keyhook::try_parse_timestamp("2026-13-01T00:00:00Z"),
//                FailsWith(keyhook::errc::invalid_timestamp));
//     CHECK_THROWS_MATCHES(keyhook::parse_timestamp(""), keyhook::exception,
//                          FailsWith(keyhook::errc::invalid_timestamp));
//
// Include this header, not <catch2/catch.hpp> alone, in EVERY test source of
// a program that prints a timestamp (a precompiled or common test header is
// the easy way): the printer is a specialization of Catch::StringMaker for a
// std::chrono type, and two sources that disagree on it break the
// one-definition rule. keyhook's own types print through their operator<<
// and need nothing here.
#pragma once

#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "keyhook/testing.hpp"
#include "keyhook/testing/checks.hpp"
#include "keyhook/timestamps.hpp"

#if !defined(CATCH_VERSION_MAJOR) || CATCH_VERSION_MAJOR != 2
#error "keyhook/testing/catch2.hpp is written for Catch2 v2 (<catch2/catch.hpp>)"
#endif

namespace Catch {
// T4 text: "2026-01-15T10:00:00.000Z".
template <>
struct StringMaker<keyhook::timestamp> {
    static std::string convert(const keyhook::timestamp& t) { return keyhook::format_timestamp(t); }
};
}  // namespace Catch

namespace keyhook::testing::catch2 {

namespace detail {
// A typed Catch matcher over one check. Catch caches the description, so
// match() clears that cache.
template <class Arg, class Check>
class check_matcher : public Catch::MatcherBase<Arg> {
public:
    explicit check_matcher(Check check) : check_(std::move(check)) {}

    bool match(const Arg& arg) const override {
        this->m_cachedToString.clear();
        return check_.match(arg);
    }
    std::string describe() const override { return check_.describe(); }

private:
    keyhook::testing::recorded_check<Check> check_;
};
}  // namespace detail

// S1: the key's status at `now` is `expected`.
[[nodiscard]] inline detail::check_matcher<api_key, status_check> HasStatusAt(key_status expected, timestamp now) {
    return detail::check_matcher<api_key, status_check>(status_check(expected, now));
}

// W1 to W3: the key shows the expiry warning at `now` (negate with !).
[[nodiscard]] inline detail::check_matcher<api_key, expiry_warning_check> ShowsExpiryWarningAt(timestamp now) {
    return detail::check_matcher<api_key, expiry_warning_check>(expiry_warning_check(now));
}

// K10: the call was denied, and for this reason.
[[nodiscard]] inline detail::check_matcher<authorization, authorization_check> IsDeniedFor(denial_reason reason) {
    return detail::check_matcher<authorization, authorization_check>(authorization_check(reason));
}

// K10: the call was allowed.
[[nodiscard]] inline detail::check_matcher<authorization, authorization_check> IsAllowed() {
    return detail::check_matcher<authorization, authorization_check>(authorization_check(std::nullopt));
}

// A refusal of kind `code` (at `path`, when given), from a result<T>, a
// keyhook::error or a keyhook::exception (CHECK_THROWS_MATCHES). It takes any
// of the three, so it cannot be combined with && || ! as typed matchers can.
class FailsWith : public Catch::Matchers::Impl::MatcherUntypedBase {
public:
    explicit FailsWith(errc code) : check_(error_check(code)) {}
    FailsWith(errc code, std::string path) : check_(error_check(code, std::move(path))) {}
    FailsWith(const FailsWith& other) : MatcherUntypedBase(other), check_(other.check_) {}
    FailsWith& operator=(const FailsWith&) = delete;
    ~FailsWith() override = default;

    template <class Arg>
    bool match(const Arg& arg) const {
        m_cachedToString.clear();
        return check_.match(arg);
    }
    std::string describe() const override { return check_.describe(); }

private:
    keyhook::testing::recorded_check<error_check> check_;
};

}  // namespace keyhook::testing::catch2
