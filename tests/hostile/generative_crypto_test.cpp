// The generative hostile-input stage over keyhook::crypto's parsers (B1, B3):
// signing secrets, signing and public keys, key lists, and each header of a
// signed request. Key material is a secret: no 8 bytes of it may appear in an
// error or in what is printed.
#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>
#include <string>

#include "generative.hpp"
#include "keyhook/base64.hpp"
#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/signing.hpp"

namespace kc = keyhook::crypto;
using gen::outcome;
using gen::surface;

namespace {

const std::string secret_text = "whsec_" + keyhook::base64_encode(std::string(32, 'K'));
const std::string signing_key =
    "whsk_6Xb/dCcHpPea21PS1N9VY/NZW723CEc77N4rJCubMbfVKIDij2HKpMKkioLlX0dRqSKJp4AJ6p9lMicMFs6Kvg==";
const std::string public_key = "whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=";
const keyhook::timestamp signed_at{std::chrono::seconds{1767225600}};
const std::string body = R"({"FolderName":"Lending","UserAction":"PublishEngine"})";

template <class F>
outcome from(F&& f) {
    const auto r = gen::call(f);
    if (!r) return {r.error(), {}, {}};
    std::ostringstream os;
    if constexpr (keyhook::detail::is_printable<std::decay_t<decltype(*r)>>::value) os << *r;
    return {std::nullopt, os.str(), {}};
}

surface text4(std::string name, std::string sample, std::set<std::string> fields, std::vector<std::string> secrets,
              std::function<outcome(const std::string&)> run) {
    return gen::text_surface(std::move(name), std::move(sample), std::move(fields), std::move(run), std::move(secrets));
}

// A request signed with the secret and the signing key, one header replaced.
outcome verify_with(const std::string& header, const std::string& value) {
    auto keys = kc::try_parse_signing_keys(secret_text + " " + signing_key).value();
    auto headers = kc::signature_headers(keys, "msg_1", signed_at, body);
    for (auto& h : headers)
        if (keyhook::header_name_equal(h.name, header)) h.value = value;
    auto verify = kc::try_parse_verification_keys(secret_text + " " + public_key).value();
    return from([&] { return kc::try_verify_signature(verify, headers, body, signed_at); });
}

std::string header_value(const std::string& header) {
    auto keys = kc::try_parse_signing_keys(secret_text + " " + signing_key).value();
    for (const auto& h : kc::signature_headers(keys, "msg_1", signed_at, body))
        if (keyhook::header_name_equal(h.name, header)) return h.value;
    return {};
}

}  // namespace

TEST_CASE("generative: signing secrets, keys and signed headers", "[hostile][generative][B1][B3][P1][M3]") {
    auto material = gen::windows(secret_text.substr(6));
    for (const auto& w : gen::windows(signing_key.substr(5))) material.push_back(w);
    std::vector<surface> v;
    v.push_back(text4("signing secret (verify)", secret_text, {"signingSecret"}, gen::windows(secret_text.substr(6)),
                      [](const std::string& in) { return from([&] { return kc::try_parse_signing_secret(in); }); }));
    v.push_back(text4("signing secret (sign)", secret_text, {"signingSecret"}, gen::windows(secret_text.substr(6)),
                      [](const std::string& in) {
                          return from([&] { return kc::try_parse_signing_secret(in, kc::signing_key_use::sign); });
                      }));
    v.push_back(
        text4("signing key (whsk_)", signing_key, {"signing_key"}, gen::windows(signing_key.substr(5)),
              [](const std::string& in) { return from([&] { return kc::try_parse_asymmetric_signing_key(in); }); }));
    v.push_back(text4("public key (whpk_)", public_key, {"public_key"}, {},
                      [](const std::string& in) { return from([&] { return kc::try_parse_public_key(in); }); }));
    v.push_back(text4("sender's key list", secret_text + " " + signing_key, {"signingSecret"}, material,
                      [](const std::string& in) { return from([&] { return kc::try_parse_signing_keys(in); }); }));
    v.push_back(text4("receiver's key list", secret_text + " " + public_key, {"signing_keys", "signing_keys[]"},
                      gen::windows(secret_text.substr(6)),
                      [](const std::string& in) { return from([&] { return kc::try_parse_verification_keys(in); }); }));
    for (const std::string header : {"webhook-id", "webhook-timestamp", "webhook-signature"})
        v.push_back(text4(header, header_value(header), {"webhook-id", "webhook-timestamp", "webhook-signature"},
                          material, [header](const std::string& in) { return verify_with(header, in); }));
    for (auto& s : v) s.memory_allowance = std::size_t{2} << 20;  // OpenSSL's contexts
    for (const auto& s : v) {
        const auto st = gen::run_surface(s);
        INFO(s.name);
        CHECK(st.inputs > 0);
        WARN(s.name << ": " << st.inputs << " inputs, " << st.errors << " errors, " << st.accepted << " accepted");
        CHECK(s.run(s.sample).err == std::nullopt);
    }
}
