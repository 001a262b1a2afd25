#include "keyhook/key_list.hpp"
#include "keyhook/key_list_request.hpp"
#include "keyhook/key_list_view.hpp"
#include "keyhook/status.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <deque>
#include <limits>
#include <list>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/testing.hpp"

using date::days;
using keyhook::errc;
using keyhook::key_list_mode;
using keyhook::key_list_options;
using keyhook::key_list_query;
using keyhook::key_status;
using keyhook::try_parse_key_list;
using keyhook::testing::fixed_now;
using keyhook::testing::key_builder;
using keyhook::testing::list_response_builder;
using nlohmann::json;

namespace {

constexpr keyhook::microseconds one_us{1};

key_list_query sample_query() {
    key_list_query q;
    q.base_url = "https://utilities.example.com";
    q.tenant = "acme";
    q.token = keyhook::secret("token-123");
    return q;
}

const char* const list_url = "https://utilities.example.com/acme/api/v1/key/apikeys";

// A response with the given records (as JSON values) in data.result.
std::string response_with(const json& records, const std::string& status = "success") {
    json j = {{"status", status},
              {"data", {{"count", records.size()}, {"page", 1}, {"pageSize", 100}, {"result", records}}}};
    return j.dump();
}

json valid_record(int n) { return json(key_builder::numbered(static_cast<std::uint64_t>(n)).build()); }

template <class T>
std::string printed(const T& v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

}  // namespace

// ---------------------------------------------------------------------------
// L1

TEST_CASE("L1: the request with defaults", "[L1][key_list]") {
    const auto q = sample_query();
    CHECK(q.page == 1);
    CHECK(q.size == 100);
    CHECK(q.type == "synthetic");
    CHECK_FALSE(q.status);
    const auto r = keyhook::list_keys_request(q);
    CHECK(r.method == "GET");
    CHECK(r.url == std::string(list_url) + "?_page=1&_size=100&type=synthetic");
    CHECK(r.body.empty());
    const auto* auth = keyhook::find_header(r.headers, "authorization");
    REQUIRE(auth != nullptr);
    CHECK(auth->name == "Authorization");
    CHECK(auth->value == "Bearer token-123");
    CHECK(auth->sensitive);
}

TEST_CASE("L1: parameters, status filter, and omitted empty parameters", "[L1][key_list]") {
    auto q = sample_query();
    q.page = 3;
    q.size = 25;
    q.status = "active";
    CHECK(keyhook::list_keys_request(q).url ==
          std::string(list_url) + "?_page=3&_size=25&type=synthetic&status=active");
    q.status = "";
    q.type = "";
    CHECK(keyhook::list_keys_request(q).url == std::string(list_url) + "?_page=3&_size=25");
    q.type = "a&b=c";
    CHECK(keyhook::find_query_parameter(keyhook::list_keys_request(q).url, "type") == std::string("a&b=c"));
}

TEST_CASE("L1: trailing slashes on base_url, tenant percent-encoded", "[L1][key_list]") {
    auto q = sample_query();
    for (const char* b : {"https://utilities.example.com/", "https://utilities.example.com//"}) {
        q.base_url = b;
        CHECK(keyhook::list_keys_request(q).url.rfind(list_url, 0) == 0);
    }
    q.base_url = "https://utilities.example.com/prefix/";
    q.tenant = "my tenant/ü";
    CHECK(keyhook::list_keys_request(q).url ==
          "https://utilities.example.com/prefix/my%20tenant%2F%C3%BC/api/v1/key/"
          "apikeys?_page=1&_size=100&type=synthetic");
}

// Regression test: a tenant of "." or ".." changed the request path (L1).
TEST_CASE("L1: a tenant of \".\" or \"..\" is refused, dots inside a name are kept", "[L1][key_list]") {
    auto q = sample_query();
    for (const char* t : {".", ".."}) {
        q.tenant = t;
        const auto r = keyhook::try_list_keys_request(q);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == keyhook::errc::invalid_value);
        CHECK(r.error().path == "tenant");
    }
    for (const char* t : {"...", ".a", "a..b"}) {
        q.tenant = t;
        const auto r = keyhook::try_list_keys_request(q);
        REQUIRE(r.has_value());
        CHECK(r->url.find(std::string("/") + t + "/api/v1/") != std::string::npos);
    }
}

TEST_CASE("L1: page and size are at least 1", "[L1][key_list]") {
    for (const char* field : {"page", "size"}) {
        INFO(field);
        auto q = sample_query();
        auto& v = std::string(field) == "page" ? q.page : q.size;
        v = 1;
        CHECK(keyhook::try_list_keys_request(q).has_value());
        for (const std::int64_t bad : {std::int64_t{0}, std::int64_t{-1}, std::numeric_limits<std::int64_t>::min()}) {
            v = bad;
            const auto r = keyhook::try_list_keys_request(q);
            REQUIRE_FALSE(r.has_value());
            CHECK(r.error().code == errc::out_of_range);
            CHECK(r.error().path == field);
            CHECK(r.error().message == "expected at least 1, got " + std::to_string(bad));
            CHECK_THROWS_AS(keyhook::list_keys_request(q), keyhook::exception);
        }
    }
}

TEST_CASE("L1: base_url, tenant and token are checked", "[L1][key_list]") {
    struct bad_case {
        std::string base_url, tenant, token;
        errc code;
        const char* path;
    };
    const bad_case cases[] = {
        {"", "acme", "t", errc::invalid_value, "base_url"},
        {"utilities.example.com", "acme", "t", errc::invalid_value, "base_url"},
        {"ftp://utilities.example.com", "acme", "t", errc::invalid_value, "base_url"},
        {"https://", "acme", "t", errc::invalid_value, "base_url"},
        {"https:///", "acme", "t", errc::invalid_value, "base_url"},
        {"https://a b.example.com", "acme", "t", errc::invalid_value, "base_url"},
        {"https://u.example.com?x=1", "acme", "t", errc::invalid_value, "base_url"},
        {"https://u.example.com#top", "acme", "t", errc::invalid_value, "base_url"},
        {"https://u.example.com", "", "t", errc::invalid_value, "tenant"},
        {"https://u.example.com", "acme", "", errc::invalid_value, "token"},
        {"https://u.example.com", "acme", "abc\ndef", errc::invalid_header, "token"},
    };
    for (const auto& c : cases) {
        INFO(c.base_url << " / " << c.tenant);
        auto q = sample_query();
        q.base_url = c.base_url;
        q.tenant = c.tenant;
        q.token = keyhook::secret(c.token);
        const auto r = keyhook::try_list_keys_request(q);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == c.code);
        CHECK(r.error().path == c.path);
    }
    auto q = sample_query();
    q.base_url = "HTTP://localhost:8080";
    CHECK(keyhook::list_keys_request(q).url.rfind("HTTP://localhost:8080/acme/", 0) == 0);
}

TEST_CASE("L1: a query prints readably with its token masked", "[L1][M3][key_list]") {
    auto q = sample_query();
    q.token = keyhook::secret("0123456789abcdef");
    CHECK(printed(q) ==
          "key_list_query{base_url=\"https://utilities.example.com\", tenant=\"acme\", page=1, size=100, "
          "type=\"synthetic\", status=none, token=secret(012**********def)}");
    auto same = q;
    CHECK(same == q);
    same.page = 2;
    CHECK(same != q);
}

// ---------------------------------------------------------------------------
// L2: the envelope

TEST_CASE("L2: status success in any case", "[L2][key_list]") {
    for (const char* s : {"success", "Success", "SUCCESS", "sUcCeSs"}) {
        INFO(s);
        const auto r = try_parse_key_list(response_with(json::array({valid_record(1)}), s));
        REQUIRE(r.has_value());
        CHECK(r->records.size() == 1);
    }
}

TEST_CASE("L2: any other status is not_success with the body's message and errorCode", "[L2][key_list]") {
    SECTION("with both") {
        const auto body = list_response_builder().failure("token expired", "AUTH-401").build();
        const auto r = try_parse_key_list(body);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::not_success);
        CHECK(r.error().path == "status");
        CHECK(r.error().message ==
              "expected \"success\", got \"error\", errorCode \"AUTH-401\", message \"token expired\"");
        CHECK_THROWS_AS(keyhook::parse_key_list(body), keyhook::exception);
    }
    SECTION("numeric errorCode, members after data, no data") {
        const auto r = try_parse_key_list(R"({"status":"failed","errorCode":403,"message":"denied"})");
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::not_success);
        CHECK(r.error().message == "expected \"success\", got \"failed\", errorCode 403, message \"denied\"");
    }
    SECTION("neither") {
        const auto r = try_parse_key_list(response_with(json::array(), "successful"));
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::not_success);
        CHECK(r.error().message == "expected \"success\", got \"successful\"");
    }
    SECTION("not_success wins over a malformed data member") {
        const auto r = try_parse_key_list(R"({"data":7,"status":"error"})");
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::not_success);
    }
}

TEST_CASE("L2: status missing, null or not a string", "[L2][key_list]") {
    const auto missing = try_parse_key_list(R"({"data":{"count":0,"page":1,"pageSize":1,"result":[]}})");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == errc::missing_member);
    CHECK(missing.error().path == "status");
    const auto null = try_parse_key_list(R"({"status":null})");
    REQUIRE_FALSE(null.has_value());
    CHECK(null.error().code == errc::missing_member);
    const auto number = try_parse_key_list(R"({"status":200})");
    REQUIRE_FALSE(number.has_value());
    CHECK(number.error().code == errc::wrong_type);
    CHECK(number.error().path == "status");
    CHECK(number.error().message == "expected a string, got number");
}

TEST_CASE("L2: count, page and pageSize are required non-negative integers", "[L2][key_list]") {
    const std::string names[] = {"count", "page", "pageSize"};
    for (const auto& name : names) {
        INFO(name);
        const auto with = [&](const json& v) {
            json j = json::parse(response_with(json::array()));
            if (v.is_discarded())
                j["data"].erase(name);
            else
                j["data"][name] = v;
            return try_parse_key_list(j.dump());
        };
        const auto path = "data." + name;
        CHECK(with(0).has_value());
        CHECK(with(std::numeric_limits<std::int64_t>::max()).has_value());
        const auto negative = with(-1);
        REQUIRE_FALSE(negative.has_value());
        CHECK(negative.error().code == errc::out_of_range);
        CHECK(negative.error().path == path);
        const auto huge = with(static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1);
        REQUIRE_FALSE(huge.has_value());
        CHECK(huge.error().code == errc::out_of_range);
        const auto fraction = with(1.5);
        REQUIRE_FALSE(fraction.has_value());
        CHECK(fraction.error().code == errc::wrong_type);
        CHECK(fraction.error().message == "expected an integer, got \"1.5\"");
        const auto text = with("10");
        REQUIRE_FALSE(text.has_value());
        CHECK(text.error().code == errc::wrong_type);
        CHECK(text.error().message == "expected an integer, got string");
        for (const auto& absent : {json(json::value_t::discarded), json(nullptr)}) {
            const auto r = with(absent);
            REQUIRE_FALSE(r.has_value());
            CHECK(r.error().code == errc::missing_member);
            CHECK(r.error().path == path);
        }
    }
}

TEST_CASE("L2: data and data.result are required, of the right type", "[L2][key_list]") {
    const auto no_data = try_parse_key_list(R"({"status":"success"})");
    REQUIRE_FALSE(no_data.has_value());
    CHECK(no_data.error().code == errc::missing_member);
    CHECK(no_data.error().path == "data");
    const auto data_array = try_parse_key_list(R"({"status":"success","data":[]})");
    REQUIRE_FALSE(data_array.has_value());
    CHECK(data_array.error().code == errc::wrong_type);
    CHECK(data_array.error().path == "data");
    CHECK(data_array.error().message == "expected an object, got array");
    const auto no_result = try_parse_key_list(R"({"status":"success","data":{"count":0,"page":1,"pageSize":1}})");
    REQUIRE_FALSE(no_result.has_value());
    CHECK(no_result.error().path == "data.result");
    CHECK(no_result.error().code == errc::missing_member);
    const auto result_object =
        try_parse_key_list(R"({"status":"success","data":{"count":0,"page":1,"pageSize":1,"result":{}}})");
    REQUIRE_FALSE(result_object.has_value());
    CHECK(result_object.error().code == errc::wrong_type);
    CHECK(result_object.error().path == "data.result");
    CHECK(result_object.error().message == "expected an array of records, got object");
}

TEST_CASE("L2: the top level must be an object", "[L2][key_list]") {
    for (const char* text : {"[]", "\"success\"", "null", "42"}) {
        INFO(text);
        const auto r = try_parse_key_list(text);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::wrong_type);
        CHECK(r.error().path.empty());
    }
}

TEST_CASE("L2: an empty page", "[L2][key_list]") {
    const auto p =
        keyhook::parse_key_list(R"({"status":"success","data":{"count":0,"page":1,"pageSize":100,"result":[]}})");
    CHECK(p.count == 0);
    CHECK(p.page == 1);
    CHECK(p.page_size == 100);
    CHECK(p.records.empty());
    CHECK(p.rejected.empty());
}

TEST_CASE("L2: unknown members are ignored at every level", "[L2][key_list]") {
    auto rec = valid_record(1);
    rec["extra"] = {{"deep", {1, 2, {{"k", "v"}}}}};
    json j = json::parse(response_with(json::array({rec})));
    j["meta"] = {{"requestId", "abc"}, {"list", {1, 2, 3}}};
    j["data"]["links"] = {{"next", nullptr}};
    j["trace"] = {"a", {"b", {"c"}}};
    const auto p = keyhook::parse_key_list(j.dump());
    REQUIRE(p.records.size() == 1);
    CHECK(p.records[0] == key_builder::numbered(1).build());
}

TEST_CASE("L2: records read as try_api_key_from_json reads them", "[L2][key_list]") {
    const auto keys =
        std::vector<keyhook::api_key>{key_builder::numbered(1).build(), key_builder::numbered(2).minimal().build(),
                                      key_builder::numbered(3).revoked().groups({"a", "b", "c", "d", "e"}).build()};
    const auto body = list_response_builder().add(keys).count(42).page(2).page_size(3).build();
    const auto p = keyhook::parse_key_list(body);
    CHECK(p.count == 42);
    CHECK(p.page == 2);
    CHECK(p.page_size == 3);
    CHECK(p.records == keys);
    CHECK(p.rejected.empty());
}

namespace {

const std::string envelope_head = R"({"status":"success","data":{"count":1,"page":1,"pageSize":1,"result":[)";

std::string one_record(const std::string& rec) { return envelope_head + rec + "]}}"; }

const std::string plain_record =
    R"({"id":"a","name":"n","status":"Active","activeFrom":"2026-01-01T00:00:00Z","expireAt":"2026-02-01T00:00:00Z"})";

void check_repeated(const std::string& text, const std::string& path) {
    INFO(text);
    for (const auto mode : {key_list_mode::lenient, key_list_mode::strict}) {
        key_list_options o;
        o.mode = mode;
        const auto r = try_parse_key_list(text, o);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::duplicate_member);
        CHECK(r.error().path == path);
        CHECK(r.error().message == "member name repeated in one object");
    }
}

}  // namespace

TEST_CASE("J1: a member name repeated in a record is refused with its path", "[J1][L2][key_list]") {
    check_repeated(one_record(R"({"id":"a","name":"first","name":"second","status":"Active",)"
                              R"("activeFrom":"2026-01-01T00:00:00Z","expireAt":"2026-02-01T00:00:00Z"})"),
                   "data.result[0].name");
    // A repeated unknown member, and one repeated with the same value, are refused too.
    check_repeated(one_record(R"({"x":1,"x":1,)" + plain_record.substr(1)), "data.result[0].x");
    check_repeated(one_record(R"({"groups":[1],"groups":["x"],)" + plain_record.substr(1)), "data.result[0].groups");
    // The second record's repeat names the second record.
    check_repeated(envelope_head + plain_record + R"(,{"id":"b","id":"b"}]}})", "data.result[1].id");
    // Of several repeated names, the one whose second occurrence comes first.
    check_repeated(one_record(R"({"b":1,"a":1,"a":2,"b":2})"), "data.result[0].a");
    check_repeated(one_record(R"({"b":1,"a":1,"b":2,"a":2})"), "data.result[0].b");
}

TEST_CASE("J1: the same name in sibling or nested objects is not a repeat", "[J1][L2][key_list]") {
    // Each record has its own id; an unknown member holds objects that share names.
    const std::string text = envelope_head + plain_record + "," +
                             R"({"id":"b","name":"n","status":"Active","activeFrom":"2026-01-01T00:00:00Z",)"
                             R"("expireAt":"2026-02-01T00:00:00Z","x":{"id":1,"y":{"id":2},"z":[{"id":3},{"id":4}]}})"
                             "]}}";
    const auto r = try_parse_key_list(text);
    REQUIRE(r);
    CHECK(r->records.size() == 2);
    CHECK(r->rejected_count == 0);
    // Names that differ only in case, or by an escape that reads differently, are different names.
    CHECK(try_parse_key_list(one_record(R"({"X":1,"x":1,)" + plain_record.substr(1))));
    CHECK(try_parse_key_list(one_record(R"({"a\u0000":1,"a":1,)" + plain_record.substr(1))));
}

TEST_CASE("J1: a name written with an escape is the same name", "[J1][L2][key_list]") {
    check_repeated(one_record(R"({"n\u0061me":"first",)" + plain_record.substr(1)), "data.result[0].name");
}

TEST_CASE("J1: repeats are refused everywhere, skipped subtrees included", "[J1][L2][key_list]") {
    check_repeated(R"({"status":"success","status":"success","data":{"count":0,"page":1,"pageSize":1,"result":[]}})",
                   "status");
    check_repeated(R"({"status":"success","data":{"count":0,"page":1,"pageSize":1,"page":1,"result":[]}})",
                   "data.page");
    check_repeated(
        R"({"x":{"a":[{"k":1,"k":2}]},"status":"success","data":{"count":0,"page":1,"pageSize":1,"result":[]}})",
        "x.a[0].k");
    check_repeated(one_record(R"({"x":[[{"deep":{"k":1,"k":2}}]],)" + plain_record.substr(1)),
                   "data.result[0].x[0][0].deep.k");
    // In an element that is rejected anyway, and in a not-success envelope.
    check_repeated(one_record(R"({"k":1,"k":2})"), "data.result[0].k");
    check_repeated(R"({"status":"failed","message":"a","message":"b"})", "message");
    // A name that needs quoting in a path.
    check_repeated(one_record(R"({"a b":1,"a b":2})"), R"(data.result[0]["a b"])");
}

// Regression test: repeated JSON members (J1).
TEST_CASE("J1: a repeated envelope member is refused, so the decoder and a DOM never read different values",
          "[J1][L2][key_list]") {
    // 1. "status" success, then null: accepted before.
    check_repeated(R"({"status":"success","data":{"count":0,"page":1,"pageSize":1,"result":[]},"status":null})",
                   "status");
    // 2. "result" an array, then null: the first array was kept.
    check_repeated(envelope_head + plain_record + R"(],"result":null}})", "data.result");
    // 3. a second "data" without result: the first data's records with the second's count.
    check_repeated(envelope_head + plain_record + R"(]},"data":{"count":5,"page":1,"pageSize":1}})", "data");
    // 4. "count" -1 then 1: refused for the first value, now for the repeat.
    check_repeated(R"({"status":"success","data":{"count":-1,"count":1,"page":1,"pageSize":1,"result":[]}})",
                   "data.count");
    // nlohmann's DOM reads each of these too (last wins): keyhook refuses what the two could read differently.
    CHECK_NOTHROW(json::parse(R"({"status":"success","status":null})"));
}

// A record whose names are all known members, each once, is proven without
// recording its names; these repeats and paths come after such names.
TEST_CASE("J1: repeats and paths after a record's known members name the right member", "[J1][J2][L2][key_list]") {
    // A known member repeated after an unknown one, and after a list.
    check_repeated(one_record(R"({"id":"a","x":1,"name":"n","name":"m"})"), "data.result[0].name");
    check_repeated(one_record(R"({"groups":["g"],"id":"a","name":"n","groups":[]})"), "data.result[0].groups");
    check_repeated(one_record(R"({"id":"a","groups":["g"],"x":1,"id":"b"})"), "data.result[0].id");
    // Inside the value of a known member, and inside a list after its strings.
    check_repeated(one_record(R"({"id":"a","name":"n","status":{"k":1,"k":2}})"), "data.result[0].status.k");
    check_repeated(one_record(R"({"id":"a","groups":["a","b",{"k":1,"k":2}]})"), "data.result[0].groups[2].k");
    check_repeated(one_record(R"({"groups":["a",[{"k":1,"k":2}]],"id":"a"})"), "data.result[0].groups[1][0].k");

    // J2: a number no double holds, as a known member after others, and deep in a list.
    const std::string rest = plain_record.substr(1);
    const auto page =
        try_parse_key_list(envelope_head + R"({"id":"a","name":1e400,)" + plain_record.substr(21) +
                           R"(,{"groups":["a","b",[2e400]],)" + rest + R"(,{"groups":["a",-3e400],)" + rest + "]}}");
    REQUIRE(page);
    REQUIRE(page->rejected.size() == 3);
    CHECK(page->rejected[0].path == "data.result[0].name");
    CHECK(page->rejected[0].code == errc::out_of_range);
    CHECK(page->rejected[1].path == "data.result[1].groups[2]");  // the array, the list's first fault
    CHECK(page->rejected[1].code == errc::wrong_type);
    CHECK(page->rejected[2].path == "data.result[2].groups[1]");
    CHECK(page->rejected[2].message == R"(number "-3e400" is outside the range of a double)");

    // The depth limit inside a list names the list.
    key_list_options small;
    small.max_depth = 5;
    const auto deep = try_parse_key_list(one_record(R"({"groups":["a",[]]})"), small);
    REQUIRE_FALSE(deep);
    CHECK(deep.error().path == "data.result[0].groups");
    CHECK(deep.error().message == "nested deeper than 5 levels");
}

TEST_CASE("J2: count, page and pageSize beyond a double or below zero name their path", "[J2][L2][key_list]") {
    struct row {
        std::string data;
        errc code;
        std::string path;
        std::string message;
    };
    const std::vector<row> rows = {
        {R"("count":1e400,"page":1,"pageSize":1)", errc::out_of_range, "data.count",
         R"(expected a non-negative 64-bit integer, got "1e400")"},
        {R"("count":1,"page":-1e400,"pageSize":1)", errc::out_of_range, "data.page",
         R"(expected a non-negative 64-bit integer, got "-1e400")"},
        {R"("count":1,"page":1,"pageSize":)" + std::string(400, '9'), errc::out_of_range, "data.pageSize",
         "expected a non-negative 64-bit integer, got \"" + std::string(64, '9') + "\"..."},
        {R"("count":-1,"page":1,"pageSize":1)", errc::out_of_range, "data.count",
         "expected a non-negative 64-bit integer, got -1"},
        {R"("count":18446744073709551616,"page":1,"pageSize":1)", errc::out_of_range, "data.count",
         "expected a non-negative 64-bit integer, got 18446744073709551616"},
    };
    for (const auto& r : rows) {
        const auto text = R"({"status":"success","data":{)" + r.data + R"(,"result":[]}})";
        INFO(text);
        const auto p = try_parse_key_list(text);
        REQUIRE_FALSE(p);
        CHECK(p.error().code == r.code);
        CHECK(p.error().path == r.path);
        CHECK(p.error().message == r.message);
    }
    // The other side of each boundary: 0 and the largest 64-bit integer are read.
    const auto max = std::to_string(std::numeric_limits<std::int64_t>::max());
    const auto p = try_parse_key_list(R"({"status":"success","data":{"count":0,"page":)" + max + R"(,"pageSize":)" +
                                      max + R"(,"result":[]}})");
    REQUIRE(p);
    CHECK(p->page == std::numeric_limits<std::int64_t>::max());
    CHECK(p->page_size == std::numeric_limits<std::int64_t>::max());
    // A large double that is in range is still not an integer.
    CHECK(try_parse_key_list(R"({"status":"success","data":{"count":1e300,"page":1,"pageSize":1,"result":[]}})")
              .error()
              .code == errc::wrong_type);
}

TEST_CASE("J2: a number out of range anywhere names its path", "[J2][L2][key_list]") {
    const auto body = one_record(R"({"x":[0,{"y":-1e400}],)" + plain_record.substr(1));
    const auto strict = try_parse_key_list(body, {key_list_mode::strict});
    REQUIRE_FALSE(strict);
    CHECK(strict.error().code == errc::out_of_range);
    CHECK(strict.error().path == "data.result[0].x[1].y");
    CHECK(strict.error().message == R"(number "-1e400" is outside the range of a double)");
    // 1e308 fits a double: read, and ignored as an unknown member.
    CHECK(try_parse_key_list(one_record(R"({"x":[0,{"y":-1e308}],)" + plain_record.substr(1))));
}

// Regression test, from the generative hostile stage: one bad record is rejected alone (J2).
TEST_CASE("J2: a number no double holds rejects its record, not the page", "[J2][J3][L2][key_list]") {
    const std::string head = R"({"status":"success","data":{"count":4,"page":1,"pageSize":4,"result":[)";
    const std::string good = plain_record;
    // In an unknown member, in a known field, in groups, and as an element of result.
    const std::string body = head + good + "," + R"({"x":[0,{"y":-1e400}],)" + plain_record.substr(1) + "," +
                             R"({"id":1.5e999,)" + plain_record.substr(10) + "," + R"({"groups":["a",2e400],)" +
                             plain_record.substr(1) + ",1e999," + good + "]}}";
    const auto page = try_parse_key_list(body);
    REQUIRE(page);
    CHECK(page->records.size() == 2);
    REQUIRE(page->rejected.size() == 4);
    CHECK(page->rejected_count == 4);
    CHECK(page->rejected[0].path == "data.result[1].x[1].y");
    CHECK(page->rejected[1].path == "data.result[2].id");
    CHECK(page->rejected[1].message == R"(number "1.5e999" is outside the range of a double)");
    CHECK(page->rejected[2].path == "data.result[3].groups[1]");
    CHECK(page->rejected[3].path == "data.result[4]");
    for (const auto& e : page->rejected) CHECK(e.code == errc::out_of_range);
    // The other side of the boundary: the largest double and an underflow are numbers, so the
    // record is read (the unknown member ignored).
    const auto fits =
        try_parse_key_list(head + R"({"x":[1.7976931348623157e308,-1e-400],)" + plain_record.substr(1) + "]}}");
    REQUIRE(fits);
    CHECK(fits->records.size() == 1);
    const auto over = try_parse_key_list(head + R"({"x":1.7976931348623159e308,)" + plain_record.substr(1) + "]}}");
    REQUIRE(over);
    CHECK(over->records.empty());
    CHECK(over->rejected_count == 1);
    // Strings that look like such numbers are strings; a number in the envelope still refuses the page.
    CHECK(
        try_parse_key_list(head + R"({"x":"1e400","y":"\"2e999",)" + plain_record.substr(1) + "]}}")->records.size() ==
        1);
    const auto envelope =
        try_parse_key_list(R"({"status":"success","x":-1e400,"data":{"count":1,"page":1,"pageSize":1,"result":[]}})");
    REQUIRE_FALSE(envelope);
    CHECK(envelope.error().path == "x");
    // Byte offsets of later syntax errors are those of the input as given.
    const auto broken = try_parse_key_list(head + R"({"x":1e400,)" + plain_record.substr(1) + "]}} x");
    REQUIRE_FALSE(broken);
    CHECK(broken.error().code == errc::syntax_error);
    const auto at = (head + R"({"x":1e400,)" + plain_record.substr(1) + "]}} ").size();
    CHECK(broken.error().message.rfind("syntax error at byte " + std::to_string(at) + ":", 0) == 0);
}

// Regression test: the quote of malformed JSON in an error message (P1).
TEST_CASE("J2: a data.count of 1e400 names its path and the reason, not a byte offset", "[J2][L2][key_list]") {
    const auto r =
        try_parse_key_list(R"({"status":"success","data":{"count":1e400,"page":1,"pageSize":1,"result":[]}})");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::out_of_range);
    CHECK(r.error().path == "data.count");
    CHECK(r.error().message.find("at byte") == std::string::npos);
    CHECK(r.error().message.find("1e400") != std::string::npos);
}

// Regression test: the quote of malformed JSON in an error message (P1).
TEST_CASE("L2: the not-success error quotes at most 64 bytes of message", "[L2][key_list]") {
    const std::string at_limit(64, 'm');
    const auto a = try_parse_key_list(R"({"status":"failed","message":")" + at_limit + R"("})");
    REQUIRE_FALSE(a);
    CHECK(a.error().message == "expected \"success\", got \"failed\", message \"" + at_limit + "\"");
    const auto b = try_parse_key_list(R"({"status":"failed","message":")" + at_limit + R"(X"})");
    REQUIRE_FALSE(b);
    CHECK(b.error().message == "expected \"success\", got \"failed\", message \"" + at_limit + "\"...");
    // 200 bytes of message, as fuzz_key_list found: 64 quoted.
    const auto c = try_parse_key_list(R"({"status":"failed","message":")" + std::string(200, 'z') + R"("})");
    CHECK(c.error().message.find(std::string(65, 'z')) == std::string::npos);
    CHECK(c.error().message.find(std::string(64, 'z')) != std::string::npos);
}

TEST_CASE("J3: the first 100 rejected records are kept, the rest counted", "[J3][L2][key_list]") {
    const auto elements = [](std::size_t n) {
        std::string body = R"({"status":"success","data":{"count":1,"page":1,"pageSize":1,"result":[)";
        for (std::size_t i = 0; i < n; ++i) body += i == 0 ? "1" : ",1";
        return body + "]}}";
    };
    const auto hundred = try_parse_key_list(elements(100));
    REQUIRE(hundred);
    CHECK(hundred->rejected.size() == 100);
    CHECK(hundred->rejected_count == 100);
    CHECK(hundred->rejected.back().path == "data.result[99]");
    CHECK(hundred->elements() == 100);

    const auto more = try_parse_key_list(elements(101));
    REQUIRE(more);
    CHECK(more->rejected.size() == 100);
    CHECK(more->rejected_count == 101);
    CHECK(more->rejected.back().path == "data.result[99]");
    CHECK(more->elements() == 101);

    // Valid records among them are all kept, wherever they come.
    std::string mixed = R"({"status":"success","data":{"count":1,"page":1,"pageSize":1,"result":[)";
    for (int i = 0; i < 300; ++i) mixed += (i > 0 ? "," : "") + (i % 3 == 0 ? valid_record(i).dump() : "1");
    mixed += "]}}";
    const auto m = try_parse_key_list(mixed);
    REQUIRE(m);
    CHECK(m->records.size() == 100);
    CHECK(m->rejected_count == 200);
    CHECK(m->rejected.size() == 100);
    CHECK(m->rejected.back().path == "data.result[149]");
}

TEST_CASE("J3: a pageSize below the page still keeps every record", "[J3][L2][key_list]") {
    // The capacity planned from pageSize is too small: a second pass keeps them all.
    std::vector<keyhook::api_key> keys;
    for (int i = 0; i < 250; ++i) keys.push_back(key_builder::numbered(static_cast<std::uint64_t>(i)).build());
    for (const std::int64_t declared : {std::int64_t{0}, std::int64_t{1}, std::int64_t{249}, std::int64_t{250}}) {
        const auto body = list_response_builder().add(keys).count(250).page(1).page_size(declared).build();
        const auto p = try_parse_key_list(body);
        REQUIRE(p);
        CHECK(p->records == keys);
        CHECK(p->page_size == declared);
    }
}

TEST_CASE("J3: pages past the first block of 1,024 records keep every record in order", "[J3][L2][key_list][large]") {
    // The first 1,024 records go to one block, the rest to blocks of 256 that
    // are gathered into one vector at the end; a page of records of nearly the
    // smallest size takes a second pass instead (json_memory_test.cpp).
    std::vector<keyhook::api_key> keys;
    for (int i = 0; i < 1500; ++i) keys.push_back(key_builder::numbered(static_cast<std::uint64_t>(i)).build());
    for (const std::size_t n : {std::size_t{1023}, std::size_t{1024}, std::size_t{1025}, std::size_t{1280},
                                std::size_t{1281}, std::size_t{1500}}) {
        const std::vector<keyhook::api_key> page_keys(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(n));
        for (const std::int64_t declared : {std::int64_t{100}, static_cast<std::int64_t>(n)}) {
            INFO(n << " records, pageSize " << declared);
            const auto body = list_response_builder()
                                  .add(page_keys)
                                  .count(static_cast<std::int64_t>(n))
                                  .page(1)
                                  .page_size(declared)
                                  .build();
            const auto p = try_parse_key_list(body);
            REQUIRE(p);
            CHECK(p->records == page_keys);
        }
    }
}

TEST_CASE("J3: room reserved on the word of pageSize never refuses a page", "[J3][L2][key_list][large]") {
    // One record with 200,000 groups of n bytes: with 11 bytes the groups
    // alone pass J3's budget, with 12 they fit. A pageSize of 10^8 sizes the
    // first block of records at a quarter of the budget; when the budget then
    // refuses the groups, the page is read again without that plan, so the
    // answer is the one a pageSize of 1 gets.
    const auto body = [](std::size_t group_bytes, const char* page_size) {
        std::string s = std::string(R"({"status":"success","data":{"count":1,"page":1,"pageSize":)") + page_size +
                        R"(,"result":[{"id":"a","name":"b","status":"Active","activeFrom":"2025-01-02T00:00:00Z",)"
                        R"("expireAt":"2025-02-01T00:00:00Z","groups":[)";
        for (int i = 0; i < 200000; ++i) s += (i > 0 ? ",\"" : "\"") + std::string(group_bytes, 'g') + '"';
        return s + "]}]}}";
    };
    for (const char* page_size : {"1", "100000000"}) {
        INFO("pageSize " << page_size);
        const auto refused = try_parse_key_list(body(11, page_size));
        REQUIRE_FALSE(refused);
        CHECK(refused.error().code == errc::limit_exceeded);
        for (const std::size_t n : {std::size_t{12}, std::size_t{16}}) {
            const auto kept = try_parse_key_list(body(n, page_size));
            REQUIRE(kept);
            REQUIRE(kept->records.size() == 1);
            CHECK(kept->records[0].groups.size() == 200000);
        }
    }
}

TEST_CASE("J3: a page of records of nearly the smallest size keeps every record in order", "[J3][L2][key_list]") {
    // 10,000 records of 111 bytes: gathering the blocks would pass J3's
    // budget, so the page is read again with its exact count.
    std::string body = R"({"status":"success","data":{"count":10000,"page":1,"pageSize":100,"result":[)";
    for (int i = 0; i < 10000; ++i) {
        char id[5];
        std::snprintf(id, sizeof id, "%04d", i);
        body +=
            std::string(i > 0 ? "," : "") + R"({"id":")" + id +
            R"(","name":"","status":"Active","activeFrom":"2025-01-02T00:00:00Z","expireAt":"2025-02-01T00:00:00Z"})";
    }
    body += "]}}";
    const auto p = try_parse_key_list(body);
    REQUIRE(p);
    REQUIRE(p->records.size() == 10000);
    CHECK(p->records.front().id.str() == "0000");
    CHECK(p->records[5000].id.str() == "5000");
    CHECK(p->records.back().id.str() == "9999");
}

namespace {

// Variations of each member: present, absent, null, and values of every JSON
// type, to compare the SAX decoder with the DOM reader on each.
std::vector<json> variations(const std::string& member) {
    std::vector<json> v = {json(json::value_t::discarded), nullptr, 7,  -1.5, true, json::object(),
                           json::array({1, {{"a", 1}}}),   "",      "x"};
    if (member == "status")
        for (const char* s : {"Active", "deactivated", "Active in the future", "Bogus"}) v.emplace_back(s);
    if (member == "groups")
        for (const json& g : {json::array(), json{"a"}, json{"a", 1}, json{nullptr, "b"}, json{"a", json::array()},
                              json{json::object(), 1}})
            v.push_back(g);
    if (member.find("At") != std::string::npos || member == "activeFrom")
        for (const char* t : {"2026-01-02T03:04:05Z", "2026-02-30T00:00:00Z", "2026-01-02T03:04:05.1234567+05:30"})
            v.emplace_back(t);
    return v;
}

}  // namespace

TEST_CASE("L2: the SAX decoder agrees with try_api_key_from_json on every single-member fault", "[L2][key_list]") {
    const std::vector<std::string> members = {"id",        "userId",     "name",     "description", "masked",
                                              "status",    "type",       "groups",   "createdAt",   "createdBy",
                                              "updatedAt", "activeFrom", "expireAt", "lastUsedAt"};
    std::size_t compared = 0;
    for (const auto& member : members) {
        for (const auto& value : variations(member)) {
            auto rec = valid_record(5);
            if (value.is_discarded())
                rec.erase(member);
            else
                rec[member] = value;
            INFO(member << " = " << (value.is_discarded() ? std::string("(absent)") : value.dump()));
            const auto dom = keyhook::try_api_key_from_json(rec, "data.result[1]");
            const auto body = response_with(json::array({valid_record(1), rec}));
            const auto strict = try_parse_key_list(body, {key_list_mode::strict});
            const auto lenient = try_parse_key_list(body);
            REQUIRE(lenient.has_value());
            if (dom.has_value()) {
                REQUIRE(strict.has_value());
                REQUIRE(strict->records.size() == 2);
                CHECK(strict->records[1] == *dom);
                CHECK(lenient->records == strict->records);
                CHECK(lenient->rejected.empty());
            } else {
                REQUIRE_FALSE(strict.has_value());
                CHECK(strict.error() == dom.error());
                REQUIRE(lenient->rejected.size() == 1);
                CHECK(lenient->rejected[0] == dom.error());
                REQUIRE(lenient->records.size() == 1);
            }
            ++compared;
        }
    }
    CHECK(compared > 150);
}

TEST_CASE("L2: with several faults, the same one as try_api_key_from_json is reported", "[L2][key_list]") {
    // Document order differs from the order of checks: lastUsedAt comes first here.
    const std::string rec = R"({"lastUsedAt":"never","groups":[false],"status":"bogus","expireAt":1})";
    const auto dom = keyhook::try_api_key_from_json(json::parse(rec), "data.result[0]");
    REQUIRE_FALSE(dom.has_value());
    CHECK(dom.error().path == "data.result[0].id");
    const auto sax =
        try_parse_key_list(R"({"status":"success","data":{"count":1,"page":1,"pageSize":1,"result":[)" + rec + "]}}",
                           {key_list_mode::strict});
    REQUIRE_FALSE(sax.has_value());
    CHECK(sax.error() == dom.error());
}

TEST_CASE("L2: strict mode fails on the first bad record", "[L2][key_list]") {
    auto bad = valid_record(4);
    bad["expireAt"] = "2026-02-30T00:00:00Z";
    auto also_bad = valid_record(5);
    also_bad.erase("name");
    const auto body = response_with(json::array({valid_record(1), valid_record(2), valid_record(3), bad, also_bad}));
    const auto r = try_parse_key_list(body, {key_list_mode::strict});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::invalid_timestamp);
    CHECK(r.error().what() == "data.result[3].expireAt: expected an ISO 8601 timestamp, got \"2026-02-30T00:00:00Z\"");
    CHECK_THROWS_WITH(keyhook::parse_key_list(body, {key_list_mode::strict}),
                      "[keyhook.invalid_timestamp] data.result[3].expireAt: expected an ISO 8601 timestamp, got "
                      "\"2026-02-30T00:00:00Z\"");
}

TEST_CASE("L2: lenient mode (the default) keeps the valid records and sets the bad ones aside", "[L2][key_list]") {
    CHECK(key_list_options{}.mode == key_list_mode::lenient);
    auto bad = valid_record(4);
    bad["expireAt"] = "2026-02-30T00:00:00Z";
    auto also_bad = valid_record(6);
    also_bad.erase("name");
    const auto body = response_with(
        json::array({valid_record(1), valid_record(2), "oops", bad, valid_record(5), also_bad, json::array()}));
    const auto p = keyhook::parse_key_list(body);
    REQUIRE(p.records.size() == 3);
    CHECK(p.records[0].id.str() == keyhook::testing::test_uuid(1));
    CHECK(p.records[1].id.str() == keyhook::testing::test_uuid(2));
    CHECK(p.records[2].id.str() == keyhook::testing::test_uuid(5));
    REQUIRE(p.rejected.size() == 4);
    CHECK(p.rejected[0].what() == "data.result[2]: expected an object, got string");
    CHECK(p.rejected[1].what() ==
          "data.result[3].expireAt: expected an ISO 8601 timestamp, got \"2026-02-30T00:00:00Z\"");
    CHECK(p.rejected[2].what() == "data.result[5].name: required member is missing");
    CHECK(p.rejected[3].what() == "data.result[6]: expected an object, got array");
}

TEST_CASE("L2: malformed JSON is a syntax_error with the byte offset", "[L2][key_list]") {
    struct bad_case {
        std::string text;
        std::size_t offset;
    };
    const std::string good = response_with(json::array({valid_record(1)}));
    const bad_case cases[] = {
        {"", 0},
        {"{", 1},
        {R"({"status":"success",})", 20},
        // A bad token is detected once read: the offset is its last byte.
        {R"({"status":"success" "data":1})", 25},
        {good.substr(0, good.size() - 1), good.size() - 1},
        {good + "x", good.size()},
        {R"({"status":tru})", 13},
    };
    for (const auto& c : cases) {
        INFO(c.text);
        const auto r = try_parse_key_list(c.text);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::syntax_error);
        CHECK(r.error().path.empty());
        CHECK(r.error().message.rfind("syntax error at byte " + std::to_string(c.offset), 0) == 0);
    }
}

TEST_CASE("L2: malformed text after a root that is not an object is still a syntax_error", "[L2][key_list]") {
    // The root's type is only known at its first byte; what follows is read
    // before the wrong type is reported, in both modes.
    for (const bool strict : {false, true}) {
        key_list_options options;
        options.mode = strict ? key_list_mode::strict : key_list_mode::lenient;
        for (const char* text : {"[1 23]", "[1,]", "[", "01", "5 x", "\"s\" x", "null x"}) {
            INFO(text << (strict ? " strict" : " lenient"));
            const auto r = try_parse_key_list(text, options);
            REQUIRE_FALSE(r.has_value());
            CHECK(r.error().code == errc::syntax_error);
            CHECK(r.error().message.rfind("syntax error at byte ", 0) == 0);
        }
        // The other side: a well-formed root of another type is a wrong type, and
        // J1 still holds inside it.
        CHECK(try_parse_key_list("[1,23]", options).error().what() == "expected an object, got array");
        CHECK(try_parse_key_list("5", options).error().what() == "expected an object, got number");
        CHECK(try_parse_key_list("\"s\"", options).error().what() == "expected an object, got string");
        CHECK(try_parse_key_list(R"([{"a":1,"a":2}])", options).error().code == errc::duplicate_member);
    }
}

TEST_CASE("L2: invalid UTF-8 in a string is invalid_utf8", "[L2][key_list]") {
    const std::string text = "{\"status\":\"succ\xFF\"}";
    const auto r = try_parse_key_list(text);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::invalid_utf8);
    CHECK(r.error().message.rfind("syntax error at byte " + std::to_string(text.find('\xFF')), 0) == 0);
    // The offending bytes are never echoed.
    CHECK(r.error().message.find('\xFF') == std::string::npos);
}

namespace {
// An envelope with an unknown member nested `levels` arrays deep: the
// envelope is depth 1, so the innermost array is at depth levels + 1.
std::string nested(std::size_t levels) {
    return R"({"status":"success","x":)" + std::string(levels, '[') + std::string(levels, ']') +
           R"(,"data":{"count":0,"page":1,"pageSize":1,"result":[]}})";
}
}  // namespace

TEST_CASE("L2: nesting is limited to 64 levels", "[L2][key_list]") {
    CHECK(key_list_options{}.max_depth == 64);
    CHECK(try_parse_key_list(nested(63)).has_value());
    const auto r = try_parse_key_list(nested(64));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::limit_exceeded);
    CHECK(r.error().message == "nested deeper than 64 levels");

    key_list_options small;
    small.max_depth = 5;
    CHECK(try_parse_key_list(nested(4), small).has_value());
    CHECK_FALSE(try_parse_key_list(nested(5), small).has_value());
    // Inside a record: the record is at depth 4, its unknown member's arrays below.
    const std::string deep_record =
        R"({"status":"success","data":{"count":0,"page":1,"pageSize":1,"result":[{"x":[]}]}})";
    CHECK(try_parse_key_list(deep_record, small).has_value());
    small.max_depth = 4;
    const auto in_record = try_parse_key_list(deep_record, small);
    REQUIRE_FALSE(in_record.has_value());
    CHECK(in_record.error().code == errc::limit_exceeded);
    CHECK(in_record.error().path == "data.result[0]");
}

TEST_CASE("L2: hostile input neither crashes nor hangs", "[L2][key_list]") {
    SECTION("10,000-deep nesting") {
        const auto r = try_parse_key_list(nested(10000));
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::limit_exceeded);
        const auto unclosed = try_parse_key_list(std::string(10000, '[') + "{");
        REQUIRE_FALSE(unclosed.has_value());
        std::string objects_text = "{";
        for (int i = 0; i < 10000; ++i) objects_text += R"("a":{)";
        const auto objects = try_parse_key_list(objects_text);
        REQUIRE_FALSE(objects.has_value());
        CHECK(objects.error().code == errc::limit_exceeded);
    }
    SECTION("a huge string in an unknown member is skipped") {
        auto j = json::parse(response_with(json::array({valid_record(1)})));
        j["blob"] = std::string(4u << 20, 'x');
        const auto p = keyhook::parse_key_list(j.dump());
        CHECK(p.records.size() == 1);
    }
}

TEST_CASE("L2: a kept string longer than max_string_bytes makes its record bad", "[L2][key_list]") {
    key_list_options o;
    o.max_string_bytes = 40;  // above the builder's own strings (36-character ids)
    const std::string at_limit(40, 'n'), over(41, 'n');
    auto ok = valid_record(1);
    ok["name"] = at_limit;
    ok["groups"] = {at_limit};
    auto long_name = valid_record(2);
    long_name["name"] = over;
    auto long_group = valid_record(3);
    long_group["groups"] = {"a", over};
    const auto p = keyhook::parse_key_list(response_with(json::array({ok, long_name, long_group})), o);
    REQUIRE(p.records.size() == 1);
    CHECK(p.records[0].name == at_limit);
    REQUIRE(p.rejected.size() == 2);
    CHECK(p.rejected[0].code == errc::limit_exceeded);
    CHECK(p.rejected[0].path == "data.result[1].name");
    CHECK(p.rejected[0].message == "a string of 41 bytes, more than the limit of 40");
    CHECK(p.rejected[1].path == "data.result[2].groups[1]");
    // The long text itself is not echoed.
    CHECK(p.rejected[0].message.find(over) == std::string::npos);
}

TEST_CASE("L2: paging helpers", "[L2][L1][key_list]") {
    keyhook::key_list_page p;
    p.page_size = 100;
    p.page = 1;
    struct c {
        std::int64_t count, pages;
    };
    for (const auto& k : {c{0, 0}, c{1, 1}, c{99, 1}, c{100, 1}, c{101, 2}, c{200, 2}, c{201, 3}}) {
        p.count = k.count;
        CHECK(p.total_pages() == k.pages);
    }
    p.count = std::numeric_limits<std::int64_t>::max();
    CHECK(p.total_pages() == std::numeric_limits<std::int64_t>::max() / 100 + 1);
    p.count = 10;
    p.page_size = 0;
    CHECK(p.total_pages() == 0);
    CHECK_FALSE(p.has_next_page());

    p.count = 201;
    p.page_size = 100;
    const auto q = sample_query();
    for (std::int64_t page = 1; page <= 3; ++page) {
        p.page = page;
        INFO("page " << page);
        CHECK(p.has_next_page() == (page < 3));
        const auto next = keyhook::next_page_query(q, p);
        CHECK(next.has_value() == (page < 3));
        if (next) {
            CHECK(next->page == page + 1);
            CHECK(next->size == 100);
            CHECK(next->tenant == q.tenant);
            CHECK(next->token == q.token);
        }
    }
    // The service capped the size asked for: follow its page size.
    auto big = q;
    big.size = 1000;
    p.page = 1;
    CHECK(keyhook::next_page_query(big, p)->size == 100);
}

TEST_CASE("L2: a page walk over a builder's responses visits every record once", "[L2][L1][key_list]") {
    std::vector<keyhook::api_key> all;
    for (std::uint64_t i = 1; i <= 7; ++i) all.push_back(key_builder::numbered(i).build());
    auto q = sample_query();
    q.size = 3;
    std::vector<keyhook::api_key> seen;
    std::optional<key_list_query> next = q;
    int calls = 0;
    while (next && calls < 10) {
        ++calls;
        const auto request = keyhook::list_keys_request(*next);
        CHECK(keyhook::find_query_parameter(request.url, "_page") == std::to_string(next->page));
        // The "service": slice the records for the page asked for.
        list_response_builder b;
        const auto first = static_cast<std::size_t>((next->page - 1) * next->size);
        for (std::size_t i = first; i < all.size() && i < first + static_cast<std::size_t>(next->size); ++i)
            b.add(all[i]);
        const auto page = keyhook::parse_key_list(
            b.count(static_cast<std::int64_t>(all.size())).page(next->page).page_size(next->size).build());
        seen.insert(seen.end(), page.records.begin(), page.records.end());
        next = keyhook::next_page_query(*next, page);
    }
    CHECK(calls == 3);
    CHECK(seen == all);
}

TEST_CASE("L2: pages, options and modes print readably and compare", "[L2][key_list]") {
    const auto p = keyhook::parse_key_list(list_response_builder().add(key_builder()).page_size(10).build());
    CHECK(printed(p) == "key_list_page{count=1, page=1, page_size=10, records=1, rejected=0}");
    auto other = p;
    CHECK(other == p);
    other.rejected.push_back(keyhook::error{errc::wrong_type, "x", "y"});
    CHECK(other != p);
    CHECK(printed(key_list_options{}) == "key_list_options{mode=lenient, max_depth=64, max_string_bytes=65536}");
    CHECK(printed(key_list_mode::strict) == "strict");
    CHECK(key_list_options{} == key_list_options{});
    CHECK(key_list_options{} != key_list_options{key_list_mode::strict});
}

// ---------------------------------------------------------------------------
// L3

namespace {

std::vector<keyhook::api_key> names_of_view_fixture() {
    // At fixed_now: 1, 2, 3, 4, 8, 9 are Active (3 and 4 tie on expireAt; 2 and 9
    // tie on expireAt and name), 5 is revoked, 6 expires exactly now, 7 starts one
    // microsecond after now, 8 is listed Expired but the clock says Active.
    const auto t = fixed_now;
    return {
        key_builder::numbered(1).name("delta").period(t - days{1}, t + days{9}).build(),
        key_builder::numbered(2).name("alpha").period(t - days{1}, t + days{3}).build(),
        key_builder::numbered(3).name("charlie").period(t, t + days{5}).build(),
        key_builder::numbered(4).name("bravo").period(t - days{2}, t + days{5}).build(),
        key_builder::numbered(5).name("alpha").period(t - days{1}, t + days{2}).revoked().build(),
        key_builder::numbered(6).name("echo").period(t - days{9}, t).build(),
        key_builder::numbered(7).name("foxtrot").period(t + one_us, t + days{9}).build(),
        key_builder::numbered(8).name("golf").period(t - days{9}, t + one_us).status(key_status::expired).build(),
        key_builder::numbered(9).name("alpha").period(t - days{1}, t + days{3}).build(),
    };
}

std::vector<std::string> ids(const std::vector<keyhook::api_key>& keys) {
    std::vector<std::string> v;
    for (const auto& k : keys) v.push_back(k.id.str());
    return v;
}

std::vector<std::string> ids(const std::vector<const keyhook::api_key*>& keys) {
    std::vector<std::string> v;
    for (const auto* k : keys) v.push_back(k->id.str());
    return v;
}

std::vector<std::string> uuids(std::initializer_list<int> ns) {
    std::vector<std::string> v;
    for (int n : ns) v.push_back(keyhook::testing::test_uuid(static_cast<std::uint64_t>(n)));
    return v;
}

}  // namespace

TEST_CASE("L3: the default view: Active only, earliest expireAt first, ties by name then id", "[L3][S1][key_list]") {
    const auto records = names_of_view_fixture();
    // golf (8): listed Expired but Active by the clock, expiring one microsecond after now: first.
    // alpha 2 and alpha 9 tie on expireAt and name: by id. charlie (3) starts exactly now: in.
    const auto expected = uuids({8, 2, 9, 4, 3, 1});
    CHECK(ids(keyhook::default_view(records, fixed_now)) == expected);
    CHECK(ids(keyhook::default_view_refs(records, fixed_now)) == expected);
    auto copy = records;
    CHECK(ids(keyhook::default_view(std::move(copy), fixed_now)) == expected);
    // One microsecond later golf has expired and foxtrot (7) has started.
    CHECK(ids(keyhook::default_view(records, fixed_now + one_us)) == uuids({2, 9, 4, 3, 1, 7}));
    // One microsecond earlier charlie has not started yet and echo (6) has not expired.
    CHECK(ids(keyhook::default_view(records, fixed_now - one_us)) == uuids({6, 8, 2, 9, 4, 1}));
}

TEST_CASE("L3: the view accepts other ranges of records", "[L3][key_list]") {
    const auto records = names_of_view_fixture();
    const std::deque<keyhook::api_key> dq(records.begin(), records.end());
    const std::list<keyhook::api_key> ls(records.begin(), records.end());
    const auto expected = ids(keyhook::default_view(records, fixed_now));
    CHECK(ids(keyhook::default_view(dq, fixed_now)) == expected);
    CHECK(ids(keyhook::default_view(ls, fixed_now)) == expected);
    CHECK(ids(keyhook::default_view_refs(ls, fixed_now)) == expected);
    CHECK(keyhook::default_view(std::vector<keyhook::api_key>{}, fixed_now).empty());
}

TEST_CASE("L3: filters by status, type, group and name substring", "[L3][key_list]") {
    auto records = names_of_view_fixture();
    records[0].type = "Synthetic";
    records[1].type = "synthetic";
    records[2].type = "Other";
    records[3].type.reset();
    records[0].groups = {"tenant-admin"};
    records[1].groups = {"user:pf", "tenant-viewer"};
    records[8].groups = {"Tenant-Viewer"};
    keyhook::key_filter f;

    SECTION("no filter: every record, in view order") {
        CHECK(keyhook::select_keys(records, f, fixed_now).size() == records.size());
        CHECK(ids(keyhook::select_keys(records, f, fixed_now)) == uuids({6, 8, 5, 2, 9, 4, 3, 1, 7}));
    }
    SECTION("status") {
        f.status = key_status::revoked;
        CHECK(ids(keyhook::select_keys(records, f, fixed_now)) == uuids({5}));
        f.status = key_status::expired;
        CHECK(ids(keyhook::select_keys(records, f, fixed_now)) == uuids({6}));
        f.status = key_status::active_in_future;
        CHECK(ids(keyhook::select_keys(records, f, fixed_now)) == uuids({7}));
        CHECK(ids(keyhook::select_keys(records, f, fixed_now + one_us)).empty());
    }
    SECTION("type, ASCII case-insensitive; a record without type never matches") {
        f.type = "SYNTHETIC";
        CHECK(ids(keyhook::select_keys(records, f, fixed_now)) == uuids({6, 8, 5, 2, 9, 1, 7}));
        f.type = "other";
        CHECK(ids(keyhook::select_keys(records, f, fixed_now)) == uuids({3}));
        f.type = "synth";
        CHECK(keyhook::select_keys(records, f, fixed_now).empty());
    }
    SECTION("group, exact") {
        f.group = "tenant-viewer";
        CHECK(ids(keyhook::select_keys(records, f, fixed_now)) == uuids({2}));
        f.group = "tenant-admin";
        CHECK(ids(keyhook::select_keys(records, f, fixed_now)) == uuids({1}));
    }
    SECTION("name substring, ASCII case-insensitive") {
        f.name_contains = "LPH";
        CHECK(ids(keyhook::select_keys(records, f, fixed_now)) == uuids({5, 2, 9}));
        f.name_contains = "";
        CHECK(keyhook::select_keys(records, f, fixed_now).size() == records.size());
        f.name_contains = "alphabet";
        CHECK(keyhook::select_keys(records, f, fixed_now).empty());
    }
    SECTION("name substring: the worst case (a 64 KiB name, a 32 KiB needle), both sides") {
        // Once quadratic (1.1 s for one key, the naive substring scan); a linear search now.
        keyhook::api_key k = records.front();
        k.name = std::string(65536, 'a');
        keyhook::key_filter g;
        g.name_contains = std::string(32767, 'A') + "b";
        CHECK_FALSE(g.matches(k, fixed_now));
        k.name.back() = 'B';  // the needle now ends the name
        CHECK(g.matches(k, fixed_now));
        g.name_contains = std::string(65537, 'a');  // longer than the name
        CHECK_FALSE(g.matches(k, fixed_now));
    }
    SECTION("combined, and the refs and move forms agree") {
        f.status = key_status::active;
        f.name_contains = "a";  // golf (8) is Active but has no "a"
        const auto expected = uuids({2, 9, 4, 3, 1});
        CHECK(ids(keyhook::select_keys(records, f, fixed_now)) == expected);
        CHECK(ids(keyhook::select_key_refs(records, f, fixed_now)) == expected);
        auto copy = records;
        CHECK(ids(keyhook::select_keys(std::move(copy), f, fixed_now)) == expected);
        CHECK(keyhook::default_view_filter() == keyhook::key_filter{key_status::active, {}, {}, {}});
    }
}

TEST_CASE("L3: the name substring search agrees with a plain scan on every short text", "[L3][key_list]") {
    // Every needle of up to 5 and every name of up to 6 letters from {a, A, b}:
    // overlaps, periodic needles and case folding, both outcomes, against the
    // obvious quadratic scan.
    const auto all = [](std::size_t max_len) {
        std::vector<std::string> out{""};
        for (std::size_t i = 0; out[i].size() < max_len; ++i)
            for (char c : {'a', 'A', 'b'}) out.push_back(out[i] + c);
        return out;
    };
    const auto lower = [](std::string s) {
        for (auto& c : s)
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        return s;
    };
    const auto names = all(6), needles = all(5);
    std::size_t found = 0, checked = 0;
    keyhook::api_key key;
    keyhook::key_filter filter;
    for (const auto& name : names) {
        const std::string folded_name = lower(name);
        key.name = name;
        for (const auto& needle : needles) {
            const bool expected = folded_name.find(lower(needle)) != std::string::npos;
            filter.name_contains = needle;
            if (filter.matches(key, fixed_now) != expected) {
                FAIL_CHECK("name \"" << name << "\", needle \"" << needle << "\": expected " << expected);
            }
            found += expected ? 1 : 0;
            ++checked;
        }
    }
    CHECK(checked == names.size() * needles.size());
    CHECK(found > 0);
    CHECK(found < checked);
}

TEST_CASE("L3: filters print readably", "[L3][key_list]") {
    keyhook::key_filter f;
    CHECK(printed(f) == "key_filter{}");
    f.status = key_status::active_in_future;
    f.name_contains = "ex";
    CHECK(printed(f) == "key_filter{status=Active in the future, name_contains=\"ex\"}");
    f.type = "synthetic";
    f.group = "user:pf";
    CHECK(printed(f) ==
          "key_filter{status=Active in the future, type=\"synthetic\", group=\"user:pf\", name_contains=\"ex\"}");
}

TEST_CASE("L3: the view over decoded records is sorted, whatever the input order", "[L3][key_list]") {
    // A larger, shuffled input: the view must be a sorted permutation of the Active records.
    std::vector<keyhook::api_key> records;
    std::uint64_t state = 12345;
    for (std::uint64_t i = 1; i <= 500; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const auto offset = static_cast<std::int64_t>((state >> 33) % 2000) - 1000;  // hours
        auto b = key_builder::numbered(i).name("key " + std::to_string((state >> 20) % 7));
        b.period(fixed_now - days{40}, fixed_now + std::chrono::hours{offset});
        if (i % 11 == 0) b.revoked();
        records.push_back(b.build());
    }
    const auto view = keyhook::default_view(records, fixed_now);
    std::size_t active = 0;
    for (const auto& k : records) active += keyhook::is_active_at(k, fixed_now) ? 1 : 0;
    CHECK(view.size() == active);
    for (std::size_t i = 1; i < view.size(); ++i) {
        const auto& a = view[i - 1];
        const auto& b = view[i];
        const bool ordered = a.expire_at < b.expire_at ||
                             (a.expire_at == b.expire_at && (a.name < b.name || (a.name == b.name && a.id < b.id)));
        CHECK(ordered);
    }
    for (const auto& k : view) CHECK(keyhook::is_active_at(k, fixed_now));
}
