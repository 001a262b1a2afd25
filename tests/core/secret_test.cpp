#include "keyhook/secret.hpp"

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/http.hpp"
#include "keyhook/key_list.hpp"
#include "keyhook/key_list_request.hpp"

using keyhook::code_point_count;
using keyhook::constant_time_equal;
using keyhook::mask_key;
using keyhook::secret;

namespace {

// n ASCII characters, each different from its neighbours.
std::string ascii_key(std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += static_cast<char>('a' + i % 26);
    return s;
}

template <class T>
std::string printed(const T& v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

}  // namespace

TEST_CASE("M1: a 36-character UUID key shows 3 + 30 '*' + 3", "[M1][secret]") {
    const std::string key = "3f2b8c1e-7d4a-4e9b-a1c2-5d6e7f8a9b0c";
    REQUIRE(key.size() == 36);
    const auto m = mask_key(key);
    CHECK(m == key.substr(0, 3) + std::string(30, '*') + key.substr(33));
    CHECK(m.size() == key.size());
}

TEST_CASE("M1, M2: 12 characters are partly masked, 11 entirely", "[M1][M2][secret]") {
    const auto k12 = ascii_key(12), k11 = ascii_key(11);
    CHECK(mask_key(k12) == k12.substr(0, 3) + std::string(6, '*') + k12.substr(9));
    CHECK(mask_key(k11) == std::string(11, '*'));
    CHECK(mask_key(ascii_key(13)) == ascii_key(13).substr(0, 3) + std::string(7, '*') + ascii_key(13).substr(10));
    CHECK(mask_key(ascii_key(1)) == "*");
    CHECK(keyhook::min_partly_masked_length == 12);
}

TEST_CASE("M2: an empty key stays empty", "[M2][secret]") {
    CHECK(mask_key("").empty());
    CHECK(secret().masked().empty());
}

TEST_CASE("M1: characters are Unicode code points, not bytes", "[M1][secret]") {
    const std::string e = "\xC3\xA9";              // U+00E9, 2 bytes
    const std::string euro = "\xE2\x82\xAC";       // U+20AC, 3 bytes
    const std::string smile = "\xF0\x9F\x98\x80";  // U+1F600, 4 bytes
    SECTION("12 multi-byte code points: first 3 and last 3 kept whole") {
        std::string key;
        for (int i = 0; i < 4; ++i) key += e + euro + smile;
        REQUIRE(code_point_count(key) == 12);
        CHECK(mask_key(key) == e + euro + smile + std::string(6, '*') + e + euro + smile);
    }
    SECTION("11 multi-byte code points: 11 '*', whatever the byte length") {
        std::string key;
        for (int i = 0; i < 11; ++i) key += smile;
        REQUIRE(key.size() == 44);
        REQUIRE(code_point_count(key) == 11);
        CHECK(mask_key(key) == std::string(11, '*'));
    }
    SECTION("invalid bytes count one each, and are masked even at the ends") {
        const std::string key = std::string("ab\xFF\x80") + "cdefghij";
        CHECK(code_point_count(key) == 12);
        CHECK(mask_key(key) == "ab" + std::string(7, '*') + "hij");
        // A truncated sequence at the end counts byte by byte as well.
        CHECK(code_point_count("abc\xE2\x82") == 5);
    }
}

TEST_CASE("M3: a secret prints and serializes only its masked form", "[M3][secret]") {
    const std::string plain = "3f2b8c1e-7d4a-4e9b-a1c2-5d6e7f8a9b0c";
    const secret s(plain);
    CHECK(s.reveal() == plain);
    CHECK(s.masked() == mask_key(plain));
    const auto text = printed(s);
    CHECK(text == "secret(" + mask_key(plain) + ")");
    CHECK(text.find(plain) == std::string::npos);
    CHECK(text.find(plain.substr(3, 30)) == std::string::npos);

    nlohmann::json j = s;
    CHECK(j == mask_key(plain));
    CHECK(j.dump().find(plain) == std::string::npos);
    nlohmann::ordered_json oj = s;
    CHECK(oj == mask_key(plain));

    nlohmann::json wrapper = {{"token", s}};
    CHECK(wrapper.dump().find(plain) == std::string::npos);
}

TEST_CASE("M2, M3: a short secret prints no character of itself", "[M2][M3][secret]") {
    const secret s("short-key1");
    CHECK(printed(s) == "secret(" + std::string(10, '*') + ")");
}

TEST_CASE("M3: credentials stay out of request text and errors", "[M3][secret][L1]") {
    const std::string token = "eyJhbGciOiJSUzI1NiJ9.payload-part.signature-part";
    keyhook::key_list_query q;
    q.base_url = "https://utilities.example.com";
    q.tenant = "acme";
    q.token = secret(token);
    CHECK(printed(q).find(token) == std::string::npos);
    const auto r = keyhook::list_keys_request(q);
    CHECK(printed(r).find(token) == std::string::npos);
    CHECK(printed(r).find("[redacted]") != std::string::npos);

    q.token = secret(token + "\r\nX-Injected: 1");
    const auto bad = keyhook::try_list_keys_request(q);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().what().find(token) == std::string::npos);
    CHECK(printed(bad.error()).find(token) == std::string::npos);
}

TEST_CASE("M3: secrets compare in constant time and by content", "[M3][secret]") {
    CHECK(constant_time_equal("", ""));
    CHECK(constant_time_equal("abc", "abc"));
    CHECK_FALSE(constant_time_equal("abc", "abd"));
    CHECK_FALSE(constant_time_equal("abc", "xbc"));
    CHECK_FALSE(constant_time_equal("abc", "ab"));
    CHECK_FALSE(constant_time_equal("ab", "abc"));
    CHECK_FALSE(constant_time_equal("", "a"));
    // Bytes past the shorter input must still make a difference.
    CHECK_FALSE(constant_time_equal(std::string("ab\0", 3), "ab"));
    CHECK(secret("k1") == secret("k1"));
    CHECK(secret("k1") != secret("k2"));
    CHECK(secret() == secret(""));
}

namespace {

// Every class of ill-formed UTF-8 (Unicode table 3-7 and RFC 3629).
struct invalid_sequence {
    const char* what;
    std::string bytes;
};

std::vector<invalid_sequence> invalid_sequences() {
    return {
        {"overlong 2-byte form (C0 lead)", "\xC0\xAF"},
        {"overlong 2-byte form (C1 lead)", "\xC1\xBF"},
        {"overlong 3-byte form", "\xE0\x80\xAF"},
        {"overlong 4-byte form", "\xF0\x80\x80\xAF"},
        {"surrogate U+D800", "\xED\xA0\x80"},
        {"surrogate U+DFFF", "\xED\xBF\xBF"},
        {"past U+10FFFF (F4 90)", "\xF4\x90\x80\x80"},
        {"F5 lead", "\xF5\x80\x80\x80"},
        {"F7 lead", "\xF7\xBF\xBF\xBF"},
        {"F8 lead (5-byte form)", "\xF8\x88\x80\x80\x80"},
        {"FC lead (6-byte form)", "\xFC\x84\x80\x80\x80\x80"},
        {"FE", "\xFE"},
        {"FF", "\xFF"},
        {"stray continuation bytes", "\x80\xBF"},
        {"truncated 3-byte sequence", "\xE2\x82"},
        {"truncated 4-byte sequence", "\xF0\x9F\x98"},
        {"lead followed by ASCII",
         "\xE2"
         "A"},
    };
}

// Characters of s that mask_key left visible (not '*').
std::size_t visible_characters(const std::string& masked) {
    std::size_t n = 0;
    for (char c : masked) n += c != '*';
    return n;
}

}  // namespace

// Regression test: masking: mask_key showed bytes of ill-formed UTF-8 (M1, M2).
TEST_CASE("M1, M3: each byte of an ill-formed UTF-8 sequence counts as one character and is masked",
          "[M1][M2][M3][secret]") {
    for (const auto& seq : invalid_sequences()) {
        INFO(seq.what);
        const std::string key = seq.bytes + "abcdefghijkl" + seq.bytes;
        const auto m = mask_key(key);
        // One character per byte of each ill-formed sequence.
        CHECK(code_point_count(seq.bytes) == seq.bytes.size());
        CHECK(code_point_count(key) == key.size());
        CHECK(code_point_count(m) == code_point_count(key));
        // No byte of the ill-formed sequences shows; at most 3 characters at each end.
        CHECK(m.size() == key.size());
        for (char c : m) CHECK(static_cast<unsigned char>(c) < 0x80);
        CHECK(visible_characters(m.substr(0, 3)) <= 3);
        CHECK(visible_characters(m) <= 6);
        // Masking is idempotent (P2).
        CHECK(mask_key(m) == m);
    }
    // The example that showed it: an overlong 4-byte form at each end showed 4 + 2 bytes
    // at the head and at the tail; now none shows.
    const std::string overlong = "\xF0\x80\x80\xAF";
    CHECK(mask_key(overlong + "abcdefghijkl" + overlong) == std::string(20, '*'));
    // One invalid byte at the head: it is the first character and is masked.
    CHECK(mask_key("\xFF"
                   "abcdefghijkl") == "*ab" + std::string(7, '*') + "jkl");
}

// Regression test: masking: mask_key showed bytes of ill-formed UTF-8 (M1, M2).
TEST_CASE("M1: well-formed multi-byte characters at the ends stay whole (the other side)", "[M1][secret]") {
    const std::string smile = "\xF0\x9F\x98\x80";  // U+1F600, the largest form
    const std::string key = smile + smile + smile + "abcdef" + smile + smile + smile;
    CHECK(code_point_count(key) == 12);
    CHECK(mask_key(key) == smile + smile + smile + std::string(6, '*') + smile + smile + smile);
    // U+10FFFF, the last code point, is well-formed: shown whole at the head.
    const std::string last = "\xF4\x8F\xBF\xBF";
    CHECK(mask_key(last + "abcdefghijkl").substr(0, last.size()) == last);
}

TEST_CASE("M1, M2: masking a masked value changes nothing", "[M1][M2][P2][secret]") {
    for (const std::string key : {"3f2b8c1e-7d4a-4e9b-a1c2-5d6e7f8a9b0c", "short-key1", "", "abcdefghijkl",
                                  "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80-0123456789-\xC3\xA9\xE2\x82\xAC"}) {
        INFO(key);
        const auto once = mask_key(key);
        CHECK(mask_key(once) == once);
    }
}

// Regression test: masking: mask_key showed bytes of ill-formed UTF-8 (M1, M2).
TEST_CASE("B1, M3: a signing secret held as keyhook::secret prints none of its key", "[B1][B3][M3][secret]") {
    // Svix's documented example secret (18 key bytes).
    const std::string written = "whsec_plJ3nmyCDGBKInavdOK15jsl";
    const std::string base64 = written.substr(6);
    const secret s(written);
    CHECK(s.kind() == keyhook::secret_kind::signing_key);
    CHECK(s.masked() == "whsec_" + std::string(base64.size(), '*'));
    CHECK(printed(s) == "secret(whsec_" + std::string(base64.size(), '*') + ")");
    nlohmann::json j = s;
    CHECK(j == "whsec_" + std::string(base64.size(), '*'));
    // Not even three base64 characters at either end (B1).
    for (const auto& text : {printed(s), j.dump(), mask_key(written)}) {
        CHECK(text.find(base64.substr(0, 3)) == std::string::npos);
        CHECK(text.find(base64.substr(base64.size() - 3)) == std::string::npos);
    }
    // The asymmetric forms of B3 likewise.
    CHECK(mask_key("whsk_MC4CAQAwBQYDK2VwBCIEIA") == "whsk_" + std::string(22, '*'));
    CHECK(mask_key("whpk_MCowBQYDK2VwAyEA") == "whpk_" + std::string(16, '*'));
    // A bare base64 signing key is marked by its kind: every character '*'.
    const secret bare(base64, keyhook::secret_kind::signing_key);
    CHECK(bare.kind() == keyhook::secret_kind::signing_key);
    CHECK(printed(bare) == "secret(" + std::string(base64.size(), '*') + ")");
}

TEST_CASE("B1: an API key keeps M1 (the other side of the signing-key boundary)", "[B1][M1][secret]") {
    const std::string key = "3f2b8c1e-7d4a-4e9b-a1c2-5d6e7f8a9b0c";
    CHECK(secret(key).kind() == keyhook::secret_kind::api_key);
    CHECK(printed(secret(key)) == "secret(3f2" + std::string(30, '*') + "b0c)");
    // Only the exact prefixes mark a signing key.
    CHECK(mask_key("whsecXplJ3nmyCDGBKInavdOK15jsl") == "whs" + std::string(24, '*') + "jsl");
    CHECK(mask_key("WHSEC_plJ3nmyCDGBKInavdOK15jsl") == "WHS" + std::string(24, '*') + "jsl");
}

TEST_CASE("P1: a secret's visible characters are escaped when printed", "[P1][M1][secret]") {
    const secret s(
        "\x1b[2J"
        "abcdefghij"
        "\xE2\x80\xAE"
        "yz");  // ESC [ 2 J ... U+202E y z
    const auto text = printed(s);
    CHECK(text == "secret(\\x1b[2" + std::string(11, '*') + "\\u202eyz)");
    CHECK(text.find('\x1b') == std::string::npos);
}
