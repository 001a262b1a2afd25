// key_audit --since T: the expiry notices of (T, now] for the bundled sample
// (examples/key_audit/sample.json, written for now = 2026-11-22T12:00:00Z).
#include "key_audit_harness.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace {

using key_audit_test::read_file;
using key_audit_test::run;
using key_audit_test::sample;
using key_audit_test::sample_now;
using key_audit_test::sample_now_text;

nlohmann::json run_json(const std::string& since, const std::string& now) {
    const auto r = run({"--now", now, "--since", since, "--format", "json"});
    REQUIRE(r.exit_code == key_audit::exit_ok);
    REQUIRE(r.err.empty());
    return nlohmann::json::parse(r.out);
}

// "at kind name" for each notice, in output order.
std::vector<std::string> summary(const nlohmann::json& doc) {
    std::vector<std::string> lines;
    for (const auto& n : doc.at("notices"))
        lines.push_back(n.at("at").get<std::string>() + " " + n.at("kind").get<std::string>() + " " +
                        n.at("name").get<std::string>());
    return lines;
}

}  // namespace

TEST_CASE("--since: the sample's last day, derived from the rules by hand", "[S1][W2][W3][T4][notices][cli]") {
    const auto doc = run_json("2026-11-21T12:00:00Z", sample_now_text);
    CHECK(doc.at("since") == "2026-11-21T12:00:00.000Z");
    CHECK(doc.at("now") == "2026-11-22T12:00:00.000Z");
    // 7-day key from 11-17T12:00:00.853878: warns from its 5th valid day, 0.85 s after `since`.
    // 5-day key from 11-20T15:30:00.62016: warns from its 2nd valid day.
    // 20-day key ending 11-30: W2's fallback, the last 8 days.
    // 1-day key from 08:00: activated and warning at once, activation first.
    // At exactly `now`: a 7-day key expires, a 6.5-day key from 11-18T12:00 starts warning (ordered by name).
    // Left out: "flash sale bot" activates 1 ms after `now`; "billing export v2" activated and
    // "CRM integration" started warning before `since`; "old mobile app" is revoked.
    CHECK(summary(doc) == std::vector<std::string>{
                              "2026-11-21T12:00:00.853878Z warning 東京 batch importer",
                              "2026-11-21T15:30:00.620160Z warning Zahlungsdienst Müller",
                              "2026-11-22T00:00:00.000Z warning café-sync",
                              "2026-11-22T06:00:00.000Z activated staging smoke tests",
                              "2026-11-22T08:00:00.000Z activated Payments webhook relay",
                              "2026-11-22T08:00:00.000Z warning Payments webhook relay",
                              "2026-11-22T12:00:00.000Z expired load test harness",
                              "2026-11-22T12:00:00.000Z warning partner sandbox",
                          });
    const auto& first = doc.at("notices").at(0);
    CHECK(first.at("id") == "7d07d425-8c75-4e14-99ea-db7ed05a30e2");
    CHECK(first.at("masked") == "62b******************************f7e");
    CHECK(first.at("expireAt") == "2026-11-24T12:00:00.853878Z");
    for (const auto& n : doc.at("notices")) {
        CHECK(n.size() == 6);
        CHECK(n.at("masked").get<std::string>().find("***") != std::string::npos);
    }
}

TEST_CASE("--since: half-open at both ends", "[S1][W2][W3][notices][cli]") {
    // 1 microsecond holding midnight of 11-21: one key activates, a 6-month key enters its last
    // 8 days (W2 policy), and a revoked 3-day key that would start warning then says nothing.
    CHECK(summary(run_json("2026-11-20T23:59:59.999999Z", "2026-11-21T00:00:00Z")) ==
          std::vector<std::string>{"2026-11-21T00:00:00.000Z warning CRM integration",
                                   "2026-11-21T00:00:00.000Z activated billing export v2"});
    // The next microsecond: midnight is `since` now, so nothing.
    CHECK(summary(run_json("2026-11-21T00:00:00Z", "2026-11-21T00:00:00.000001Z")).empty());
    // Changes exactly at `since` are left out, those exactly at `now` shown.
    CHECK(summary(run_json(sample_now_text, "2026-11-22T12:00:00.001Z")) ==
          std::vector<std::string>{"2026-11-22T12:00:00.001Z activated flash sale bot",
                                   "2026-11-22T12:00:00.001Z warning flash sale bot"});
    // since == now: a valid, empty interval.
    const auto empty = run_json(sample_now_text, sample_now_text);
    CHECK(empty.at("notices").is_array());
    CHECK(empty.at("notices").empty());
}

TEST_CASE("--since: consecutive runs show every change once", "[S1][W2][notices][cli]") {
    const std::vector<std::string> instants = {"2026-11-01T00:00:00Z",     "2026-11-20T23:59:59.999999Z",
                                               "2026-11-21T00:00:00Z",     "2026-11-21T12:00:00.853878Z",
                                               "2026-11-22T08:00:00Z",     "2026-11-22T12:00:00Z",
                                               "2026-11-22T12:00:00.001Z", "2026-12-31T23:59:59.999Z"};
    std::vector<std::string> pieces;
    for (std::size_t i = 1; i < instants.size(); ++i) {
        const auto part = summary(run_json(instants[i - 1], instants[i]));
        pieces.insert(pieces.end(), part.begin(), part.end());
    }
    const auto whole = summary(run_json(instants.front(), instants.back()));
    CHECK(whole.size() > 20);
    CHECK(pieces == whole);
}

TEST_CASE("--since: the output is the library's digest", "[T4][notices][cli]") {
    const auto records = keyhook::parse_key_list(sample()).records;
    for (const auto& since : {"2026-11-21T12:00:00Z", "2026-01-01T00:00:00Z", "0001-01-01T00:00:00Z"}) {
        INFO(since);
        const auto digest = keyhook::digest_between(records, keyhook::parse_timestamp(since), sample_now);
        CHECK(run_json(since, sample_now_text) == nlohmann::json(digest));
    }
}

TEST_CASE("--since: table format", "[notices][cli]") {
    const auto r = run({"--now", sample_now_text, "--since", "2026-11-21T12:00:00Z"});
    REQUIRE(r.exit_code == key_audit::exit_ok);
    std::istringstream in(r.out);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    REQUIRE(lines.size() == 3 + 8);
    CHECK(lines[0] == "notices in (2026-11-21T12:00:00.000Z, 2026-11-22T12:00:00.000Z]: 8");
    CHECK(lines[1].empty());
    CHECK(lines[2].rfind("AT (UTC)", 0) == 0);
    // To the second, so a change 0.85 s after `since` does not read as `since`.
    CHECK(lines[3].rfind("2026-11-21 12:00:00  warning ", 0) == 0);
    CHECK(lines[3].find("東京 batch importer") != std::string::npos);
    CHECK(lines[3].find("62b******************************f7e") != std::string::npos);
    CHECK(lines[3].find("2026-11-24 12:00") != std::string::npos);
    CHECK(lines[10].find("partner sandbox") != std::string::npos);
    CHECK(lines[10].find("expired") == std::string::npos);

    const auto none = run({"--now", sample_now_text, "--since", sample_now_text, "--format", "table"});
    CHECK(none.out == "notices in (2026-11-22T12:00:00.000Z, 2026-11-22T12:00:00.000Z]: 0\n");
}

TEST_CASE("--since: usage errors exit 2", "[notices][cli]") {
    SECTION("after --now, by one microsecond") {
        const auto r = run({"--now", sample_now_text, "--since", "2026-11-22T12:00:00.000001Z"});
        CHECK(r.exit_code == key_audit::exit_usage);
        CHECK(r.out.empty());
        CHECK(r.err.rfind("key_audit: --since: 2026-11-22T12:00:00.000001Z is after now (2026-11-22T12:00:00.000Z)\n"
                          "usage: key_audit ",
                          0) == 0);
    }
    SECTION("after the clock when --now is absent") {
        CHECK(run({"--since", "2026-11-22T12:00:00.000001Z"}).exit_code == key_audit::exit_usage);
        CHECK(run({"--since", sample_now_text}).exit_code == key_audit::exit_ok);
        CHECK(
            run({"--since", "2026-11-22T12:00:00.000001Z"}, {}, sample_now + std::chrono::microseconds{1}).exit_code ==
            key_audit::exit_ok);
    }
    SECTION("not a timestamp") {
        const auto r = run({"--since", "yesterday"});
        CHECK(r.exit_code == key_audit::exit_usage);
        CHECK(r.err.find("--since: expected an ISO 8601 timestamp, got \"yesterday\"") != std::string::npos);
    }
    SECTION("missing value") { CHECK(run({"--since"}).err.find("--since: needs a value") != std::string::npos); }
    SECTION("with --status, which would hide the keys that just expired") {
        const auto r = run({"--since", "2026-11-21T00:00:00Z", "--status", "all"});
        CHECK(r.exit_code == key_audit::exit_usage);
        CHECK(r.err.find("--status: does not apply with --since") != std::string::npos);
    }
}

TEST_CASE("without --since key_audit behaves as before", "[cli]") {
    const auto r = run({"--now", sample_now_text, "--format", "json"});
    CHECK(r.exit_code == key_audit::exit_ok);
    CHECK(r.out == read_file(KEY_AUDIT_EXPECTED_ACTIVE));
    CHECK(run({"--help"}).out.find("--since T") != std::string::npos);
}
