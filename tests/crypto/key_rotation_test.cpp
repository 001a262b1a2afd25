// B5: signing key rotation with a grace period, one current key per scheme,
// at most 10 old keys, expired keys dropped when next used to sign, and a
// store-only serializer (to_json and printing show no key material).
#include "keyhook/crypto/key_rotation.hpp"
#include "keyhook/crypto/random.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace kc = keyhook::crypto;
using keyhook::errc;
using keyhook::timestamp;
using namespace std::chrono_literals;

namespace {

const timestamp t0 = keyhook::parse_timestamp("2026-03-14T09:00:00Z");

kc::signing_secret new_secret() { return kc::generate_signing_secret(kc::openssl_random{}); }
kc::asymmetric_signing_key new_asymmetric() { return kc::generate_asymmetric_signing_key(kc::openssl_random{}); }

keyhook::http_request request() {
    return keyhook::http_request{"POST", "https://hooks.example.com/in", {}, R"({"Tenant":"acme"})"};
}

// How many entries webhook-signature carries.
std::size_t entries(const keyhook::http_request& r) {
    const auto* h = keyhook::find_header(r.headers, "webhook-signature");
    if (!h) return 0;
    std::size_t n = 1;
    for (const char c : h->value) n += c == ' ' ? 1 : 0;
    return n;
}

bool verifies(const keyhook::http_request& r, const kc::verification_keys& keys, timestamp at) {
    return kc::try_verify_signature(keys, r.headers, r.body, at).has_value();
}

}  // namespace

TEST_CASE("B5: during the grace both the old and the new key verify; after it only the new", "[B5]") {
    const auto old_key = new_secret();
    const auto new_key = new_secret();
    auto set = kc::signing_key_set::make(old_key);
    REQUIRE(set.try_rotate(new_key, t0).has_value());  // default grace: 24 h
    REQUIRE(set.old_keys().size() == 1);
    CHECK(set.old_keys()[0].expires_at == t0 + 24h);
    CHECK(set.current_secret() == new_key);

    const auto during = t0 + 24h - 1s;
    auto signed_during = set.try_sign_request(request(), "msg_0123456789abcdef0123456789abcdef", during);
    REQUIRE(signed_during.has_value());
    CHECK(entries(*signed_during) == 2);
    CHECK(verifies(*signed_during, {{old_key}, {}}, during));
    CHECK(verifies(*signed_during, {{new_key}, {}}, during));

    // Exactly at the expiry: the old key is dropped and no longer signs.
    const auto after = t0 + 24h;
    auto signed_after = set.try_sign_request(request(), "msg_0123456789abcdef0123456789abcdef", after);
    REQUIRE(signed_after.has_value());
    CHECK(entries(*signed_after) == 1);
    CHECK(set.old_keys().empty());
    CHECK_FALSE(verifies(*signed_after, {{old_key}, {}}, after));
    CHECK(verifies(*signed_after, {{new_key}, {}}, after));
}

TEST_CASE("B5: the grace is 0 to 7 days; 0 keeps no old key", "[B5]") {
    auto set = kc::signing_key_set::make(new_secret());
    CHECK(set.try_rotate(new_secret(), t0, 0s).has_value());
    CHECK(set.old_keys().empty());
    CHECK(set.try_rotate(new_secret(), t0, 168h).has_value());
    REQUIRE(set.old_keys().size() == 1);
    CHECK(set.old_keys()[0].expires_at == t0 + 168h);
    const auto before = set;
    for (const auto grace : {timestamp::duration(168h + 1us), timestamp::duration(-1us)}) {
        const auto r = set.try_rotate(new_secret(), t0, grace);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::out_of_range);
        CHECK(r.error().path == "grace");
        CHECK(set == before);
    }
    // A secret keyhook may not sign with (under 24 bytes) is refused.
    const auto short_key = kc::parse_signing_secret("whsec_" + std::string(16, 'A'));  // 12 bytes
    CHECK(set.try_rotate(short_key, t0).error().path == "signingSecret");
}

TEST_CASE("B5: at most 10 unexpired old keys; expired ones make room", "[B5]") {
    auto set = kc::signing_key_set::make(new_secret());
    for (int i = 0; i < 10; ++i) REQUIRE(set.try_rotate(new_secret(), t0 + i * 1min, 1h).has_value());
    CHECK(set.old_keys().size() == 10);
    const auto before = set;
    const auto eleventh = set.try_rotate(new_secret(), t0 + 10min, 1h);
    REQUIRE_FALSE(eleventh.has_value());
    CHECK(eleventh.error().code == errc::limit_exceeded);
    CHECK(eleventh.error().path == "oldKeys");
    CHECK(set == before);
    // With grace 0 nothing is kept, so it is allowed.
    CHECK(set.try_rotate(new_secret(), t0 + 10min, 0s).has_value());
    // Once the first old key has expired (t0 + 1 h), there is room again.
    CHECK_FALSE(set.try_rotate(new_secret(), t0 + 1h - 1us, 1h).has_value());
    CHECK(set.try_rotate(new_secret(), t0 + 1h, 1h).has_value());
    CHECK(set.old_keys().size() == 10);
    // Signing: the current key and every unexpired old key, one entry each.
    auto r = set.try_sign_request(request(), "msg_0123456789abcdef0123456789abcdef", t0 + 1h);
    REQUIRE(r.has_value());
    CHECK(entries(*r) == 11);
}

TEST_CASE("B5: one current key per scheme; whsec_ and whsk_ rotate alike", "[B5][B3]") {
    const auto secret = new_secret();
    const auto old_ed = new_asymmetric();
    const auto new_ed = new_asymmetric();
    auto set = kc::signing_key_set::make(secret);
    REQUIRE(set.try_rotate(old_ed, t0).has_value());  // adds v1a beside v1: nothing retired
    CHECK(set.old_keys().empty());
    REQUIRE(set.try_rotate(new_ed, t0, 2h).has_value());
    REQUIRE(set.old_keys().size() == 1);
    CHECK(set.old_keys()[0].is_asymmetric());
    CHECK(set.current_secret() == secret);
    CHECK(set.current_asymmetric() == new_ed);
    auto r = set.try_sign_request(request(), "msg_0123456789abcdef0123456789abcdef", t0 + 1h);
    REQUIRE(r.has_value());
    CHECK(entries(*r) == 3);  // v1, v1a (new), v1a (old)
    CHECK(verifies(*r, {{}, {old_ed.public_key()}}, t0 + 1h));
    CHECK(verifies(*r, {{}, {new_ed.public_key()}}, t0 + 1h));
    CHECK(verifies(*r, {{secret}, {}}, t0 + 1h));
}

TEST_CASE("B5: to_json and printing show no key material; the store form reads back", "[B5][B1]") {
    const auto a = new_secret();
    const auto ed = new_asymmetric();
    auto set = kc::signing_key_set::make(a);
    REQUIRE(set.try_rotate(new_secret(), t0, 2h).has_value());
    REQUIRE(set.try_rotate(ed, t0).has_value());
    const std::string a_text = a.reveal().substr(6), ed_text = ed.reveal().substr(5);

    const nlohmann::json j = set;
    CHECK(j.dump().find(a_text.substr(0, 8)) == std::string::npos);
    CHECK(j.dump().find(ed_text.substr(0, 8)) == std::string::npos);
    CHECK(j["oldKeys"][0]["expiresAt"] == "2026-03-14T11:00:00.000Z");
    CHECK(j["current"].size() == 2);
    std::ostringstream os;
    os << set;
    CHECK(os.str().find(a_text.substr(0, 8)) == std::string::npos);
    CHECK(os.str().find("until 2026-03-14T11:00:00.000Z") != std::string::npos);

    const keyhook::secret stored = kc::store_signing_key_set(set);
    std::ostringstream printed;
    printed << stored;
    CHECK(printed.str().find(a_text.substr(0, 8)) == std::string::npos);
    CHECK(stored.reveal().find(a_text) != std::string::npos);
    const auto back = kc::try_load_signing_key_set(stored.reveal());
    REQUIRE(back.has_value());
    CHECK(*back == set);
}

TEST_CASE("B5: a stored key set that is wrong names the path and never the key", "[B5]") {
    const std::string s1 = new_secret().reveal(), s2 = new_secret().reveal();
    const auto fails = [](const std::string& text, const std::string& path, errc code) {
        const auto r = kc::try_load_signing_key_set(text);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().path == path);
        CHECK(r.error().code == code);
        return r.error().message;
    };
    fails(R"({"current":[]})", "current", errc::missing_member);
    fails(R"({"oldKeys":[]})", "current", errc::missing_member);
    fails(R"({"current":")" + s1 + R"("})", "current", errc::wrong_type);
    const auto two = fails(R"({"current":[")" + s1 + R"(",")" + s2 + R"("]})", "current[1]", errc::invalid_value);
    CHECK(two.find(s2.substr(6, 8)) == std::string::npos);
    fails(R"({"current":["whsec_AAAA"]})", "current[0]", errc::out_of_range);
    fails(R"({"current":[")" + s1 + R"("],"oldKeys":[{"key":")" + s2 + R"("}]})", "oldKeys[0].expiresAt",
          errc::missing_member);
    fails(R"({"current":[")" + s1 + R"("],"oldKeys":[{"key":")" + s2 + R"(","expiresAt":"2026-02-30T00:00:00Z"}]})",
          "oldKeys[0].expiresAt", errc::invalid_timestamp);
    fails(R"({"current":[")" + s1 + R"("],"oldKeys":[{"key":"whpk_AAAA","expiresAt":"2026-03-14T00:00:00Z"}]})",
          "oldKeys[0].key", errc::invalid_value);
    // J1: a repeated member.
    fails(R"({"current":[")" + s1 + R"("],"current":[")" + s2 + R"("]})", "current", errc::duplicate_member);
    // 10 old keys read; 11 are refused.
    std::string old = "[";
    for (int i = 0; i < 11; ++i) {
        if (i) old += ',';
        old += R"({"key":")" + s2 + R"(","expiresAt":"2026-03-14T00:00:00Z"})";
    }
    fails(R"({"current":[")" + s1 + R"("],"oldKeys":)" + old + "]}", "oldKeys", errc::limit_exceeded);
    const auto ten = old.substr(0, old.rfind(",{")) + "]";
    CHECK(kc::try_load_signing_key_set(R"({"current":[")" + s1 + R"("],"oldKeys":)" + ten + "}").has_value());
}

// Regression test: the reader once quoted a key: a key where the expiry
// belongs, and a key used as a member name twice.
TEST_CASE("B5: no error reading a stored key set quotes its text, wherever the key stands", "[B5][B1]") {
    const std::string s1 = new_secret().reveal(), s2 = new_secret().reveal();
    const auto body = s2.substr(6);  // the base64 part, which no message may hold any of
    const auto check_quiet = [&](const std::string& text, const std::string& path, errc code) {
        const auto r = kc::try_load_signing_key_set(text);
        REQUIRE_FALSE(r.has_value());
        INFO(r.error().path << ": " << r.error().message);
        CHECK(r.error().path == path);
        CHECK(r.error().code == code);
        CHECK(r.error().what().find(body.substr(0, 8)) == std::string::npos);
        CHECK(r.error().what().find("whsec_") == std::string::npos);
    };
    check_quiet(R"({"current":[")" + s1 + R"("],"oldKeys":[{"key":")" + s2 + R"(","expiresAt":")" + s2 + R"("}]})",
                "oldKeys[0].expiresAt", errc::invalid_timestamp);
    check_quiet(R"({"current":[")" + s1 + R"("],")" + s2 + R"(":1,")" + s2 + R"(":2})", "[...]",
                errc::duplicate_member);
    check_quiet(R"({"current":[")" + s1 + R"("],"oldKeys":[{")" + s2 + R"(":1,")" + s2 + R"(":2}]})", "oldKeys[0][...]",
                errc::duplicate_member);
    // Paths made of the form's own names and indices are kept whole.
    check_quiet(
        R"({"current":[")" + s1 + R"("],"oldKeys":[{"key":")" + s2 + R"(","expiresAt":"2026-02-30T00:00:00Z"}]})",
        "oldKeys[0].expiresAt", errc::invalid_timestamp);
}

TEST_CASE("B5: the stored form's text is fixed: members in name order, keys in full, T4 expiries", "[B5]") {
    // The store form comes from the key set's member table; a host's stored
    // sets must keep reading, so its text is pinned here.
    const auto first = kc::parse_signing_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", kc::signing_key_use::sign);
    const auto second = kc::parse_signing_secret("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD", kc::signing_key_use::sign);
    auto set = kc::signing_key_set::make(first);
    set.rotate(second, keyhook::parse_timestamp("2026-03-01T00:00:00Z"));
    const std::string text = kc::store_signing_key_set(set).reveal();
    CHECK(text ==
          R"({"current":["whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"],)"
          R"("oldKeys":[{"expiresAt":"2026-03-02T00:00:00.000Z","key":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}]})");
    const auto back = kc::try_load_signing_key_set(text);
    REQUIRE(back.has_value());
    CHECK(*back == set);
    CHECK(kc::store_signing_key_set(*back).reveal() == text);
    // Equality comes from the table too: an old key's expiry counts.
    auto later = kc::signing_key_set::make(first);
    later.rotate(second, keyhook::parse_timestamp("2026-03-01T00:00:01Z"));
    CHECK(later != set);
}

// Host-built values: "one signature entry each" holds when a rotation brings
// back a key the set still holds, and for a stored set that repeats a key.
TEST_CASE("B5: the set never holds a key twice; rotating back makes the old key current", "[B5]") {
    const auto a = new_secret(), b = new_secret();
    auto set = kc::signing_key_set::make(a);
    // Rotating to the current key changes nothing (not even the grace's checks of old keys).
    REQUIRE(set.try_rotate(a, t0).has_value());
    CHECK(set.old_keys().empty());
    CHECK(set.current_secret() == a);
    // a -> b -> a within the grace: a is current again, b old, a's old entry gone.
    REQUIRE(set.try_rotate(b, t0).has_value());
    REQUIRE(set.try_rotate(a, t0 + 1min).has_value());
    CHECK(set.current_secret() == a);
    REQUIRE(set.old_keys().size() == 1);
    CHECK(set.old_keys()[0].secret == b);
    CHECK(set.old_keys()[0].expires_at == t0 + 1min + 24h);
    CHECK(set.keys_at(t0 + 2min).secrets.size() == 2);
    auto r = set.try_sign_request(request(), "msg_0123456789abcdef0123456789abcdef", t0 + 2min);
    REQUIRE(r.has_value());
    CHECK(entries(*r) == 2);
    // Back to b with grace 0: a is not kept, and b's old entry is gone too.
    REQUIRE(set.try_rotate(b, t0 + 3min, 0s).has_value());
    CHECK(set.current_secret() == b);
    CHECK(set.old_keys().empty());
    // Asymmetric keys alike.
    const auto ed1 = new_asymmetric(), ed2 = new_asymmetric();
    auto eds = kc::signing_key_set::make(ed1);
    REQUIRE(eds.try_rotate(ed1, t0).has_value());
    CHECK(eds.old_keys().empty());
    REQUIRE(eds.try_rotate(ed2, t0).has_value());
    REQUIRE(eds.try_rotate(ed1, t0 + 1min).has_value());
    CHECK(eds.current_asymmetric() == ed1);
    REQUIRE(eds.old_keys().size() == 1);
    CHECK(eds.old_keys()[0].asymmetric == ed2);
    // Bringing back an old key frees its slot: with 10 old keys, rotating to one of them is allowed.
    auto full = kc::signing_key_set::make(new_secret());
    std::vector<kc::signing_secret> retired;
    for (int i = 0; i < 10; ++i) {
        retired.push_back(*full.current_secret());
        REQUIRE(full.try_rotate(new_secret(), t0 + i * 1min, 1h).has_value());
    }
    CHECK_FALSE(full.try_rotate(new_secret(), t0 + 10min, 1h).has_value());
    REQUIRE(full.try_rotate(retired[3], t0 + 10min, 1h).has_value());
    CHECK(full.old_keys().size() == 10);
    CHECK(full.current_secret() == retired[3]);
}

TEST_CASE("B5: a stored set that repeats a key signs with it once", "[B5]") {
    const std::string s1 = new_secret().reveal(), s2 = new_secret().reveal();
    const std::string old_entry = R"({"key":")" + s2 + R"(","expiresAt":"2026-03-15T00:00:00Z"})";
    const std::string current_again = R"({"key":")" + s1 + R"(","expiresAt":"2026-03-15T00:00:00Z"})";
    auto set = kc::try_load_signing_key_set(R"({"current":[")" + s1 + R"("],"oldKeys":[)" + old_entry + "," +
                                            old_entry + "," + current_again + "]}")
                   .value();
    const auto keys = set.keys_at(t0);
    CHECK(keys.secrets.size() == 2);
    auto r = set.try_sign_request(request(), "msg_0123456789abcdef0123456789abcdef", t0);
    REQUIRE(r.has_value());
    CHECK(entries(*r) == 2);
}

// Host-built values: a set that cannot sign is never made.
TEST_CASE("B5: a set is never made from, nor rotated to, a secret keyhook may not sign with", "[B5][B1]") {
    const auto short_key = kc::parse_signing_secret("whsec_" + std::string(16, 'A'));  // 12 bytes
    const auto made = kc::signing_key_set::try_make(short_key);
    REQUIRE_FALSE(made.has_value());
    CHECK(made.error().code == errc::out_of_range);
    CHECK(made.error().path == "signingSecret");
    CHECK_THROWS_AS(kc::signing_key_set::make(short_key), keyhook::exception);
    auto key = new_secret();
    const auto taken = std::move(key);
    // NOLINTBEGIN(bugprone-use-after-move): the moved-from secret is the subject
    CHECK(kc::signing_key_set::try_make(key).error().message.find("0 bytes") != std::string::npos);
    auto set = kc::signing_key_set::make(taken);
    CHECK(set.try_rotate(key, t0).error().path == "signingSecret");
    // NOLINTEND(bugprone-use-after-move)
    CHECK(set.old_keys().empty());
    CHECK(kc::signing_key_set::try_make(kc::parse_signing_secret("whsec_" + std::string(32, 'A'))).has_value());
}

TEST_CASE("B5: a moved-from set keeps its keys, signs, rotates and stores as before", "[B5]") {
    const auto a = new_secret(), b = new_secret();
    auto set = kc::signing_key_set::make(a);
    REQUIRE(set.try_rotate(b, t0).has_value());
    const auto copy = set;
    const auto other = std::move(set);
    // NOLINTBEGIN(bugprone-use-after-move): the moved-from set is the subject
    CHECK(set == copy);
    CHECK(other == copy);
    auto r = set.try_sign_request(request(), "msg_0123456789abcdef0123456789abcdef", t0 + 1h);
    REQUIRE(r.has_value());
    CHECK(entries(*r) == 2);
    CHECK(kc::try_load_signing_key_set(kc::store_signing_key_set(set).reveal()).value() == copy);
    REQUIRE(set.try_rotate(new_secret(), t0 + 1h).has_value());
    r = set.try_sign_request(request(), "msg_0123456789abcdef0123456789abcdef", t0 + 2h);
    REQUIRE(r.has_value());
    CHECK(entries(*r) == 3);
    auto assigned = kc::signing_key_set::make(new_secret());
    assigned = std::move(set);
    CHECK(assigned == set);
    // NOLINTEND(bugprone-use-after-move)
}

// Host-built values: instants the host builds may lie near the clock's end.
TEST_CASE("B5: an old key's expiry saturates at the end of time", "[B5]") {
    const auto a = new_secret();
    auto set = kc::signing_key_set::make(a);
    const auto late = timestamp::max() - 1h;
    REQUIRE(set.try_rotate(new_secret(), late, 24h).has_value());
    REQUIRE(set.old_keys().size() == 1);
    CHECK(set.old_keys()[0].expires_at == timestamp::max());
    CHECK(set.keys_at(late).secrets.size() == 2);  // kept, not expired in the far past
    REQUIRE(set.try_rotate(new_secret(), timestamp::max() - 24h, 24h).has_value());
    CHECK(set.old_keys().back().expires_at == timestamp::max());
}
