// keyhook/testing/gtest.hpp in GoogleTest: printers, and each matcher on both
// sides of its rule with its mismatch as GoogleTest reports it (gtest-spi's
// EXPECT_NONFATAL_FAILURE catches the failure of an inner EXPECT_THAT).
#include "keyhook/testing/gtest.hpp"

#include <gtest/gtest-spi.h>

#include <array>
#include <cstdio>
#include <optional>
#include <string>
#include <variant>

#include "keyhook/authorization.hpp"
#include "keyhook/creation.hpp"
#include "keyhook/key_index.hpp"
#include "keyhook/key_list.hpp"
#include "keyhook/key_list_request.hpp"
#include "keyhook/permissions.hpp"
#include "keyhook/receiving.hpp"
#include "keyhook/webhook.hpp"

using date::days;
using keyhook::denial_reason;
using keyhook::errc;
using keyhook::key_status;
using keyhook::microseconds;
using keyhook::timestamp;
using keyhook::testing::fixed_now;
using keyhook::testing::key_builder;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace keyhook::testing::gtest;

namespace {

constexpr microseconds one_us{1};

keyhook::api_key thirty_days() { return key_builder().lasting(days{30}, fixed_now).build(); }

// What a matcher says about x when it does not match: "<description>, <explanation>".
template <class M, class T>
std::string mismatch(const M& matcher, const T& x) {
    const ::testing::Matcher<const T&> m = matcher;
    ::testing::StringMatchResultListener listener;
    EXPECT_FALSE(m.MatchAndExplain(x, &listener));
    return ::testing::DescribeMatcher<const T&>(m) + ", " + listener.str();
}

}  // namespace

TEST(KeyhookGtestPrinters, TimestampPrintsAsT4Text) {  // [T4]
    EXPECT_EQ(::testing::PrintToString(fixed_now), "2026-01-15T10:00:00.000Z");
    EXPECT_EQ(::testing::PrintToString(fixed_now + one_us), "2026-01-15T10:00:00.000001Z");
    // Inside an assertion's message as well.
    EXPECT_NONFATAL_FAILURE(EXPECT_EQ(fixed_now, fixed_now + one_us), "2026-01-15T10:00:00.000001Z");
}

TEST(KeyhookGtestPrinters, ResultPrintsItsValueOrItsError) {
    EXPECT_EQ(::testing::PrintToString(keyhook::result<int>(7)), "7");
    EXPECT_EQ(::testing::PrintToString(keyhook::result<std::string>(std::string("a\"b"))), "\"a\\\"b\"");
    const keyhook::result<int> failed(keyhook::error{errc::invalid_value, "data.page", "expected a number"});
    EXPECT_EQ(::testing::PrintToString(failed), "[keyhook.invalid_value] data.page: expected a number");
    EXPECT_EQ(::testing::PrintToString(keyhook::result<void>()), "ok");
}

namespace {
// Whether GoogleTest's text for a value shows the plaintext, as text or as
// the bytes its fallback printer dumps ("32-byte object <... 73-68 30-72 ...>").
bool shows(const std::string& printed, const std::string& plain) {
    std::string digits;  // the dump without its separators
    for (const char c : printed)
        if (c != ' ' && c != '-') digits += c;
    std::string hex;  // the first four bytes of the plaintext
    for (std::size_t i = 0; i < 4; ++i) {
        char b[3];
        std::snprintf(b, sizeof b, "%02X", static_cast<unsigned char>(plain[i]));
        hex += b;
    }
    return printed.find(plain) != std::string::npos || digits.find(hex) != std::string::npos;
}

// A type GoogleTest has no printer for: it prints the object's bytes.
struct unprintable_holder {
    std::string value;
};
}  // namespace

// A short secret sits in the string's inline buffer, so a byte dump would show
// it. Every keyhook type holding one prints masked (M3) instead.
TEST(KeyhookGtestPrinters, IssueTwelveOwnKeyPrintedByGoogleTestShowedAShortKeysBytes) {  // [M3]
    const std::string plain = "sh0rt-s3cret";
    // The detector sees a dump: without a printer, GoogleTest shows the bytes.
    ASSERT_TRUE(shows(::testing::PrintToString(unprintable_holder{plain}), plain));

    const keyhook::secret s(plain);
    const keyhook::own_key own{s};
    keyhook::key_request request;
    request.method = own;
    const keyhook::generation_method method = own;
    keyhook::auth_parameter param{keyhook::auth_location::header, "x-api-key", s};
    keyhook::webhook hook;
    hook.auth.push_back(param);
    hook.signing_secret = s;
    keyhook::presented_key presented{s, keyhook::key_source::header};
    keyhook::key_list_query query;
    query.token = s;
    keyhook::one_time_secret once{s};
    const keyhook::result<keyhook::own_key> r_own(own);
    const keyhook::result<keyhook::secret> r_secret(s);
    const std::optional<keyhook::secret> opt(s);

    for (const auto& printed :
         {::testing::PrintToString(s), ::testing::PrintToString(own), ::testing::PrintToString(request),
          ::testing::PrintToString(method), ::testing::PrintToString(param), ::testing::PrintToString(hook),
          ::testing::PrintToString(presented), ::testing::PrintToString(query), ::testing::PrintToString(once),
          ::testing::PrintToString(r_own), ::testing::PrintToString(r_secret), ::testing::PrintToString(opt)}) {
        EXPECT_FALSE(shows(printed, plain)) << printed;
    }
    EXPECT_THAT(::testing::PrintToString(own), HasSubstr("sh0******ret"));
    EXPECT_THAT(::testing::PrintToString(method), HasSubstr("sh0******ret"));
}

TEST(KeyhookGtestMatchers, HasStatusAtFollowsS1OnBothSides) {  // [S1]
    const auto k = thirty_days();
    const timestamp until = fixed_now + days{30};
    EXPECT_THAT(k, HasStatusAt(key_status::active_in_future, fixed_now - one_us));
    EXPECT_THAT(k, Not(HasStatusAt(key_status::active, fixed_now - one_us)));
    EXPECT_THAT(k, HasStatusAt(key_status::active, fixed_now));
    EXPECT_THAT(k, HasStatusAt(key_status::active, until - one_us));
    EXPECT_THAT(k, HasStatusAt(key_status::expired, until));
    EXPECT_THAT(key_builder().lasting(days{30}, fixed_now).revoked().build(),
                HasStatusAt(key_status::revoked, fixed_now));

    EXPECT_EQ(mismatch(HasStatusAt(key_status::active, until), k),
              "has status Active at 2026-02-14T10:00:00.000Z, its status at 2026-02-14T10:00:00.000Z is Expired");
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(k, HasStatusAt(key_status::active, until)),
                            "its status at 2026-02-14T10:00:00.000Z is Expired");
}

TEST(KeyhookGtestMatchers, ShowsExpiryWarningAtFollowsW2AndW3OnBothSides) {  // [W2][W3]
    const auto k = thirty_days();
    const timestamp start = fixed_now + days{23};
    EXPECT_THAT(k, Not(ShowsExpiryWarningAt(start - one_us)));
    EXPECT_THAT(k, ShowsExpiryWarningAt(start));
    EXPECT_THAT(k, Not(ShowsExpiryWarningAt(fixed_now + days{30})));
    const auto revoked = key_builder().lasting(days{30}, fixed_now).revoked().build();
    EXPECT_THAT(revoked, Not(ShowsExpiryWarningAt(start)));

    EXPECT_EQ(
        mismatch(ShowsExpiryWarningAt(start - one_us), k),
        "shows the expiry warning at 2026-02-07T09:59:59.999999Z, its warning starts at 2026-02-07T10:00:00.000Z");
    EXPECT_THAT(mismatch(ShowsExpiryWarningAt(start), revoked),
                HasSubstr("it is Revoked at 2026-02-07T10:00:00.000Z; only an Active key shows the warning"));
}

TEST(KeyhookGtestMatchers, IsAllowedAndIsDeniedForNameK10sOutcome) {  // [K10]
    keyhook::key_index index{std::array<unsigned char, 16>{}};
    const auto record = thirty_days();
    const std::string plaintext = "k3y-of-the-test-0001";
    keyhook::permission_policy policy;
    policy.groups["user:pf"].access[keyhook::resource::all()] = keyhook::access_level::read;
    ASSERT_TRUE(index.try_add("acme", record, keyhook::secret(plaintext), policy).has_value());
    const auto check = [&](std::string_view key, timestamp now) {
        return keyhook::authorize(index, key, "acme", keyhook::api_family::execute(), keyhook::resource_ref::all(),
                                  keyhook::access_level::read, now);
    };

    EXPECT_THAT(check(plaintext, fixed_now + days{30} - one_us), IsAllowed());
    EXPECT_THAT(check(plaintext, fixed_now + days{30}), IsDeniedFor(denial_reason::not_active));
    EXPECT_THAT(check("not-the-key", fixed_now), IsDeniedFor(denial_reason::unknown_key));
    EXPECT_THAT(check(plaintext, fixed_now), Not(IsDeniedFor(denial_reason::not_active)));

    const auto text = mismatch(IsDeniedFor(denial_reason::not_active), check(plaintext, fixed_now));
    EXPECT_THAT(text, HasSubstr("is denied for not_active, it is allowed: key "));
    EXPECT_THAT(text, Not(HasSubstr(plaintext)));  // M3: named by id only
    EXPECT_EQ(mismatch(IsAllowed(), check("not-the-key", fixed_now)),
              "is allowed, it is denied: the key in header x-synthetic-key is not known");
}

TEST(KeyhookGtestMatchers, FailsWithChecksErrcAndPathOnBothSides) {  // [T2]
    EXPECT_THAT(keyhook::try_parse_timestamp("2026-13-01T00:00:00Z"), FailsWith(errc::invalid_timestamp));
    EXPECT_THAT(keyhook::try_parse_timestamp("2026-12-01T00:00:00Z"), Not(FailsWith(errc::invalid_timestamp)));
    EXPECT_THAT([] { (void)keyhook::parse_timestamp(""); },
                ::testing::Throws<keyhook::exception>(FailsWith(errc::invalid_timestamp)));

    const keyhook::error e{errc::invalid_value, "data.result[3].expireAt", "expected a string"};
    EXPECT_THAT(e, FailsWith(errc::invalid_value, "data.result[3].expireAt"));
    EXPECT_THAT(e, Not(FailsWith(errc::invalid_value, "data.result[2].expireAt")));
    EXPECT_EQ(mismatch(FailsWith(errc::invalid_value, "data.result[2].expireAt"), e),
              "fails with keyhook.invalid_value at path \"data.result[2].expireAt\", it failed with "
              "[keyhook.invalid_value] data.result[3].expireAt: expected a string");
    EXPECT_EQ(mismatch(FailsWith(errc::invalid_timestamp), keyhook::try_parse_timestamp("2026-01-15T10:00:00Z")),
              "fails with keyhook.invalid_timestamp, it holds a value");
    EXPECT_NONFATAL_FAILURE(
        EXPECT_THAT(keyhook::try_parse_timestamp("2026-13-01T00:00:00Z"), FailsWith(errc::invalid_value)),
        "fails with keyhook.invalid_value");
}
