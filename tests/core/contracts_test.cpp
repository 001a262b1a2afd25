// The naming contracts of docs/design.md ("Contracts"): parse_X throws
// keyhook::exception, try_X returns result<T> and never throws (a throwing
// host callable included), find_X returns an optional or a pointer, and
// X_problems returns every problem.
#include <catch2/catch.hpp>

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/keyhook.hpp"

using keyhook::errc;
using keyhook::error;
using keyhook::result;

namespace {

const keyhook::timestamp t0 = keyhook::parse_timestamp("2024-03-10T12:00:00Z");

// A random source that throws what `kind` says after `good` calls.
struct throwing_random {
    enum class kind { standard, keyhook, other };
    kind what = kind::standard;
    int good = 0;
    void operator()(unsigned char* out, std::size_t n) {
        if (good-- > 0) {
            // Each good draw differs from the last (a source that repeats itself is refused, M3).
            for (std::size_t i = 0; i < n; ++i)
                out[i] = static_cast<unsigned char>(i + 53 * static_cast<std::size_t>(good));
            return;
        }
        switch (what) {
            case kind::standard: throw std::runtime_error("entropy pool\nempty");
            case kind::keyhook: throw keyhook::exception(error{errc::invalid_value, "random", "no entropy"});
            case kind::other: throw 42;
        }
    }
};

keyhook::key_request valid_request() {
    keyhook::key_request r;
    r.name = "Billing";
    r.active_from = t0;
    r.expire_at = t0 + std::chrono::hours(24 * 30);
    r.groups = {"user:pf"};
    return r;
}

// What every try_ function gives for each kind of exception from its random source.
void check_host_error(const error& e, throwing_random::kind what) {
    switch (what) {
        case throwing_random::kind::standard:
            CHECK(e.code == errc::host_failure);
            CHECK(e.path == "random");
            CHECK(e.message == R"(the host's callable threw: "entropy pool\x0aempty")");  // P1: escaped
            break;
        case throwing_random::kind::keyhook:  // a keyhook::exception passes its error on
            CHECK(e == error{errc::invalid_value, "random", "no entropy"});
            break;
        case throwing_random::kind::other:
            CHECK(e.code == errc::host_failure);
            CHECK(e.path == "random");
            CHECK(e.message == "the host's callable threw a non-standard exception");
            break;
    }
}

const throwing_random::kind every_kind[] = {throwing_random::kind::standard, throwing_random::kind::keyhook,
                                            throwing_random::kind::other};

}  // namespace

TEST_CASE("contracts: try_create_key does not throw when the random source throws", "[contracts][K1]") {
    for (const auto what : every_kind) {
        for (int good : {0, 1}) {  // the key's draw fails, or the id's after it
            INFO("good draws " << good);
            std::optional<result<keyhook::created_key>> r;
            REQUIRE_NOTHROW(r.emplace(keyhook::try_create_key(valid_request(), keyhook::tenant_kind::restricted,
                                                              throwing_random{what, good}, t0)));
            REQUIRE_FALSE(r->has_value());
            check_host_error(r->error(), what);
        }
    }
    // The other side: a source that does not throw gives a key.
    CHECK(keyhook::try_create_key(valid_request(), keyhook::tenant_kind::restricted,
                                  throwing_random{throwing_random::kind::standard, 2}, t0)
              .has_value());
    // The throwing form throws keyhook::exception, never the source's own exception.
    CHECK_THROWS_AS(keyhook::create_key(valid_request(), keyhook::tenant_kind::restricted, throwing_random{}, t0),
                    keyhook::exception);
}

TEST_CASE("contracts: try_rotate_key does not throw when the random source throws", "[contracts][K7]") {
    const auto created = keyhook::create_key(valid_request(), keyhook::tenant_kind::restricted,
                                             throwing_random{throwing_random::kind::standard, 2}, t0);
    for (const auto what : every_kind) {
        for (int good : {0, 1}) {
            std::optional<result<keyhook::rotated_key>> r;
            REQUIRE_NOTHROW(r.emplace(keyhook::try_rotate_key(created.record, keyhook::rotation_policy::from_now,
                                                              throwing_random{what, good}, t0)));
            REQUIRE_FALSE(r->has_value());
            check_host_error(r->error(), what);
        }
    }
    CHECK(keyhook::try_rotate_key(created.record, keyhook::rotation_policy::from_now,
                                  throwing_random{throwing_random::kind::standard, 2}, t0)
              .has_value());
    CHECK_THROWS_AS(keyhook::rotate_key(created.record, keyhook::rotation_policy::from_now, throwing_random{}, t0),
                    keyhook::exception);
}

TEST_CASE("contracts: try_plan_next_attempt does not throw when the random source throws", "[contracts][B2]") {
    const std::vector<keyhook::delivery_attempt> one_failure{{t0, keyhook::attempt_outcome::http(500), std::nullopt}};
    for (const auto what : every_kind) {
        std::optional<result<keyhook::retry_decision>> r;
        REQUIRE_NOTHROW(r.emplace(keyhook::try_plan_next_attempt(one_failure, throwing_random{what, 0}, t0)));
        REQUIRE_FALSE(r->has_value());
        check_host_error(r->error(), what);
    }
    CHECK(keyhook::try_plan_next_attempt(one_failure, throwing_random{throwing_random::kind::standard, 1}, t0)
              .has_value());
    CHECK_THROWS_AS(keyhook::plan_next_attempt(one_failure, throwing_random{}, t0), keyhook::exception);
}

TEST_CASE("contracts: the return type of each form", "[contracts]") {
    using keyhook::key_status;
    // parse_X gives the value (and throws); try_X a result.
    static_assert(std::is_same_v<decltype(keyhook::parse_key_status("")), key_status>);
    static_assert(std::is_same_v<decltype(keyhook::try_parse_key_status("")), result<key_status>>);
    static_assert(std::is_same_v<decltype(keyhook::try_parse_ip_address("")), result<keyhook::ip_address>>);
    static_assert(std::is_same_v<decltype(keyhook::try_check_method(keyhook::http_request{})), result<void>>);
    // X_problems: every problem.
    static_assert(std::is_same_v<decltype(keyhook::own_key_problems(keyhook::secret())), std::vector<error>>);
    static_assert(std::is_same_v<decltype(keyhook::key_request_problems(keyhook::key_request{})), std::vector<error>>);
    static_assert(std::is_same_v<decltype(keyhook::key_update_problems(keyhook::api_key{}, keyhook::key_update{})),
                                 std::vector<error>>);
    static_assert(std::is_same_v<decltype(keyhook::webhook_problems(keyhook::webhook{})), std::vector<error>>);
    // X_from_json gives an X; the validated reader says so in its name.
    static_assert(std::is_same_v<decltype(keyhook::try_webhook_from_json(nlohmann::json())), result<keyhook::webhook>>);
    static_assert(std::is_same_v<decltype(keyhook::try_validated_webhooks_from_json(nlohmann::json())),
                                 result<std::vector<keyhook::validated_webhook>>>);
    // find_X: absence is not an error.
    static_assert(std::is_same_v<decltype(keyhook::find_event_type("")), std::optional<keyhook::event_type>>);
    SUCCEED("checked when compiled");
}

TEST_CASE("contracts: parse_key_status throws, try_parse_key_status returns the error", "[contracts][S2]") {
    CHECK(keyhook::parse_key_status(" deactivated ") == keyhook::key_status::revoked);
    const auto r = keyhook::try_parse_key_status("Paused");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == error{errc::invalid_value, "status",
                             R"(expected Active, Active in the future, Expired or Revoked, got "Paused")"});
    try {
        (void)keyhook::parse_key_status("Paused");
        FAIL("parse_key_status did not throw");
    } catch (const keyhook::exception& e) {
        CHECK(e.error() == r.error());
    }
}
