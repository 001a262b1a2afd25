#include "keyhook/crypto/asymmetric.hpp"

#include "keyhook/crypto/random.hpp"
#include "keyhook/crypto/signed_dispatch.hpp"

#include "fixtures.hpp"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using keyhook::errc;
using keyhook::http_header;
using keyhook::http_headers;
using keyhook::timestamp;
namespace kc = keyhook::crypto;

namespace {

using crypto_fixtures::kat_body;
using crypto_fixtures::kat_id;
using crypto_fixtures::kat_secret;
using crypto_fixtures::kat_unix;
using crypto_fixtures::unix_time;

std::string from_hex(std::string_view hex) {
    if (hex == "-") return {};
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
    return out;
}

const unsigned char* bytes(const std::string& s) { return reinterpret_cast<const unsigned char*>(s.data()); }

std::string as_string(const kc::ed25519_signature& s) { return {reinterpret_cast<const char*>(s.data()), s.size()}; }

struct rfc8032_vector {
    std::string name, seed, public_key, message, signature;  // raw bytes
};

// tests/crypto/rfc8032_vectors.txt, next to this file.
std::vector<rfc8032_vector> rfc8032_vectors() {
    std::string path = __FILE__;
    path = path.substr(0, path.find_last_of("/\\") + 1) + "rfc8032_vectors.txt";
    std::ifstream in(path);
    REQUIRE(in.good());
    std::vector<rfc8032_vector> out;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        std::string name, seed, pk, msg, sig;
        fields >> name >> seed >> pk >> msg >> sig;
        out.push_back({name, from_hex(seed), from_hex(pk), from_hex(msg), from_hex(sig)});
    }
    return out;
}

// Svix's server test (worker.rs, test_asymmetric_key_signing): this key signs
// the Standard Webhooks reference message into this v1a entry.
constexpr const char* svix_signing_key =
    "whsk_6Xb/dCcHpPea21PS1N9VY/NZW723CEc77N4rJCubMbfVKIDij2HKpMKkioLlX0dRqSKJp4AJ6p9lMicMFs6Kvg==";
constexpr const char* svix_public_key = "whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=";
constexpr const char* svix_v1a_signature =
    "v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==";
constexpr const char* kat_v1_signature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

// A deterministic "random" source: 0, 1, 2, ... (tests only).
struct counting_random {
    unsigned char next = 0;
    void operator()(unsigned char* out, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) out[i] = next++;
    }
};

kc::asymmetric_signing_key key_from_label(unsigned char label) {
    std::array<unsigned char, 32> seed{};
    seed.fill(label);
    return kc::try_asymmetric_signing_key_from_seed(seed.data(), seed.size()).value();
}

http_headers headers_with(std::string signatures, std::int64_t ts = kat_unix, std::string id = kat_id) {
    return {{"webhook-id", std::move(id), false},
            {"webhook-timestamp", std::to_string(ts), false},
            {"webhook-signature", std::move(signatures), false}};
}

std::string whsk_of(const std::string& raw) { return "whsk_" + keyhook::base64_encode(raw); }
std::string whpk_of(const std::string& raw) { return "whpk_" + keyhook::base64_encode(raw); }

}  // namespace

// --- Independent proof -------------------------------------------------------

TEST_CASE("B3: the RFC 8032 section 7.1 Ed25519 vectors pass through keyhook's API", "[B3]") {
    const auto vectors = rfc8032_vectors();
    REQUIRE(vectors.size() == 5);  // TEST 1, 2, 3, 1024, SHA(abc)
    CHECK(vectors[3].message.size() == 1023);
    for (const auto& v : vectors) {
        INFO(v.name);
        const auto key = kc::try_asymmetric_signing_key_from_seed(bytes(v.seed), v.seed.size()).value();
        const auto pk = key.public_key();
        CHECK(std::string(pk.bytes().begin(), pk.bytes().end()) == v.public_key);
        CHECK(as_string(kc::ed25519_sign(key, v.message)) == v.signature);
        CHECK(kc::ed25519_verify(pk, v.message, bytes(v.signature), v.signature.size()));
        // The written forms carry the same bytes both ways.
        CHECK(key.reveal() == whsk_of(v.seed + v.public_key));
        CHECK(kc::parse_asymmetric_signing_key(whsk_of(v.seed + v.public_key)) == key);
        CHECK(kc::parse_public_key(whpk_of(v.public_key)) == pk);
        // The other side of each: one changed bit anywhere is refused.
        std::string message = v.message + "x";
        CHECK_FALSE(kc::ed25519_verify(pk, message, bytes(v.signature), v.signature.size()));
        if (!v.message.empty()) {
            message = v.message;
            message[0] = static_cast<char>(message[0] ^ 0x01);
            CHECK_FALSE(kc::ed25519_verify(pk, message, bytes(v.signature), v.signature.size()));
        }
        std::string sig = v.signature;
        sig[63] = static_cast<char>(sig[63] ^ 0x01);
        CHECK_FALSE(kc::ed25519_verify(pk, v.message, bytes(sig), sig.size()));
        CHECK_FALSE(kc::ed25519_verify(pk, v.message, bytes(v.signature), 63));
    }
}

TEST_CASE("B3: Svix's server signs the reference message as keyhook does", "[B3]") {
    const auto key = kc::parse_asymmetric_signing_key(svix_signing_key);
    CHECK(key.reveal() == svix_signing_key);
    CHECK(key.public_key().to_string() == svix_public_key);
    CHECK(kc::compute_asymmetric_signature(key, kat_id, unix_time(kat_unix), kat_body) == svix_v1a_signature);
    // Ed25519 is deterministic: a second signature is the same.
    CHECK(kc::compute_asymmetric_signature(key, kat_id, unix_time(kat_unix) + 999ms, kat_body) == svix_v1a_signature);
    const auto ok = kc::try_verify_signature(kc::parse_public_key(svix_public_key), headers_with(svix_v1a_signature),
                                             kat_body, unix_time(kat_unix));
    REQUIRE(ok);
    CHECK(ok->id == kat_id);
    CHECK(ok->signed_at == unix_time(kat_unix));
}

// --- Key formats -------------------------------------------------------------

TEST_CASE("B3: whsk_ signing keys: exactly 64 bytes, prefix required, public half checked", "[B3]") {
    const auto vectors = rfc8032_vectors();
    const auto& v = vectors[0];
    const std::string pair = v.seed + v.public_key;
    REQUIRE(kc::try_parse_asymmetric_signing_key(whsk_of(pair)));

    auto refused = [](const std::string& text, errc code) {
        INFO(text);
        const auto r = kc::try_parse_asymmetric_signing_key(text);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == code);
        CHECK(r.error().path == "signing_key");
        // Never quoted, not even in part.
        if (text.size() > 16) CHECK(r.error().message.find(text.substr(text.size() - 10)) == std::string::npos);
    };
    // Length: 64 accepted above; 63, 65 and a bare 32-byte seed refused.
    refused(whsk_of(pair.substr(0, 63)), errc::out_of_range);
    refused(whsk_of(pair + "A"), errc::out_of_range);
    refused(whsk_of(v.seed), errc::out_of_range);
    refused("whsk_", errc::out_of_range);
    // Prefix: required, and another scheme's is named.
    refused(keyhook::base64_encode(pair), errc::invalid_value);
    refused("whsec_" + keyhook::base64_encode(pair), errc::invalid_value);
    refused(whpk_of(pair), errc::invalid_value);
    refused("WHSK_" + keyhook::base64_encode(pair), errc::invalid_value);
    // base64.
    refused("whsk_" + keyhook::base64_encode(pair).substr(0, 85), errc::invalid_value);
    refused("whsk_" + std::string(86, '*') + "==", errc::invalid_value);
    refused(" " + whsk_of(pair), errc::invalid_value);
    // A public half that is not the seed's (Svix's server refuses this key too).
    std::string spliced = pair;
    spliced[40] = static_cast<char>(spliced[40] ^ 0x01);
    refused(whsk_of(spliced), errc::invalid_value);
    refused(whsk_of(v.seed + vectors[1].public_key), errc::invalid_value);
}

TEST_CASE("B3: whpk_ public keys: exactly 32 bytes, prefix required, a signing key refused", "[B3]") {
    const auto vectors = rfc8032_vectors();
    const auto& v = vectors[1];
    const auto pk = kc::try_parse_public_key(whpk_of(v.public_key));
    REQUIRE(pk);
    CHECK(pk->to_string() == whpk_of(v.public_key));

    auto refused = [](const std::string& text, errc code) {
        INFO(text);
        const auto r = kc::try_parse_public_key(text);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == code);
        CHECK(r.error().path == "public_key");
        return r.error().message;
    };
    refused(whpk_of(v.public_key.substr(0, 31)), errc::out_of_range);
    refused(whpk_of(v.public_key + "A"), errc::out_of_range);
    refused("whpk_", errc::out_of_range);
    refused(keyhook::base64_encode(v.public_key), errc::invalid_value);
    refused("whsec_" + keyhook::base64_encode(v.public_key), errc::invalid_value);
    refused("whpk_" + keyhook::base64_encode(v.public_key) + "=", errc::invalid_value);
    // A receiver handed the signing key is told so, and the key is not echoed.
    const std::string leaked = whsk_of(v.seed + v.public_key);
    const auto why = refused(leaked, errc::invalid_value);
    CHECK(why.find("whsk_") != std::string::npos);
    CHECK(why.find(leaked.substr(5, 12)) == std::string::npos);
    // Raw bytes: 32 accepted, other lengths refused.
    CHECK(kc::try_public_key_from_bytes(bytes(v.public_key), 32));
    CHECK_FALSE(kc::try_public_key_from_bytes(bytes(v.public_key), 31));
    CHECK_FALSE(kc::try_asymmetric_signing_key_from_seed(bytes(v.seed), 31));
    CHECK_FALSE(kc::try_asymmetric_signing_key_from_seed(bytes(v.seed + "x"), 33));
}

TEST_CASE("B3: a key pair is generated from the host's random source", "[B3]") {
    counting_random source;
    const auto key = kc::generate_asymmetric_signing_key(source);
    CHECK(source.next == 32);  // exactly one seed drawn
    std::string seed;
    for (int i = 0; i < 32; ++i) seed += static_cast<char>(i);
    const auto same = kc::try_asymmetric_signing_key_from_seed(bytes(seed), seed.size()).value();
    CHECK(key == same);
    CHECK(key.public_key() == same.public_key());
    CHECK(kc::parse_asymmetric_signing_key(key.reveal()) == key);

    const auto a = kc::generate_asymmetric_signing_key(kc::openssl_random{});
    const auto b = kc::generate_asymmetric_signing_key(kc::openssl_random{});
    CHECK(a != b);
    CHECK(a.public_key() != b.public_key());

    auto failing = [](unsigned char*, std::size_t) {
        throw keyhook::exception(keyhook::error{errc::invalid_value, "random", "no entropy"});
    };
    const auto r = kc::try_generate_asymmetric_signing_key(failing);
    REQUIRE_FALSE(r);
    CHECK(r.error().path == "random");
}

TEST_CASE("B3: a signing key prints, converts to JSON and compares without showing itself", "[B3]") {
    const auto key = kc::parse_asymmetric_signing_key(svix_signing_key);
    const std::string b64 = std::string(svix_signing_key).substr(5);
    std::ostringstream os;
    os << key;
    CHECK(os.str() == "asymmetric_signing_key(whsk_" + std::string(88, '*') + ")");
    nlohmann::json j = key;
    CHECK(j == "whsk_" + std::string(88, '*'));
    CHECK(key.masked().find(b64.substr(0, 4)) == std::string::npos);
    // A public key is not a secret: it shows in full.
    std::ostringstream pos;
    pos << key.public_key();
    CHECK(pos.str() == std::string("public_key(") + svix_public_key + ")");
}

// --- Signing and verifying ----------------------------------------------------

TEST_CASE("B3: v1a headers verify with the public key; tampered body and wrong key refused", "[B3]") {
    const auto key = key_from_label(7);
    const auto pk = key.public_key();
    const std::string body = R"({"a":1})";
    const auto h = kc::signature_headers(kc::signing_keys{{}, {key}}, "msg_1", unix_time(1700000000), body);
    REQUIRE(h.size() == 3);
    CHECK(h[2].value.rfind("v1a,", 0) == 0);
    CHECK(h[2].value.size() == 4 + 88);
    CHECK(kc::try_verify_signature(pk, h, body, unix_time(1700000000)));

    const auto tampered = kc::try_verify_signature(pk, h, R"({"a":2})", unix_time(1700000000));
    REQUIRE_FALSE(tampered);
    CHECK(tampered.error().code == errc::invalid_signature);
    CHECK(tampered.error().message == "the v1a signature does not match");

    const auto wrong = kc::try_verify_signature(key_from_label(8).public_key(), h, body, unix_time(1700000000));
    REQUIRE_FALSE(wrong);
    CHECK(wrong.error().code == errc::invalid_signature);

    // The id and the timestamp are signed too.
    auto other_id = h;
    other_id[0].value = "msg_2";
    CHECK_FALSE(kc::try_verify_signature(pk, other_id, body, unix_time(1700000000)));
    auto other_ts = h;
    other_ts[1].value = "1700000001";
    CHECK_FALSE(kc::try_verify_signature(pk, other_ts, body, unix_time(1700000000)));
}

TEST_CASE("B3: the timestamp tolerance applies to v1a as to v1, on both sides of the limit", "[B3][B1]") {
    const auto key = key_from_label(9);
    const kc::verification_keys keys{{}, {key.public_key()}};
    const auto h = kc::signature_headers(kc::signing_keys{{}, {key}}, "msg_t", unix_time(1700000000), "x");
    CHECK(kc::try_verify_signature(keys, h, "x", unix_time(1700000000) + 300s));
    CHECK(kc::try_verify_signature(keys, h, "x", unix_time(1700000000) - 300s));
    const auto stale = kc::try_verify_signature(keys, h, "x", unix_time(1700000000) + 301s);
    REQUIRE_FALSE(stale);
    CHECK(stale.error().code == errc::timestamp_out_of_tolerance);
    const auto future = kc::try_verify_signature(keys, h, "x", unix_time(1700000000) - 301s);
    REQUIRE_FALSE(future);
    CHECK(future.error().code == errc::timestamp_out_of_tolerance);
    CHECK(kc::try_verify_signature(keys, h, "x", unix_time(1700000000) + 10s, 10s));
    CHECK_FALSE(kc::try_verify_signature(keys, h, "x", unix_time(1700000000) + 11s, 10s));
    const auto negative = kc::try_verify_signature(keys, h, "x", unix_time(1700000000), -1s);
    REQUIRE_FALSE(negative);
    CHECK(negative.error().path == "tolerance");
}

TEST_CASE("B3: headers mixing v1 and v1a entries verify with either kind of key", "[B3][B1]") {
    const auto secret = kc::parse_signing_secret(kat_secret);
    const auto key = kc::parse_asymmetric_signing_key(svix_signing_key);
    const auto pk = key.public_key();
    const auto h = kc::signature_headers(kc::signing_keys{{secret}, {key}}, kat_id, unix_time(kat_unix), kat_body);
    // Both entries, v1 first: the reference signatures of each scheme.
    CHECK(h[2].value == std::string(kat_v1_signature) + " " + svix_v1a_signature);

    CHECK(kc::try_verify_signature(kc::verification_keys{{secret}, {}}, h, kat_body, unix_time(kat_unix)));
    CHECK(kc::try_verify_signature(kc::verification_keys{{}, {pk}}, h, kat_body, unix_time(kat_unix)));
    CHECK(kc::try_verify_signature(kc::verification_keys{{secret}, {pk}}, h, kat_body, unix_time(kat_unix)));
    // B1's own verification skips the v1a entry and matches the v1 one.
    CHECK(kc::try_verify_signature(secret, h, kat_body, unix_time(kat_unix)));

    // Entries in any order, and unknown versions, are fine.
    CHECK(kc::try_verify_signature(pk,
                                   headers_with(std::string("v2,abc ") + svix_v1a_signature + " " + kat_v1_signature),
                                   kat_body, unix_time(kat_unix)));
    // A receiver with public keys only finds no v1a entry in a v1-only header.
    const auto v1_only = kc::try_verify_signature(pk, headers_with(kat_v1_signature), kat_body, unix_time(kat_unix));
    REQUIRE_FALSE(v1_only);
    CHECK(v1_only.error().message == "no v1a signature in the header");
    const auto v1a_only = kc::try_verify_signature(kc::verification_keys{{secret}, {}},
                                                   headers_with(svix_v1a_signature), kat_body, unix_time(kat_unix));
    REQUIRE_FALSE(v1a_only);
    CHECK(v1a_only.error().message == "no v1 signature in the header");
    // A v1a entry that looks like the v1 one (or is malformed) never verifies.
    const auto mismatch =
        kc::try_verify_signature(kc::verification_keys{{secret}, {pk}},
                                 headers_with(std::string("v1a,") + std::string(kat_v1_signature).substr(3) +
                                              " v1a,%%% v1a," + std::string(86, 'A') + "=="),
                                 kat_body, unix_time(kat_unix));
    REQUIRE_FALSE(mismatch);
    CHECK(mismatch.error().message == "none of the 3 v1 or v1a signatures matches");
}

TEST_CASE("B3: rotation between the schemes, a sender's step at a time", "[B3]") {
    const auto old_secret = kc::generate_signing_secret(kc::openssl_random{});
    const auto new_key = kc::generate_asymmetric_signing_key(kc::openssl_random{});
    const auto now = unix_time(1700000000);
    auto sign = [&](const kc::signing_keys& keys) { return kc::signature_headers(keys, "msg_r", now, "b"); };
    const kc::verification_keys receiver_before{{old_secret}, {}};
    const kc::verification_keys receiver_during{{old_secret}, {new_key.public_key()}};
    const kc::verification_keys receiver_after{{}, {new_key.public_key()}};

    const auto step1 = sign({{old_secret}, {}});
    const auto step2 = sign({{old_secret}, {new_key}});
    const auto step3 = sign({{}, {new_key}});
    // The receiver first adds the public key, the sender signs with both, then
    // drops the secret, then the receiver drops it: every delivery verifies.
    CHECK(kc::try_verify_signature(receiver_before, step1, "b", now));
    CHECK(kc::try_verify_signature(receiver_during, step1, "b", now));
    CHECK(kc::try_verify_signature(receiver_before, step2, "b", now));
    CHECK(kc::try_verify_signature(receiver_during, step2, "b", now));
    CHECK(kc::try_verify_signature(receiver_after, step2, "b", now));
    CHECK(kc::try_verify_signature(receiver_during, step3, "b", now));
    CHECK(kc::try_verify_signature(receiver_after, step3, "b", now));
    // Out of order, each side refuses: the old receiver cannot check step 3,
    // the new one cannot check step 1.
    CHECK_FALSE(kc::try_verify_signature(receiver_before, step3, "b", now));
    CHECK_FALSE(kc::try_verify_signature(receiver_after, step1, "b", now));
}

TEST_CASE("B3: at most 16 v1a entries are checked; a 17th refuses the header", "[B3]") {
    const auto key = key_from_label(3);
    const auto pk = key.public_key();
    const auto good = kc::compute_asymmetric_signature(key, "msg_m", unix_time(1700000000), "b");
    const std::string junk = "v1a," + keyhook::base64_encode(std::string(64, 'j'));
    std::string sixteen;
    for (int i = 0; i < 15; ++i) sixteen += junk + " ";
    sixteen += good;
    CHECK(kc::try_verify_signature(pk, headers_with(sixteen, 1700000000, "msg_m"), "b", unix_time(1700000000)));
    const auto seventeen = kc::try_verify_signature(pk, headers_with(junk + " " + sixteen, 1700000000, "msg_m"), "b",
                                                    unix_time(1700000000));
    REQUIRE_FALSE(seventeen);
    CHECK(seventeen.error().code == errc::invalid_signature);
    // v1 entries do not count against the v1a limit, nor v1a entries against a
    // receiver without public keys.
    const auto secret = kc::generate_signing_secret(kc::openssl_random{});
    const auto v1 = kc::compute_signature(secret, "msg_m", unix_time(1700000000), "b");
    CHECK(kc::try_verify_signature(kc::verification_keys{{secret}, {}},
                                   headers_with(junk + " " + sixteen + " " + v1, 1700000000, "msg_m"), "b",
                                   unix_time(1700000000)));
}

TEST_CASE("B3: signing needs a key and a plain webhook id; the v1 part keeps B1's checks", "[B3][B1]") {
    const auto key = key_from_label(1);
    const auto none = kc::try_signature_headers(kc::signing_keys{}, "msg_1", unix_time(1), "b");
    REQUIRE_FALSE(none);
    CHECK(none.error().code == errc::missing_member);
    const auto bad_id = kc::try_signature_headers(kc::signing_keys{{}, {key}}, "msg 1", unix_time(1), "b");
    REQUIRE_FALSE(bad_id);
    CHECK(bad_id.error().path == "webhook-id");
    // A short secret verifies (B1) but is not signed with, even beside a v1a key.
    const auto short_secret = kc::parse_signing_secret("whsec_" + keyhook::base64_encode(std::string(18, 's')));
    CHECK_FALSE(kc::try_signature_headers(kc::signing_keys{{short_secret}, {key}}, "msg_1", unix_time(1), "b"));
    // sign_request replaces earlier signature headers.
    keyhook::http_request r;
    r.body = "b";
    r.headers.push_back({"Webhook-Signature", "v1,stale", false});
    const auto signed_request = kc::sign_request(r, kc::signing_keys{{}, {key}}, "msg_1", unix_time(1700000000));
    CHECK(kc::try_verify_request(kc::verification_keys{{}, {key.public_key()}}, signed_request, unix_time(1700000000)));
}

TEST_CASE("B3: a receiver's key list mixes whsec_ secrets and whpk_ public keys", "[B3]") {
    const auto pk = kc::parse_asymmetric_signing_key(svix_signing_key).public_key();
    const auto keys =
        kc::try_parse_verification_keys(std::string(kat_secret) + "  " + svix_public_key + "\n" + kat_secret);
    REQUIRE(keys);
    CHECK(keys->secrets.size() == 2);
    REQUIRE(keys->public_keys.size() == 1);
    CHECK(keys->public_keys[0] == pk);

    const auto leaked = kc::try_parse_verification_keys(std::string(svix_public_key) + " " + svix_signing_key);
    REQUIRE_FALSE(leaked);
    CHECK(leaked.error().path == "signing_keys[1]");
    CHECK(leaked.error().message.find("6Xb/") == std::string::npos);
    const auto bad = kc::try_parse_verification_keys(std::string(kat_secret) + " whsec_%%");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().path == "signing_keys[1]");
    const auto empty = kc::try_parse_verification_keys("  ");
    REQUIRE_FALSE(empty);
    CHECK(empty.error().code == errc::missing_member);
    CHECK_FALSE(kc::try_verify_signature(kc::verification_keys{}, headers_with(svix_v1a_signature), kat_body,
                                         unix_time(kat_unix)));
}

TEST_CASE("B3: a sender's key list mixes whsec_ secrets and whsk_ keys; a whpk_ key cannot sign", "[B3][B1]") {
    const auto keys = kc::try_parse_signing_keys(std::string(kat_secret) + " " + svix_signing_key);
    REQUIRE(keys);
    CHECK(keys->secrets.size() == 1);
    REQUIRE(keys->asymmetric.size() == 1);
    const auto h = kc::signature_headers(*keys, kat_id, unix_time(kat_unix), kat_body);
    CHECK(h[2].value == std::string(kat_v1_signature) + " " + svix_v1a_signature);
    CHECK(kc::try_parse_signing_keys(svix_signing_key));

    auto refused = [](const std::string& text, std::string_view why) {
        INFO(text);
        const auto r = kc::try_parse_signing_keys(text);
        REQUIRE_FALSE(r);
        CHECK(r.error().path == "signingSecret");
        CHECK(r.error().message.find(why) != std::string::npos);
        CHECK(r.error().message.find("6Xb/") == std::string::npos);
    };
    refused(std::string(kat_secret) + " " + svix_public_key, "key 2: a whpk_ public key only verifies");
    refused(std::string(svix_signing_key).substr(0, 80), "not whsk_ + base64");
    refused("whsk_" + keyhook::base64_encode(std::string(63, 'k')), "63 bytes");
    // The core checks the form; crypto also checks the halves belong together.
    std::string spliced = keyhook::base64_decode(std::string(svix_signing_key).substr(5));
    spliced[40] = static_cast<char>(spliced[40] ^ 1);
    CHECK_FALSE(keyhook::detail::check_signing_keys("whsk_" + keyhook::base64_encode(spliced), "w"));
    refused("whsk_" + keyhook::base64_encode(spliced), "public half");
    // B1 still bounds the secrets keyhook signs with.
    refused(std::string(svix_signing_key) + " whsec_" + keyhook::base64_encode(std::string(18, 's')),
            "key 2: the key is 18 bytes");
    refused("  ", "empty");
}

TEST_CASE("B3: a webhook carrying a whsec_ secret and a whsk_ key is signed with both", "[B3][B1][dispatch]") {
    const auto now = keyhook::parse_timestamp("2026-03-14T09:26:53.589Z");
    const auto n = crypto_fixtures::event(now);
    using crypto_fixtures::hook;
    const auto both = std::string(kat_secret) + " " + svix_signing_key;
    const auto deliveries =
        kc::dispatch_signed({"acme", true}, {hook("both", both), hook("ed", svix_signing_key)}, n, now);
    REQUIRE(deliveries.size() == 2);
    const auto pk = kc::parse_public_key(svix_public_key);
    const auto secret = kc::parse_signing_secret(kat_secret);
    for (const auto& d : deliveries) {
        CHECK(d.is_signed);
        CHECK(kc::try_verify_request(kc::verification_keys{{}, {pk}}, d.request, now));
    }
    const auto* sig = keyhook::find_header(deliveries[0].request.headers, "webhook-signature");
    REQUIRE(sig != nullptr);
    CHECK(sig->value.rfind("v1,", 0) == 0);
    CHECK(sig->value.find(" v1a,") != std::string::npos);
    CHECK(kc::try_verify_request(secret, deliveries[0].request, now));
    CHECK_FALSE(kc::try_verify_request(secret, deliveries[1].request, now));

    // Validation refuses, naming the field and never the key: a public key
    // (it cannot sign) and a whsk_ key of the wrong size.
    const auto public_only = keyhook::try_validate_webhooks({hook("pub", svix_public_key)});
    REQUIRE_FALSE(public_only);
    CHECK(public_only.error().path.find("signingSecret") != std::string::npos);
    CHECK(public_only.error().message.find("1SiA") == std::string::npos);
    CHECK_FALSE(
        keyhook::try_validate_webhooks({hook("short", "whsk_" + keyhook::base64_encode(std::string(32, 'k')))}));
    CHECK(keyhook::try_validate_webhooks({hook("ok", both)}));
}
