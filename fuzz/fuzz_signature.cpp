// keyhook-fuzz: requires crypto
// Standard Webhooks signing and verification (B1). Properties: verification
// with fuzzed headers, body and secret never crashes and accepts only when one
// "v1," entry equals an HMAC-SHA256 computed here independently (OpenSSL's
// one-shot HMAC and EVP_EncodeBlock) with the secret and a timestamp within
// the tolerance; what sign produces always verifies, at the edges of the
// tolerance too, and never under another secret; secret text round-trips.
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_common.hpp"
#include "keyhook/crypto/signing.hpp"

namespace {

namespace kc = keyhook::crypto;

std::string base64(const unsigned char* p, std::size_t n) {
    std::string out(4 * ((n + 2) / 3) + 1, '\0');
    const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), p, static_cast<int>(n));
    out.resize(static_cast<std::size_t>(written));
    return out;
}

std::string reference_signature(const std::string& key, std::string_view id, std::string_view ts,
                                std::string_view body) {
    std::string message;
    message.append(id).append(".").append(ts).append(".").append(body);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
         message.size(), mac, &len);
    return base64(mac, len);
}

std::vector<std::string_view> entries(std::string_view header) {
    std::vector<std::string_view> out;
    while (!header.empty()) {
        const auto space = header.find(' ');
        out.push_back(header.substr(0, space));
        header = space == std::string_view::npos ? std::string_view() : header.substr(space + 1);
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    const std::size_t key_size =
        in.ConsumeIntegralInRange<std::size_t>(kc::min_signing_key_bytes, kc::max_signing_key_bytes);
    std::string key = in.ConsumeBytesAsString(key_size);
    key.resize(key_size, 'k');
    const std::string text = std::string(in.ConsumeBool() ? "whsec_" : "") +
                             base64(reinterpret_cast<const unsigned char*>(key.data()), key.size());
    const auto secret = kc::try_parse_signing_secret(text);
    fuzz::check(secret.has_value(), "a well-formed secret does not parse", text);
    fuzz::check(secret->key().reveal() == key, "a secret reads to other key bytes");
    fuzz::check(kc::try_parse_signing_secret(secret->reveal()).has_value() &&
                    *kc::try_parse_signing_secret(secret->reveal()) == *secret,
                "a secret's text does not read back");
    std::string other_key = key;
    other_key[in.ConsumeIntegralInRange<std::size_t>(0, key.size() - 1)] ^=
        static_cast<char>(1 + in.ConsumeIntegral<std::uint8_t>() % 255);
    const auto other =
        kc::parse_signing_secret(base64(reinterpret_cast<const unsigned char*>(other_key.data()), other_key.size()));

    const auto tolerance = std::chrono::seconds{in.ConsumeIntegralInRange<std::int64_t>(0, 3600)};
    const keyhook::timestamp now{std::chrono::seconds{in.ConsumeIntegralInRange<std::int64_t>(0, 99999999999)} +
                                 std::chrono::microseconds{in.ConsumeIntegralInRange<std::int64_t>(0, 999999)}};
    const std::string id = in.ConsumeRandomLengthString(300);
    const std::string body = in.ConsumeRandomLengthString(4096);

    // Sign, then verify.
    const auto headers = kc::try_signature_headers(*secret, id, now, body);
    if (!headers) {
        fuzz::check(headers.error().code == keyhook::errc::invalid_header && headers.error().path == "webhook-id",
                    "signing failed for another reason than the id", headers.error().what());
        fuzz::check(!kc::detail::valid_webhook_id(id), "signing refused a valid id");
    } else {
        const auto ok = kc::try_verify_signature(*secret, *headers, body, now, tolerance);
        fuzz::check(ok.has_value(), "a signed request does not verify", ok ? "" : ok.error().what());
        fuzz::check(ok->id == id, "verification reports another id");
        const auto whole = std::chrono::floor<std::chrono::seconds>(now);
        fuzz::check(kc::try_verify_signature(*secret, *headers, body, whole + tolerance, tolerance).has_value() &&
                        kc::try_verify_signature(*secret, *headers, body, whole - tolerance, tolerance).has_value(),
                    "a signature exactly at the tolerance does not verify");
        fuzz::check(
            !kc::try_verify_signature(*secret, *headers, body, whole + tolerance + std::chrono::seconds{1}, tolerance),
            "a signature past the tolerance verifies");
        const auto wrong = kc::try_verify_signature(other, *headers, body, now, tolerance);
        fuzz::check(!wrong && wrong.error().code == keyhook::errc::invalid_signature, "another secret verifies");
        fuzz::check(
            kc::try_verify_signature(std::vector<kc::signing_secret>{other, *secret}, *headers, body, now, tolerance)
                .has_value(),
            "rotation: the second secret of a list does not verify");
        if (!body.empty()) {
            std::string changed = body;
            changed[0] ^= 1;
            fuzz::check(!kc::try_verify_signature(*secret, *headers, changed, now, tolerance),
                        "a changed body verifies");
        }
    }

    // Fuzzed headers: accepted only with a genuine signature.
    keyhook::http_headers fuzzed;
    const std::size_t count = in.ConsumeIntegralInRange<std::size_t>(0, 4);
    for (std::size_t i = 0; i < count; ++i) {
        static constexpr std::string_view names[] = {"webhook-id", "Webhook-Timestamp", "webhook-signature", "x-other"};
        fuzzed.push_back(keyhook::http_header{std::string(names[in.ConsumeIntegralInRange<std::size_t>(0, 3)]),
                                              in.ConsumeRandomLengthString(400), false});
    }
    if (in.ConsumeBool() && headers) {
        // Start from a genuine set and let the fuzzer tamper with one value.
        fuzzed = *headers;
        auto& h = fuzzed[in.ConsumeIntegralInRange<std::size_t>(0, fuzzed.size() - 1)];
        h.value = in.ConsumeBool() ? in.ConsumeRandomLengthString(400) : h.value + in.ConsumeRandomLengthString(8);
    }
    const auto verdict = kc::try_verify_signature(*secret, fuzzed, body, now, tolerance);
    if (verdict) {
        const auto* hid = keyhook::find_header(fuzzed, kc::webhook_id_header);
        const auto* hts = keyhook::find_header(fuzzed, kc::webhook_timestamp_header);
        const auto* hsig = keyhook::find_header(fuzzed, kc::webhook_signature_header);
        fuzz::check(hid && hts && hsig, "accepted without all three headers");
        const std::string expected = "v1," + reference_signature(key, hid->value, hts->value, body);
        bool genuine = false;
        for (auto e : entries(hsig->value)) genuine = genuine || e == expected;
        fuzz::check(genuine, "accepted a signature not made with the secret", hsig->value);
        const auto signed_at = std::chrono::duration_cast<std::chrono::seconds>(verdict->signed_at.time_since_epoch());
        const auto now_s = std::chrono::floor<std::chrono::seconds>(now).time_since_epoch();
        fuzz::check(signed_at - now_s <= tolerance && now_s - signed_at <= tolerance, "accepted outside the tolerance");
        fuzz::check(!hts->value.empty() && hts->value.find_first_not_of("0123456789") == std::string::npos,
                    "accepted a timestamp that is not plain digits");
    }

    // Arbitrary secret text never crashes, and what reads writes back.
    const std::string raw = in.ConsumeRemainingBytesAsString();
    if (const auto s = kc::try_parse_signing_secret(raw)) {
        fuzz::check(kc::try_parse_signing_secret(s->reveal()).has_value(), "a read secret does not write back");
        fuzz::check(s->key_size() >= kc::min_signing_key_bytes && s->key_size() <= kc::max_signing_key_bytes,
                    "a secret of a refused size was read");
    } else {
        // Messages never quote the text: with digit runs blanked, each is one of a few fixed sentences.
        const auto shape = [](std::string_view m) {
            std::string out;
            for (char c : m)
                if (!(c >= '0' && c <= '9'))
                    out += c;
                else if (out.empty() || out.back() != '#')
                    out += '#';
            return out;
        };
        static const std::set<std::string> shapes = [&shape] {
            std::set<std::string> out;
            for (const char* m :
                 {"the secret is empty", "not whsec_ + base64: base64 padding must complete a group of 4 characters",
                  "not whsec_ + base64: invalid base64 character at offset 0",
                  "not whsec_ + base64: invalid base64 character at offset 0 (padding before the end)",
                  "not whsec_ + base64: base64 text has an impossible length",
                  "not whsec_ + base64: base64 text has non-zero bits after its last byte",
                  "the key is 0 bytes; expected 24 to 64"})
                out.insert(shape(m));
            return out;
        }();
        fuzz::check(shapes.count(shape(s.error().message)) == 1, "a secret error is not one of the fixed sentences",
                    s.error().message);
    }
    return 0;
}
