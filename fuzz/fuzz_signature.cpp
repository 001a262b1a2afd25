// keyhook-fuzz: requires crypto
// Standard Webhooks signing and verification (B1). Properties: verification
// with fuzzed headers (webhook-* and the older svix-* names), body and secret
// never crashes and accepts exactly when a reference verdict computed here
// independently says so (two-sided): the three values present, each the same
// under every name it appears with, a plain id, a timestamp of 1 to 12 digits
// within the tolerance, and one "v1," entry equal to an HMAC-SHA256 computed
// with OpenSSL's one-shot HMAC and EVP_EncodeBlock. Keys of any non-empty
// length verify; only 24 to 64 bytes sign. What sign produces always verifies,
// at the edges of the tolerance too, and never under another secret; a
// tolerance up to seconds::max() never overflows; secret text round-trips.
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
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

bool is_digits(std::string_view s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos; }

bool lower_equal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

// The one value of a signed header under either spelling; nullopt when absent
// or when two occurrences differ (the receiver must refuse both cases).
std::optional<std::string> one_value(const keyhook::http_headers& headers, std::string_view suffix) {
    std::optional<std::string> found;
    for (const auto& h : headers) {
        if (!lower_equal(h.name, "webhook-" + std::string(suffix)) &&
            !lower_equal(h.name, "svix-" + std::string(suffix)))
            continue;
        if (found && *found != h.value) return std::nullopt;
        found = h.value;
    }
    return found;
}

std::vector<std::string_view> entries(std::string_view header);

// B1 as the reference reads it: whether a receiver holding `key` must accept.
bool reference_verdict(const std::string& key, const keyhook::http_headers& headers, std::string_view body,
                       keyhook::timestamp now, std::chrono::seconds tolerance) {
    const auto id = one_value(headers, "id"), ts = one_value(headers, "timestamp"),
               sig = one_value(headers, "signature");
    if (!id || !ts || !sig) return false;
    if (id->empty() || id->size() > 256) return false;
    for (const char c : *id)
        if (c < 0x21 || c > 0x7E) return false;
    if (!is_digits(*ts) || ts->size() > 12) return false;
    // In long double: no overflow whatever the tolerance (exact for these magnitudes' comparison).
    const long double signed_s = std::stold(*ts);
    const long double now_s =
        static_cast<long double>(std::chrono::floor<std::chrono::seconds>(now).time_since_epoch().count());
    const long double apart = signed_s > now_s ? signed_s - now_s : now_s - signed_s;
    if (apart > static_cast<long double>(tolerance.count())) return false;
    const std::string expected = "v1," + reference_signature(key, *id, *ts, body);
    for (const auto e : entries(*sig))
        if (e == expected) return true;
    return false;
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

KEYHOOK_FUZZ_TARGET(signature) {
    FuzzedDataProvider in(data, size);
    // B1: any non-empty key verifies (Svix's documentation has an 18-byte one).
    const std::size_t key_size = in.ConsumeIntegralInRange<std::size_t>(1, 100);
    std::string key = in.ConsumeBytesAsString(key_size);
    key.resize(key_size, 'k');
    const bool can_sign = key_size >= 24 && key_size <= 64;
    const std::string text = std::string(in.ConsumeBool() ? "whsec_" : "") +
                             base64(reinterpret_cast<const unsigned char*>(key.data()), key.size());
    const auto secret = kc::try_parse_signing_secret(text);
    fuzz::check(secret.has_value(), "a well-formed secret does not parse", text);
    fuzz::check(secret->key().reveal() == key, "a secret reads to other key bytes");
    fuzz::check(kc::try_parse_signing_secret(secret->reveal()).has_value() &&
                    *kc::try_parse_signing_secret(secret->reveal()) == *secret,
                "a secret's text does not read back");
    fuzz::check(kc::try_parse_signing_secret(text, kc::signing_key_use::sign).has_value() == can_sign,
                "the 24 to 64 bytes of a signing key are not enforced (or enforced when verifying)");
    std::string other_key = key;
    other_key[in.ConsumeIntegralInRange<std::size_t>(0, key.size() - 1)] ^=
        static_cast<char>(1 + in.ConsumeIntegral<std::uint8_t>() % 255);
    const auto other =
        kc::parse_signing_secret(base64(reinterpret_cast<const unsigned char*>(other_key.data()), other_key.size()));

    // Mostly ordinary tolerances; sometimes the largest, which must not overflow.
    const bool huge_tolerance = in.ConsumeIntegralInRange<int>(0, 15) == 0;
    const auto tolerance = huge_tolerance ? std::chrono::seconds::max()
                                          : std::chrono::seconds{in.ConsumeIntegralInRange<std::int64_t>(0, 3600)};
    const keyhook::timestamp now{std::chrono::seconds{in.ConsumeIntegralInRange<std::int64_t>(0, 99999999999)} +
                                 std::chrono::microseconds{in.ConsumeIntegralInRange<std::int64_t>(0, 999999)}};
    const std::string id = in.ConsumeRandomLengthString(300);
    const std::string body = in.ConsumeRandomLengthString(4096);

    // Sign (keyhook for a signing key, the reference for any other), then verify.
    const auto signed_by_keyhook = kc::try_signature_headers(*secret, id, now, body);
    std::optional<keyhook::http_headers> headers;
    if (!can_sign) {
        fuzz::check(!signed_by_keyhook && signed_by_keyhook.error().code == keyhook::errc::out_of_range &&
                        signed_by_keyhook.error().path == "signingSecret",
                    "signed with a key outside 24 to 64 bytes");
        if (kc::detail::valid_webhook_id(id)) {
            const std::string ts =
                std::to_string(std::chrono::floor<std::chrono::seconds>(now).time_since_epoch().count());
            headers =
                keyhook::http_headers{{"webhook-id", id, false},
                                      {"webhook-timestamp", ts, false},
                                      {"webhook-signature", "v1," + reference_signature(key, id, ts, body), false}};
        }
    } else if (!signed_by_keyhook) {
        fuzz::check(signed_by_keyhook.error().code == keyhook::errc::invalid_header &&
                        signed_by_keyhook.error().path == "webhook-id",
                    "signing failed for another reason than the id", signed_by_keyhook.error().what());
        fuzz::check(!kc::detail::valid_webhook_id(id), "signing refused a valid id");
    } else {
        headers = *signed_by_keyhook;
    }
    if (headers) {
        const auto ok = kc::try_verify_signature(*secret, *headers, body, now, tolerance);
        fuzz::check(ok.has_value(), "a signed request does not verify", ok ? "" : ok.error().what());
        fuzz::check(ok->id == id, "verification reports another id");
        const auto whole = std::chrono::floor<std::chrono::seconds>(now);
        if (huge_tolerance) {
            for (const auto far : {keyhook::timestamp::min(), keyhook::timestamp::max()})
                fuzz::check(kc::try_verify_signature(*secret, *headers, body, far, tolerance).has_value(),
                            "a tolerance of seconds::max() refuses a valid signature");
        } else {
            fuzz::check(kc::try_verify_signature(*secret, *headers, body, whole + tolerance, tolerance).has_value() &&
                            kc::try_verify_signature(*secret, *headers, body, whole - tolerance, tolerance).has_value(),
                        "a signature exactly at the tolerance does not verify");
            fuzz::check(!kc::try_verify_signature(*secret, *headers, body, whole + tolerance + std::chrono::seconds{1},
                                                  tolerance),
                        "a signature past the tolerance verifies");
        }
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

    // Fuzzed headers, under both spellings: the verdict equals the reference's.
    keyhook::http_headers fuzzed;
    static constexpr std::string_view names[] = {"webhook-id", "Webhook-Timestamp", "webhook-signature", "x-other",
                                                 "svix-id",    "Svix-Timestamp",    "SVIX-SIGNATURE"};
    const std::size_t count = in.ConsumeIntegralInRange<std::size_t>(0, 5);
    for (std::size_t i = 0; i < count; ++i)
        fuzzed.push_back(keyhook::http_header{std::string(names[in.ConsumeIntegralInRange<std::size_t>(0, 6)]),
                                              in.ConsumeRandomLengthString(400), false});
    if (in.ConsumeBool() && headers) {
        // Start from a genuine set, maybe respelled or repeated, and let the fuzzer tamper with one value.
        fuzzed = *headers;
        for (auto& h : fuzzed)
            if (in.ConsumeBool()) h.name = "svix-" + h.name.substr(8);
        if (in.ConsumeBool()) {
            auto copy = fuzzed[in.ConsumeIntegralInRange<std::size_t>(0, fuzzed.size() - 1)];
            copy.name = fuzz::starts_with(copy.name, "svix-") ? "webhook-" + copy.name.substr(5) : copy.name;
            fuzzed.push_back(copy);
        }
        auto& h = fuzzed[in.ConsumeIntegralInRange<std::size_t>(0, fuzzed.size() - 1)];
        if (in.ConsumeBool())
            h.value = in.ConsumeBool() ? in.ConsumeRandomLengthString(400) : h.value + in.ConsumeRandomLengthString(8);
    }
    const auto verdict = kc::try_verify_signature(*secret, fuzzed, body, now, tolerance);
    fuzz::check(verdict.has_value() == reference_verdict(key, fuzzed, body, now, tolerance),
                verdict ? "accepted what the reference refuses" : "refused what the reference accepts",
                verdict ? std::string_view("") : std::string_view(verdict.error().message));

    // Arbitrary secret text never crashes, and what reads writes back.
    const std::string raw = in.ConsumeRemainingBytesAsString();
    const auto for_signing = kc::try_parse_signing_secret(raw, kc::signing_key_use::sign);
    if (const auto s = kc::try_parse_signing_secret(raw)) {
        fuzz::check(kc::try_parse_signing_secret(s->reveal()).has_value(), "a read secret does not write back");
        fuzz::check(s->key_size() >= 1, "an empty key was read");
        fuzz::check(for_signing.has_value() ==
                        (s->key_size() >= kc::min_signing_key_bytes && s->key_size() <= kc::max_signing_key_bytes),
                    "a signing key of a refused size was read, or one of an allowed size refused");
    } else {
        fuzz::check(!for_signing.has_value(), "a secret refused for verifying was read for signing");
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
                  "not whsec_ + base64: base64 text has non-zero bits after its last byte", "the key is 0 bytes",
                  "the key is 0 bytes; expected 24 to 64 to sign with"})
                out.insert(shape(m));
            return out;
        }();
        fuzz::check(shapes.count(shape(s.error().message)) == 1, "a secret error is not one of the fixed sentences",
                    s.error().message);
    }
    return 0;
}
