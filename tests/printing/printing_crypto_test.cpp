// B1, P1, P2 for the printable types of keyhook::crypto: a signing key prints
// nothing of its material, and what a receiver read from input is escaped.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "keyhook/crypto/random.hpp"
#include "keyhook/crypto/signed_dispatch.hpp"
#include "keyhook/crypto/signing.hpp"
#include "keyhook/dispatch.hpp"

namespace kc = keyhook::crypto;

namespace {

template <class T>
std::string printed(const T& v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

}  // namespace

TEST_CASE("B1: a signing secret prints, serializes and masks none of its key material", "[B1][M3][printing]") {
    const auto s = kc::generate_signing_secret(kc::openssl_random{});
    const std::string written = s.reveal();
    const std::string base64 = written.substr(6);
    const std::string stars(base64.size(), '*');
    CHECK(printed(s) == "signing_secret(whsec_" + stars + ")");
    CHECK(nlohmann::json(s) == "whsec_" + stars);
    // The same secret held as keyhook::secret (as webhook configurations hold it),
    // and its raw key bytes as keyhook::secret.
    CHECK(printed(s.to_secret()) == "secret(whsec_" + stars + ")");
    CHECK(printed(s.key()) == "secret(" + std::string(keyhook::code_point_count(s.key().reveal()), '*') + ")");
    for (const auto& text : {printed(s), printed(s.to_secret()), printed(s.key()), keyhook::mask_key(written)}) {
        INFO(text);
        // Not a single base64 character of the key, at either end.
        CHECK(text.find(base64.substr(base64.size() - 3)) == std::string::npos);
    }
}

TEST_CASE("P1: a verified webhook's id, read from a header, prints escaped", "[P1][printing]") {
    const kc::verified_webhook v{"msg_1\r\nFORGED\x1b[2J\xE2\x80\xAE",
                                 keyhook::parse_timestamp("2026-01-01T00:00:00Z")};
    const auto text = printed(v);
    CHECK(text == "verified_webhook(msg_1\\x0d\\x0aFORGED\\x1b[2J\\u202e, 2026-01-01T00:00:00.000Z)");
}

// Regression test: printing: text from input printed raw (P1, P2, M3).
TEST_CASE("P2, B1, M3: a signed delivery prints no key, no signing secret and no query value",
          "[P2][B1][M3][printing]") {
    const auto s = kc::generate_signing_secret(kc::openssl_random{});
    keyhook::webhook hook;
    hook.name = "pricing-sync";
    hook.endpoint = "https://hooks.example.com/in?team=data";
    hook.auth = {{keyhook::auth_location::query, "api_key", keyhook::secret("receiver-key-0123456789")}};
    hook.saved = true;
    hook.signing_secret = s.to_secret();
    keyhook::notification event;
    event.user_action = keyhook::event_type::AddProduct;
    event.tenant = "acme";
    const auto now = keyhook::parse_timestamp("2026-03-14T09:26:53.589Z");
    const auto deliveries = kc::dispatch_signed({"acme", true}, {hook}, event, now);
    REQUIRE(deliveries.size() == 1);
    const std::string base64 = s.reveal().substr(6);
    for (const auto& text : {printed(deliveries[0]), printed(deliveries[0].request), printed(hook)}) {
        INFO(text);
        CHECK(text.find("receiver-key-0123456789") == std::string::npos);
        CHECK(text.find(base64.substr(0, 3)) == std::string::npos);
        CHECK(text.find("team=[redacted]") != std::string::npos);
    }
    // The signature headers hold no secret and print (the other side).
    CHECK(printed(deliveries[0]).find("webhook-signature: v1,") != std::string::npos);
}
