// key_audit --url's handling of what the platform writes back
// (examples/key_audit/fetch.hpp): the bearer token never reaches the output,
// and nothing but the token is blanked (rule O1).
#include <catch2/catch.hpp>

#include <string>

#include "fetch.hpp"
#include "keyhook/escape.hpp"

using key_audit::fetch::without_token;

TEST_CASE("a token is redacted only where the whole of it occurs", "[cli][O1]") {
    SECTION("a short token's characters inside other words are left alone") {
        CHECK(without_token("Could not resolve host: platform.example", "e") ==
              "Could not resolve host: platform.example");
        CHECK(without_token("HTTP 503 from 10.0.0.5", "0") == "HTTP 503 from 10.0.0.5");
    }
    SECTION("the whole token, as a word of its own, is redacted wherever it occurs") {
        CHECK(without_token("bad Bearer e", "e") == "bad Bearer [redacted]");
        CHECK(without_token("token \"e\" refused; e again", "e") == "token \"[redacted]\" refused; [redacted] again");
        const std::string token = "interop-token-0123456789";
        CHECK(without_token("[keyhook.not_success] message: \"bad Bearer " + token + "\"", token) ==
              "[keyhook.not_success] message: \"bad Bearer [redacted]\"");
        CHECK(without_token(token, token) == "[redacted]");
        CHECK(without_token(token + token, token) == token + token);  // not the token: a longer word
    }
    SECTION("a prefix of 8 or more characters that a quote's length limit cut is redacted") {
        const std::string token = "0123456789abcdefghijklmnopqrstuvwxyz";
        const std::string quoted = keyhook::quoted_input("Bearer " + token, 20);
        REQUIRE(quoted.find("0123456789abc\"...") != std::string::npos);
        CHECK(without_token(quoted, token) == "\"Bearer [redacted]\"...");
        // A shorter cut prefix is not: 7 characters say little of a long token.
        CHECK(without_token(keyhook::quoted_input("Bearer " + token, 14), token) == "\"Bearer 0123456\"...");
    }
    SECTION("an error object is printed first") {
        const keyhook::error e{keyhook::errc::not_success, "message", "bad Bearer s3cr3t-token"};
        const auto shown = without_token(e, "s3cr3t-token");
        CHECK(shown.find("s3cr3t") == std::string::npos);
        CHECK(shown.find("[redacted]") != std::string::npos);
    }
}
