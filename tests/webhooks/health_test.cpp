// H10 endpoint health and H11 throttling: one endpoint_state per webhook,
// folded from attempt outcomes and `now`.
#include "keyhook/dispatch.hpp"
#include "keyhook/endpoint_health.hpp"
#include "keyhook/json_input.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <limits>
#include <queue>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using keyhook::attempt_outcome;
using keyhook::endpoint_state;
using keyhook::health_decision;
using keyhook::notice_type;
using keyhook::timestamp;
using namespace std::chrono_literals;

namespace {

const timestamp t0 = keyhook::parse_timestamp("2026-03-14T09:00:00Z");
const auto id = keyhook::parse_delivery_id("msg_0123456789abcdef0123456789abcdef");
const auto other_id = keyhook::parse_delivery_id("msg_fedcba9876543210fedcba9876543210");

keyhook::attempt_report report(std::size_t attempt, timestamp at, attempt_outcome outcome, bool gave_up = false,
                               keyhook::delivery_id which = id) {
    keyhook::attempt_report r;
    r.webhook_name = "crm-sync";
    r.delivery = which;
    r.attempt = attempt;
    r.result.sent_at = at;
    r.result.outcome = outcome;
    r.gave_up = gave_up;
    return r;
}

std::vector<notice_type> types(const health_decision& d) {
    std::vector<notice_type> out;
    for (const auto& n : d.notices) out.push_back(n.type);
    return out;
}

}  // namespace

TEST_CASE("H10: message.attempt.failing after a delivery's 4th failed attempt, not its 3rd", "[H10]") {
    endpoint_state s;
    for (std::size_t attempt = 1; attempt <= 3; ++attempt) {
        const auto d = keyhook::record_attempt(s, report(attempt, t0 + attempt * 1min, attempt_outcome::http(500)), t0);
        CHECK(d.what == health_decision::action::keep);
        CHECK(d.notices.empty());
        s = d.state;
    }
    CHECK(s.health.fail_since == t0 + 1min);  // the first failure opened the period
    const auto now = t0 + 1h;
    const auto fourth = keyhook::record_attempt(s, report(4, t0 + 40min, attempt_outcome::http(503)), now);
    CHECK(fourth.what == health_decision::action::notify_failing);
    REQUIRE(fourth.notices.size() == 1);
    const auto& n = fourth.notices[0];
    CHECK(n.type == notice_type::attempt_failing);
    CHECK(n.at == now);
    CHECK(n.webhook_name == "crm-sync");
    CHECK(n.delivery == id);
    CHECK(n.fail_since == t0 + 1min);
    CHECK(n.last_status == 503);
    CHECK(n.last_attempt_at == t0 + 40min);
    CHECK_FALSE(fourth.state.disabled);
    // The 5th failure is past the notice: nothing new.
    const auto fifth = keyhook::record_attempt(fourth.state, report(5, t0 + 2h, attempt_outcome::timed_out()), now);
    CHECK(fifth.notices.empty());
    CHECK(fifth.state.health.last_status == std::nullopt);  // no response
}

TEST_CASE("H10: a delivery that gives up yields message.attempt.exhausted", "[H10]") {
    endpoint_state s;
    s.health.fail_since = t0;
    const auto d = keyhook::record_attempt(s, report(8, t0 + 1h, attempt_outcome::transport_failure(), true), t0 + 1h);
    CHECK(types(d) == std::vector<notice_type>{notice_type::attempt_exhausted});
    CHECK(d.notices[0].delivery == id);
    CHECK(keyhook::record_attempt(s, report(7, t0 + 1h, attempt_outcome::http(500), false), t0).notices.empty());
}

TEST_CASE("H10: disabled when a failure comes 5 days or more after the failing period began", "[H10]") {
    endpoint_state s;
    s = keyhook::record_attempt(s, report(1, t0, attempt_outcome::http(500)), t0).state;
    // Just under 5 days (one microsecond): still enabled, other deliveries included.
    const auto under =
        keyhook::record_attempt(s, report(2, t0 + 120h - 1us, attempt_outcome::http(500), false, other_id), t0);
    CHECK(under.what == health_decision::action::keep);
    CHECK_FALSE(under.state.disabled);
    // Exactly 5 days: disabled, announced with the period's start and no delivery id.
    const auto now = t0 + 120h + 3s;
    const auto exact = keyhook::record_attempt(under.state, report(2, t0 + 120h, attempt_outcome::http(502)), now);
    CHECK(exact.what == health_decision::action::disable);
    CHECK(exact.state.disabled);
    CHECK(exact.state.disabled_at == now);
    REQUIRE(types(exact) == std::vector<notice_type>{notice_type::endpoint_disabled});
    CHECK(exact.notices[0].fail_since == t0);
    CHECK_FALSE(exact.notices[0].delivery.has_value());
    CHECK(exact.notices[0].last_status == 502);
    // Once disabled, later failures announce nothing more.
    const auto later = keyhook::record_attempt(exact.state, report(3, t0 + 200h, attempt_outcome::http(500)), now);
    CHECK(later.notices.empty());
    CHECK(later.state.disabled);
}

TEST_CASE("H10: a success in between starts the failing period again", "[H10]") {
    endpoint_state s;
    s = keyhook::record_attempt(s, report(1, t0, attempt_outcome::http(500)), t0).state;
    s = keyhook::record_attempt(s, report(2, t0 + 72h, attempt_outcome::http(204)), t0).state;
    CHECK_FALSE(s.health.fail_since.has_value());
    CHECK_FALSE(s.health.last_status.has_value());
    CHECK_FALSE(s.health.last_failure_at.has_value());
    CHECK(s.health.last_success_at == t0 + 72h);
    s = keyhook::record_attempt(s, report(1, t0 + 100h, attempt_outcome::http(500), false, other_id), t0).state;
    CHECK(s.health.fail_since == t0 + 100h);
    // 5 days after the first failure, but not after the new period's start.
    const auto d = keyhook::record_attempt(s, report(2, t0 + 120h, attempt_outcome::http(500), false, other_id), t0);
    CHECK_FALSE(d.state.disabled);
    CHECK(keyhook::record_attempt(s, report(3, t0 + 220h, attempt_outcome::http(500)), t0).state.disabled);
}

TEST_CASE("H10: a 410 disables at once (B2); a 404 does not", "[H10]") {
    const endpoint_state healthy;
    const auto gone = keyhook::record_attempt(healthy, report(1, t0, attempt_outcome::http(410)), t0 + 1s);
    CHECK(gone.what == health_decision::action::disable);
    CHECK(gone.state.disabled);
    REQUIRE(types(gone) == std::vector<notice_type>{notice_type::endpoint_disabled});
    CHECK(gone.notices[0].fail_since == t0);
    CHECK(gone.notices[0].last_status == 410);
    CHECK_FALSE(keyhook::record_attempt(healthy, report(1, t0, attempt_outcome::http(404)), t0).state.disabled);
    // A failing 4th attempt that is a 410 and the last: all three notices, in order.
    const auto all = keyhook::record_attempt(healthy, report(4, t0, attempt_outcome::http(410), true), t0);
    CHECK(types(all) == std::vector<notice_type>{notice_type::attempt_failing, notice_type::attempt_exhausted,
                                                 notice_type::endpoint_disabled});
}

TEST_CASE("H10: dispatch skips disabled webhooks; enabling clears health", "[H10][dispatch]") {
    keyhook::notification n;
    n.tenant = "acme";
    n.user_action = keyhook::event_type::AddProduct;
    keyhook::webhook a, b;
    a.name = "crm-sync";
    b.name = "audit";
    a.endpoint = b.endpoint = "https://hooks.example.com/in";
    a.saved = b.saved = true;
    const auto hooks = keyhook::validate_webhooks({a, b});
    endpoint_state crm = keyhook::record_attempt({}, report(1, t0, attempt_outcome::http(410)), t0).state;
    REQUIRE(crm.disabled);
    keyhook::dispatch_options options;
    options.is_disabled = [&crm](const std::string& name) { return name == "crm-sync" && crm.disabled; };
    auto out = keyhook::dispatch({"acme", true}, hooks, n, options);
    REQUIRE(out.size() == 1);
    CHECK(out[0].webhook_name() == "audit");

    crm.throttle.tat = t0 + 1s;
    crm = keyhook::enable_endpoint(crm);
    CHECK_FALSE(crm.disabled);
    CHECK_FALSE(crm.disabled_at.has_value());
    CHECK(crm.health == keyhook::endpoint_health{});
    CHECK(crm.throttle.tat == t0 + 1s);
    CHECK(keyhook::dispatch({"acme", true}, hooks, n, options).size() == 2);
}

TEST_CASE("H10: the notices' JSON form follows Svix's member names", "[H10]") {
    const auto d = keyhook::record_attempt({}, report(4, t0 + 500us, attempt_outcome::http(410), true), t0 + 2s);
    REQUIRE(d.notices.size() == 3);
    CHECK(nlohmann::json(d.notices[0]).dump() ==
          R"({"data":{"endpointId":"crm-sync","failSince":"2026-03-14T09:00:00.000500Z",)"
          R"("lastAttempt":{"responseStatusCode":410,"timestamp":"2026-03-14T09:00:00.000500Z"},)"
          R"("msgId":"msg_0123456789abcdef0123456789abcdef"},)"
          R"("timestamp":"2026-03-14T09:00:02.000Z","type":"message.attempt.failing"})");
    CHECK(nlohmann::json(d.notices[1])["type"] == "message.attempt.exhausted");
    const nlohmann::json disabled = d.notices[2];
    CHECK(disabled["type"] == "endpoint.disabled");
    CHECK_FALSE(disabled["data"].contains("msgId"));
    const auto none = keyhook::record_attempt({}, report(4, t0, attempt_outcome::transport_failure()), t0);
    CHECK(nlohmann::json(none.notices[0])["data"]["lastAttempt"]["responseStatusCode"].is_null());
    std::ostringstream os;
    os << d.notices[2];
    CHECK(os.str() ==
          "endpoint.disabled at 2026-03-14T09:00:02.000Z for webhook \"crm-sync\", failing since "
          "2026-03-14T09:00:00.000500Z");
}

TEST_CASE("H10, O5: endpoint.enabled names the failing period enabling closed and its latest failure", "[H10][O5]") {
    // Failing from t0, its latest failure a 503 an hour later, then a 410 disabling it.
    auto s = keyhook::record_attempt({}, report(1, t0, attempt_outcome::http(500)), t0).state;
    s = keyhook::record_attempt(s, report(2, t0 + 1h, attempt_outcome::http(503)), t0 + 1h).state;
    s = keyhook::record_attempt(s, report(3, t0 + 2h, attempt_outcome::http(410)), t0 + 2h).state;
    REQUIRE(s.disabled);
    const auto n = keyhook::endpoint_enabled_notice(s, "crm-sync", t0 + 24h);
    CHECK(n.type == notice_type::endpoint_enabled);
    CHECK(keyhook::to_string(n.type) == "endpoint.enabled");
    CHECK(nlohmann::json(n).dump() ==
          R"({"data":{"endpointId":"crm-sync","failSince":"2026-03-14T09:00:00.000Z",)"
          R"("lastAttempt":{"responseStatusCode":410,"timestamp":"2026-03-14T11:00:00.000Z"}},)"
          R"("timestamp":"2026-03-15T09:00:00.000Z","type":"endpoint.enabled"})");
    // The state it goes with: enabled, healthy.
    const auto enabled = keyhook::enable_endpoint(s);
    CHECK_FALSE(enabled.disabled);
    CHECK(enabled.health == keyhook::endpoint_health{});
    // No failure known (a disabled flag alone): the period is null, lastAttempt the disabling's time, else now.
    endpoint_state flagged;
    flagged.disabled = true;
    flagged.disabled_at = t0 + 5min;
    const nlohmann::json f = keyhook::endpoint_enabled_notice(flagged, "crm-sync", t0 + 1h);
    CHECK(f["data"]["failSince"].is_null());
    CHECK(f["data"]["lastAttempt"]["timestamp"] == "2026-03-14T09:05:00.000Z");
    CHECK(f["data"]["lastAttempt"]["responseStatusCode"].is_null());
    const nlohmann::json none = keyhook::endpoint_enabled_notice({}, "crm-sync", t0 + 1h);
    CHECK(none["data"]["lastAttempt"]["timestamp"] == "2026-03-14T10:00:00.000Z");
    CHECK_FALSE(none["data"].contains("msgId"));
    std::ostringstream os;
    os << keyhook::endpoint_enabled_notice(s, "crm-sync", t0 + 24h);
    CHECK(os.str() ==
          "endpoint.enabled at 2026-03-15T09:00:00.000Z for webhook \"crm-sync\", failing since "
          "2026-03-14T09:00:00.000Z");
}

TEST_CASE("H10: the stored form of an endpoint's state reads back; bad values name their path", "[H10]") {
    endpoint_state s = keyhook::record_attempt({}, report(1, t0, attempt_outcome::http(410)), t0 + 1s).state;
    s.throttle.tat = t0 + 2s;
    const nlohmann::json j = s;
    CHECK(j.dump() ==
          R"({"disabled":true,"disabledAt":"2026-03-14T09:00:01.000Z","failSince":"2026-03-14T09:00:00.000Z",)"
          R"("failuresAfterSuccess":["2026-03-14T09:00:00.000Z"],)"
          R"("lastFailureAt":"2026-03-14T09:00:00.000Z","lastStatus":410,"lastSuccessAt":null,)"
          R"("throttleTat":"2026-03-14T09:00:02.000Z"})");
    const auto back = keyhook::try_endpoint_state_from_json(j, "endpoints.crm");
    REQUIRE(back.has_value());
    CHECK(*back == s);
    CHECK(keyhook::try_endpoint_state_from_json(nlohmann::json::object()).value() == endpoint_state{});

    const auto fails = [](const char* text, const char* path) {
        const auto r = keyhook::try_endpoint_state_from_json(keyhook::parse_json(text), "endpoints.crm");
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().path == path);
    };
    fails(R"({"failSince":"2026-02-30T00:00:00Z"})", "endpoints.crm.failSince");
    fails(R"({"failSince":5})", "endpoints.crm.failSince");
    fails(R"({"lastStatus":99})", "endpoints.crm.lastStatus");
    fails(R"({"lastStatus":600})", "endpoints.crm.lastStatus");
    fails(R"({"lastStatus":"500"})", "endpoints.crm.lastStatus");
    fails(R"({"disabled":"yes"})", "endpoints.crm.disabled");
    fails(R"({"disabledAt":"2026-03-14T09:00:00Z"})", "endpoints.crm.disabledAt");
    fails(R"({"lastFailureAt":1})", "endpoints.crm.lastFailureAt");
    fails(R"({"lastSuccessAt":"yesterday"})", "endpoints.crm.lastSuccessAt");
    fails(R"([])", "endpoints.crm");
    CHECK(keyhook::try_endpoint_state_from_json(keyhook::parse_json(R"({"lastStatus":100})")).has_value());
    CHECK(keyhook::try_endpoint_state_from_json(keyhook::parse_json(R"({"lastStatus":599})")).has_value());
    // A state stored before lastFailureAt and lastSuccessAt existed reads back.
    const auto older = keyhook::try_endpoint_state_from_json(keyhook::parse_json(
        R"({"disabled":false,"disabledAt":null,"failSince":"2026-03-14T09:00:00Z","lastStatus":500,"throttleTat":null})"));
    REQUIRE(older.has_value());
    CHECK(older->health.fail_since == t0);
    CHECK_FALSE(older->health.last_failure_at.has_value());
    CHECK_FALSE(older->health.last_success_at.has_value());
    // ...and folds as its period's only failure were at failSince.
    CHECK(
        keyhook::record_attempt(*older, report(1, t0 - 1us, attempt_outcome::http(200)), t0).state.health.fail_since ==
        t0);
    CHECK_FALSE(keyhook::record_attempt(*older, report(1, t0, attempt_outcome::http(200)), t0)
                    .state.health.fail_since.has_value());
    // J1: a repeated member is refused by the reader before this.
    CHECK_FALSE(keyhook::try_parse_json(R"({"disabled":true,"disabled":false})").has_value());
}

TEST_CASE("H11: a throttle of 2 a second spaces deliveries 0.5 s apart, deferring, never failing", "[H11]") {
    const keyhook::throttle_policy two{2};
    endpoint_state s;
    auto d = keyhook::throttle_delivery(s, two, t0);
    REQUIRE(d.send_now);
    s = d.state;
    // Burst 1: a second delivery at the same instant waits 0.5 s.
    d = keyhook::throttle_delivery(s, two, t0);
    CHECK_FALSE(d.send_now);
    CHECK(d.send_at == t0 + 500ms);
    CHECK(d.state == s);  // a deferral changes nothing
    // One microsecond early: still deferred; at the time given: sent.
    CHECK_FALSE(keyhook::throttle_delivery(s, two, t0 + 500ms - 1us).send_now);
    d = keyhook::throttle_delivery(s, two, t0 + 500ms);
    CHECK(d.send_now);
    s = d.state;
    // Ten deliveries due at t0 + 1 s, each sent when the throttle says: 0.5 s apart.
    std::vector<timestamp> sent;
    for (int i = 0; i < 10; ++i) {
        timestamp at = t0 + 1s;
        for (;;) {
            const auto t = keyhook::throttle_delivery(s, two, at);
            if (t.send_now) {
                s = t.state;
                break;
            }
            at = t.send_at;
        }
        sent.push_back(at);
    }
    for (std::size_t i = 0; i < sent.size(); ++i) CHECK(sent[i] == t0 + 1s + i * 500ms);
    // Health is untouched: a deferral is not an attempt.
    CHECK(s.health == keyhook::endpoint_health{});
}

TEST_CASE("H11: no throttle (0) sends at once; a rate that does not divide a second rounds T up", "[H11]") {
    endpoint_state s;
    for (int i = 0; i < 5; ++i) CHECK(keyhook::throttle_delivery(s, {0}, t0).send_now);
    s = keyhook::throttle_delivery(s, {3}, t0).state;
    const auto d = keyhook::throttle_delivery(s, {3}, t0);
    CHECK(d.send_at == t0 + 333334us);
}

TEST_CASE("H10, H11: workers share one state per webhook through endpoint_registry", "[H10][H11]") {
    keyhook::endpoint_registry registry;
    // Four workers fail deliveries to one webhook, hour after hour for 8 days
    // between them: the endpoint is disabled exactly once, as one shared
    // state says (a copy per worker would announce it up to four times).
    std::atomic<int> disabled_notices{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < 4; ++w)
        workers.emplace_back([&registry, &disabled_notices, w] {
            for (int hour = w; hour < 8 * 24; hour += 4) {
                const auto d = registry.record(report(1, t0 + hour * 1h, attempt_outcome::http(500)), t0);
                for (const auto& n : d.notices) disabled_notices += n.type == notice_type::endpoint_disabled ? 1 : 0;
            }
        });
    for (auto& t : workers) t.join();
    CHECK(disabled_notices == 1);
    CHECK(registry.is_disabled("crm-sync"));
    CHECK_FALSE(registry.is_disabled("audit"));
    CHECK(registry.state("crm-sync").health.fail_since == t0);

    // Dispatch asks the registry; enabling clears the health.
    keyhook::dispatch_options options;
    options.is_disabled = registry.disabled_predicate();
    CHECK(options.is_disabled("crm-sync"));
    registry.enable("crm-sync");
    CHECK_FALSE(options.is_disabled("crm-sync"));
    CHECK(registry.state("crm-sync").health == keyhook::endpoint_health{});

    // Throttled deliveries from four workers at one instant: one goes, the
    // rest are deferred, and the state records one send.
    std::atomic<int> sent{0};
    workers.clear();
    for (int w = 0; w < 4; ++w)
        workers.emplace_back([&registry, &sent] {
            if (registry.throttle("crm-sync", {2}, t0).send_now) ++sent;
        });
    for (auto& t : workers) t.join();
    CHECK(sent == 1);
    CHECK(registry.state("crm-sync").throttle.tat == t0 + 500ms);
    registry.set("audit", registry.state("crm-sync"));
    CHECK(registry.state("audit") == registry.state("crm-sync"));
}

TEST_CASE("H10 with B2: an endpoint failing for 6 virtual days is disabled once, then gets nothing", "[H10][B2]") {
    // The composition a delivery worker runs: a new delivery every 6 hours,
    // each retried by the plan (no jitter), every attempt answered 503, all
    // folded into one state, in time order of the attempts.
    struct pending {
        timestamp due;
        std::size_t delivery;
        bool operator>(const pending& o) const { return due > o.due || (due == o.due && delivery > o.delivery); }
    };
    const auto no_jitter = [](unsigned char* out, std::size_t n) { std::fill(out, out + n, 0); };
    std::priority_queue<pending, std::vector<pending>, std::greater<>> queue;
    std::vector<std::vector<keyhook::delivery_attempt>> histories;
    for (std::size_t i = 0; i * 6h <= 6 * 24h; ++i) {
        queue.push({t0 + i * 6h, i});
        histories.emplace_back();
    }
    endpoint_state s;
    std::vector<keyhook::operational_notice> disabled;
    std::size_t exhausted = 0, attempts_after_disable = 0;
    while (!queue.empty()) {
        const auto next = queue.top();
        queue.pop();
        if (s.disabled) {  // dispatch and the worker skip a disabled webhook
            ++attempts_after_disable;
            continue;
        }
        auto& history = histories[next.delivery];
        history.push_back({next.due, attempt_outcome::http(503), std::nullopt});
        const auto plan = keyhook::plan_next_attempt(history, no_jitter, next.due);
        const bool gave_up = plan.what == keyhook::retry_decision::action::give_up;
        const auto d =
            keyhook::record_attempt(s, report(history.size(), next.due, attempt_outcome::http(503), gave_up), next.due);
        s = d.state;
        for (const auto& n : d.notices) {
            if (n.type == notice_type::endpoint_disabled) disabled.push_back(n);
            if (n.type == notice_type::attempt_exhausted) ++exhausted;
        }
        if (plan.what == keyhook::retry_decision::action::send) queue.push({plan.send_at, next.delivery});
    }
    REQUIRE(disabled.size() == 1);
    CHECK(disabled[0].fail_since == t0);
    // The first failed attempt at least 5 days in: the delivery made at 5 days.
    CHECK(disabled[0].last_attempt_at == t0 + 120h);
    CHECK(s.disabled);
    CHECK(exhausted > 0);               // deliveries older than ~28 h gave up before
    CHECK(attempts_after_disable > 0);  // later ones were due, and not sent
}

// Host-built values: attempts reported out of order by several workers fold
// as in time order (by sent_at), whatever the order of the reports.
TEST_CASE("H10: a late failure sent before the latest success neither opens nor moves the period", "[H10]") {
    const auto fail = attempt_outcome::http(500);
    endpoint_state s;
    s = keyhook::record_attempt(s, report(2, t0 + 1h, attempt_outcome::http(200)), t0 + 1h).state;  // worker B
    s = keyhook::record_attempt(s, report(1, t0, fail), t0 + 2h).state;  // worker A's older failure, late
    CHECK_FALSE(s.health.fail_since.has_value());
    // At or before the success: still nothing (a success and a failure at one instant: the success wins).
    s = keyhook::record_attempt(s, report(1, t0 + 1h, fail), t0 + 2h).state;
    CHECK_FALSE(s.health.fail_since.has_value());
    // One microsecond after it: a period opens there.
    const auto after = keyhook::record_attempt(s, report(1, t0 + 1h + 1us, fail), t0 + 2h).state;
    CHECK(after.health.fail_since == t0 + 1h + 1us);
    // The attacker's case: a failure 5 days after t0 has been failing for 0 s, not 5 days.
    const auto d = keyhook::record_attempt(s, report(1, t0 + 120h + 1min, fail), t0 + 120h + 1min);
    CHECK_FALSE(d.state.disabled);
    CHECK(d.state.health.fail_since == t0 + 120h + 1min);
    CHECK(d.notices.empty());
    // A late failure still counts for its own delivery's notices, with the current period.
    const auto late4 = keyhook::record_attempt(s, report(4, t0 + 30min, fail, true), t0 + 2h);
    CHECK(types(late4) == std::vector<notice_type>{notice_type::attempt_failing, notice_type::attempt_exhausted});
    CHECK_FALSE(late4.notices[0].fail_since.has_value());
    CHECK(late4.notices[0].last_attempt_at == t0 + 30min);
    CHECK(late4.notices[0].last_status == 500);
    CHECK(late4.state.health == s.health);
}

TEST_CASE("H10: a late success sent inside a failing period does not end it", "[H10]") {
    const auto fail = attempt_outcome::http(500);
    endpoint_state s;
    s = keyhook::record_attempt(s, report(1, t0, fail), t0).state;
    s = keyhook::record_attempt(s, report(1, t0 + 2h, attempt_outcome::http(502)), t0 + 2h).state;
    CHECK(s.health.last_failure_at == t0 + 2h);
    CHECK(s.health.last_status == 502);
    // The success sent at t0 + 1h, reported last: the endpoint fails again
    // since t0 + 2h (the earliest failure known after it), not healthy.
    const auto mid = keyhook::record_attempt(s, report(2, t0 + 1h, attempt_outcome::http(200)), t0 + 3h).state;
    CHECK(mid.health.fail_since == t0 + 2h);
    CHECK(mid.health.last_status == 502);
    CHECK(mid.health.last_success_at == t0 + 1h);
    // So the period runs from t0 + 2h: exactly 5 days later the endpoint is disabled.
    CHECK_FALSE(keyhook::record_attempt(mid, report(3, t0 + 122h - 1us, fail), t0).state.disabled);
    const auto off = keyhook::record_attempt(mid, report(3, t0 + 122h, fail), t0);
    CHECK(off.state.disabled);
    REQUIRE(types(off) == std::vector<notice_type>{notice_type::endpoint_disabled});
    CHECK(off.notices[0].fail_since == t0 + 2h);
    // A success at the latest failure's instant, or after it, ends the period.
    CHECK(keyhook::record_attempt(s, report(2, t0 + 2h, attempt_outcome::http(204)), t0).state.health ==
          keyhook::endpoint_health{std::nullopt, std::nullopt, std::nullopt, t0 + 2h, {}});
    // A success before the period began leaves it as it is.
    const auto before = keyhook::record_attempt(s, report(2, t0 - 1us, attempt_outcome::http(204)), t0).state;
    CHECK(before.health.fail_since == t0);
    CHECK(before.health.last_failure_at == t0 + 2h);
    CHECK(before.health.last_success_at == t0 - 1us);
    // An older success reported after a newer one does not move the latest success back.
    CHECK(keyhook::record_attempt(mid, report(2, t0 + 30min, attempt_outcome::http(200)), t0)
              .state.health.last_success_at == t0 + 1h);
}

TEST_CASE("H10: the fold of a shuffled set of attempts equals the fold in time order", "[H10]") {
    // Failures every hour for 7 days with one success at hour 30: in time
    // order the period starts at hour 31 and the endpoint is disabled at
    // hour 151. Reported in any order, the fold ends the same.
    struct at {
        int hour;
        bool ok;
    };
    std::vector<at> attempts;
    for (int hour = 0; hour <= 7 * 24; ++hour) attempts.push_back({hour, hour == 30});
    const auto fold = [](const std::vector<at>& order) {
        endpoint_state s;
        for (const auto& a : order)
            s = keyhook::record_attempt(
                    s, report(1, t0 + a.hour * 1h, a.ok ? attempt_outcome::http(200) : attempt_outcome::http(500)), t0)
                    .state;
        return s;
    };
    const auto in_order = fold(attempts);
    CHECK(in_order.health.fail_since == t0 + 31h);
    CHECK(in_order.disabled);
    std::vector<at> reversed(attempts.rbegin(), attempts.rend());
    CHECK(fold(reversed).health == in_order.health);
    CHECK(fold(reversed).disabled);  // the known period reached 5 days as the late reports came
    std::vector<at> success_last = attempts;
    std::rotate(success_last.begin() + 30, success_last.begin() + 31, success_last.end());
    // Past the bound (more than 64 failures after the success): the earliest
    // 64 are kept, so the success reported last still finds hour 31.
    CHECK(fold(success_last).health.fail_since == t0 + 31h);
    CHECK(fold(success_last).disabled);
    CHECK(fold(success_last).health.last_success_at == t0 + 30h);
    std::vector<at> success_first = attempts;
    std::rotate(success_first.begin(), success_first.begin() + 30, success_first.begin() + 31);
    CHECK(fold(success_first).health == in_order.health);
    CHECK(fold(success_first).disabled);
}

// Host-built values: a state is always written in a form its reader takes.
TEST_CASE("H10: a status outside 100 to 599 is kept as no status, so the state reads back", "[H10][B6]") {
    for (const int status : {0, -1, 99, 600, 999, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()}) {
        CAPTURE(status);
        const auto d = keyhook::record_attempt({}, report(4, t0, attempt_outcome::http(status)), t0);
        CHECK(d.state.health.fail_since == t0);
        CHECK_FALSE(d.state.health.last_status.has_value());
        REQUIRE(d.notices.size() == 1);
        CHECK_FALSE(d.notices[0].last_status.has_value());
        const auto back = keyhook::try_endpoint_state_from_json(nlohmann::json(d.state));
        REQUIRE(back.has_value());
        CHECK(*back == d.state);
    }
    for (const int status : {100, 599}) {
        CAPTURE(status);
        const auto s = keyhook::record_attempt({}, report(1, t0, attempt_outcome::http(status)), t0).state;
        CHECK(s.health.last_status == status);
        CHECK(keyhook::try_endpoint_state_from_json(nlohmann::json(s)).value() == s);
    }
}

// Host-built values: instants the host builds may lie at the clock's ends.
TEST_CASE("H10: the failing period's length is computed without overflow at the clock's ends", "[H10]") {
    const auto fail = attempt_outcome::http(500);
    endpoint_state s;
    s = keyhook::record_attempt(s, report(1, timestamp::min() + 1h, fail), t0).state;
    const auto last = keyhook::record_attempt(s, report(2, timestamp::max(), fail), t0);
    CHECK(last.state.disabled);  // some 584,000 years of failing
    endpoint_state end;
    end = keyhook::record_attempt(end, report(1, timestamp::max() - 1h, fail), t0).state;
    CHECK_FALSE(keyhook::record_attempt(end, report(2, timestamp::max(), fail), t0).state.disabled);  // 1 h
    end = keyhook::record_attempt(end, report(1, timestamp::max() - 120h, fail), t0).state;
    CHECK(keyhook::record_attempt(end, report(2, timestamp::max(), fail), t0).state.disabled);  // exactly 5 days
    const auto early = keyhook::record_attempt({}, report(1, timestamp::max(), fail), t0).state;
    // Reported late, the earliest failure moves the start back: the known period spans the clock.
    CHECK(keyhook::record_attempt(early, report(2, timestamp::min(), fail), t0).state.disabled);
}

// Host-built values.
TEST_CASE("H10: health_policy_problems names each unusable member", "[H10]") {
    CHECK(keyhook::health_policy_problems({}).empty());
    CHECK(keyhook::health_policy_problems({1, 1us}).empty());
    const auto problems = keyhook::health_policy_problems({0, 0us});
    REQUIRE(problems.size() == 2);
    CHECK(problems[0].path == "failing_notice_attempt");
    CHECK(problems[1].path == "disable_after");
    CHECK(keyhook::health_policy_problems({4, -1us}).size() == 1);
}

namespace {

// One attempt of the H10 order tests: when it was sent, and whether it succeeded.
struct h10_attempt {
    timestamp at;
    bool ok;
};

// A failure's status follows from its time, so that two failures sent at
// one instant agree on it and the order of ties cannot matter.
attempt_outcome h10_outcome(const h10_attempt& a) {
    return a.ok ? attempt_outcome::http(200) : attempt_outcome::http(500 + static_cast<int>((a.at - t0) / 1h % 4));
}

// The health H10 defines for a set of attempts: the latest success, the
// failures sent after it, the period from the earliest of them.
keyhook::endpoint_health h10_expected(const std::vector<h10_attempt>& set) {
    keyhook::endpoint_health h;
    for (const auto& a : set)
        if (a.ok && (!h.last_success_at || a.at > *h.last_success_at)) h.last_success_at = a.at;
    for (const auto& a : set)
        if (!a.ok && (!h.last_success_at || a.at > *h.last_success_at)) h.failures_after_success.push_back(a.at);
    std::sort(h.failures_after_success.begin(), h.failures_after_success.end());
    if (!h.failures_after_success.empty()) {
        h.fail_since = h.failures_after_success.front();
        h.last_failure_at = h.failures_after_success.back();
        h.last_status = h10_outcome({*h.last_failure_at, false}).status();
    }
    return h;
}

// Folds the attempts in the given order; checks on the way that a disabling
// once emitted is never undone and announced once.
endpoint_state h10_fold(const std::vector<h10_attempt>& order) {
    endpoint_state s;
    int disabled_notices = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
        const auto d = keyhook::record_attempt(s, report(1 + i % 5, order[i].at, h10_outcome(order[i])), t0);
        if (s.disabled) CHECK(d.state.disabled);
        for (const auto& n : d.notices) disabled_notices += n.type == notice_type::endpoint_disabled;
        s = d.state;
    }
    CHECK(disabled_notices == (s.disabled ? 1 : 0));
    return s;
}

}  // namespace

TEST_CASE("H10: failure day 1, success day 2, failures days 3 and 4: every one of the 24 orders fails since day 3",
          "[H10]") {
    const std::vector<h10_attempt> set{{t0 + 24h, false}, {t0 + 48h, true}, {t0 + 72h, false}, {t0 + 96h, false}};
    std::vector<std::size_t> order{0, 1, 2, 3};
    int orders = 0;
    do {
        std::vector<h10_attempt> reported;
        for (const auto i : order) reported.push_back(set[i]);
        INFO("order " << order[0] << order[1] << order[2] << order[3]);
        const auto s = h10_fold(reported);
        CHECK(s.health.fail_since == t0 + 72h);
        CHECK(s.health.last_failure_at == t0 + 96h);
        CHECK(s.health.last_success_at == t0 + 48h);
        CHECK(s.health == h10_expected(set));
        CHECK_FALSE(s.disabled);  // the period is one day long in every order
        ++orders;
    } while (std::next_permutation(order.begin(), order.end()));
    CHECK(orders == 24);
}

TEST_CASE("H10: any set of up to 20 attempts folds to the same health in every order drawn", "[H10]") {
    std::mt19937_64 random(20261128);  // fixed: a failure names its set and order
    for (int round = 0; round < 400; ++round) {
        const auto n = std::uniform_int_distribution<std::size_t>(1, 20)(random);
        std::vector<h10_attempt> set;
        for (std::size_t i = 0; i < n; ++i) {
            // Hours 0 to 29: ties between attempts happen, across and within outcomes.
            const auto hour = std::uniform_int_distribution<int>(0, 29)(random);
            set.push_back({t0 + hour * 1h, std::bernoulli_distribution(0.3)(random)});
        }
        const auto expected = h10_expected(set);
        for (int draw = 0; draw < 12; ++draw) {
            std::shuffle(set.begin(), set.end(), random);
            std::ostringstream seen;
            for (const auto& a : set) seen << (a.at - t0) / 1h << (a.ok ? "ok " : "fail ");
            INFO("round " << round << ", order: " << seen.str());
            const auto s = h10_fold(set);
            CHECK(s.health == expected);
            // The stored form reads back to the same health.
            const auto back = keyhook::try_endpoint_state_from_json(nlohmann::json(s));
            REQUIRE(back);
            CHECK(back->health == s.health);
        }
    }
}

TEST_CASE("H10: past 64 failures after the latest success, the earliest 64 are kept", "[H10]") {
    endpoint_state s;
    for (int i = 1; i <= 70; ++i)
        s = keyhook::record_attempt(s, report(1, t0 + i * 1min, attempt_outcome::http(500)), t0).state;
    CHECK(s.health.failures_after_success.size() == keyhook::endpoint_health::max_failures_kept);
    CHECK(s.health.failures_after_success.front() == t0 + 1min);
    CHECK(s.health.failures_after_success.back() == t0 + 64min);
    CHECK(s.health.last_failure_at == t0 + 70min);
    // A success after every kept failure: the latest failure known starts the period.
    const auto late = keyhook::record_attempt(s, report(2, t0 + 65min, attempt_outcome::http(200)), t0).state;
    CHECK(late.health.fail_since == t0 + 70min);
    // A stored list of more than 64 is refused with its path.
    auto j = nlohmann::json(s);
    j["failuresAfterSuccess"].push_back(keyhook::format_timestamp(t0 + 71min));
    const auto refused = keyhook::try_endpoint_state_from_json(j);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().path == "failuresAfterSuccess");
}

TEST_CASE("H10: a state stored before failuresAfterSuccess existed folds from its period's two ends", "[H10][B6]") {
    const auto old = keyhook::try_endpoint_state_from_json(nlohmann::json::parse(
        R"({"failSince":"2026-03-14T10:00:00.000Z","lastFailureAt":"2026-03-14T12:00:00.000Z","lastStatus":500})"));
    REQUIRE(old);
    // A success between the two ends, reported late: the period starts at its latest failure.
    const auto s = keyhook::record_attempt(*old, report(2, t0 + 2h, attempt_outcome::http(200)), t0).state;
    CHECK(s.health.fail_since == t0 + 3h);
    CHECK(s.health.failures_after_success == std::vector<timestamp>{t0 + 3h});
}
