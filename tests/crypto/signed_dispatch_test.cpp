#include "keyhook/crypto/signed_dispatch.hpp"

#include "fixtures.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using keyhook::errc;
using keyhook::event_type;
using keyhook::find_header;
using keyhook::notification;
using keyhook::secret;
using keyhook::tenant_settings;
using keyhook::timestamp;
using keyhook::webhook;
namespace kc = keyhook::crypto;

namespace {

const tenant_settings acme{"acme", true};
const timestamp sent_now = keyhook::parse_timestamp("2026-03-14T09:26:53.589Z");

// A fixed 32-byte secret, written both ways.
const std::string secret_b64 = keyhook::base64_encode(std::string(32, '\x5c'));
const std::string secret_text = "whsec_" + secret_b64;

notification event() { return crypto_fixtures::event(sent_now); }

webhook hook(std::string name, std::optional<std::string> signing = std::nullopt) {
    webhook w = crypto_fixtures::hook(std::move(name), std::move(signing));
    w.auth.push_back({keyhook::auth_location::header, "x-api-key", secret("receiver-key-0123456789")});
    return w;
}

}  // namespace

TEST_CASE("B1: a webhook with a signing secret gets the three headers", "[B1][H8][signing][dispatch]") {
    const auto deliveries = kc::dispatch_signed(acme, {hook("signed", secret_text), hook("plain")}, event(), sent_now);
    REQUIRE(deliveries.size() == 2);

    const auto& d = deliveries[0];
    CHECK(d.is_signed);
    CHECK(d.outbound.webhook_name() == "signed");
    CHECK(find_header(d.request.headers, "webhook-id")->value == to_string(d.outbound.id()));
    CHECK(find_header(d.request.headers, "webhook-timestamp")->value ==
          std::to_string(std::chrono::floor<std::chrono::seconds>(sent_now).time_since_epoch().count()));
    // Everything dispatch made is kept: method, URL, body, its headers.
    const auto plain = d.outbound.request();
    CHECK(d.request.method == plain.method);
    CHECK(d.request.url == plain.url);
    CHECK(d.request.body == plain.body);
    CHECK(d.request.headers.size() == plain.headers.size() + 3);
    for (const auto& h : plain.headers) CHECK(*find_header(d.request.headers, h.name) == h);

    // The receiver, holding the same secret, verifies it.
    const auto v = kc::verify_request(kc::parse_signing_secret(secret_text), d.request, sent_now);
    CHECK(v.id == to_string(d.outbound.id()));
    CHECK_FALSE(kc::try_verify_request(kc::parse_signing_secret(secret_text), d.request, sent_now + 5min + 1s));

    // No secret, no signature (B1 policy).
    CHECK_FALSE(deliveries[1].is_signed);
    CHECK(deliveries[1].request == deliveries[1].outbound.request());
    CHECK(find_header(deliveries[1].request.headers, "webhook-signature") == nullptr);
}

TEST_CASE("B1: a retry keeps the webhook-id and is signed at its own time", "[B1][H8][B2][signing][dispatch]") {
    const auto first = kc::dispatch_signed(acme, {hook("signed", secret_text)}, event(), sent_now).at(0);
    const timestamp later = sent_now + 30min;
    const auto retry = kc::sign_outbound(first.outbound, later);
    CHECK(find_header(retry.headers, "webhook-id")->value == find_header(first.request.headers, "webhook-id")->value);
    CHECK(find_header(retry.headers, "webhook-timestamp")->value !=
          find_header(first.request.headers, "webhook-timestamp")->value);
    const auto s = kc::parse_signing_secret(secret_text);
    CHECK(kc::try_verify_request(s, retry, later).has_value());
    CHECK_FALSE(kc::try_verify_request(s, first.request, later).has_value());  // the old signature is stale
    // An explicit secret overrides the configuration.
    const auto other = kc::parse_signing_secret(keyhook::base64_encode(std::string(24, 'k')));
    const auto by_other = kc::sign_outbound(first.outbound, other, later);
    CHECK(kc::try_verify_request(other, by_other, later).has_value());
    CHECK_FALSE(kc::try_verify_request(s, by_other, later).has_value());
}

TEST_CASE("B1: a configured secret may leave out whsec_", "[B1][signing][dispatch]") {
    const auto d = kc::dispatch_signed(acme, {hook("bare", secret_b64)}, event(), sent_now).at(0);
    CHECK(d.is_signed);
    CHECK(kc::try_verify_request(kc::parse_signing_secret(secret_text), d.request, sent_now).has_value());
}

TEST_CASE("B1: a malformed configured secret is refused when validated, naming the webhook",
          "[B1][signing][dispatch]") {
    const std::vector<webhook> hooks{hook("fine", secret_text), hook("broken", "whsec_c2hvcnQ=")};
    const auto r = kc::try_dispatch_signed(acme, hooks, event(), sent_now);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::out_of_range);
    CHECK(r.error().path == "webhooks[1].signingSecret");
    CHECK(r.error().what().find("c2hvcnQ") == std::string::npos);  // the secret is not quoted
    CHECK_THROWS_AS(kc::dispatch_signed(acme, hooks, event(), sent_now), keyhook::exception);
    // Core validation refuses it too, so a validated webhook always signs.
    CHECK_FALSE(keyhook::try_validate_webhook(hooks[1]).has_value());
    CHECK(keyhook::try_validate_webhook(hooks[0]).has_value());
}

TEST_CASE("B1: signed dispatch follows dispatch: nothing when the switch is off", "[B1][H4][signing][dispatch]") {
    const tenant_settings off{"acme", false};
    CHECK(kc::dispatch_signed(off, {hook("signed", secret_text)}, event(), sent_now).empty());
    const auto validated = keyhook::validate_webhooks({hook("a", secret_text), hook("b")});
    CHECK(kc::dispatch_signed(acme, validated, event(), sent_now).size() == 2);
}

// Host-built values: signed dispatch refuses what dispatch refuses.
TEST_CASE("H12: signed dispatch refuses validated webhooks that repeat a name", "[H12][B1][dispatch]") {
    const std::vector<keyhook::validated_webhook> twice{keyhook::validate_webhook(hook("crm", secret_text)),
                                                        keyhook::validate_webhook(hook("crm"))};
    const auto r = kc::try_dispatch_signed(acme, twice, event(), sent_now);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::invalid_name);
    CHECK(r.error().path == "webhooks[1].name");
}

TEST_CASE("B1: a signed delivery prints no secret", "[B1][M3][signing][dispatch]") {
    const auto d = kc::dispatch_signed(acme, {hook("signed", secret_text)}, event(), sent_now).at(0);
    std::ostringstream os;
    os << d;
    const auto text = os.str();
    CHECK(text.find(secret_b64) == std::string::npos);
    CHECK(text.find("receiver-key-0123456789") == std::string::npos);
    CHECK(text.find(find_header(d.request.headers, "webhook-signature")->value) != std::string::npos);
    CHECK(text.find(to_string(d.outbound.id())) != std::string::npos);
}
