#include "keyhook/secret.hpp"

#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "keyhook/http.hpp"
#include "keyhook/key_list.hpp"

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
    SECTION("invalid bytes count one each") {
        const std::string key = std::string("ab\xFF\x80") + "cdefghij";
        CHECK(code_point_count(key) == 12);
        CHECK(mask_key(key) == std::string("ab\xFF") + std::string(6, '*') + "hij");
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
