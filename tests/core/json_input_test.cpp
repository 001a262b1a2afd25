// The strict JSON reader (keyhook/json_input.hpp): J1, J2, the depth and size
// limits, the NUL byte, both sides of each boundary.
#include "keyhook/json_input.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using keyhook::errc;
using keyhook::json_limits;
using keyhook::try_parse_json;
using namespace std::string_literals;

namespace {

keyhook::error error_of(const std::string& text, const json_limits& limits = {}) {
    const auto r = try_parse_json(text, limits);
    REQUIRE_FALSE(r);
    return r.error();
}

}  // namespace

TEST_CASE("J1: try_parse_json refuses a member name repeated in one object, with its path", "[J1][json_input]") {
    struct row {
        std::string text, path;
    };
    for (const auto& r :
         {row{R"({"a":1,"a":2})", "a"}, row{R"({"a":1,"a":1})", "a"}, row{R"({"x":[1,{"b":1,"c":2,"b":3}]})", "x[1].b"},
          row{R"({"o":{"p":{"q":null,"q":[]}}})", "o.p.q"}, row{R"({"n\u0061me":1,"name":2})", "name"},
          row{R"({"a b":1,"a b":2})", R"(["a b"])"}, row{R"({"":1,"":2})", R"([""])"},
          // the first repeat in document order
          row{R"({"b":1,"a":1,"a":2,"b":2})", "a"}}) {
        INFO(r.text);
        const auto e = error_of(r.text);
        CHECK(e.code == errc::duplicate_member);
        CHECK(e.path == r.path);
        CHECK(e.message == "member name repeated in one object");
        // nlohmann alone reads it, the last value winning: what J1 forbids.
        CHECK_NOTHROW(nlohmann::json::parse(r.text));
    }
}

TEST_CASE("J1, P1: a plain member name goes into a path whole up to 64 bytes, then quoted and cut",
          "[J1][P1][json_input]") {
    const std::string at_bound(64, 'n'), past_bound(65, 'n'), long_name(1'000'000, 'n');
    CHECK(error_of("{\"" + at_bound + "\":1,\"" + at_bound + "\":2}").path == at_bound);
    const auto past = error_of("{\"" + past_bound + "\":1,\"" + past_bound + "\":2}");
    CHECK(past.path == "[" + keyhook::quoted_input(past_bound) + "]");
    CHECK(past.path.size() < 80);
    // A repeated name of a million bytes, and one in the path of a number
    // no double holds: the path stays short.
    const auto repeated = error_of("{\"" + long_name + "\":1,\"" + long_name + "\":2}");
    CHECK(repeated.code == errc::duplicate_member);
    CHECK(repeated.path == "[" + keyhook::quoted_input(long_name) + "]");
    const auto overflow = error_of("{\"" + long_name + "\":{\"b\":1e400}}");
    CHECK(overflow.code == errc::out_of_range);
    CHECK(overflow.path == "[" + keyhook::quoted_input(long_name) + "].b");
    CHECK(std::string(keyhook::exception(overflow).what()).size() < 200);
}

TEST_CASE("J1: objects on both sides of 32 members, with names that look alike", "[J1][json_input]") {
    // Objects of up to 32 members are checked pair by pair, larger ones by
    // sorting; the names differ only in bytes 1 and 3 ("a0z0b", "a0z1b", ...),
    // so every pair agrees in length, first, middle and last byte.
    const auto name = [](std::size_t i) {
        return std::string{'a', static_cast<char>('0' + i / 10), 'z', static_cast<char>('0' + i % 10), 'b'};
    };
    for (const std::size_t n : {std::size_t{2}, std::size_t{31}, std::size_t{32}, std::size_t{33}, std::size_t{64}}) {
        INFO(n << " members");
        std::string distinct = "{";
        for (std::size_t i = 0; i < n; ++i) distinct += (i > 0 ? ",\"" : "\"") + name(i) + "\":" + std::to_string(i);
        const auto r = try_parse_json(distinct + "}");
        REQUIRE(r);
        CHECK(r->size() == n);
        // The n-th member repeats the first: at 32 members in all the object
        // is still checked pair by pair, at 33 by sorting.
        const auto e = error_of(distinct + ",\"" + name(0) + "\":0}");
        CHECK(e.code == errc::duplicate_member);
        CHECK(e.path == name(0));
        // Two repeats: the earlier second occurrence is the one reported.
        const auto two = error_of(distinct + ",\"" + name(n - 1) + "\":0,\"" + name(0) + "\":0}");
        CHECK(two.path == name(n - 1));
    }
}

TEST_CASE("J1: the same name in sibling and nested objects, or in another case, is not a repeat", "[J1][json_input]") {
    for (const std::string text : {R"({"a":{"a":{"a":1}},"b":{"a":2}})", R"([{"id":1},{"id":2}])",
                                   R"({"a":1,"A":2,"a ":3})", R"({"a\u0000":1,"a":2})"}) {
        INFO(text);
        const auto r = try_parse_json(text);
        REQUIRE(r);
        CHECK(*r == nlohmann::json::parse(text));
    }
}

TEST_CASE("J2: try_parse_json names the path of a number no double holds", "[J2][json_input]") {
    struct row {
        std::string text, path, number;
    };
    for (const auto& r : {row{"1e400", "", "1e400"}, row{"[-1e400]", "[0]", "-1e400"},
                          row{R"({"a":[0,{"b":1e999}]})", "a[1].b", "1e999"}, row{std::string(400, '9'), "", ""}}) {
        INFO(r.text);
        const auto e = error_of(r.text);
        CHECK(e.code == errc::out_of_range);
        CHECK(e.path == r.path);
        if (!r.number.empty()) CHECK(e.message == "number \"" + r.number + "\" is outside the range of a double");
        CHECK(e.message.find("outside the range of a double") != std::string::npos);
    }
    // The other side: the largest doubles and 64-bit integers are read.
    const auto ok = try_parse_json(R"([1.7976931348623157e308,-1.7976931348623157e308,18446744073709551615,1e-400])");
    REQUIRE(ok);
    CHECK((*ok)[2] == 18446744073709551615u);
}

TEST_CASE("try_parse_json: depth and size limits, both sides", "[J3][json_input]") {
    json_limits limits;
    limits.max_depth = 3;
    CHECK(try_parse_json("[[[]]]", limits));
    const auto deep = error_of("[[[[]]]]", limits);
    CHECK(deep.code == errc::limit_exceeded);
    CHECK(deep.path == "[0][0][0]");
    CHECK(deep.message == "nested deeper than 3 levels");
    // 100,000 levels: refused at the default 64, nothing recursive runs (input-controlled recursion).
    CHECK(error_of(std::string(100000, '[') + std::string(100000, ']')).code == errc::limit_exceeded);
    CHECK(try_parse_json(std::string(64, '[') + std::string(64, ']')));
    CHECK(error_of(std::string(65, '[') + std::string(65, ']')).code == errc::limit_exceeded);

    limits = json_limits{};
    limits.max_bytes = 8;
    CHECK(try_parse_json("[1,2,34]", limits));
    CHECK(error_of("[1,2,345]", limits).code == errc::limit_exceeded);
}

TEST_CASE("try_parse_json: malformed text, NUL bytes and invalid UTF-8", "[json_input]") {
    const auto e = error_of(R"({"a":1,})");
    CHECK(e.code == errc::syntax_error);
    CHECK(e.path.empty());
    CHECK(e.message.rfind("syntax error at byte 7: ", 0) == 0);
    const auto nul = error_of("[1]\0[2]"s);
    CHECK(nul.code == errc::syntax_error);
    CHECK(nul.message == "syntax error at byte 3: a NUL byte");
    CHECK(try_parse_json(R"(["a\u0000b"])"));  // an escaped NUL is a character like any other
    CHECK(error_of("[\"\xff\"]").code == errc::invalid_utf8);
    CHECK(error_of("").code == errc::syntax_error);
    CHECK(error_of("[1] [2]").code == errc::syntax_error);
    // A secret-looking value is never quoted back.
    CHECK(error_of(R"({"token":"s3cr3t-value")").message.find("s3cr3t") == std::string::npos);
}

TEST_CASE("try_parse_json: reads what nlohmann reads, and parse_json throws", "[json_input]") {
    const std::string text = R"({"b":[1,-2,3.5,true,null,"x\n",{"c":{}}],"a":"\u00e9"})";
    const auto r = try_parse_json(text);
    REQUIRE(r);
    CHECK(*r == nlohmann::json::parse(text));
    CHECK(keyhook::parse_json(text) == nlohmann::json::parse(text));
    CHECK_THROWS_AS(keyhook::parse_json(R"({"a":1,"a":2})"), keyhook::exception);
}

TEST_CASE("try_parse_json_each: one top-level array's elements handed over one at a time", "[J1][J3][json_input]") {
    std::vector<std::string> seen;
    std::vector<std::size_t> indexes;
    const auto keep = [&](nlohmann::json& element, std::size_t i) -> keyhook::result<std::size_t> {
        seen.push_back(element.dump());
        indexes.push_back(i);
        return std::size_t{0};
    };
    const auto doc = keyhook::try_parse_json_each(
        R"({"a": [1], "events": [1, "x", {"b": [2]}, [], null], "z": {"events": [3]}})", "events", keep);
    REQUIRE(doc);
    CHECK(seen == std::vector<std::string>{"1", "\"x\"", R"({"b":[2]})", "[]", "null"});
    CHECK(indexes == std::vector<std::size_t>{0, 1, 2, 3, 4});
    // The DOM holds the rest, the streamed array empty; a nested "events" is not streamed.
    CHECK(doc->dump() == R"({"a":[1],"events":[],"z":{"events":[3]}})");

    // Not an array, or not at the top level: read as try_parse_json reads it, nothing handed over.
    seen.clear();
    for (const char* text : {R"({"events": {"x": [1]}})", R"({"events": 3})", R"([{"events": [1]}])", R"({})"}) {
        INFO(text);
        CHECK(keyhook::try_parse_json_each(text, "events", keep).value() == try_parse_json(text).value());
    }
    CHECK(seen.empty());

    // The callback's error ends the reading, as it is; J1 and J2 inside an element name its path.
    const auto refuse = [](nlohmann::json&, std::size_t i) -> keyhook::result<std::size_t> {
        if (i == 1) return keyhook::error{errc::invalid_value, "events[1]", "not this one"};
        return std::size_t{0};
    };
    const auto stopped = keyhook::try_parse_json_each(R"({"events": [1, 2, 3]})", "events", refuse);
    REQUIRE_FALSE(stopped);
    CHECK(stopped.error() == keyhook::error{errc::invalid_value, "events[1]", "not this one"});
    const auto repeated = keyhook::try_parse_json_each(R"({"events": [{}, {"a": 1, "a": 2}]})", "events", keep);
    REQUIRE_FALSE(repeated);
    CHECK(repeated.error().code == errc::duplicate_member);
    CHECK(repeated.error().path == "events[1].a");
    // J1 for the streamed member itself: named twice, the second is refused.
    CHECK(keyhook::try_parse_json_each(R"({"events": [], "events": []})", "events", keep).error().code ==
          errc::duplicate_member);
}

TEST_CASE("try_parse_json_each: J3 counts what the callback keeps, not the dropped elements", "[J3][json_input]") {
    // 200,000 small objects: as one DOM, more than 4 times the text; streamed, each is dropped.
    std::string text = R"({"events": [)";
    for (int i = 0; i < 200000; ++i) text += i == 0 ? R"({"a":0})" : R"(,{"a":0})";
    text += "]}";
    CHECK(error_of(text).code == errc::limit_exceeded);
    std::size_t count = 0;
    const auto drop = [&](nlohmann::json&, std::size_t) -> keyhook::result<std::size_t> {
        ++count;
        return std::size_t{0};
    };
    CHECK(keyhook::try_parse_json_each(text, "events", drop));
    CHECK(count == 200000);
    // What the callback says it keeps counts: 64 bytes an element passes 4 bytes a byte of 7-byte elements.
    count = 0;
    const auto hold = [&](nlohmann::json&, std::size_t) -> keyhook::result<std::size_t> {
        ++count;
        return std::size_t{64};
    };
    const auto held = keyhook::try_parse_json_each(text, "events", hold);
    REQUIRE_FALSE(held);
    CHECK(held.error().code == errc::limit_exceeded);
    CHECK(held.error().message == "the document would take more than 4 times its size in memory (rule J3)");
    CHECK(count < 200000);
    // And 20 bytes an element (under 4 x 8 bytes of text each) passes.
    const auto little = [](nlohmann::json&, std::size_t) -> keyhook::result<std::size_t> { return std::size_t{20}; };
    CHECK(keyhook::try_parse_json_each(text, "events", little));
}
