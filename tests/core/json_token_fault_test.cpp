// J3 on nlohmann's error paths (detail/json_token_fault.hpp): a reader whose
// text holds a long malformed token gives nlohmann only the text before it
// and makes nlohmann's error for it from a short equivalent. Whatever the
// threshold, a reader must see the same events and the same error (offset,
// reason, and the number's text for J2) as when nlohmann reads the whole
// text itself. Threshold 0 puts every token through the equivalent.
#include <catch2/catch.hpp>

#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/recording_sax.hpp"

namespace {

using json = nlohmann::json;
using keyhook_test::read_checked;
using keyhook_test::read_whole;

void check_same(const std::string& text) {
    const std::string whole = read_whole(text);
    static constexpr std::size_t thresholds[] = {0, 1, 2, 3, 5, 8, 13, 64};
    for (const std::size_t threshold : thresholds) {
        INFO("text " << json(text).dump(-1, ' ', true, json::error_handler_t::replace) << ", threshold " << threshold);
        CHECK(read_checked(text, threshold) == whole);
    }
}

const std::vector<std::string> malformed = {
    // strings and member names
    R"("abc)",
    R"(")",
    R"(["abc)",
    R"({"abc)",
    R"({"a":"abc)",
    "\"ab\tc\"",
    "\"ab\x01\"",
    "\"ab\x1f\"",
    R"("ab\q")",
    R"("ab\)",
    R"("ab\u12")",
    R"("ab\u12g4")",
    R"("ab\uDC00")",
    R"("ab\uD800")",
    R"("ab\uD800x")",
    R"("ab\uD800\u0041")",
    R"("ab\uD800\uD800")",
    R"("ab\uD800\")",
    R"("ab\uD800\u")",
    R"("ok\uD83D\uDE00ok)",
    "\"ab\x80\"",
    "\"ab\xC0\xAF\"",
    "\"ab\xC2\"",
    "\"ab\xC2",
    "\"ab\xE0\x80\x80\"",
    "\"ab\xED\xA0\x80\"",
    "\"ab\xF4\x90\x80\x80\"",
    "\"ab\xF5\"",
    "\"ab\xF0\x9F\x98\"",
    "\"ab\xE2\x82\"",
    "\"\xff\"",
    "{\"a\xff\":1}",
    "[\"ok\",\"bad\t\"]",
    "{\"k\":[1,\"\\x\"]}",
    // numbers
    "-",
    "-x",
    "-.5",
    "1.",
    "1.x",
    "1.e5",
    "1e",
    "1ex",
    "1e+",
    "1e-x",
    "1E",
    "01",
    "[1,-]",
    "{\"a\":1.}",
    "[123456789012345678901234567890.",
    "[0.000000000001e+",
    "1e400",
    "-1e400",
    "[1e400]",
    "{\"a\":1E+999}",
    "1" + std::string(400, '0'),
    "[2e308,1]",
    "1e-400",
    "[1e308]",
    // other tokens and the structure around bad tokens
    "tru",
    "nul",
    "fals",
    "truex",
    "[true,fals]",
    "x",
    "[1 2]",
    "{\"a\" 1}",
    "[\"a\" \"b\\q\"]",
    "{\"a\":1,}",
    "\"a\" \"b\t\"",
    "1 \"\t\"",
    "[] 1e400",
    "[[[\"abc",
    "\xEF\xBB\xBF[1]",
    "\xEF\xBB[1]",
    "\xEF\xBB\xBF\"\t\"",
    "",
    " ",
    "[",
    "]",
    "{]",
    "[1,2,3]",
    "{\"a\":1 \"b\"}",
    "{1:2}",
    "{\"a\":1,2}",
    "{\"a\":1,\"b\" \"c\"}",
    "[1,2 \"x\"]",
    "\"a\" \"b\"",
    "0 0",
    "{\"a\":{} \"b\"}",
    "[[] 1]",
    "{\"a\":[] 1}",
    "[1,]",
    "{,}",
    "[,1]",
    "{\"a\",1}",
    "{\"a\":}",
    "[}",
    "{\"a\":1]",
    "[1}",
    "{\"a\"::1}",
    "[1]]",
    "{} \"x\" 1",
    "{\"a\":\"b\" 1e400}",
    "[1e400 1]",
    "{\"a\":1e400 \"b\"}",
    "{1e400:1}",
    // a misplaced number followed by a byte that would continue a shorter one
    "555-0.55555555.\v",
    "0 1.5.",
    "[1 2e5e]",
    "{\"a\":1 -2.5E+3.}",
    "{12.}",
    "0 -0.e",
    "0 10e",
    "0 1.0e1.",
    "[1.5 2]",
    "{\"a\":true \"b\"}",
    R"({"a":[1,2,{"b":null}],"c":"d\"e\\"})",
    "\"\\\\\\\"\"",
    "\"\\\\\"\t\"",
    "[\"\\\\\\\\\",\"\t\"]",
};

}  // namespace

TEST_CASE("J3: a long bad token gets nlohmann's own error from its short equivalent", "[J3][J2]") {
    for (const auto& text : malformed) check_same(text);
}

TEST_CASE("J3: long bad tokens, each reported where and why nlohmann reports it", "[J3][J2]") {
    // Long runs of plain bytes, escapes, multi-byte characters and digits in
    // front of each fault, so that the equivalent leaves out a long stretch.
    const std::vector<std::string> runs = {std::string(300, 'a'), std::string(100, '\\') + std::string(100, '\\'),
                                           "\\n\\\"\\u00e9\\uD83D\\uDE00", "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"};
    for (const auto& run : runs) {
        for (const char* tail : {"", "\t\"", "\\q\"", "\\u12", "\\uDC00\"", "\\uD800\"", "\xff\"", "\xE2\x82\""}) {
            check_same("\"" + run + run + tail);
            check_same("{\"" + run + tail);
            check_same("[1,{\"x\":\"" + run + tail);
        }
    }
    const std::string digits(500, '7');
    for (const std::string& number :
         std::vector<std::string>{"1" + digits + ".", "1." + digits + "e", "-" + digits + "e+",
                                  digits + "." + digits + "E-", "0." + digits + "x", "1" + digits, "1" + digits + "e4",
                                  "0." + digits + "e999", "-" + digits + "." + digits})
        for (const char* around : {"%", "[%]", "{\"n\":%}", "[1,%,2]"}) {
            std::string text = around;
            text.replace(text.find('%'), 1, number);
            check_same(text);
        }
}

TEST_CASE("J3: random damage to JSON text reads the same with the check", "[J3][J2]") {
    const std::string base =
        R"({"status":"success","data":{"count":2,"result":[{"id":"a\"b","n":-12.5e3,"ok":true,"x":null},)"
        R"({"name":"\u00e9\uD83D\uDE00 caf)"
        "\xC3\xA9"
        R"(","list":[1,2.0,3e1,"\\",[]]}]}})";
    const std::string bytes = std::string("\"\\\t\x01\xff\xC3\xE2\xED\xF0.eE+-0123456789uDdaA{}[],: ") + '\x80';
    std::mt19937 random(20261129);
    for (int round = 0; round < 4000; ++round) {
        std::string text = base;
        const int edits = 1 + static_cast<int>(random() % 3);
        for (int e = 0; e < edits; ++e) {
            const std::size_t at = random() % (text.size() + 1);
            const char c = bytes[random() % bytes.size()];
            switch (random() % 3) {
                case 0: text.insert(at, 1, c); break;
                case 1:
                    if (at < text.size()) text[at] = c;
                    break;
                default:
                    if (at < text.size()) text.erase(at, 1);
                    break;
            }
        }
        check_same(text);
    }
}

TEST_CASE("J2, J3: the check finds a number out of range exactly where nlohmann does", "[J2][J3]") {
    // Around the least value that rounds to infinity, 2^1024 - 2^970
    // (1.797693134862315807937...e308), in every spelling the scan has to
    // bring to one power of ten; threshold 0 puts each through the scan.
    const std::string least =
        "17976931348623158079372897140530341507993413271003782693617377898044496829276475094664901797758720709633"
        "02864166928879109465555478519404026306574886715058206819089020007083836762738548458177115317644757302"
        "700698555713669596228429148198608349364752927190741684443655107043427115596995080930428801779041744977"
        "92";
    std::string below = least;
    below.back() = '1';
    std::vector<std::string> numbers = {least,
                                        below,
                                        least + "0",
                                        least + ".0",
                                        least + ".000001",
                                        below + ".9999",
                                        "1" + least,
                                        "0." + least + "e309",
                                        "0.0" + least + "e310",
                                        least.substr(0, 17) + "e292",
                                        least.substr(0, 16) + "e293",
                                        "1.7976931348623157e308",
                                        "1.7976931348623158e308",
                                        "1.7976931348623159e308",
                                        "1e308",
                                        "1e309",
                                        "10e307",
                                        "0.1e310",
                                        "0.0e999999999999",
                                        "0e400",
                                        "1e-400",
                                        "123e-999999999999999999"};
    for (std::size_t cut = 1; cut < least.size(); cut += 37)
        numbers.push_back(least.substr(0, cut) + "e" + std::to_string(309 - cut));
    for (const auto& n : numbers)
        for (const std::string& text : {n, "-" + n, "[" + n + "]", "{\"n\":" + n + "}"}) check_same(text);
}
