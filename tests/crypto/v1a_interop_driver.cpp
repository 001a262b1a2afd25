// keyhook's side of the v1a cross-check with Node.js (v1a_interop.js, B3).
//
//   keyhook_v1a_interop sign N NOW   prints, as JSON, a fresh whsk_/whpk_ pair and
//                                    N deliveries signed at NOW, then cases that a
//                                    verifier must refuse (tampered body, wrong
//                                    key, stale timestamp)
//   keyhook_v1a_interop verify       reads the same JSON shape from standard input
//                                    (signed elsewhere), verifies every case with
//                                    keyhook and prints the counts; exit 1 when a
//                                    case comes out other than expected
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/random.hpp"

namespace {

namespace kc = keyhook::crypto;
using nlohmann::json;

keyhook::timestamp at(std::int64_t seconds) { return keyhook::timestamp{std::chrono::seconds{seconds}}; }

// A body with JSON, non-ASCII text, and a length that varies with i.
std::string body_of(int i) {
    return R"({"n":)" + std::to_string(i) + R"(,"text":"caf\u00e9 )" +
           std::string(static_cast<std::size_t>(i * 7), 'x') + "\",\"utf8\":\"\xC3\xA9\xE2\x9C\x93\"}";
}

json signed_case(const kc::asymmetric_signing_key& key, const std::string& id, std::int64_t ts, const std::string& body,
                 const char* kind, bool expect) {
    return json{{"id", id},     {"timestamp", std::to_string(ts)},
                {"body", body}, {"signature", kc::compute_asymmetric_signature(key, id, at(ts), body)},
                {"kind", kind}, {"expect", expect}};
}

int sign(int n, std::int64_t now) {
    const auto key = kc::generate_asymmetric_signing_key(kc::openssl_random{});
    const auto other = kc::generate_asymmetric_signing_key(kc::openssl_random{});
    json cases = json::array();
    for (int i = 0; i < n; ++i)
        cases.push_back(signed_case(key, "msg_keyhook_" + std::to_string(i), now - i % 60, body_of(i), "valid", true));
    for (int i = 0; i < 3; ++i) {
        auto tampered = signed_case(key, "msg_tampered_" + std::to_string(i), now, body_of(i), "tampered-body", false);
        tampered["body"] = body_of(i + 1);
        cases.push_back(std::move(tampered));
        cases.push_back(signed_case(other, "msg_wrong_" + std::to_string(i), now, body_of(i), "wrong-key", false));
        cases.push_back(
            signed_case(key, "msg_stale_" + std::to_string(i), now - 301 - i * 1000, body_of(i), "stale", false));
    }
    std::cout << json{{"signing_key", key.reveal()},
                      {"public_key", key.public_key().to_string()},
                      {"now", now},
                      {"cases", std::move(cases)}}
                     .dump()
              << '\n';
    return 0;
}

int verify() {
    const std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    const json in = json::parse(text);
    // The other side's signing key must read as keyhook's, and derive its public key.
    const auto key = kc::try_parse_asymmetric_signing_key(in.at("signing_key").get<std::string>());
    if (!key) {
        std::cerr << "keyhook refused the whsk_ key: " << key.error() << '\n';
        return 1;
    }
    const auto pk = kc::try_parse_public_key(in.at("public_key").get<std::string>());
    if (!pk) {
        std::cerr << "keyhook refused the whpk_ key: " << pk.error() << '\n';
        return 1;
    }
    if (key->public_key() != *pk) {
        std::cerr << "the whsk_ key's public half is not the whpk_ key\n";
        return 1;
    }
    const auto now = at(in.at("now").get<std::int64_t>());
    int accepted = 0, refused = 0, wrong = 0;
    for (const auto& c : in.at("cases")) {
        const keyhook::http_headers headers{{"webhook-id", c.at("id").get<std::string>(), false},
                                            {"webhook-timestamp", c.at("timestamp").get<std::string>(), false},
                                            {"webhook-signature", c.at("signature").get<std::string>(), false}};
        const auto r = kc::try_verify_signature(*pk, headers, c.at("body").get<std::string>(), now);
        (r ? accepted : refused) += 1;
        if (static_cast<bool>(r) != c.at("expect").get<bool>()) {
            ++wrong;
            std::cerr << "case " << c.at("id").get<std::string>() << " (" << c.at("kind").get<std::string>()
                      << "): " << (r ? std::string("accepted") : "refused: " + r.error().message) << '\n';
        }
    }
    std::cout << json{{"accepted", accepted}, {"refused", refused}, {"unexpected", wrong}}.dump() << '\n';
    return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const std::string mode = argc > 1 ? argv[1] : "";
        if (mode == "sign" && argc == 4) return sign(std::atoi(argv[2]), std::atoll(argv[3]));
        if (mode == "verify" && argc == 2) return verify();
        std::cerr << "usage: keyhook_v1a_interop sign N NOW | verify < cases.json\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "keyhook_v1a_interop: " << e.what() << '\n';
        return 1;
    }
}
