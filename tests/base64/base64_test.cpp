#include "keyhook/base64.hpp"

#include <catch2/catch.hpp>

#include <string>

using keyhook::base64_decode;
using keyhook::base64_encode;
using keyhook::try_base64_decode;

TEST_CASE("base64: the RFC 4648 test vectors", "[B1][base64]") {
    const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                           {"f", "Zg=="},
                                                           {"fo", "Zm8="},
                                                           {"foo", "Zm9v"},
                                                           {"foob", "Zm9vYg=="},
                                                           {"fooba", "Zm9vYmE="},
                                                           {"foobar", "Zm9vYmFy"}};
    for (const auto& [plain, encoded] : vectors) {
        INFO(plain);
        CHECK(base64_encode(plain) == encoded);
        CHECK(base64_decode(encoded) == plain);
    }
}

TEST_CASE("base64: every byte value round-trips, at every length remainder", "[B1][base64]") {
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    for (std::size_t n : {std::size_t{254}, std::size_t{255}, std::size_t{256}}) {
        const auto bytes = all.substr(0, n);
        const auto text = base64_encode(bytes);
        CHECK(text.size() % 4 == 0);
        CHECK(base64_decode(text) == bytes);
    }
    CHECK(base64_encode(std::string("\xfb\xff", 2)) == "+/8=");
}

TEST_CASE("base64: padding may be left out", "[B1][base64]") {
    CHECK(base64_decode("Zg") == "f");
    CHECK(base64_decode("Zm8") == "fo");
    CHECK(base64_decode("Zm9vYg") == "foob");
}

TEST_CASE("base64: malformed text is refused without quoting it", "[B1][base64]") {
    const std::pair<const char*, const char*> bad[] = {
        {"Zm9v!", "invalid base64 character at offset 4"},
        {"Zm9-", "invalid base64 character at offset 3"},  // URL-safe alphabet
        {"Zm9v Zm9v", "invalid base64 character at offset 4"},
        {"Zg=a", "invalid base64 character at offset 2 (padding before the end)"},
        {"Z===", "invalid base64 character at offset 1 (padding before the end)"},
        {"Zg=", "base64 padding must complete a group of 4 characters"},
        {"Zm9vY", "base64 text has an impossible length"},
        {"Zh==", "base64 text has non-zero bits after its last byte"},  // "Zg==" spelled otherwise
        {"Zm9=", "base64 text has non-zero bits after its last byte"},
    };
    for (const auto& [text, message] : bad) {
        INFO(text);
        const auto r = try_base64_decode(text);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == keyhook::errc::invalid_value);
        CHECK(r.error().path.empty());
        CHECK(r.error().message == message);
        CHECK_THROWS_AS(base64_decode(text), keyhook::exception);
    }
}
