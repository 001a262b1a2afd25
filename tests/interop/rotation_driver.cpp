// B5 interop driver: signs deliveries with a rotated key set and prints, as
// JSON, what rotation_interop.js checks with the npm standardwebhooks package
// (v1) and Node's built-in Ed25519 (v1a). Test keys only, made for this run.
//   rotation_driver <unix seconds now>
#include "keyhook/crypto/key_rotation.hpp"
#include "keyhook/crypto/random.hpp"
#include "keyhook/dispatch.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

namespace kc = keyhook::crypto;
using namespace std::chrono_literals;

namespace {

nlohmann::json delivery(kc::signing_key_set set, const keyhook::outbound_request& out, keyhook::timestamp now) {
    const auto signed_request = set.try_sign_outbound(out, now).value();
    nlohmann::json j = {{"body", signed_request.body}};
    for (const auto* name : {"webhook-id", "webhook-timestamp", "webhook-signature"})
        j[name] = keyhook::find_header(signed_request.headers, name)->value;
    return j;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: rotation_driver <unix seconds now>\n";
        return 2;
    }
    const keyhook::timestamp now{std::chrono::seconds{std::strtoll(argv[1], nullptr, 10)}};
    const kc::openssl_random random;
    const auto old_secret = kc::generate_signing_secret(random);
    const auto new_secret = kc::generate_signing_secret(random);
    const auto old_ed = kc::generate_asymmetric_signing_key(random);
    const auto new_ed = kc::generate_asymmetric_signing_key(random);

    keyhook::webhook w;
    w.name = "crm-sync";
    w.endpoint = "https://hooks.example.com/in";
    w.saved = true;
    keyhook::notification n;
    n.tenant = "acme";
    n.user_action = keyhook::event_type::AddProduct;
    n.folder_name = "Loans";
    n.request_time = now;
    const auto out = keyhook::dispatch({"acme", true}, keyhook::validate_webhooks({w}), n).at(0);

    // Rotated (both schemes) at `rotated`, with the default grace of 24 h.
    const auto rotated_set = [&](keyhook::timestamp rotated) {
        auto set = kc::signing_key_set::make(old_secret);
        set.rotate(old_ed, rotated);
        set.rotate(new_secret, rotated);
        set.rotate(new_ed, rotated);
        return set;
    };
    const nlohmann::json j = {
        {"old_secret", old_secret.reveal()},
        {"new_secret", new_secret.reveal()},
        {"old_public", old_ed.public_key().to_string()},
        {"new_public", new_ed.public_key().to_string()},
        {"during", delivery(rotated_set(now - 24h + 1s), out, now)},  // one second of grace left
        {"after", delivery(rotated_set(now - 24h), out, now)},        // the grace just ended
    };
    std::cout << j.dump() << '\n';
    return 0;
}
