// The hostile-input catalogue for keyhook::crypto (B1): signing secrets and
// the verification of received signatures, each row with its exact error kind
// and path. A verification row replaces one header of a genuinely signed
// request ("header|value"; the value "<absent>" removes the header).
#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "hostile.hpp"
#include "keyhook/base64.hpp"
#include "keyhook/crypto/signing.hpp"

using namespace std::string_literals;
using hostile::row;
using keyhook::errc;
namespace kc = keyhook::crypto;

namespace {

const std::string key_bytes(32, 'K');
const keyhook::timestamp signed_at{std::chrono::seconds{1767225600}};
const std::string body = R"({"FolderName":"Lending","UserAction":"PublishEngine"})";

kc::signing_secret the_secret() { return kc::parse_signing_secret("whsec_" + keyhook::base64_encode(key_bytes)); }

keyhook::http_headers signed_headers() { return kc::signature_headers(the_secret(), "msg_1", signed_at, body); }

std::optional<keyhook::error> verify_with(const keyhook::http_headers& h, std::string_view b = body,
                                          keyhook::timestamp now = signed_at) {
    auto v = kc::try_verify_signature(the_secret(), h, b, now);
    if (v) return std::nullopt;
    return v.error();
}

hostile::runner_map runners() {
    hostile::runner_map m;
    m["signing_secret"] = [](const std::string& in) -> std::optional<keyhook::error> {
        auto s = kc::try_parse_signing_secret(in);
        if (s) return std::nullopt;
        return s.error();
    };
    // B1: keyhook signs only with 24 to 64 bytes; any non-empty key verifies.
    m["signing_secret_to_sign"] = [](const std::string& in) -> std::optional<keyhook::error> {
        auto s = kc::try_parse_signing_secret(in, kc::signing_key_use::sign);
        if (s) return std::nullopt;
        return s.error();
    };
    m["verify_header"] = [](const std::string& in) {
        const auto bar = in.find('|');
        const auto name = in.substr(0, bar);
        const auto value = in.substr(bar + 1);
        keyhook::http_headers out;
        for (auto h : signed_headers()) {
            if (!keyhook::header_name_equal(h.name, name)) {
                out.push_back(h);
            } else if (value != "<absent>") {
                h.value = value;
                out.push_back(h);
            }
        }
        return verify_with(out);
    };
    m["verify_body"] = [](const std::string& in) { return verify_with(signed_headers(), in); };
    m["verify_at"] = [](const std::string& in) {
        return verify_with(signed_headers(), body, signed_at + std::chrono::seconds{std::stoll(in)});
    };
    m["sign_id"] = [](const std::string& in) -> std::optional<keyhook::error> {
        auto h = kc::try_signature_headers(the_secret(), in, signed_at, body);
        if (h) return std::nullopt;
        return h.error();
    };
    return m;
}

std::vector<row> rows() {
    const std::string sig = "webhook-signature|";
    const std::string ts = "webhook-timestamp|";
    const std::string id = "webhook-id|";
    const std::string ten_mb(10u << 20, 'A');
    return {
        {"signing_secret", "", errc::invalid_value, "signingSecret", "B1"},
        {"signing_secret", "whsec_", errc::invalid_value, "signingSecret", "B1"},
        {"signing_secret", "whsec_!!!!", errc::invalid_value, "signingSecret", "B1"},
        {"signing_secret", "whsec_" + keyhook::base64_encode(key_bytes) + "\n", errc::invalid_value, "signingSecret",
         "B1"},
        {"signing_secret", "whsec_" + keyhook::base64_encode(key_bytes) + "\0"s, errc::invalid_value, "signingSecret",
         "B1"},
        {"signing_secret_to_sign", "whsec_" + keyhook::base64_encode(std::string(23, 'k')), errc::out_of_range,
         "signingSecret", "B1"},
        {"signing_secret_to_sign", "whsec_" + keyhook::base64_encode(std::string(65, 'k')), errc::out_of_range,
         "signingSecret", "B1"},
        {"signing_secret_to_sign", ten_mb, errc::out_of_range, "signingSecret", "B1"},
        {"verify_header", "webhook-id|<absent>", errc::missing_member, "webhook-id", "B1"},
        {"verify_header", "webhook-timestamp|<absent>", errc::missing_member, "webhook-timestamp", "B1"},
        {"verify_header", "webhook-signature|<absent>", errc::missing_member, "webhook-signature", "B1"},
        {"verify_header", id, errc::invalid_header, "webhook-id", "B1"},
        {"verify_header", id + "msg_1\r\nX-Injected: 1", errc::invalid_header, "webhook-id", "B1"},
        {"verify_header", id + "msg 1", errc::invalid_header, "webhook-id", "B1"},
        {"verify_header", id + "msg_\0"s, errc::invalid_header, "webhook-id", "B1"},
        {"verify_header", id + std::string(257, 'm'), errc::invalid_header, "webhook-id", "B1"},
        {"verify_header", id + "msg_2", errc::invalid_signature, "webhook-signature", "B1"},
        {"verify_header", ts, errc::invalid_timestamp, "webhook-timestamp", "B1"},
        {"verify_header", ts + "-1767225600", errc::invalid_timestamp, "webhook-timestamp", "B1"},
        {"verify_header", ts + "1767225600.0", errc::invalid_timestamp, "webhook-timestamp", "B1"},
        {"verify_header", ts + "1.7e9", errc::invalid_timestamp, "webhook-timestamp", "B1"},
        {"verify_header", ts + " 1767225600", errc::invalid_timestamp, "webhook-timestamp", "B1"},
        {"verify_header", ts + "9999999999999", errc::invalid_timestamp, "webhook-timestamp", "B1"},
        {"verify_header", ts + "2026-01-01T00:00:00Z", errc::invalid_timestamp, "webhook-timestamp", "B1"},
        {"verify_header", ts + "1767225899", errc::invalid_signature, "webhook-signature", "B1"},
        {"verify_header", ts + "1767225901", errc::timestamp_out_of_tolerance, "webhook-timestamp", "B1"},
        {"verify_header", ts + "1767225299", errc::timestamp_out_of_tolerance, "webhook-timestamp", "B1"},
        {"verify_header", ts + "0", errc::timestamp_out_of_tolerance, "webhook-timestamp", "B1"},
        {"verify_header", ts + "999999999999", errc::timestamp_out_of_tolerance, "webhook-timestamp", "B1"},
        {"verify_header", sig, errc::invalid_signature, "webhook-signature", "B1"},
        {"verify_header", sig + "v1,", errc::invalid_signature, "webhook-signature", "B1"},
        {"verify_header", sig + "v1,AAAA", errc::invalid_signature, "webhook-signature", "B1"},
        {"verify_header", sig + "v2," + signed_headers()[2].value.substr(3), errc::invalid_signature,
         "webhook-signature", "B1"},
        {"verify_header", sig + "V1," + signed_headers()[2].value.substr(3), errc::invalid_signature,
         "webhook-signature", "B1"},
        {"verify_header", sig + "v1a,xyz v1b,abc", errc::invalid_signature, "webhook-signature", "B1"},
        {"verify_header", sig + " " + std::string(100000, ' '), errc::invalid_signature, "webhook-signature", "B1"},
        {"verify_header", sig + ten_mb, errc::invalid_signature, "webhook-signature", "B1"},
        {"verify_body", body + " ", errc::invalid_signature, "webhook-signature", "B1"},
        {"verify_body", "", errc::invalid_signature, "webhook-signature", "B1"},
        {"verify_body", body + "\0"s, errc::invalid_signature, "webhook-signature", "B1"},
        {"verify_at", "301", errc::timestamp_out_of_tolerance, "webhook-timestamp", "B1"},
        {"verify_at", "-301", errc::timestamp_out_of_tolerance, "webhook-timestamp", "B1"},
        {"sign_id", "", errc::invalid_header, "webhook-id", "B1"},
        {"sign_id", "msg_1\r\n", errc::invalid_header, "webhook-id", "B1"},
        {"sign_id", std::string(257, 'i'), errc::invalid_header, "webhook-id", "B1"},
    };
}

}  // namespace

TEST_CASE("hostile: signing secrets and signature verification", "[hostile][B1]") {
    hostile::check_rows(runners(), rows());
}
