// A webhook delivery, signed by the sender and verified by the receiver
// (Standard Webhooks, rule B1), with one retry planned by rule B2.
//
// Both sides run in this one process so the example is self-contained; in
// life the sender is the platform and the receiver is the integrator's
// endpoint, and they share only the "whsec_..." text.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "keyhook/crypto/random.hpp"
#include "keyhook/crypto/signed_dispatch.hpp"
#include "keyhook/crypto/signing.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/http.hpp"
#include "keyhook/retry.hpp"
#include "keyhook/timestamps.hpp"
#include "keyhook/webhook.hpp"
#include "shared/cli.hpp"

namespace kc = keyhook::crypto;
using namespace std::chrono_literals;

namespace {

// The receiving side: it knows the secret's text and gets the raw request.
// It answers 204 when the signature holds, else 401 with the reason.
int receive(const std::string& secret_text, const keyhook::http_request& request, keyhook::timestamp now) {
    const auto secret = kc::parse_signing_secret(secret_text);
    const auto verified = kc::try_verify_request(secret, request, now);
    if (!verified) {
        std::cout << "  receiver: 401, " << verified.error() << '\n';
        return 401;
    }
    std::cout << "  receiver: 204, " << *verified << '\n';
    return 204;
}

bool expect(bool ok, const char* what) {
    if (!ok) std::cerr << "unexpected: " << what << '\n';
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    const examples::cli::program program{"signing", "usage: signing [--help] [--version]", ""};
    if (const auto status = examples::cli::parse_no_options(
            program,
            "Signs a webhook delivery as the sender and verifies it as the receiver (Standard Webhooks,\n"
            "rule B1), with one retry planned by rule B2. Exit 1 if a step did not go as documented.",
            argc, argv))
        return *status;

    // Sender, once per webhook: a new secret from OpenSSL's random source,
    // kept in the webhook's configuration. Its text goes to the receiver out
    // of band; it never appears in logs.
    const auto secret = kc::generate_signing_secret(kc::openssl_random{});
    const std::string shared_with_receiver = secret.reveal();
    std::cout << "webhook secret: " << secret << '\n';

    keyhook::webhook hook;
    hook.name = "pricing-sync";
    hook.endpoint = "https://hooks.example.com/keyhook";
    hook.saved = true;
    hook.signing_secret = secret.to_secret();
    const keyhook::tenant_settings tenant{"acme", true};

    // The host's clock, read by the host; keyhook only takes it as `now`.
    const keyhook::timestamp start = keyhook::to_timestamp(std::chrono::system_clock::now());
    keyhook::notification event;
    event.user_action = keyhook::event_type::AddProduct;
    event.folder_name = "Pricing";
    event.tenant = tenant.name;
    event.request_time = start;
    bool ok = true;

    // Attempt 1, at once: dispatch signs each request at the time given. Say
    // the receiver is busy and answers 503 with Retry-After: 120.
    std::vector<keyhook::delivery_attempt> history;
    auto decision = keyhook::plan_next_attempt(history, kc::openssl_random{}, start);
    std::cout << decision << '\n';
    const auto deliveries = kc::dispatch_signed(tenant, {hook}, event, decision.send_at);
    const auto& delivery = deliveries.at(0);
    std::cout << delivery << '\n';
    ok &= expect(receive(shared_with_receiver, delivery.request, decision.send_at) == 204, "attempt 1 refused");
    history.push_back({decision.send_at, keyhook::attempt_outcome::http(503), keyhook::parse_retry_after("120")});

    // The plan: the schedule says 5 s (+ up to 20 %), the server asked for
    // 120 s, which is the longer, so it wins.
    decision = keyhook::plan_next_attempt(history, kc::openssl_random{}, decision.send_at);
    std::cout << decision << '\n';
    ok &= expect(decision.send_at == history.back().sent_at + 120s, "Retry-After not honoured");

    // Attempt 2: the same outbound request signed again with a fresh
    // timestamp; same webhook-id, so the receiver can drop a duplicate.
    const keyhook::timestamp second_at = decision.send_at;
    const auto sent = kc::sign_outbound(delivery.outbound, second_at);
    ok &= expect(receive(shared_with_receiver, sent, second_at + 2s) == 204, "attempt 2 refused");
    history.push_back({second_at, keyhook::attempt_outcome::http(204), std::nullopt});
    decision = keyhook::plan_next_attempt(history, kc::openssl_random{}, second_at);
    std::cout << decision << '\n';
    ok &= expect(decision.what == keyhook::retry_decision::action::succeeded, "not a success");

    // What a receiver refuses: the body changed in transit, and a replay of
    // the signed request ten minutes later.
    std::cout << "tampered body:\n";
    auto tampered = sent;
    tampered.body.replace(tampered.body.find("Pricing"), 7, "Payroll");
    ok &= expect(receive(shared_with_receiver, tampered, second_at) == 401, "tampered body accepted");
    std::cout << "replayed 10 minutes later:\n";
    ok &= expect(receive(shared_with_receiver, sent, second_at + 10min) == 401, "replay accepted");

    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
