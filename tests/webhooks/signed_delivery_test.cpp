// B6: a stored delivery (id and body, no signed request) is signed at each
// attempt with the keys its webhook has then.
#include "keyhook/base64.hpp"
#include "keyhook/crypto/signed_dispatch.hpp"
#include "keyhook/crypto/signing.hpp"
#include "keyhook/delivery_state.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/webhook_validation.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

namespace kc = keyhook::crypto;

TEST_CASE("B6: a stored delivery is signed as dispatch's request, with the webhook's keys at the attempt", "[B6][B1]") {
    keyhook::webhook hook;
    hook.name = "orders";
    hook.endpoint = "https://hooks.example.com/in";
    hook.saved = true;
    hook.signing_secret = keyhook::secret("whsec_" + keyhook::base64_encode(std::string(32, 'a')));
    keyhook::notification n;
    n.user_action = keyhook::event_type::AddProduct;
    n.tenant = "acme";
    n.request_time = keyhook::parse_timestamp("2026-03-14T09:26:53.589Z");
    const auto now = n.request_time + std::chrono::seconds(2);

    const auto validated = keyhook::validate_webhooks({hook});
    const auto requests = keyhook::dispatch({"acme", true}, validated, n);
    REQUIRE(requests.size() == 1);
    const auto state = keyhook::parse_delivery_state(
        keyhook::write_delivery_state(keyhook::make_delivery_state(requests[0], n.request_time)));

    const auto stored = kc::try_sign_delivery(validated[0], state.id, state.body, now);
    REQUIRE(stored);
    CHECK(*stored == kc::sign_outbound(requests[0], now));

    // The key rotated after enqueueing: the attempt verifies with the new key only.
    keyhook::webhook rotated = hook;
    const std::string new_key(32, 'b');
    rotated.signing_secret = keyhook::secret("whsec_" + keyhook::base64_encode(new_key));
    const auto again = kc::try_sign_delivery(keyhook::validate_webhooks({rotated})[0], state.id, state.body, now);
    REQUIRE(again);
    const auto new_secret = kc::parse_signing_secret(*rotated.signing_secret);
    const auto old_secret = kc::parse_signing_secret(*hook.signing_secret);
    CHECK(kc::try_verify_signature(new_secret, again->headers, again->body, now));
    CHECK_FALSE(kc::try_verify_signature(old_secret, again->headers, again->body, now));

    // Unsigned webhook: the plain request.
    keyhook::webhook plain = hook;
    plain.signing_secret.reset();
    const auto unsigned_request =
        kc::try_sign_delivery(keyhook::validate_webhooks({plain})[0], state.id, state.body, now);
    REQUIRE(unsigned_request);
    CHECK(unsigned_request->body == state.body);
    CHECK(keyhook::find_header(unsigned_request->headers, "webhook-signature") == nullptr);
}
