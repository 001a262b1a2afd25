// keyhook's side of the K11 cross-check with Node.js (digest_interop.js).
//
// Reads one JSON object from standard input:
//   {"peppers": [{"id": "...", "base64": "..."}...],   the first is current
//    "compute": ["key", ...],                           keys to digest
//    "verify":  [{"key": "...", "stored": "...", "expect": true|false}, ...]}
// and prints {"computed": [kh1 digests], "verified": [{"matched", "rehash"}]}.
// Exit status 1 when a verification comes out other than expected or an
// input is refused.
#include <iostream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "keyhook/base64.hpp"
#include "keyhook/crypto/stored_key.hpp"

int main() {
    namespace kc = keyhook::crypto;
    using nlohmann::json;
    const std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    const json in = json::parse(input);
    kc::pepper_set peppers;
    for (const auto& p : in.at("peppers")) {
        const auto added = peppers.try_add(p.at("id").get<std::string>(),
                                           keyhook::secret(keyhook::base64_decode(p.at("base64").get<std::string>())));
        if (!added) {
            std::cerr << added.error() << '\n';
            return 1;
        }
    }
    json out{{"computed", json::array()}, {"verified", json::array()}};
    for (const auto& k : in.value("compute", json::array()))
        out["computed"].push_back(kc::try_compute_stored_digest(peppers, keyhook::secret(k.get<std::string>()))
                                      .value()
                                      .try_store_form()
                                      .value());
    int wrong = 0;
    for (const auto& c : in.value("verify", json::array())) {
        const auto stored = kc::try_parse_stored_digest(c.at("stored").get<std::string>());
        if (!stored) {
            std::cerr << stored.error() << '\n';
            return 1;
        }
        const auto m = kc::try_verify_stored_key(peppers, c.at("key").get<std::string>(), *stored).value();
        if (m.matched != c.at("expect").get<bool>()) ++wrong;
        out["verified"].push_back(
            {{"matched", m.matched}, {"rehash", m.rehash ? json(m.rehash->try_store_form().value()) : json(nullptr)}});
    }
    std::cout << out.dump() << '\n';
    return wrong == 0 ? 0 : 1;
}
