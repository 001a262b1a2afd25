// J3 measured, not assumed: this file is the core suite's one user of the
// counting global allocation functions, which count bytes and track the peak
// of live bytes.
// Each parser reads inputs of n and 10n bytes of its worst shapes; the peak
// must stay within 4 times the input plus a constant, and both the peak and
// the bytes requested in total must grow linearly.
#include <catch2/catch.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/counting_allocator.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/key_list.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/received_notification.hpp"

namespace {

using counting_allocator::usage;

// Runs f with counting on. What f returns is destroyed after the count stops,
// so a result that holds the decoded input is part of the peak.
template <class F>
usage measure(F f) {
    const counting_allocator::scope counter;
    auto kept = f();
    const usage u = counter.stop();
    (void)kept;
    return u;
}

// J3's constant: what a parser may take whatever the input's size.
constexpr std::size_t allowance = std::size_t{1} << 20;

// An input shape: the text of about `bytes` bytes.
using input_shape = std::function<std::string(std::size_t bytes)>;

// Fills `middle` repeatedly between head and tail up to about `bytes`.
std::string fill(const std::string& head, const std::string& first, const std::string& next, const std::string& tail,
                 std::size_t bytes) {
    std::string s = head + first;
    while (s.size() + next.size() + tail.size() <= bytes) s += next;
    return s + tail;
}

// The parser's use at n and 10n bytes of `make`: within 4 bytes a byte plus
// the allowance at both sizes, and linear: ten times the input takes at most
// about ten times the peak and the bytes requested in total (a quadratic
// regrowth, or a copy per element, would take a hundred).
template <class Parse>
void check_j3(const char* what, const input_shape& make, std::size_t n, Parse parse) {
    const std::string small = make(n), large = make(10 * n);
    const usage a = measure([&] { return parse(small); });
    const usage b = measure([&] { return parse(large); });
    INFO(what << ": " << small.size() << " bytes: peak " << a.peak << ", requested " << a.requested << "; "
              << large.size() << " bytes: peak " << b.peak << ", requested " << b.requested);
    CHECK(a.peak <= 4 * small.size() + allowance);
    CHECK(b.peak <= 4 * large.size() + allowance);
    CHECK(b.peak <= 11 * a.peak + allowance);
    CHECK(b.requested <= 11 * a.requested + allowance);
}

const std::string min_record =
    R"({"id":"","name":"","status":"Active","activeFrom":"2025-01-02T00:00:00Z","expireAt":"2025-02-01T00:00:00Z"})";

std::string list_head(const std::string& page_size) {
    return R"({"status":"success","data":{"count":1,"page":1,"pageSize":)" + page_size + R"(,"result":[)";
}

}  // namespace

TEST_CASE("J3: the counter sees bytes and the peak", "[J3][allocation]") {
    const usage u = measure([] { return std::string(1000, 'x'); });
    CHECK(u.peak == 1001);
    CHECK(u.requested == 1001);
    const usage v = measure([] {
        std::string a(1000, 'x');
        return std::string(500, 'y');
    });
    CHECK(v.peak == 1502);
    CHECK(v.requested == 1502);
    // The smallest valid record is what key_list assumes.
    CHECK(min_record.size() == keyhook::detail::key_list_min_record_bytes);
    CHECK(keyhook::parse_key_list(list_head("1") + min_record + "]}}").records.size() == 1);
}

TEST_CASE("J3: try_parse_key_list stays within 4 bytes a byte, linearly", "[J3][L2][allocation][large]") {
    const auto parse = [](const std::string& s) { return keyhook::try_parse_key_list(s); };
    const auto strict = [](const std::string& s) {
        keyhook::key_list_options o;
        o.mode = keyhook::key_list_mode::strict;
        return keyhook::try_parse_key_list(s, o);
    };
    const std::size_t n = 200'000;
    // The smallest members ("":0 in 5 bytes), all in one object: the J1
    // bookkeeping of member names (once 4.8 bytes a byte).
    check_j3(
        "empty names", [](std::size_t b) { return fill(R"({"x":{"":0)", "", R"(,"":0)", "}}", b); }, n, parse);
    // Rejected elements once kept an error each.
    check_j3(
        "rejected elements", [](std::size_t b) { return fill(list_head("100"), "1", ",1", "]}}", b); }, n, parse);
    check_j3(
        "rejected objects", [](std::size_t b) { return fill(list_head("100"), "{}", ",{}", "]}}", b); }, n, parse);
    check_j3(
        "rejected, strict", [](std::size_t b) { return fill(list_head("100"), "1", ",1", "]}}", b); }, n, strict);
    // The smallest valid records, with a true, a lying-low and a huge pageSize.
    for (const char* size : {"1", "100", "1000000", "9223372036854775807"})
        check_j3(
            size, [size](std::size_t b) { return fill(list_head(size), min_record, "," + min_record, "]}}", b); }, n,
            parse);
    // J2's second pass reads a copy of the page with the number zeroed: the
    // copy counts against the budget of the records.
    check_j3(
        "records and one number out of range",
        [](std::size_t b) {
            return fill(list_head("1000000"), min_record, "," + min_record, R"(,{"id":"","x":1e400}]}})", b);
        },
        n, parse);
    // Blanks under a huge declared pageSize.
    check_j3(
        "blanks", [](std::size_t b) { return fill(list_head("9223372036854775807"), "", " ", "]}}", b); }, n, parse);
    // Many groups of one record, many members of an unknown object, deep arrays.
    const std::string rec_head = R"({"status":"success","data":{"count":1,"page":1,"pageSize":1,"result":[)" +
                                 min_record.substr(0, min_record.size() - 1);
    check_j3(
        "groups", [&](std::size_t b) { return fill(rec_head + R"(,"groups":[)", R"("")", R"(,"")", "]}]}}", b); }, n,
        parse);
    std::size_t k = 0;
    check_j3(
        "unknown members",
        [&](std::size_t b) {
            std::string s = rec_head + R"(,"x":{"a":0)";
            while (s.size() + 32 <= b) s += ",\"" + std::to_string(k++) + "\":0";
            return s + "}}]}}";
        },
        n, parse);
    check_j3(
        "nested arrays", [&](std::size_t b) { return fill(rec_head + R"(,"x":[)", "[[]]", ",[[]]", "]}]}}", b); }, n,
        parse);
}

TEST_CASE("J3: try_parse_json stays within 4 bytes a byte, linearly", "[J3][allocation][large]") {
    const auto parse = [](const std::string& s) { return keyhook::try_parse_json(s); };
    const std::size_t n = 200'000;
    // The DOM of small values takes 16 bytes or more each: refused once past the budget.
    check_j3(
        "zeros", [](std::size_t b) { return fill("[", "0", ",0", "]", b); }, n, parse);
    check_j3(
        "empty arrays", [](std::size_t b) { return fill("[", "[]", ",[]", "]", b); }, n, parse);
    std::size_t k = 0;
    check_j3(
        "members",
        [&](std::size_t b) {
            std::string s = R"({"a":0)";
            while (s.size() + 32 <= b) s += ",\"" + std::to_string(k++) + "\":0";
            return s + "}";
        },
        n, parse);
    check_j3(
        "strings", [](std::size_t b) { return fill("[", R"("abcdefghijklmnopq")", R"(,"abcdefghijklmnopq")", "]", b); },
        n, parse);
    // Long names in one object: the names' bookkeeping doubles as it grows
    // and holds its old and new storage at once; that moment counts too
    // (once 4.9 bytes a byte, and accepted).
    check_j3(
        "1000-byte names",
        [&](std::size_t b) {
            std::string s = "{";
            for (std::size_t i = 0; s.size() + 1010 <= b; ++i)
                s += (i == 0 ? "\"" : ",\"") + std::string(990, 'k') + std::to_string(i) + "\":0";
            return s + "}";
        },
        1'700'000, parse);
    // Ordinary documents of larger values are read, not refused.
    const std::string webhook =
        R"({"name":"billing-webhook-0001","endpoint":"https://hooks.example.com/keyhook/receive/0001",)"
        R"("saved":true,"events":["AddProduct","PublishEngine"],)"
        R"("auth":[{"in":"header","name":"x-api-key","value":"0123456789abcdef0123456789abcdef"}]})";
    check_j3(
        "webhooks", [&](std::size_t b) { return fill(R"({"webhooks":[)", webhook, "," + webhook, "]}", b); }, n, parse);
    // nlohmann's DOM of such a document takes about 5 bytes a byte: read within
    // the allowance, refused past it unless the host raises the factor.
    const std::string small = fill(R"({"webhooks":[)", webhook, "," + webhook, "]}", n);
    const std::string large = fill(R"({"webhooks":[)", webhook, "," + webhook, "]}", 10 * n);
    CHECK(keyhook::try_parse_json(small));
    const auto refused = keyhook::try_parse_json(large);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == keyhook::errc::limit_exceeded);
    CHECK(refused.error().message == "the document would take more than 4 times its size in memory (rule J3)");
    keyhook::json_limits roomy;
    roomy.memory_factor = 8;
    CHECK(keyhook::try_parse_json(large, roomy));
    CHECK(keyhook::try_parse_json(fill("[", "0", ",0", "]", 10 * n)).error().code == keyhook::errc::limit_exceeded);
}

TEST_CASE("J3: try_parse_notification stays within 4 bytes a byte, linearly", "[J3][H7][allocation][large]") {
    const auto parse = [](const std::string& s) { return keyhook::try_parse_notification(s); };
    const std::size_t n = 100'000;  // 10n is within the default 1 MiB body limit
    check_j3(
        "zeros", [](std::size_t b) { return fill(R"({"x":[)", "0", ",0", "]}", b); }, n, parse);
    std::size_t k = 0;
    check_j3(
        "members",
        [&](std::size_t b) {
            std::string s = R"({"x":{"a":0)";
            while (s.size() + 32 <= b) s += ",\"" + std::to_string(k++) + "\":0";
            return s + "}}";
        },
        n, parse);
    check_j3(
        "one long name", [](std::size_t b) { return fill(R"({"FolderName":")", "", "f", R"("})", b); }, n, parse);
    // Once 4.8 bytes a byte for 2^k + 1 members "":0 (the
    // repeats are refused when the object closes, after the peak).
    check_j3(
        "empty names", [](std::size_t b) { return fill(R"({"x":{"":0)", "", R"(,"":0)", "}}", b); }, n, parse);
}

// Regression test: memory: a declared pageSize sized an allocation (J3).
TEST_CASE("J3: a declared pageSize never sizes an allocation the input cannot fill", "[J3][L2][allocation]") {
    // A 200 MB response of blanks under pageSize 2^63-1 died of bad_alloc; the
    // same few bytes must cost the same under either pageSize.
    const auto body = [](const char* size) {
        return std::string(R"({"status":"success","data":{"count":0,"page":1,"pageSize":)") + size +
               R"(,"result":[]}})";
    };
    const usage huge = measure([&] { return keyhook::try_parse_key_list(body("9223372036854775807")); });
    const usage one = measure([&] { return keyhook::try_parse_key_list(body("1")); });
    INFO("pageSize 2^63-1: peak " << huge.peak << "; pageSize 1: peak " << one.peak);
    CHECK(huge.peak <= 4 * body("9223372036854775807").size() + allowance);
    CHECK(huge.peak < (std::size_t{1} << 20));
    REQUIRE(keyhook::try_parse_key_list(body("9223372036854775807")).has_value());
}

TEST_CASE("J3: the names of one object's 2^21 + 1 smallest members stay within 4 bytes a byte",
          "[J3][J1][H7][L2][allocation][large]") {
    // Once 8 bytes of bookkeeping a member ("":0 is 5 bytes),
    // held twice over while the vector grew past 2^21, came to 4.8 bytes a byte.
    std::string body = R"({"x":{"":0)";
    body.reserve(11 * (std::size_t{1} << 20));
    for (std::size_t i = 0; i < (std::size_t{1} << 21); ++i) body += R"(,"":0)";
    body += "}}";
    keyhook::body_limits limits;
    limits.max_bytes = body.size();
    const usage n = measure([&] { return keyhook::try_parse_notification(body, limits); });
    INFO("notification: " << body.size() << " bytes, peak " << n.peak);
    CHECK(n.peak <= 4 * body.size() + allowance);
    const usage k = measure([&] { return keyhook::try_parse_key_list(body); });
    INFO("key list: peak " << k.peak);
    CHECK(k.peak <= 4 * body.size() + allowance);
    // Both refuse the repeated name, with its path.
    CHECK(keyhook::try_parse_notification(body, limits).error().path == "x[\"\"]");
}

TEST_CASE("J3: a long token, malformed, misplaced or well-formed, stays within 4 bytes a byte",
          "[J3][allocation][large]") {
    // nlohmann's lexer copies a bad token into its error text (escaped, then
    // concatenated) while its own token buffers hold it.
    struct shape {
        const char* what;
        std::string head, unit, tail;
    };
    const std::vector<shape> shapes = {
        {"raw TAB after a long string", R"({"x":")", "a", "\t\"}"},
        {"unclosed long string", R"({"x":")", "a", ""},
        {"unclosed long name", R"({")", "a", ""},
        {"bad escape after a long string", R"({"x":")", "a", "\\q\"}"},
        {"bad UTF-8 after a long string", R"({"x":")", "a", "\xff\"}"},
        {"lone surrogate after long escapes", R"({"x":")", "\\n", "\\udc00\"}"},
        {"long digits then a bad exponent", R"({"x":1)", "0", "e}"},
        {"a number no double holds", R"({"x":1)", "0", "}"},
        // Well-formed long tokens where nlohmann's parser refuses them: its
        // syntax error is built from the token too.
        {"a long string for a colon", R"({"x" ")", "a", R"("})"},
        {"a long string after the document", R"({} ")", "a", "\""},
        {"a long number for a member name", "{1", "0", ":1}"},
        {"a long number after the document", "{} 1", "0", ""},
        {"a long number for a comma", R"({"x":"y" 1)", "0", "}"},
        // Long well-formed strings nlohmann takes: it reads "" in their place.
        {"a long string", R"({"x":")", "a", R"("})"},
        {"a long string of escapes", R"(["x",")", "\\n", R"("])"},
        {"a long name", R"({")", "a", R"(":1})"},
        {"a long name, then a number out of range", R"({")", "a", R"(":{"b":1e400}})"},
        {"a long name repeated", R"({"aa":1,")", "a", R"(":1,"aa":2})"},
        {"a long string, then a syntax error", R"(["x",")", "a", R"(",,1])"},
    };
    const std::size_t n = 100'000;
    for (const auto& s : shapes) {
        const input_shape make = [&](std::size_t b) { return fill(s.head, "", s.unit, s.tail, b); };
        check_j3((std::string("json: ") + s.what).c_str(), make, n,
                 [](const std::string& t) { return keyhook::try_parse_json(t); });
        check_j3((std::string("notification: ") + s.what).c_str(), make, n,
                 [](const std::string& t) { return keyhook::try_parse_notification(t); });
        check_j3((std::string("key list: ") + s.what).c_str(), make, n,
                 [](const std::string& t) { return keyhook::try_parse_key_list(t); });
    }
}
