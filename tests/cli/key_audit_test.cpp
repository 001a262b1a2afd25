// key_audit's logic (examples/key_audit/key_audit.hpp): options, selection
// and rendering. The program itself is run by the CTest tests beside this file.
#include "key_audit_harness.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "keyhook/detail/utf8.hpp"

using key_audit::options;
using key_audit::output_format;
using key_audit::parse_options;
using key_audit::status_choice;
using key_audit_test::read_file;
using key_audit_test::run;
using key_audit_test::sample;
using key_audit_test::sample_now;
using keyhook::key_status;

namespace {

keyhook::api_key record(std::string name, std::string from, std::string until) {
    keyhook::api_key k;
    k.id = keyhook::key_id("0f8fad5b-d9cb-469f-a165-70867728950e");
    k.name = std::move(name);
    k.active_from = keyhook::parse_timestamp(from);
    k.expire_at = keyhook::parse_timestamp(until);
    return k;
}

}  // namespace

TEST_CASE("options: defaults", "[cli]") {
    const options o = parse_options({}).value();
    CHECK_FALSE(o.now.has_value());
    CHECK(o.status == status_choice::active);
    CHECK(o.format == output_format::table);
    CHECK(o.input.empty());
    CHECK_FALSE(o.help);
}

TEST_CASE("options: every option, in both spellings", "[cli][T1]") {
    const options a =
        parse_options({"--now", "2026-11-22T13:00:00+01:00", "--status", "expired", "--format", "json", "keys.json"})
            .value();
    CHECK(a.now == sample_now);  // T1: an offset is converted to UTC
    CHECK(a.status == status_choice::expired);
    CHECK(a.format == output_format::json);
    CHECK(a.input == "keys.json");

    const options b = parse_options({"--status=revoked", "--format=table", "--now=2026-11-22T12:00:00Z", "-"}).value();
    CHECK(b.status == status_choice::revoked);
    CHECK(b.format == output_format::table);
    CHECK(b.now == sample_now);
    CHECK(b.input == "-");

    CHECK(parse_options({"--status", "future"}).value().status == status_choice::future);
    CHECK(parse_options({"--status", "all"}).value().status == status_choice::all);
    CHECK(parse_options({"-h"}).value().help);
    // After "--", a name that looks like an option is a file.
    CHECK(parse_options({"--", "--odd-name.json"}).value().input == "--odd-name.json");
}

TEST_CASE("options: errors name the option and never accept a guess", "[cli]") {
    const auto unknown = parse_options({"--stat", "active"});
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().message == "unknown option \"--stat\"");

    const auto bad_now = parse_options({"--now", "2026-11-22 12:00:00Z"});
    REQUIRE_FALSE(bad_now);
    CHECK(bad_now.error().path == "--now");
    CHECK(bad_now.error().code == keyhook::errc::invalid_value);

    CHECK(parse_options({"--status", "deleted"}).error().path == "--status");  // spelled as the command line says
    CHECK(parse_options({"--format", "csv"}).error().path == "--format");
    CHECK(parse_options({"--format"}).error().message == "needs a value");
    CHECK_FALSE(parse_options({"one.json", "two.json"}));
}

TEST_CASE("options: the values the spec spells with capitals are taken in any case", "[cli][O1]") {
    CHECK(parse_options({"--status", "Active"}).value().status == status_choice::active);
    CHECK(parse_options({"--status", "REVOKED"}).value().status == status_choice::revoked);
    CHECK(parse_options({"--status=Expired"}).value().status == status_choice::expired);
    CHECK(parse_options({"--format", "JSON"}).value().format == output_format::json);
    // Other words are still refused, whatever their case.
    CHECK_FALSE(parse_options({"--status", "Actives"}));
    CHECK_FALSE(parse_options({"--status", "ACTIVE IN THE FUTURE"}));
}

TEST_CASE("options: --help and --version", "[cli][O1]") {
    CHECK(parse_options({"--help"}).value().help);
    CHECK(parse_options({"--version"}).value().version);
    const auto help = run({"--help"});
    CHECK(help.exit_code == key_audit::exit_ok);
    CHECK(help.err.empty());
    for (const char* option :
         {"--now", "--since", "--status", "--format", "--url", "--tenant", "--page-size", "--timeout", "--version"})
        CHECK(help.out.find(option) != std::string::npos);
    CHECK(help.out.find("--timeout S (default 30)") != std::string::npos);
    const auto version = run({"--version"});
    CHECK(version.exit_code == key_audit::exit_ok);
    CHECK(version.out.rfind("keyhook ", 0) == 0);
}

TEST_CASE("the bundled sample: every key's status and warning at the documented now", "[cli][S1][S2][W2][W3]") {
    const auto page = keyhook::parse_key_list(sample());
    REQUIRE(page.rejected.empty());
    REQUIRE(page.records.size() == 21);
    const auto rows = key_audit::select_rows(page.records, status_choice::all, sample_now);
    REQUIRE(rows.size() == 21);

    struct expected {
        key_status status;
        bool warning;
    };
    // Derived from the rules, one key at a time (see tests/cli/expected/README.md).
    const std::map<std::string, expected> by_id = {
        {"9a5f5c84-b09a-4c8e-b221-c1004383ec1d", {key_status::expired, false}},           // Q1 migration
        {"ea2c32f6-cf7d-45f6-ba15-7f8d7d75d06d", {key_status::revoked, false}},           // listed Deactivated
        {"bec78526-691d-4456-b013-58c82d8f69ca", {key_status::expired, false}},           // expireAt == now
        {"032ee3ea-0a4a-41c5-8b91-935e945fb126", {key_status::revoked, false}},           // in its warning stretch
        {"5fd7e3e0-455f-4035-80c3-042dda7fdbe6", {key_status::active, true}},             // 1 day
        {"888f93eb-e3a7-4292-8022-197b96a20faf", {key_status::active_in_future, false}},  // starts in 1 ms
        {"7d07d425-8c75-4e14-99ea-db7ed05a30e2", {key_status::active, true}},             // 7 days
        {"cad6b909-bf01-431e-8fc6-a62002a1e2e7", {key_status::active, true}},             // warns from exactly now
        {"e692ee8a-9a37-4dca-95de-23d5ec2cbbd9", {key_status::active, false}},            // 3 days, from tomorrow
        {"a480c58e-54b2-4241-9e03-16177854798c", {key_status::active, true}},             // 5 days
        {"406c1a84-67c5-4e85-86a7-22ff58fffb92", {key_status::active, false}},            // 27 days, not yet
        {"b988aa7a-7885-42a0-829c-1473cd487775", {key_status::active, true}},             // > 31 days, last 8
        {"ac26a3d8-574c-400d-93fe-a67ebe414c81", {key_status::active, true}},             // 31 days, day 24 on
        {"2e238e7f-87c0-4383-be0b-bad94ff16a5b", {key_status::active, true}},             // 20 days, last 8
        {"10ceeb3a-ed62-400a-89af-ec449c4bd906", {key_status::active, false}},            // 15 days, not yet
        {"689198e3-8078-4df4-a0c6-d5081b9dea7c", {key_status::active_in_future, false}},  // December
        {"45282a43-fa5a-476d-861b-353847df9474", {key_status::active, false}},            // listed future, started
        {"f29b9344-8874-4117-82c3-c93fdcca7482", {key_status::active, false}},
        {"4255da97-53ef-4d7f-8722-ca414e6854e5", {key_status::active, false}},
        {"9b772295-8ae4-45cc-9715-440fade4e74f", {key_status::active, false}},
        {"c042c3dd-377e-4a57-957e-e323c932ccef", {key_status::active, false}},  // 9999-12-31
    };
    for (const auto& r : rows) {
        INFO(r.key.name);
        const auto it = by_id.find(r.key.id.str());
        REQUIRE(it != by_id.end());
        CHECK(r.status == it->second.status);
        CHECK(r.warning == it->second.warning);
    }
}

TEST_CASE("selection: each status choice keeps L3's order", "[cli][L3]") {
    const auto records = keyhook::parse_key_list(sample()).records;
    const auto names = [&](status_choice c) {
        std::vector<std::string> out;
        for (const auto& r : key_audit::select_rows(records, c, sample_now)) out.push_back(r.key.name);
        return out;
    };
    CHECK(names(status_choice::expired) == std::vector<std::string>{"Q1 migration", "load test harness"});
    CHECK(names(status_choice::revoked) == std::vector<std::string>{"contractor access", "old mobile app"});
    CHECK(names(status_choice::future) == std::vector<std::string>{"flash sale bot", "holiday campaign"});
    const auto active = names(status_choice::active);
    REQUIRE(active.size() == 15);
    CHECK(active.front() == "Payments webhook relay");
    // Three keys expire at the same instant: by name, then by id.
    CHECK(std::vector<std::string>(active.end() - 4, active.end() - 1) ==
          std::vector<std::string>{"analytics-pipeline", "nightly-export", "nightly-export"});
    const auto rows = key_audit::select_rows(records, status_choice::active, sample_now);
    CHECK(rows[12].key.id.str() < rows[13].key.id.str());
    CHECK(active.back() == "legacy ERP connector");
}

TEST_CASE("json: members, nulls and timestamps", "[cli][T4][M3]") {
    auto k = record("no mask", "2026-11-20T00:00:00.1234567Z", "2026-12-20T00:00:00Z");
    key_audit::key_row row{k, key_status::active, false};
    auto doc = nlohmann::ordered_json::parse(key_audit::render_json({row}, sample_now, {1, 1}));
    CHECK(doc["now"] == "2026-11-22T12:00:00.000Z");
    const auto& j = doc["keys"][0];
    std::vector<std::string> members;
    for (const auto& item : j.items()) members.push_back(item.key());
    CHECK(members == std::vector<std::string>{"id", "name", "masked", "status", "warning", "activeFrom", "expireAt",
                                              "lastUsedAt"});
    CHECK(j["masked"].is_null());
    CHECK(j["lastUsedAt"].is_null());
    CHECK(j["warning"] == false);
    CHECK(j["activeFrom"] == "2026-11-20T00:00:00.123456Z");
    CHECK(j["expireAt"] == "2026-12-20T00:00:00.000Z");

    // A platform that sent the full key where the masked one belongs: masked again.
    row.key.masked = "0f8fad5b-d9cb-469f-a165-70867728950e";
    row.key.last_used_at = keyhook::parse_timestamp("2026-11-22T11:00:00Z");
    row.status = key_status::active_in_future;
    doc = nlohmann::ordered_json::parse(key_audit::render_json({row}, sample_now, {1, 1}));
    CHECK(doc["keys"][0]["masked"] == "0f8******************************50e");
    CHECK(doc["keys"][0]["status"] == "Active in the future");
    CHECK(doc["keys"][0]["lastUsedAt"] == "2026-11-22T11:00:00.000Z");
}

TEST_CASE("table: widths count terminal columns, not bytes", "[cli][P1]") {
    CHECK(key_audit::display_width("abc") == 3);
    CHECK(key_audit::display_width("café") == 4);          // é is 2 bytes, 1 column
    CHECK(key_audit::display_width("cafe\xCC\x81") == 4);  // e + combining acute
    CHECK(key_audit::display_width("東京 batch") == 10);   // wide characters take 2
    CHECK(key_audit::display_width("\xFF") == 1);          // a stray byte: one replacement
    CHECK(key_audit::truncate_to_width("short", 10) == "short");
    CHECK(key_audit::truncate_to_width("abcdefghijkl", 6) == "abcde\u2026");
    CHECK(key_audit::truncate_to_width("東京東京東京", 6) == "東京\u2026");
    CHECK(key_audit::display_width(key_audit::truncate_to_width(std::string(200, 'x'), 32)) == 32);
    // P1 before the cut: an escape sequence is kept whole or left out, never split.
    const auto escaped = keyhook::escape_text("\n");
    REQUIRE(escaped.size() > 1);
    const std::string name = "abcd\nefgh";
    const auto whole = key_audit::name_cell(name, 100);
    CHECK(whole == "abcd" + escaped + "efgh");
    for (std::size_t max = 3; max < key_audit::display_width(whole); ++max) {
        const auto cut = key_audit::name_cell(name, max);
        CHECK(key_audit::display_width(cut) <= max);
        const auto kept = cut.substr(0, cut.size() - std::string("\u2026").size());
        CHECK((kept == "abcd" || kept == "abcd" + escaped || whole.compare(0, kept.size(), kept) == 0));
        CHECK((kept.size() <= 4 || kept.size() >= 4 + escaped.size()));  // never inside the escape
    }
}

TEST_CASE("table: the width decoder splits text as keyhook's UTF-8 walker does", "[cli][P1]") {
    // Each ill-formed byte is one replacement character of one column; every
    // well-formed sequence is one code point.
    const std::vector<std::pair<std::string, std::size_t>> cases = {
        {"\xC0\x80", 2},          // overlong NUL
        {"\xC1\xBF", 2},          // overlong, 2 bytes
        {"\xE0\x80\xAF", 3},      // overlong, 3 bytes
        {"\xED\xA0\x80", 3},      // a surrogate
        {"\xF4\x90\x80\x80", 4},  // past U+10FFFF
        {"\xF5\x80", 2},          // a lead byte that never occurs
        {"\xE2\x82", 2},          // a cut sequence
        {"\x80"
         "abc",
         4},                      // a stray continuation byte
        {"\xC2\x80", 1},          // U+0080, the smallest 2-byte form (a C1 control: 1 column here)
        {"\xF0\x90\x80\x80", 1},  // U+10000, the smallest 4-byte form
        {"\xF4\x8F\xBF\xBF", 1},  // U+10FFFF, the largest
        {"\xED\x9F\xBF", 1},      // U+D7FF, just below the surrogates
    };
    for (const auto& [text, width] : cases) {
        INFO(keyhook::escape_text(text));
        CHECK(key_audit::display_width(text) == width);
        std::size_t units = 0;
        for (std::size_t i = 0; i < text.size();) {
            examples::text::table_detail::decode(text, i);
            ++units;
        }
        std::size_t library_units = 0;
        keyhook::detail::for_each_utf8_unit(text, [&](const auto&) { ++library_units; });
        CHECK(units == library_units);
    }
}

TEST_CASE("table: columns line up whatever the names' scripts", "[cli][L3]") {
    const auto r = run({"--now", "2026-11-22T12:00:00Z", "--status", "all"});
    REQUIRE(r.exit_code == key_audit::exit_ok);
    std::istringstream lines(r.out);
    std::string line;
    std::vector<std::string> table;
    while (std::getline(lines, line))
        if (!line.empty() && (line[0] == ' ' || line[0] == '!') && line.find("Active") != std::string::npos)
            table.push_back(line);
    REQUIRE(table.size() == 17);  // 15 Active and 2 Active in the future
    for (const auto& l : table) {
        INFO(l);
        // STATUS starts at the same column in every row.
        CHECK(key_audit::display_width(l.substr(0, l.find("  Active") + 2)) == 27);
    }
    CHECK(r.out.find("!  Payments webhook relay  Active ") != std::string::npos);
    CHECK(r.out.find("!  東京 batch importer     Active ") != std::string::npos);
    CHECK(r.out.find("! expires soon") != std::string::npos);
}

TEST_CASE("table: days left, never, and names that try to move the cursor", "[cli]") {
    auto k = record("evil\x1b[2Jname", "2026-11-22T00:00:00Z", "2026-11-22T18:00:00Z");
    key_audit::key_row row{k, key_status::active, true};
    CHECK(key_audit::days_left(row, sample_now) == "<1");
    row.key.expire_at = keyhook::parse_timestamp("2026-11-25T11:59:59Z");
    CHECK(key_audit::days_left(row, sample_now) == "2");
    row.key.expire_at = keyhook::max_timestamp;
    CHECK(key_audit::days_left(row, sample_now) == "never");
    row.status = key_status::expired;
    CHECK(key_audit::days_left(row, sample_now) == "-");

    const auto table = key_audit::render_table({row}, sample_now, 1, status_choice::all, {1, 1});
    CHECK(table.find('\x1b') == std::string::npos);
    CHECK(table.find("evil\\x1b[2Jname") != std::string::npos);  // P1: escaped, not dropped
}

TEST_CASE("run: exit codes and where the messages go", "[cli][L2]") {
    SECTION("the bundled sample, as JSON") {
        const auto r = run({"--now", "2026-11-22T12:00:00Z", "--format", "json"});
        CHECK(r.exit_code == key_audit::exit_ok);
        CHECK(r.err.empty());
        CHECK(nlohmann::json::parse(r.out)["keys"].size() == 15);
    }
    SECTION("standard input") {
        const auto r = run({"--format", "json", "-"}, sample());
        CHECK(r.exit_code == key_audit::exit_ok);
        CHECK(nlohmann::json::parse(r.out)["keys"].size() == 15);
    }
    SECTION("a bad timestamp names its JSON path") {
        const auto r = run({"-"}, read_file(KEY_AUDIT_TEST_DATA "/bad_timestamp.json"));
        CHECK(r.exit_code == key_audit::exit_bad_input);
        CHECK(r.out.empty());
        CHECK(r.err.find("data.result[2].expireAt") != std::string::npos);
    }
    SECTION("malformed JSON") {
        const auto r = run({"-"}, "{\"status\": \"success\", \"data\": {");
        CHECK(r.exit_code == key_audit::exit_bad_input);
        CHECK(r.err.find("syntax_error") != std::string::npos);
    }
    SECTION("a usage error prints the usage line") {
        const auto r = run({"--verbose"});
        CHECK(r.exit_code == key_audit::exit_usage);
        CHECK(r.out.empty());
        CHECK(r.err.find(std::string(key_audit::usage)) != std::string::npos);
    }
    SECTION("a record member of the wrong type names its path") {
        std::string body = sample();
        const auto at = body.find("\"b1e******************************0d2\"");
        REQUIRE(at != std::string::npos);
        body.replace(at, 38, "12345");
        const auto r = run({"-"}, body);
        CHECK(r.exit_code == key_audit::exit_bad_input);
        CHECK(r.err.find("data.result[0].masked") != std::string::npos);
    }
}

namespace {

// A list response with `count` in its envelope and these raw elements in data.result.
std::string response(long long count, const std::vector<std::string>& elements) {
    std::string body =
        R"({"status":"success","data":{"count":)" + std::to_string(count) + R"(,"page":1,"pageSize":100,"result":[)";
    for (std::size_t i = 0; i < elements.size(); ++i) body += (i > 0 ? "," : "") + elements[i];
    return body + "]}}";
}

std::string good_record(int i) {
    return R"({"id":"k-)" + std::to_string(i) + R"(","name":"key )" + std::to_string(i) +
           R"(","status":"Active","activeFrom":"2026-11-01T00:00:00Z","expireAt":"2026-12-31T00:00:00Z"})";
}

std::size_t lines_of(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

// Regression test: a partial page says so (L2).
TEST_CASE("run: a response holding part of the list says how many of the total it holds", "[cli][L2]") {
    std::vector<std::string> records;
    for (int i = 0; i < 100; ++i) records.push_back(good_record(i));
    const std::string page1 = response(250, records);

    const auto json = run({"--now", "2026-11-22T12:00:00Z", "--format", "json", "-"}, page1);
    REQUIRE(json.exit_code == key_audit::exit_ok);
    const auto doc = nlohmann::ordered_json::parse(json.out);
    CHECK(doc["count"] == 250);
    CHECK(doc["records"] == 100);
    CHECK(doc["keys"].size() == 100);
    std::vector<std::string> members;
    for (const auto& item : doc.items()) members.push_back(item.key());
    CHECK(members == std::vector<std::string>{"now", "count", "records", "keys"});

    const auto table = run({"--now", "2026-11-22T12:00:00Z", "-"}, page1);
    REQUIRE(table.exit_code == key_audit::exit_ok);
    const auto first_line = table.out.substr(0, table.out.find('\n'));
    CHECK(first_line ==
          "keys at 2026-11-22T12:00:00.000Z: 100 of 100 (status active); this response holds 100 of 250 keys, 150 "
          "not audited");

    // The whole list in one response: nothing left out, and it says so too.
    const auto whole = run({"--now", "2026-11-22T12:00:00Z", "-"}, response(100, records));
    CHECK(whole.out.substr(0, whole.out.find('\n')) ==
          "keys at 2026-11-22T12:00:00.000Z: 100 of 100 (status active); this response holds 100 of 100 keys");
}

// Regression test: memory: the key list kept an error per rejected element (J3).
TEST_CASE("run: of many rejected records the first 100 are printed, then a count of the rest", "[cli][J3]") {
    SECTION("100 rejected: each printed, no summary line") {
        const auto r = run({"-"}, response(100, std::vector<std::string>(100, "1")));
        CHECK(r.exit_code == key_audit::exit_bad_input);
        CHECK(r.out.empty());
        CHECK(lines_of(r.err) == 100);
        CHECK(r.err.find("data.result[99]") != std::string::npos);
        CHECK(r.err.find("more rejected") == std::string::npos);
    }
    SECTION("101 rejected: 100 printed and one line for the 101st") {
        const auto r = run({"-"}, response(101, std::vector<std::string>(101, "1")));
        CHECK(r.exit_code == key_audit::exit_bad_input);
        CHECK(lines_of(r.err) == 101);
        CHECK(r.err.find("data.result[100]") == std::string::npos);
        CHECK(r.err.find("<stdin>: ... and 1 more rejected records\n") != std::string::npos);
    }
    SECTION("a million rejected: still 101 lines") {
        std::string body = R"({"status":"success","data":{"count":1000000,"page":1,"pageSize":100,"result":[1)";
        for (int i = 1; i < 1000000; ++i) body += ",1";
        body += "]}}";
        const auto r = run({"-"}, body);
        CHECK(r.exit_code == key_audit::exit_bad_input);
        CHECK(lines_of(r.err) == 101);
        CHECK(r.err.find("... and 999900 more rejected records") != std::string::npos);
    }
}
