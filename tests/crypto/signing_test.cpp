#include "keyhook/crypto/signing.hpp"

#include "keyhook/crypto/random.hpp"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>
#include "fixtures.hpp"

using namespace std::chrono_literals;
using keyhook::errc;
using keyhook::http_header;
using keyhook::http_headers;
using keyhook::http_request;
using keyhook::timestamp;

namespace kc = keyhook::crypto;

namespace {

// The Standard Webhooks reference test vector: crypto_fixtures.
using crypto_fixtures::kat_body;
using crypto_fixtures::kat_id;
using crypto_fixtures::kat_secret;
using crypto_fixtures::kat_unix;
using crypto_fixtures::unix_time;
constexpr const char* kat_signature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

http_headers kat_headers(std::string id = kat_id, std::string ts = std::to_string(kat_unix),
                         std::string sig = kat_signature) {
    return {{"webhook-id", std::move(id), false},
            {"webhook-timestamp", std::move(ts), false},
            {"webhook-signature", std::move(sig), false}};
}

// A deterministic stand-in for a random source: 0, 1, 2, ...
struct counting_source {
    unsigned char next = 0;
    void operator()(unsigned char* out, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) out[i] = next++;
    }
};

std::string counting_bytes(std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += static_cast<char>(static_cast<unsigned char>(i));
    return s;
}

}  // namespace

static_assert(!std::is_constructible_v<kc::signing_secret, std::string>, "a signing secret is not a string");
static_assert(!std::is_convertible_v<kc::signing_secret, std::string>, "nor does it turn into one");

TEST_CASE("B1: the Standard Webhooks known answer is reproduced", "[B1][signing][kat]") {
    const auto s = kc::parse_signing_secret(kat_secret);
    CHECK(s.key_size() == 24);
    CHECK(kc::compute_signature(s, kat_id, unix_time(kat_unix), kat_body) == kat_signature);

    const auto headers = kc::signature_headers(s, kat_id, unix_time(kat_unix), kat_body);
    CHECK(headers == kat_headers());

    const auto v = kc::verify_signature(s, kat_headers(), kat_body, unix_time(kat_unix));
    CHECK(v.id == kat_id);
    CHECK(v.signed_at == unix_time(kat_unix));
}

TEST_CASE("B1: the secret works with or without the whsec_ prefix", "[B1][signing][kat]") {
    const std::string bare = std::string(kat_secret).substr(6);
    const auto with = kc::parse_signing_secret(kat_secret);
    const auto without = kc::parse_signing_secret(bare);
    CHECK(with == without);
    CHECK(without.reveal() == kat_secret);
    CHECK(kc::compute_signature(without, kat_id, unix_time(kat_unix), kat_body) == kat_signature);
    CHECK(kc::try_verify_signature(without, kat_headers(), kat_body, unix_time(kat_unix)).has_value());
    // From the keyhook::secret a webhook configuration holds.
    CHECK(kc::parse_signing_secret(keyhook::secret(bare)) == with);
    CHECK(with.to_secret().reveal() == kat_secret);
}

TEST_CASE("B1: the signed timestamp is written in whole seconds, rounded down", "[B1][signing]") {
    const auto s = kc::parse_signing_secret(kat_secret);
    const timestamp late_in_second = unix_time(kat_unix) + 999999us;
    CHECK(kc::compute_signature(s, kat_id, late_in_second, kat_body) == kat_signature);
    const auto headers = kc::signature_headers(s, kat_id, late_in_second, kat_body);
    CHECK(keyhook::find_header(headers, "webhook-timestamp")->value == std::to_string(kat_unix));
    CHECK(kc::compute_signature(s, kat_id, unix_time(kat_unix + 1), kat_body) != kat_signature);
}

TEST_CASE("B1: each altered input is refused", "[B1][signing][kat]") {
    const auto s = kc::parse_signing_secret(kat_secret);
    const auto now = unix_time(kat_unix);
    auto refused = [&](const keyhook::result<kc::verified_webhook>& r) {
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::invalid_signature);
        CHECK(r.error().path == "webhook-signature");
        CHECK(r.error().message == "the v1 signature does not match");
    };
    SECTION("id") { refused(kc::try_verify_signature(s, kat_headers("msg_p5jXN8AQM9LWM0D4loKWxJel"), kat_body, now)); }
    SECTION("timestamp, even inside the tolerance") {
        refused(kc::try_verify_signature(s, kat_headers(kat_id, std::to_string(kat_unix + 1)), kat_body, now));
    }
    SECTION("body: one byte, a trailing newline, re-serialized JSON") {
        refused(kc::try_verify_signature(s, kat_headers(), R"({"test": 2432232315})", now));
        refused(kc::try_verify_signature(s, kat_headers(), std::string(kat_body) + "\n", now));
        refused(kc::try_verify_signature(s, kat_headers(), R"({"test":2432232314})", now));
        refused(kc::try_verify_signature(s, kat_headers(), "", now));
    }
    SECTION("secret") {
        // The KAT key with its first byte changed.
        auto key = keyhook::base64_decode(std::string(kat_secret).substr(6));
        key[0] = static_cast<char>(key[0] ^ 1);
        const auto other = kc::parse_signing_secret(keyhook::base64_encode(key));
        CHECK(other != s);
        refused(kc::try_verify_signature(other, kat_headers(), kat_body, now));
    }
    SECTION("signature: one character changed, or truncated") {
        std::string sig = kat_signature;
        sig[5] = sig[5] == 'A' ? 'B' : 'A';
        refused(kc::try_verify_signature(s, kat_headers(kat_id, std::to_string(kat_unix), sig), kat_body, now));
        refused(kc::try_verify_signature(
            s, kat_headers(kat_id, std::to_string(kat_unix), std::string(kat_signature).substr(0, 46)), kat_body, now));
    }
}

TEST_CASE("B1: timestamps within 5 minutes either way are accepted, beyond are refused", "[B1][signing][tolerance]") {
    const auto s = kc::parse_signing_secret(kat_secret);
    const auto signed_at = unix_time(kat_unix);
    auto verify_at = [&](timestamp now) { return kc::try_verify_signature(s, kat_headers(), kat_body, now); };
    CHECK(kc::default_signature_tolerance == 5min);

    SECTION("too old: now is after the signature") {
        CHECK(verify_at(signed_at + 5min).has_value());
        // now is compared in whole seconds, rounded down
        CHECK(verify_at(signed_at + 5min + 999999us).has_value());
        const auto r = verify_at(signed_at + 5min + 1s);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::timestamp_out_of_tolerance);
        CHECK(r.error().path == "webhook-timestamp");
        CHECK(r.error().message == "signed 301 s before now; at most 300 s either way is accepted");
    }
    SECTION("too new: now is before the signature") {
        CHECK(verify_at(signed_at - 5min).has_value());
        const auto r = verify_at(signed_at - 5min - 1s);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::timestamp_out_of_tolerance);
        CHECK(r.error().message == "signed 301 s after now; at most 300 s either way is accepted");
        // rounded down, a moment before the boundary second is already outside
        CHECK_FALSE(verify_at(signed_at - 5min - 1us).has_value());
    }
    SECTION("the tolerance is the host's") {
        CHECK(kc::try_verify_signature(s, kat_headers(), kat_body, signed_at + 1h, 1h).has_value());
        CHECK_FALSE(kc::try_verify_signature(s, kat_headers(), kat_body, signed_at + 1h + 1s, 1h).has_value());
        CHECK(kc::try_verify_signature(s, kat_headers(), kat_body, signed_at, 0s).has_value());
        CHECK_FALSE(kc::try_verify_signature(s, kat_headers(), kat_body, signed_at + 1s, 0s).has_value());
        const auto r = kc::try_verify_signature(s, kat_headers(), kat_body, signed_at, -1s);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::invalid_value);
        CHECK(r.error().path == "tolerance");
    }
    SECTION("the timestamp is checked before the signature") {
        const auto r = kc::try_verify_signature(s, kat_headers(kat_id, std::to_string(kat_unix), "v1,AAAA"), kat_body,
                                                signed_at + 1h);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::timestamp_out_of_tolerance);
    }
}

TEST_CASE("B1: a missing header is refused, naming it", "[B1][signing][headers]") {
    const auto s = kc::parse_signing_secret(kat_secret);
    const auto now = unix_time(kat_unix);
    for (const char* name : {"webhook-id", "webhook-timestamp", "webhook-signature"}) {
        INFO(name);
        http_headers headers;
        for (const auto& h : kat_headers())
            if (h.name != name) headers.push_back(h);
        const auto r = kc::try_verify_signature(s, headers, kat_body, now);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::missing_member);
        CHECK(r.error().path == name);
        CHECK(r.error().message == "header is missing (nor is svix-" + std::string(name).substr(8) + " present)");
        CHECK_THROWS_AS(kc::verify_signature(s, headers, kat_body, now), keyhook::exception);
    }
}

TEST_CASE("B1: header names match whatever their case", "[B1][signing][headers]") {
    const auto s = kc::parse_signing_secret(kat_secret);
    const http_headers headers{{"Webhook-Id", kat_id, false},
                               {"WEBHOOK-TIMESTAMP", std::to_string(kat_unix), false},
                               {"Webhook-Signature", kat_signature, false}};
    CHECK(kc::try_verify_signature(s, headers, kat_body, unix_time(kat_unix)).has_value());
}

TEST_CASE("B1: a malformed webhook-timestamp is refused, naming it", "[B1][signing][headers]") {
    const auto s = kc::parse_signing_secret(kat_secret);
    for (const char* bad : {"", "-1614265330", "+1614265330", "1614265330.0", " 1614265330", "1614265330 ", "1.6e9",
                            "0x60380000", "2021-02-25T15:02:10Z", "1234567890123"}) {
        INFO(bad);
        const auto r = kc::try_verify_signature(s, kat_headers(kat_id, bad), kat_body, unix_time(kat_unix));
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::invalid_timestamp);
        CHECK(r.error().path == "webhook-timestamp");
        CHECK(r.error().message.find(keyhook::detail::quote_input(bad)) != std::string::npos);
    }
    // 12 digits is the longest accepted form: it parses, then is far outside the tolerance.
    const auto r = kc::try_verify_signature(s, kat_headers(kat_id, "999999999999"), kat_body, unix_time(kat_unix));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::timestamp_out_of_tolerance);
}

TEST_CASE("B1: a malformed webhook-id is refused, naming it", "[B1][signing][headers]") {
    const auto s = kc::parse_signing_secret(kat_secret);
    for (const std::string& bad : {std::string(), std::string("msg 1"), std::string("msg\r\nx-evil: 1"),
                                   std::string("msg\x7f"), std::string(257, 'a')}) {
        INFO(bad);
        const auto r = kc::try_verify_signature(s, kat_headers(bad), kat_body, unix_time(kat_unix));
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::invalid_header);
        CHECK(r.error().path == "webhook-id");
        // The same id is refused when signing.
        const auto h = kc::try_signature_headers(s, bad, unix_time(kat_unix), kat_body);
        REQUIRE_FALSE(h.has_value());
        CHECK(h.error().path == "webhook-id");
    }
    // 256 visible characters is the longest accepted id.
    const std::string longest(256, 'a');
    const auto headers = kc::signature_headers(s, longest, unix_time(kat_unix), kat_body);
    CHECK(kc::try_verify_signature(s, headers, kat_body, unix_time(kat_unix)).has_value());
}

TEST_CASE("B1: several signatures in one header; other versions ignored", "[B1][signing][rotation]") {
    const auto s = kc::parse_signing_secret(kat_secret);
    const auto now = unix_time(kat_unix);
    const std::string good = kat_signature;
    const std::string good_b64 = good.substr(3);
    auto verify_sig = [&](const std::string& value) {
        return kc::try_verify_signature(s, kat_headers(kat_id, std::to_string(kat_unix), value), kat_body, now);
    };
    CHECK(verify_sig("v1,Zm9vYmFy " + good).has_value());
    CHECK(verify_sig(good + " v1,Zm9vYmFy").has_value());
    CHECK(verify_sig("v1a,c29tZXRoaW5nIGVsc2U= " + good + "  v2,eA==").has_value());
    CHECK(verify_sig("  " + good + "  ").has_value());

    SECTION("the right bytes under another version do not count") {
        for (const std::string& value :
             {"v1a," + good_b64, "v2," + good_b64, good_b64, "V1," + good_b64, std::string()}) {
            INFO(value);
            const auto r = verify_sig(value);
            REQUIRE_FALSE(r.has_value());
            CHECK(r.error().code == errc::invalid_signature);
            CHECK(r.error().message == "no v1 signature in the header");
        }
    }
    SECTION("several v1 entries, none right") {
        const auto r = verify_sig("v1,Zm9vYmFy v1a," + good_b64 + " v1,YmFy");
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().message == "none of the 2 v1 signatures matches");
    }
}

TEST_CASE("B1: secret rotation, on both sides", "[B1][signing][rotation]") {
    const auto old_secret = kc::parse_signing_secret(kat_secret);
    counting_source src;
    const auto new_secret = kc::generate_signing_secret(src);
    const auto now = unix_time(kat_unix);

    // The sender signs with both; a receiver holding either one accepts.
    const auto headers = kc::signature_headers(old_secret, kat_id, now, kat_body);
    const auto both = kc::try_signature_headers({old_secret, new_secret}, kat_id, now, kat_body).value();
    const auto& sig = keyhook::find_header(both, "webhook-signature")->value;
    CHECK(sig == std::string(kat_signature) + " " + kc::compute_signature(new_secret, kat_id, now, kat_body));
    CHECK(kc::try_verify_signature(old_secret, both, kat_body, now).has_value());
    CHECK(kc::try_verify_signature(new_secret, both, kat_body, now).has_value());

    // A receiver holding both accepts a request signed with either.
    CHECK(kc::try_verify_signature({new_secret, old_secret}, headers, kat_body, now).has_value());
    CHECK_FALSE(kc::try_verify_signature({new_secret}, headers, kat_body, now).has_value());

    const auto none = kc::try_verify_signature(std::vector<kc::signing_secret>{}, headers, kat_body, now);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().code == errc::missing_member);
    CHECK(none.error().path == "signingSecret");
    CHECK_FALSE(kc::try_signature_headers(std::vector<kc::signing_secret>{}, kat_id, now, kat_body).has_value());
}

TEST_CASE("B1: signing a request sets the three headers and keeps the rest", "[B1][signing]") {
    const auto s = kc::parse_signing_secret(kat_secret);
    http_request req{"POST",
                     "https://hooks.example.com/in",
                     {{"Content-Type", "application/json", false},
                      {"x-api-key", "k", true},
                      {"Webhook-Signature", "v1,stale", false},
                      {"webhook-signature", "v1,stale2", false}},
                     kat_body};
    const auto signed_req = kc::sign_request(req, s, kat_id, unix_time(kat_unix));
    CHECK(signed_req.body == req.body);
    CHECK(signed_req.url == req.url);
    CHECK(signed_req.headers.size() == 5);  // stale signatures replaced by one
    CHECK(*keyhook::find_header(signed_req.headers, "x-api-key") == req.headers[1]);
    CHECK(keyhook::find_header(signed_req.headers, "webhook-signature")->value == kat_signature);
    CHECK(keyhook::find_header(signed_req.headers, "webhook-id")->value == kat_id);
    CHECK(kc::verify_request(s, signed_req, unix_time(kat_unix)).id == kat_id);

    // A retry signs again with a fresh time; the headers are replaced, not added.
    const auto resigned = kc::sign_request(signed_req, s, kat_id, unix_time(kat_unix + 600));
    CHECK(resigned.headers.size() == 5);
    CHECK(keyhook::find_header(resigned.headers, "webhook-timestamp")->value == std::to_string(kat_unix + 600));
    CHECK(kc::try_verify_request(s, resigned, unix_time(kat_unix + 600)).has_value());
    CHECK_FALSE(kc::try_verify_request(s, signed_req, unix_time(kat_unix + 600)).has_value());

    CHECK_THROWS_AS(kc::sign_request(req, s, "", unix_time(kat_unix)), keyhook::exception);
}

TEST_CASE("B1: reading a secret: base64 after an optional whsec_; any length to verify, 24 to 64 to sign",
          "[B1][signing][secret]") {
    auto refused = [](const std::string& text, errc code, const std::string& message,
                      kc::signing_key_use use = kc::signing_key_use::verify) {
        INFO(text);
        const auto r = kc::try_parse_signing_secret(text, use);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == code);
        CHECK(r.error().path == "signingSecret");
        CHECK(r.error().message == message);
        CHECK_THROWS_AS(kc::parse_signing_secret(text, use), keyhook::exception);
    };
    // To verify: any non-empty key (1 byte, 18 as Svix's documentation, 23, 65, 1000).
    for (std::size_t n : {std::size_t{1}, std::size_t{18}, std::size_t{23}, std::size_t{24}, std::size_t{33},
                          std::size_t{64}, std::size_t{65}, std::size_t{1000}}) {
        INFO(n);
        const auto text = "whsec_" + keyhook::base64_encode(counting_bytes(n));
        const auto s = kc::parse_signing_secret(text);
        CHECK(s.key_size() == n);
        CHECK(s.key().reveal() == counting_bytes(n));
        CHECK(s.reveal() == text);
        CHECK(kc::can_sign_with(s) == (n >= 24 && n <= 64));
        // To sign: 24 to 64 bytes, both sides of each end.
        const auto for_signing = kc::try_parse_signing_secret(text, kc::signing_key_use::sign);
        CHECK(for_signing.has_value() == (n >= 24 && n <= 64));
    }
    refused("whsec_" + keyhook::base64_encode(counting_bytes(23)), errc::out_of_range,
            "the key is 23 bytes; expected 24 to 64 to sign with", kc::signing_key_use::sign);
    refused("whsec_" + keyhook::base64_encode(counting_bytes(65)), errc::out_of_range,
            "the key is 65 bytes; expected 24 to 64 to sign with", kc::signing_key_use::sign);
    refused("", errc::invalid_value, "the secret is empty");
    refused("", errc::invalid_value, "the secret is empty", kc::signing_key_use::sign);
    refused("whsec_", errc::invalid_value, "the secret is empty");
    refused("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS!", errc::invalid_value,
            "not whsec_ + base64: invalid base64 character at offset 31");
    refused("WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", errc::invalid_value,
            "not whsec_ + base64: invalid base64 character at offset 5");
}

TEST_CASE("B1: a signing secret never shows its value", "[B1][M3][signing][secret]") {
    const auto s = kc::parse_signing_secret(kat_secret);
    const std::string b64 = std::string(kat_secret).substr(6);
    std::ostringstream os;
    os << s;
    CHECK(os.str() == "signing_secret(whsec_" + std::string(32, '*') + ")");
    CHECK(nlohmann::json(s) == "whsec_" + std::string(32, '*'));
    CHECK(nlohmann::ordered_json(s).get<std::string>().find(b64.substr(0, 4)) == std::string::npos);

    // Nor do verification errors, whatever fails.
    const auto now = unix_time(kat_unix);
    for (const auto& r : {kc::try_verify_signature(s, kat_headers(), "tampered", now),
                          kc::try_verify_signature(s, kat_headers(), kat_body, now + 1h),
                          kc::try_verify_signature(s, http_headers{}, kat_body, now)}) {
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().what().find(b64) == std::string::npos);
    }
    const auto bad = kc::try_parse_signing_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS!");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().what().find("MfKQ9r8G") == std::string::npos);
}

TEST_CASE("B1: generated secrets come from the host's random source", "[B1][signing][secret]") {
    SECTION("the key is exactly the bytes the source gave") {
        counting_source src;
        const auto s = kc::generate_signing_secret(src);
        CHECK(s.key_size() == kc::default_signing_key_bytes);
        CHECK(s.key().reveal() == counting_bytes(32));
        CHECK(s.reveal() == "whsec_" + keyhook::base64_encode(counting_bytes(32)));
        CHECK(kc::parse_signing_secret(s.reveal()) == s);
    }
    SECTION("24 to 64 bytes") {
        counting_source src;
        CHECK(kc::generate_signing_secret(src, 24).key_size() == 24);
        CHECK(kc::generate_signing_secret(src, 64).key_size() == 64);
        for (std::size_t n : {std::size_t{0}, std::size_t{23}, std::size_t{65}}) {
            const auto r = kc::try_generate_signing_secret(src, n);
            REQUIRE_FALSE(r.has_value());
            CHECK(r.error().code == errc::out_of_range);
            CHECK(r.error().path == "key_bytes");
        }
    }
    SECTION("a failing source is reported, not ignored") {
        auto failing = [](unsigned char*, std::size_t) {
            throw keyhook::exception(keyhook::error{errc::invalid_value, "random", "no entropy"});
        };
        const auto r = kc::try_generate_signing_secret(failing);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().path == "random");
        CHECK_THROWS_AS(kc::generate_signing_secret(failing), keyhook::exception);
    }
    SECTION("with OpenSSL's source, two secrets differ and sign and verify") {
        const auto a = kc::generate_signing_secret(kc::openssl_random{});
        const auto b = kc::generate_signing_secret(kc::openssl_random{}, 64);
        CHECK(a != b);
        const auto now = unix_time(kat_unix);
        const auto headers = kc::signature_headers(a, kat_id, now, kat_body);
        CHECK(kc::try_verify_signature(a, headers, kat_body, now).has_value());
        CHECK_FALSE(kc::try_verify_signature(b, headers, kat_body, now).has_value());
    }
}

// --- interoperability with other senders (B1) --------------------------------

namespace {
// Svix's documentation secret (18 key bytes) and a delivery signed with it. The
// signature was computed outside keyhook, twice, and agreed:
//   printf '%s' 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W.1674087231.{"type":"invoice.paid","id":"evt_123"}' |
//     openssl dgst -sha256 -mac HMAC -macopt hexkey:$(printf plJ3nmyCDGBKInavdOK15jsl | base64 -d | xxd -p) -binary |
//     base64
//   node -e "crypto.createHmac('sha256', Buffer.from('plJ3nmyCDGBKInavdOK15jsl',
//   'base64')).update(msg).digest('base64')"
constexpr const char* svix_doc_secret = "whsec_plJ3nmyCDGBKInavdOK15jsl";
constexpr const char* svix_id = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";
constexpr std::int64_t svix_unix = 1674087231;
constexpr const char* svix_body = R"({"type":"invoice.paid","id":"evt_123"})";
constexpr const char* svix_signature = "v1,ViPI08BCJVSFVIpuO00tDHHPRWiYGt9+9xGDqWe8iMg=";
// The reference message signed with a 1-byte key and a 72-byte key (longer
// than SHA-256's block, so HMAC hashes it first), computed with Node's crypto.
constexpr const char* one_byte_secret = "whsec_AQ==";
constexpr const char* one_byte_signature = "v1,4gSWYImObezboYN8eiWmJrHLHwevX4yElXAPnG5R4ns=";
constexpr const char* long_secret =
    "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr const char* long_signature = "v1,MtVV97h40YOo8umawg/oQi7rYuMspG5e1JQ92yHKEd0=";

http_headers svix_headers(const char* id_name = "svix-id", const char* ts_name = "svix-timestamp",
                          const char* sig_name = "svix-signature") {
    return {{id_name, svix_id, false}, {ts_name, std::to_string(svix_unix), false}, {sig_name, svix_signature, false}};
}
}  // namespace

// Regression test: key sizes and interoperability with other senders (B1).
TEST_CASE("B1: Svix's documentation secret (18 bytes) verifies its delivery but is no key to sign with",
          "[B1][signing][interop]") {
    const auto s = kc::try_parse_signing_secret(svix_doc_secret);
    REQUIRE(s.has_value());
    CHECK(s->key_size() == 18);
    const auto now = unix_time(svix_unix);
    CHECK(kc::compute_signature(*s, svix_id, now, svix_body) == svix_signature);
    for (const auto& headers : {svix_headers("webhook-id", "webhook-timestamp", "webhook-signature"), svix_headers()}) {
        const auto v = kc::try_verify_signature(*s, headers, svix_body, now);
        REQUIRE(v.has_value());
        CHECK(v->id == svix_id);
        CHECK(v->signed_at == now);
    }
    // Not a key keyhook signs with: sending refuses it, naming the sizes.
    CHECK_FALSE(kc::can_sign_with(*s));
    const auto sign = kc::try_signature_headers(*s, svix_id, now, svix_body);
    REQUIRE_FALSE(sign.has_value());
    CHECK(sign.error().code == errc::out_of_range);
    CHECK(sign.error().path == "signingSecret");
    CHECK(sign.error().message == "the key is 18 bytes; expected 24 to 64 to sign with");
    CHECK_FALSE(kc::try_sign_request(http_request{"POST", "https://example.com/", {}, svix_body}, *s, svix_id, now)
                    .has_value());
    // Nor does the configured-for-sending reading accept it.
    CHECK_FALSE(kc::try_parse_signing_secret(svix_doc_secret, kc::signing_key_use::sign).has_value());
}

TEST_CASE("B1: verification works with keys of 1 byte and of more than 64 bytes", "[B1][signing][interop]") {
    const auto now = unix_time(kat_unix);
    for (const auto& [secret, signature] :
         {std::pair{one_byte_secret, one_byte_signature}, std::pair{long_secret, long_signature},
          std::pair{kat_secret, kat_signature}}) {
        INFO(secret);
        const auto s = kc::parse_signing_secret(secret);
        CHECK(kc::try_verify_signature(s, kat_headers(kat_id, std::to_string(kat_unix), signature), kat_body, now)
                  .has_value());
        // and only that key: the other vectors' signatures are refused
        for (const char* other : {one_byte_signature, long_signature, kat_signature})
            if (std::string_view(other) != signature)
                CHECK_FALSE(
                    kc::try_verify_signature(s, kat_headers(kat_id, std::to_string(kat_unix), other), kat_body, now)
                        .has_value());
    }
    CHECK(kc::parse_signing_secret(one_byte_secret).key_size() == 1);
    CHECK(kc::parse_signing_secret(long_secret).key_size() == 72);
}

// Regression test: key sizes and interoperability with other senders (B1).
TEST_CASE("B1: the older svix-* header names are accepted when receiving", "[B1][signing][headers]") {
    const auto s = kc::parse_signing_secret(svix_doc_secret);
    const auto now = unix_time(svix_unix);
    SECTION("any mix of the two spellings, any case") {
        CHECK(
            kc::try_verify_signature(s, svix_headers("Svix-Id", "webhook-timestamp", "SVIX-SIGNATURE"), svix_body, now)
                .has_value());
        CHECK(kc::try_verify_signature(s, svix_headers("webhook-id", "svix-timestamp", "webhook-signature"), svix_body,
                                       now)
                  .has_value());
    }
    SECTION("both spellings with the same value: accepted") {
        auto headers = svix_headers();
        for (const auto& h : svix_headers("webhook-id", "webhook-timestamp", "webhook-signature")) headers.push_back(h);
        CHECK(kc::try_verify_signature(s, headers, svix_body, now).has_value());
    }
    SECTION("both spellings with different values: refused, whichever would verify") {
        struct variant {
            const char* svix_name;
            const char* standard_name;
            std::string other_value;
        };
        for (const auto& v : {variant{"svix-id", "webhook-id", "msg_other"},
                              variant{"svix-timestamp", "webhook-timestamp", std::to_string(svix_unix + 1)},
                              variant{"svix-signature", "webhook-signature", "v1,AAAA"}}) {
            INFO(v.svix_name);
            for (bool svix_first : {true, false}) {
                auto headers = svix_headers();
                headers.push_back(http_header{v.standard_name, v.other_value, false});
                if (!svix_first) std::reverse(headers.begin(), headers.end());
                const auto r = kc::try_verify_signature(s, headers, svix_body, now);
                REQUIRE_FALSE(r.has_value());
                CHECK(r.error().code == errc::invalid_header);
                CHECK(r.error().path == v.standard_name);
                CHECK(r.error().message ==
                      std::string(v.standard_name) + " and " + v.svix_name + " are both present and differ");
            }
        }
    }
    SECTION("one name repeated with different values: refused") {
        auto headers = kat_headers();
        headers.push_back(http_header{"webhook-id", "msg_other", false});
        const auto r =
            kc::try_verify_signature(kc::parse_signing_secret(kat_secret), headers, kat_body, unix_time(kat_unix));
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::invalid_header);
        CHECK(r.error().path == "webhook-id");
        CHECK(r.error().message == "the header is repeated with different values");
        // repeated with the same value: accepted
        headers.back().value = kat_id;
        CHECK(kc::try_verify_signature(kc::parse_signing_secret(kat_secret), headers, kat_body, unix_time(kat_unix))
                  .has_value());
    }
    SECTION("keyhook sends the webhook-* names only") {
        const auto mine = kc::generate_signing_secret(counting_source{});
        const auto headers = kc::signature_headers(mine, svix_id, now, svix_body);
        for (const auto& h : headers) CHECK(h.name.rfind("webhook-", 0) == 0);
    }
}

// --- the tolerance never overflows -------------------------------------------

// Regression test: time arithmetic: a time plus a caller's duration overflowed (T3, saturating sums).
TEST_CASE("B1, T3: a tolerance of seconds::max() accepts a fresh valid signature and never overflows",
          "[B1][T3][signing][tolerance]") {
    const auto s = kc::parse_signing_secret(kat_secret);
    const auto signed_at = unix_time(kat_unix);
    const auto huge = std::chrono::seconds::max();
    // Before the fix, now + tolerance overflowed (UBSan) and this was refused.
    CHECK(kc::try_verify_signature(s, kat_headers(), kat_body, signed_at, huge).has_value());
    CHECK(kc::try_verify_signature(s, kat_headers(), kat_body, signed_at + 1h, huge).has_value());
    // At the ends of time: no overflow either way, and the distance still counts.
    for (const auto now :
         {keyhook::timestamp::min(), keyhook::timestamp::max(), keyhook::min_timestamp, keyhook::max_timestamp}) {
        CHECK(kc::try_verify_signature(s, kat_headers(), kat_body, now, huge).has_value());
        const auto r = kc::try_verify_signature(s, kat_headers(), kat_body, now, 300s);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::timestamp_out_of_tolerance);
    }
    // The largest timestamp the header can carry (12 digits), both sides of a tolerance.
    const std::string far = "999999999999";
    const auto far_sig = kc::compute_signature(s, kat_id, unix_time(999999999999), kat_body);
    const auto far_headers = kat_headers(kat_id, far, far_sig);
    CHECK(kc::try_verify_signature(s, far_headers, kat_body, unix_time(999999999999 - 300), 300s).has_value());
    CHECK_FALSE(kc::try_verify_signature(s, far_headers, kat_body, unix_time(999999999999 - 301), 300s).has_value());
    CHECK(kc::try_verify_signature(s, far_headers, kat_body, keyhook::timestamp::min(), huge).has_value());
}

TEST_CASE("prepared key: copies of one prepared key sign and verify from several threads at once",
          "[B1][signing][prepared]") {
    // The scratch context goes to one caller at a time; the others duplicate
    // the pristine one. Every signature must still be the known answer.
    const auto s = kc::parse_signing_secret(kat_secret);
    const auto headers = kat_headers();
    constexpr int threads = 4, rounds = 300;
    std::vector<int> wrong(threads, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            const auto copy = s;  // copies share the prepared key
            for (int i = 0; i < rounds; ++i) {
                if (kc::compute_signature(t % 2 == 0 ? s : copy, kat_id, unix_time(kat_unix), kat_body) !=
                    kat_signature)
                    ++wrong[static_cast<std::size_t>(t)];
                if (!kc::try_verify_signature(copy, headers, kat_body, unix_time(kat_unix)))
                    ++wrong[static_cast<std::size_t>(t)];
            }
        });
    for (auto& th : pool) th.join();
    CHECK(wrong == std::vector<int>(threads, 0));
    // A moved-from secret holds no key: signing with it is an error, not a crash.
    auto moved = s;
    const auto taken = std::move(moved);
    CHECK(kc::compute_signature(taken, kat_id, unix_time(kat_unix), kat_body) == kat_signature);
    const auto r = kc::try_signature_headers(moved, kat_id, unix_time(kat_unix),
                                             kat_body);  // NOLINT(bugprone-use-after-move): the case under test
    CHECK_FALSE(r.has_value());
}
