#include "keyhook/delivery_state.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

using namespace std::chrono_literals;
using keyhook::attempt_outcome;
using keyhook::delivery_attempt;
using keyhook::delivery_state;
using keyhook::delivery_status;
using keyhook::errc;
using keyhook::retry_after;
using keyhook::retry_decision;
using keyhook::timestamp;

namespace {

const timestamp state_t0 = keyhook::parse_timestamp("2026-03-01T12:00:00.123456Z");

delivery_state sample() {
    delivery_state s;
    s.webhook = "orders \"eu\"";
    s.body = R"({"UserAction":"PublishEngine","FolderName":"Loan é"})";
    s.id = keyhook::make_delivery_id(s.webhook, s.body);
    s.attempts.push_back({state_t0, attempt_outcome::http(503), retry_after::delay(60s)});
    s.attempts.push_back({state_t0 + 61s, attempt_outcome::timed_out(), std::nullopt});
    s.attempts.push_back({state_t0 + 70s, attempt_outcome::transport_failure(), std::nullopt});
    s.attempts.push_back({state_t0 + 80s, attempt_outcome::http(429),
                          retry_after::at(keyhook::parse_timestamp("2026-03-01T13:00:00Z"))});
    s.next_due = state_t0 + 1h;
    return s;
}

keyhook::error read_error(const nlohmann::json& j) {
    const auto r = keyhook::try_delivery_state_from_json(j);
    REQUIRE_FALSE(r);
    return r.error();
}

}  // namespace

TEST_CASE("delivery state: the JSON form round-trips exactly", "[B6]") {
    const auto s = sample();
    const auto text = keyhook::write_delivery_state(s);
    CHECK(keyhook::parse_delivery_state(text) == s);
    // Microseconds survive; the form is stable (written again, the same bytes).
    CHECK(keyhook::write_delivery_state(keyhook::parse_delivery_state(text)) == text);

    delivery_state ended = s;
    ended.status = delivery_status::delivered;
    ended.next_due.reset();
    ended.attempts.push_back({state_t0 + 2h, attempt_outcome::http(200), std::nullopt});
    CHECK(keyhook::parse_delivery_state(keyhook::write_delivery_state(ended)) == ended);

    delivery_state fresh = s;
    fresh.attempts.clear();
    CHECK(keyhook::parse_delivery_state(keyhook::write_delivery_state(fresh)) == fresh);

    // Extremes of the numbers it holds.
    delivery_state big = fresh;
    big.attempts.push_back({state_t0, attempt_outcome::http(std::numeric_limits<int>::min()),
                            retry_after::delay(std::chrono::seconds::max())});
    big.attempts.push_back({state_t0, attempt_outcome::http(std::numeric_limits<int>::max()), retry_after::delay(0s)});
    CHECK(keyhook::parse_delivery_state(keyhook::write_delivery_state(big)) == big);
}

// Host-built values: every state the library lets a host build is written in
// a form the reader takes. A negative Retry-After delay (no header says one)
// is clamped to 0 when made, so it is written as 0.
TEST_CASE("delivery state: a negative Retry-After delay is 0, and round-trips", "[B6][B2]") {
    CHECK(retry_after::delay(-5s) == retry_after::delay(0s));
    CHECK(retry_after::delay(-1s).delay_value() == 0s);
    CHECK(retry_after::delay(std::chrono::seconds::min()).delay_value() == 0s);
    CHECK(retry_after::delay(1s).delay_value() == 1s);
    delivery_state s = sample();
    s.attempts.push_back({state_t0 + 2h, attempt_outcome::http(429), retry_after::delay(-5s)});
    const auto text = keyhook::write_delivery_state(s);
    CHECK(text.find(R"("retryAfter":{"delay":0})") != std::string::npos);
    const auto back = keyhook::try_parse_delivery_state(text);
    REQUIRE(back.has_value());
    CHECK(*back == s);
}

TEST_CASE("delivery state: the JSON members and their spelling", "[B6]") {
    const nlohmann::json j = sample();
    CHECK(j.at("id") == keyhook::to_string(sample().id));
    CHECK(j.at("status") == "pending");
    CHECK(j.at("nextDue") == "2026-03-01T13:00:00.123456Z");
    CHECK(j.at("attempts")[0] ==
          nlohmann::json::parse(R"({"sentAt":"2026-03-01T12:00:00.123456Z","outcome":"http","status":503,)"
                                R"("retryAfter":{"delay":60}})"));
    CHECK(j.at("attempts")[1] ==
          nlohmann::json::parse(R"({"sentAt":"2026-03-01T12:01:01.123456Z","outcome":"timed_out"})"));
    CHECK(j.at("attempts")[3].at("retryAfter") == nlohmann::json::parse(R"({"at":"2026-03-01T13:00:00.000Z"})"));
}

TEST_CASE("delivery state: record_attempt follows the retry decision", "[B6]") {
    auto s = sample();
    s.attempts.clear();
    const delivery_attempt a{state_t0, attempt_outcome::http(503), std::nullopt};
    keyhook::record_attempt(s, a, retry_decision{retry_decision::action::send, state_t0 + 5s, 2});
    CHECK(s.status == delivery_status::pending);
    CHECK(s.next_due == state_t0 + 5s);
    CHECK(s.attempts.size() == 1);
    keyhook::record_attempt(s, {state_t0 + 5s, attempt_outcome::http(410), std::nullopt},
                            retry_decision{retry_decision::action::disable_webhook, {}, 2});
    CHECK(s.status == delivery_status::disabled);
    CHECK_FALSE(s.next_due);
    auto t = sample();
    keyhook::record_attempt(t, a, retry_decision{retry_decision::action::give_up, {}, 8});
    CHECK(t.status == delivery_status::gave_up);
    keyhook::record_attempt(t, a, retry_decision{retry_decision::action::succeeded, {}, 9});
    CHECK(t.status == delivery_status::delivered);
    CHECK_FALSE(t.next_due);
}

TEST_CASE("delivery state: bad input is refused with its path and reason", "[B6][J1][J2]") {
    const nlohmann::json good = sample();
    auto with = [&](const nlohmann::json::json_pointer& p, nlohmann::json v) {
        auto j = good;
        j[p] = std::move(v);
        return j;
    };
    using ptr = nlohmann::json::json_pointer;

    auto e = read_error(with(ptr("/id"), "msg_123"));
    CHECK(e.path == "id");
    e = read_error(with(ptr("/status"), "lost"));
    CHECK((e.code == errc::invalid_value && e.path == "status"));
    e = read_error(with(ptr("/nextDue"), nullptr));
    CHECK((e.code == errc::missing_member && e.path == "nextDue"));
    auto ended = with(ptr("/status"), "delivered");
    e = read_error(ended);
    CHECK((e.code == errc::invalid_value && e.path == "nextDue"));
    ended["nextDue"] = nullptr;
    CHECK(keyhook::try_delivery_state_from_json(ended));
    e = read_error(with(ptr("/attempts/2/sentAt"), "2026-02-30T00:00:00Z"));
    CHECK((e.code == errc::invalid_timestamp && e.path == "attempts[2].sentAt"));
    // Out of order: the later attempt is named.
    e = read_error(with(ptr("/attempts/1/sentAt"), "2026-03-01T11:00:00Z"));
    CHECK((e.code == errc::invalid_value && e.path == "attempts[1].sentAt"));
    e = read_error(with(ptr("/attempts/0/outcome"), "lost"));
    CHECK(e.path == "attempts[0].outcome");
    e = read_error(with(ptr("/attempts/1/status"), 500));
    CHECK(e.path == "attempts[1].status");
    e = read_error(with(ptr("/attempts/0/retryAfter"), nlohmann::json::parse(R"({"delay":1,"at":"x"})")));
    CHECK(e.path == "attempts[0].retryAfter");

    // J2: each integer's range, both sides of each boundary.
    e = read_error(with(ptr("/attempts/0/retryAfter/delay"), -1));
    CHECK((e.code == errc::out_of_range && e.path == "attempts[0].retryAfter.delay"));
    CHECK(keyhook::try_delivery_state_from_json(with(ptr("/attempts/0/retryAfter/delay"), 0)));
    e = read_error(with(ptr("/attempts/0/retryAfter/delay"), std::uint64_t{1} << 63));
    CHECK(e.code == errc::out_of_range);
    CHECK(keyhook::try_delivery_state_from_json(
        with(ptr("/attempts/0/retryAfter/delay"), std::numeric_limits<std::int64_t>::max())));
    e = read_error(with(ptr("/attempts/0/status"), std::int64_t{std::numeric_limits<int>::max()} + 1));
    CHECK((e.code == errc::out_of_range && e.path == "attempts[0].status"));
    e = read_error(with(ptr("/attempts/0/status"), std::int64_t{std::numeric_limits<int>::min()} - 1));
    CHECK(e.code == errc::out_of_range);
    e = read_error(with(ptr("/attempts/0/status"), 200.5));
    CHECK((e.code == errc::out_of_range && e.path == "attempts[0].status"));
    e = read_error(with(ptr("/attempts/0/status"), "503"));
    CHECK((e.code == errc::wrong_type && e.path == "attempts[0].status"));
    e = read_error(with(ptr("/attempts"), nlohmann::json::object()));
    CHECK((e.code == errc::wrong_type && e.path == "attempts"));

    // From text: J1 and J2 by the strict reader.
    auto r = keyhook::try_parse_delivery_state(R"({"id":"a","id":"b"})");
    REQUIRE_FALSE(r);
    CHECK((r.error().code == errc::duplicate_member && r.error().path == "id"));
    r = keyhook::try_parse_delivery_state(R"({"attempts":[{"status":1e400}]})");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::out_of_range);
}

TEST_CASE("delivery state: printing shows no body", "[B6]") {
    std::ostringstream os;
    os << sample();
    CHECK(os.str().find("PublishEngine") == std::string::npos);
    CHECK(os.str().find("pending") != std::string::npos);
}
