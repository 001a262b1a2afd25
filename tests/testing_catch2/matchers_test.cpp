// keyhook/testing/catch2.hpp's matchers: each on both sides of the rule it
// checks, and each mismatch as Catch reports it (the expression Catch
// reconstructs for a failed CHECK_THAT, built here by Catch's own makeMatchExpr
// so that the failure can be inspected without failing this test).
#include "keyhook/testing/catch2.hpp"

#include <array>
#include <sstream>
#include <string>

#include "keyhook/authorization.hpp"
#include "keyhook/creation.hpp"
#include "keyhook/key_index.hpp"
#include "keyhook/permissions.hpp"

using date::days;
using namespace keyhook;
using keyhook::testing::fixed_now;
using keyhook::testing::key_builder;
using namespace keyhook::testing::catch2;

namespace {

constexpr microseconds one_us{1};

// What Catch prints for CHECK_THAT(arg, matcher), and whether it passes.
template <class Arg, class Matcher>
std::pair<bool, std::string> catch_report(const Arg& arg, const Matcher& matcher) {
    const auto expr = Catch::makeMatchExpr(arg, matcher, "matcher");
    std::ostringstream os;
    expr.streamReconstructedExpression(os);
    return {expr.getResult(), os.str()};
}

// A 30-day key from fixed_now: warns from its 24th valid day (W2).
keyhook::api_key thirty_days() { return key_builder().lasting(days{30}, fixed_now).build(); }

}  // namespace

TEST_CASE("testing: HasStatusAt follows S1's half-open period on both sides", "[S1][testing]") {
    const auto k = thirty_days();
    const timestamp until = fixed_now + days{30};
    CHECK_THAT(k, HasStatusAt(key_status::active_in_future, fixed_now - one_us));
    CHECK_THAT(k, !HasStatusAt(key_status::active, fixed_now - one_us));
    CHECK_THAT(k, HasStatusAt(key_status::active, fixed_now));
    CHECK_THAT(k, HasStatusAt(key_status::active, until - one_us));
    CHECK_THAT(k, HasStatusAt(key_status::expired, until));
    CHECK_THAT(k, !HasStatusAt(key_status::active, until));
    // Revoked wins over the clock.
    CHECK_THAT(key_builder().lasting(days{30}, fixed_now).revoked().build(),
               HasStatusAt(key_status::revoked, fixed_now));
}

TEST_CASE("testing: a HasStatusAt mismatch says what was expected and what was found", "[S1][S3][testing]") {
    const auto [passed, report] = catch_report(thirty_days(), HasStatusAt(key_status::active, fixed_now + days{30}));
    CHECK_FALSE(passed);
    CHECK_THAT(report, Catch::Contains("has status Active at 2026-02-14T10:00:00.000Z"));
    CHECK_THAT(report, Catch::Contains("(its status at 2026-02-14T10:00:00.000Z is Expired)"));
    // The key itself is printed first, through its operator<<.
    CHECK_THAT(report, Catch::StartsWith("api_key{"));

    // Calling the matcher directly gives the same description.
    const auto m = HasStatusAt(key_status::active_in_future, fixed_now);
    CHECK_FALSE(m.match(thirty_days()));
    CHECK(m.toString() ==
          "has status Active in the future at 2026-01-15T10:00:00.000Z "
          "(its status at 2026-01-15T10:00:00.000Z is Active)");
    // A reused matcher describes its latest match, not its first.
    CHECK(m.match(key_builder().starts_at(fixed_now + days{1}).build()));
    CHECK_THAT(m.toString(), Catch::EndsWith("is Active in the future)"));
}

TEST_CASE("testing: ShowsExpiryWarningAt follows W2 and W3 on both sides", "[W2][W3][testing]") {
    const auto k = thirty_days();
    const timestamp start = fixed_now + days{23};  // the 24th valid day
    CHECK_THAT(k, !ShowsExpiryWarningAt(start - one_us));
    CHECK_THAT(k, ShowsExpiryWarningAt(start));
    CHECK_THAT(k, ShowsExpiryWarningAt(fixed_now + days{30} - one_us));
    CHECK_THAT(k, !ShowsExpiryWarningAt(fixed_now + days{30}));  // W3: Expired
    CHECK_THAT(key_builder().lasting(days{30}, fixed_now).revoked().build(), !ShowsExpiryWarningAt(start));

    const auto early = catch_report(k, ShowsExpiryWarningAt(start - one_us));
    CHECK_FALSE(early.first);
    CHECK_THAT(early.second, Catch::Contains("shows the expiry warning at 2026-02-07T09:59:59.999999Z "
                                             "(its warning starts at 2026-02-07T10:00:00.000Z)"));
    const auto revoked =
        catch_report(key_builder().lasting(days{30}, fixed_now).revoked().build(), ShowsExpiryWarningAt(start));
    CHECK_FALSE(revoked.first);
    CHECK_THAT(revoked.second, Catch::Contains("(it is Revoked at 2026-02-07T10:00:00.000Z; only an Active key "
                                               "shows the warning)"));
}

namespace {
// One key of tenant "acme" in an index, with read access to everything.
struct index_fixture {
    keyhook::key_index index{std::array<unsigned char, 16>{}};
    keyhook::api_key record = thirty_days();
    std::string plaintext = "k3y-of-the-test-0001";

    index_fixture() {
        keyhook::permission_policy policy;
        policy.groups["user:pf"].access[keyhook::resource::all()] = keyhook::access_level::read;
        REQUIRE(index.try_add("acme", record, keyhook::secret(plaintext), policy).has_value());
    }
    keyhook::authorization check(std::string_view key, timestamp now,
                                 keyhook::access_level needed = keyhook::access_level::read) const {
        return keyhook::authorize(index, key, "acme", keyhook::api_family::execute(), keyhook::resource_ref::all(),
                                  needed, now);
    }
};
}  // namespace

TEST_CASE("testing: IsAllowed and IsDeniedFor name K10's outcome on both sides", "[K10][testing]") {
    const index_fixture f;
    CHECK_THAT(f.check(f.plaintext, fixed_now), IsAllowed());
    CHECK_THAT(f.check(f.plaintext, fixed_now), !IsDeniedFor(denial_reason::not_active));
    // S1 at the end of the period: Active 1 us before, Expired at it.
    CHECK_THAT(f.check(f.plaintext, fixed_now + days{30} - one_us), IsAllowed());
    CHECK_THAT(f.check(f.plaintext, fixed_now + days{30}), IsDeniedFor(denial_reason::not_active));
    CHECK_THAT(f.check("not-the-key", fixed_now), IsDeniedFor(denial_reason::unknown_key));
    CHECK_THAT(f.check(f.plaintext, fixed_now, keyhook::access_level::write),
               IsDeniedFor(denial_reason::insufficient_access));

    const auto [passed, report] = catch_report(f.check(f.plaintext, fixed_now), IsDeniedFor(denial_reason::not_active));
    CHECK_FALSE(passed);
    CHECK_THAT(report, Catch::Contains("is denied for not_active (it is allowed: key "));
    CHECK_THAT(report, !Catch::Contains(f.plaintext));  // M3: the key is named by id only

    const auto denied = catch_report(f.check("not-the-key", fixed_now), IsAllowed());
    CHECK_FALSE(denied.first);
    CHECK_THAT(denied.second,
               Catch::Contains("is allowed (it is denied: the key in header x-synthetic-key is not known)"));
    CHECK_THAT(denied.second, !Catch::Contains("not-the-key"));
}

TEST_CASE("testing: FailsWith checks a result's errc and path on both sides", "[T2][testing]") {
    CHECK_THAT(keyhook::try_parse_timestamp("2026-13-01T00:00:00Z"), FailsWith(errc::invalid_timestamp));
    CHECK_THROWS_MATCHES(keyhook::parse_timestamp(""), keyhook::exception, FailsWith(errc::invalid_timestamp));

    const keyhook::error e{errc::invalid_value, "data.result[3].expireAt", "expected a string"};
    CHECK_THAT(e, FailsWith(errc::invalid_value));
    CHECK_THAT(e, FailsWith(errc::invalid_value, "data.result[3].expireAt"));

    const auto wrong_path = catch_report(e, FailsWith(errc::invalid_value, "data.result[2].expireAt"));
    CHECK_FALSE(wrong_path.first);
    CHECK_THAT(wrong_path.second,
               Catch::Contains("fails with keyhook.invalid_value at path \"data.result[2].expireAt\" (it failed with "
                               "[keyhook.invalid_value] data.result[3].expireAt: expected a string)"));

    const auto wrong_code =
        catch_report(keyhook::try_parse_timestamp("2026-13-01T00:00:00Z"), FailsWith(errc::invalid_value));
    CHECK_FALSE(wrong_code.first);
    CHECK_THAT(wrong_code.second, Catch::Contains("fails with keyhook.invalid_value (it failed with "
                                                  "[keyhook.invalid_timestamp]"));

    // A value is no failure: T1's valid text.
    const auto ok =
        catch_report(keyhook::try_parse_timestamp("2026-01-15T10:00:00Z"), FailsWith(errc::invalid_timestamp));
    CHECK_FALSE(ok.first);
    CHECK_THAT(ok.second, Catch::EndsWith("fails with keyhook.invalid_timestamp (it holds a value)"));
}

TEST_CASE("testing: values holding a secret print masked through Catch", "[M3][testing]") {
    // Short enough for the string's inline buffer: a printer that dumped the
    // object's bytes would show it.
    const std::string plain = "sh0rt-s3cret";
    const keyhook::secret s(plain);
    const keyhook::own_key own{s};
    keyhook::key_request request;
    request.method = own;
    for (const auto& printed :
         {Catch::Detail::stringify(s), Catch::Detail::stringify(own), Catch::Detail::stringify(request)}) {
        CHECK_THAT(printed, !Catch::Contains(plain) && !Catch::Contains("0rt-s3c"));
        CHECK_THAT(printed, Catch::Contains("sh0******ret"));
    }
}
