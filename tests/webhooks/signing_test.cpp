// Dispatch followed by signing (B1): the delivery id becomes webhook-id and a
// receiver verifies the request as dispatched.
#include "keyhook/crypto/signing.hpp"
#include "keyhook/base64.hpp"
#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/signed_dispatch.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/webhook_validation.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <chrono>
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

TEST_CASE("B1, B3: a webhook is signed with the keys it was validated with", "[B1][B3][dispatch]") {
    const std::string hmac_key(32, 'v');
    const std::array<unsigned char, 32> seed{7, 7, 7};
    const auto ed = kc::try_asymmetric_signing_key_from_seed(seed.data(), seed.size()).value();
    keyhook::webhook w;
    w.name = "both";
    w.endpoint = "https://hooks.example.com/in";
    w.saved = true;
    w.signing_secret = keyhook::secret("whsec_" + keyhook::base64_encode(hmac_key) + " " + ed.reveal(),
                                       keyhook::secret_kind::signing_key);
    const auto validated = keyhook::validate_webhook(w);

    keyhook::notification n;
    n.user_action = keyhook::event_type::AddProduct;
    n.tenant = "acme";
    n.request_time = keyhook::parse_timestamp("2026-03-14T09:26:53.589Z");
    const auto now = n.request_time + std::chrono::seconds(1);
    const auto requests = keyhook::dispatch({"acme", true}, {validated}, n);
    REQUIRE(requests.size() == 1);
    const auto sent = kc::sign_outbound(requests[0], now);
    const auto secret = kc::parse_signing_secret("whsec_" + keyhook::base64_encode(hmac_key));
    CHECK(kc::verify_request(secret, sent, now).id == to_string(requests[0].id()));
    CHECK(kc::try_verify_request(kc::verification_keys{{}, {ed.public_key()}}, sent, now));
    // Another key verifies nothing: the signature is the validated keys' own.
    const auto other = kc::parse_signing_secret("whsec_" + keyhook::base64_encode(std::string(32, 'o')));
    CHECK_FALSE(kc::try_verify_request(other, sent, now));
    // dispatch_signed signs with the same keys.
    const auto deliveries = kc::dispatch_signed({"acme", true}, {validated}, n, now);
    REQUIRE(deliveries.size() == 1);
    CHECK(kc::try_verify_request(secret, deliveries[0].request, now));
}

TEST_CASE("B3: a whsk_ key whose halves do not belong together is refused when signing", "[B3][dispatch]") {
    const std::array<unsigned char, 32> seed{9};
    const auto ed = kc::try_asymmetric_signing_key_from_seed(seed.data(), seed.size()).value();
    std::string raw = keyhook::base64_decode(ed.reveal().substr(5));
    raw[40] = static_cast<char>(raw[40] ^ 1);  // a public half from elsewhere: the core cannot tell
    keyhook::webhook w;
    w.name = "spliced";
    w.endpoint = "https://hooks.example.com/in";
    w.saved = true;
    w.signing_secret = keyhook::secret("whsk_" + keyhook::base64_encode(raw), keyhook::secret_kind::signing_key);
    const auto validated = keyhook::validate_webhook(w);
    keyhook::notification n;
    n.user_action = keyhook::event_type::AddProduct;
    n.tenant = "acme";
    const auto requests = keyhook::dispatch({"acme", true}, {validated}, n);
    REQUIRE(requests.size() == 1);
    const auto signed_one = kc::try_sign_outbound(requests[0], n.request_time);
    REQUIRE_FALSE(signed_one);
    CHECK(signed_one.error().path == "signingSecret");
    CHECK(signed_one.error().message ==
          "webhook \"spliced\": the public half (bytes 33 to 64) is not the public key "
          "of the private half (bytes 1 to 32)");
    const auto all = kc::try_dispatch_signed({"acme", true}, {validated}, n, n.request_time);
    REQUIRE_FALSE(all);
    CHECK(all.error().path == "webhooks[0].signingSecret");
}
