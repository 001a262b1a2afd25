// Dispatch followed by signing (B1): the delivery id becomes webhook-id and a
// receiver verifies the request as dispatched.
#include "keyhook/crypto/signing.hpp"
#include "keyhook/base64.hpp"
#include "keyhook/dispatch.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace kc = keyhook::crypto;

TEST_CASE("H8, B1: each dispatched request is signed with its delivery id as webhook-id", "[H8][B1][dispatch]") {
    const std::string key(32, 'k');
    keyhook::webhook signed_hook;
    signed_hook.name = "signed";
    signed_hook.endpoint = "https://hooks.example.com/in";
    signed_hook.saved = true;
    signed_hook.signing_secret = keyhook::secret("whsec_" + keyhook::base64_encode(key));
    keyhook::webhook plain = signed_hook;
    plain.name = "plain";
    plain.signing_secret.reset();

    keyhook::notification n;
    n.user_action = keyhook::event_type::AddProduct;
    n.tenant = "acme";
    n.request_time = keyhook::parse_timestamp("2026-03-14T09:26:53.589Z");
    const auto now = n.request_time + std::chrono::seconds(2);

    const auto requests = keyhook::dispatch({"acme", true}, keyhook::validate_webhooks({signed_hook, plain}), n);
    REQUIRE(requests.size() == 2);
    REQUIRE(requests[0].signing_secret());
    CHECK_FALSE(requests[1].signing_secret());

    const auto secret = kc::parse_signing_secret(*requests[0].signing_secret());
    const std::string id = to_string(requests[0].id());
    const auto sent = kc::sign_request(requests[0].request(), secret, id, now);
    const auto* header = keyhook::find_header(sent.headers, "webhook-id");
    REQUIRE(header);
    CHECK(header->value == id);
    CHECK(kc::verify_request(secret, sent, now).id == id);
    // A retry is signed again, later, with the same id.
    const auto retry = keyhook::dispatch({"acme", true}, keyhook::validate_webhooks({signed_hook, plain}), n);
    CHECK(to_string(retry[0].id()) == id);
    CHECK(kc::verify_request(secret, kc::sign_request(retry[0].request(), secret, id, now + std::chrono::minutes(5)),
                             now + std::chrono::minutes(5))
              .id == id);
}
