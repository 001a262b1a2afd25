// K11: stored digests, pepper sets, verification, the rehash answer, and an
// index built from stored digests (K10 from digests alone).
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/authorization.hpp"
#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/key_rotation.hpp"
#include "keyhook/crypto/random.hpp"
#include "keyhook/crypto/stored_key.hpp"
#include "keyhook/key_index.hpp"

namespace kc = keyhook::crypto;
using keyhook::secret;

namespace {

std::string hex(const keyhook::key_fingerprint& b, std::size_t n = 32) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (std::size_t i = 0; i < n; ++i) {
        s += digits[b[i] >> 4];
        s += digits[b[i] & 15];
    }
    return s;
}

#if !defined(KEYHOOK_COMPILED_CRYPTO)
std::string unhex(std::string_view h) {
    std::string out;
    for (std::size_t i = 0; i + 1 < h.size(); i += 2)
        out += static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16));
    return out;
}
#endif

template <class T>
std::string printed(const T& v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

secret pepper_bytes(char fill, std::size_t n = 32) { return secret(std::string(n, fill)); }

kc::pepper_set two_peppers() {
    kc::pepper_set p;
    p.add("p2", pepper_bytes('b'));
    p.add("p1", pepper_bytes('a'));
    return p;
}

}  // namespace

// The pepper ring is defined in the implementation file: in compiled mode
// (keyhook::crypto_compiled) a test cannot reach it, so this runs header-only.
#if !defined(KEYHOOK_COMPILED_CRYPTO)
// RFC 4231 section 4: HMAC-SHA-256 through the digest the pepper set computes
// (the keys there are 4 to 131 bytes, so the ring is built directly).
TEST_CASE("RFC 4231 HMAC-SHA-256 vectors through the pepper digest", "[K11]") {
    struct vector {
        std::string key, data, mac;
        std::size_t compare = 32;  // case 5 is truncated to 128 bits
    };
    const std::vector<vector> vectors = {
        {std::string(20, '\x0b'), "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
        {"Jefe", "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
        {std::string(20, '\xaa'), std::string(50, '\xdd'),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
        {unhex("0102030405060708090a0b0c0d0e0f10111213141516171819"), std::string(50, '\xcd'),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
        {std::string(20, '\x0c'), "Test With Truncation", "a3b6167473100ee06e0c796c2955552b", 16},
        {std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
        {std::string(131, '\xaa'),
         "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be "
         "hashed before being used by the HMAC algorithm.",
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
    };
    for (const auto& v : vectors) {
        kc::detail::pepper_ring ring;
        ring.peppers.push_back(std::make_unique<kc::detail::pepper>());
        ring.peppers.back()->id = "rfc";
        ring.peppers.back()->bytes.get() = v.key;
        keyhook::key_fingerprint out{};
        REQUIRE(ring.digest(2, v.data, out));
        CHECK(hex(out, v.compare) == v.mac);
        // The prepared context gives the same answer again (it is reset, not re-keyed).
        keyhook::key_fingerprint again{};
        REQUIRE(ring.digest(2, v.data, again));
        CHECK(again == out);
    }
    // Scheme 1 is plain SHA-256 (FIPS 180-2's "abc").
    kc::detail::pepper_ring ring;
    keyhook::key_fingerprint out{};
    REQUIRE(ring.digest(1, "abc", out));
    CHECK(hex(out) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK_FALSE(ring.digest(2, "abc", out));  // no pepper in that place
}
#endif

TEST_CASE("a stored digest is kh1.<pepper id>.<43 base64url characters>, written only by try_store_form", "[K11]") {
    const auto peppers = two_peppers();
    const secret key("sk_live_0123456789abcdef");
    const auto d = kc::try_compute_stored_digest(peppers, key).value();
    CHECK(d.form() == kc::digest_form::kh1);
    CHECK(d.pepper_id() == "p2");
    const std::string text = d.try_store_form().value();
    REQUIRE(text.size() == 4 + 2 + 1 + 43);
    CHECK(text.substr(0, 7) == "kh1.p2.");
    CHECK(text.find('=') == std::string::npos);
    CHECK(text.find('+') == std::string::npos);
    CHECK(text.find('/') == std::string::npos);
    CHECK(kc::try_parse_stored_digest(text).value() == d);
    // Never printed: a mask in operator<< and JSON; nothing of the base64 part.
    const std::string body = text.substr(7);
    CHECK(printed(d) == "stored_digest(kh1.p2." + std::string(43, '*') + ")");
    CHECK(nlohmann::json(d).get<std::string>() == "kh1.p2." + std::string(43, '*'));
    CHECK(printed(d).find(body.substr(0, 6)) == std::string::npos);
    CHECK(printed(peppers) == "pepper_set(current \"p2\", 2 peppers)");
    // Deterministic, and different for another key or another pepper.
    CHECK(kc::try_compute_stored_digest(peppers, key).value() == d);
    CHECK(kc::try_compute_stored_digest(peppers, secret("sk_live_0123456789abcdeg")).value() != d);
    auto rotated = peppers;
    rotated.try_make_current("p1").value();
    const auto under_p1 = kc::try_compute_stored_digest(rotated, key).value();
    CHECK(under_p1.pepper_id() == "p1");
    CHECK(under_p1 != d);
    // Refused: an empty key, an empty set.
    CHECK(kc::try_compute_stored_digest(peppers, secret("")).error().path == "key");
    CHECK(kc::try_compute_stored_digest(kc::pepper_set(), key).error().path == "peppers");
}

TEST_CASE("parsing stored digests: both sides of every boundary", "[K11]") {
    const std::string b43 = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";  // 32 zero bytes
    REQUIRE(b43.size() == 43);
    CHECK(kc::try_parse_stored_digest("kh1.p." + b43));
    CHECK(kc::try_parse_stored_digest("kh1." + std::string(32, 'x') + "." + b43));
    CHECK(kc::try_parse_stored_digest("kh1.A-z_9." + b43));
    CHECK_FALSE(kc::try_parse_stored_digest("kh1." + b43.substr(0, 42) + "Q"));  // no id at all
    const std::vector<std::string> refused = {
        "kh1.." + b43,                              // empty id
        "kh1." + std::string(33, 'x') + "." + b43,  // 33-character id
        "kh1.p!." + b43,                            // outside the alphabet
        "kh1.p." + b43.substr(0, 42),               // 42 characters
        "kh1.p." + b43 + "A",                       // 44 characters
        "kh1.p." + b43.substr(0, 42) + "B",         // leftover bits not zero
        "kh1.p." + b43.substr(0, 41) + "+A",        // standard alphabet
        "kh1.p." + b43.substr(0, 42) + "=",         // padding
        "KH1.p." + b43,                             // prefix is case-sensitive
        "sha256." + std::string(63, 'a'),           // 63 hex digits
        "sha256." + std::string(65, 'a'),           // 65
        "sha256." + std::string(64, 'A'),           // upper case hex
        "sha256." + std::string(63, 'a') + "g",     // not hex
        "sha256." + b43,                            // base64 without padding
        "sha256." + b43 + "A",                      // 44 without '='
        "",
        "plaintext-key",
    };
    for (const auto& text : refused) {
        const auto r = kc::try_parse_stored_digest(text, "keys[3].storedKey");
        INFO(text);
        REQUIRE_FALSE(r);
        CHECK(r.error().path == "keys[3].storedKey");
        CHECK(r.error().code == keyhook::errc::invalid_value);
        if (text.size() > 12) CHECK(r.error().message.find(text.substr(text.size() - 10)) == std::string::npos);
    }
    const auto hex_form = kc::try_parse_stored_digest("sha256." + std::string(64, 'f')).value();
    CHECK(hex_form.form() == kc::digest_form::sha256_hex);
    CHECK(hex_form.legacy());
    CHECK(hex_form.pepper_id().empty());
    CHECK(printed(hex_form) == "stored_digest(sha256." + std::string(64, '*') + ")");
    const auto b64_form = kc::try_parse_stored_digest("sha256." + b43 + "=").value();
    CHECK(b64_form.form() == kc::digest_form::sha256_base64);
    // Legacy digests are read, never written.
    CHECK(hex_form.try_store_form().error().path == "storedKey");
    CHECK(b64_form.try_store_form().error().code == keyhook::errc::invalid_value);
}

TEST_CASE("pepper sets: ids, sizes, current, rotation", "[K11]") {
    kc::pepper_set p;
    CHECK(p.empty());
    CHECK(p.current_id().empty());
    CHECK(printed(p) == "pepper_set(empty)");
    CHECK(p.try_add("a", pepper_bytes('x', 31)).error().path == "peppers");
    CHECK(p.try_add("a", pepper_bytes('x', 65)).error().path == "peppers");
    CHECK(p.try_add("", pepper_bytes('x')).error().path == "peppers");
    CHECK_FALSE(p.try_add(std::string(33, 'i'), pepper_bytes('x')));
    CHECK_FALSE(p.try_add("a.b", pepper_bytes('x')));
    CHECK(p.try_add(std::string(32, 'i'), pepper_bytes('x', 32)));
    CHECK(p.try_add("b", pepper_bytes('y', 64)));
    const auto twice = p.try_add("b", pepper_bytes('z'));
    REQUIRE_FALSE(twice);
    CHECK(twice.error().message.find("zzzz") == std::string::npos);
    CHECK(p.size() == 2);
    CHECK(p.current_id() == std::string(32, 'i'));
    CHECK(p.contains("b"));
    CHECK_FALSE(p.contains("c"));
    CHECK(p.try_make_current("b"));
    CHECK(p.current_id() == "b");
    CHECK_FALSE(p.try_make_current("c"));
    // A refused size names the pepper and its size, never its bytes.
    const auto small = p.try_add("c", secret("secret-pepper-bytes"));
    REQUIRE_FALSE(small);
    CHECK(small.error().message.find("secret-pepper") == std::string::npos);
    // A copy is independent.
    auto copy = p;
    copy.try_make_current(std::string(32, 'i')).value();
    CHECK(p.current_id() == "b");
    // Moved from: empty, every function still answers.
    auto moved = std::move(copy);
    CHECK(moved.size() == 2);
    CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): the contract after a move
    CHECK(printed(copy) == "pepper_set(empty)");
    CHECK(copy.try_add("n", pepper_bytes('n')));
    CHECK(copy.current_id() == "n");
}

TEST_CASE("verifying against one stored digest, and the rehash answer", "[K11]") {
    auto peppers = two_peppers();  // current p2, older p1
    const std::string key = "sk_live_presented_key_0001";
    const auto current = kc::try_compute_stored_digest(peppers, secret(key)).value();
    auto old_set = peppers;
    old_set.try_make_current("p1").value();
    const auto old = kc::try_compute_stored_digest(old_set, secret(key)).value();

    const auto m1 = kc::try_verify_stored_key(peppers, key, current).value();
    CHECK(m1.matched);
    CHECK_FALSE(m1.rehash);
    CHECK(printed(m1) == "matched");
    const auto miss = kc::try_verify_stored_key(peppers, key + "x", current).value();
    CHECK_FALSE(miss.matched);
    CHECK_FALSE(miss.rehash);
    CHECK(printed(miss) == "no match");
    CHECK_FALSE(kc::try_verify_stored_key(peppers, key.substr(1), current).value());

    const auto m2 = kc::try_verify_stored_key(peppers, key, old).value();
    CHECK(m2.matched);
    REQUIRE(m2.rehash);
    CHECK(*m2.rehash == current);
    CHECK(printed(m2) == "matched; store again under the current pepper");
    CHECK_FALSE(kc::try_verify_stored_key(peppers, "other", old).value().rehash);

    // Legacy SHA-256 (of "sk_live_presented_key_0001"), hex and padded base64.
    keyhook::key_fingerprint sha{};
    REQUIRE(kc::detail::pepper_ring().digest(1, key, sha));
    const auto legacy_hex = kc::try_parse_stored_digest("sha256." + hex(sha)).value();
    const auto legacy_b64 = kc::try_parse_stored_digest("sha256." + keyhook::base64_encode(sha.data(), 32)).value();
    for (const auto* legacy : {&legacy_hex, &legacy_b64}) {
        const auto m = kc::try_verify_stored_key(peppers, key, *legacy).value();
        CHECK(m.matched);
        REQUIRE(m.rehash);
        CHECK(*m.rehash == current);
        CHECK_FALSE(kc::try_verify_stored_key(peppers, key + " ", *legacy).value());
    }

    // A pepper the host does not hold: an error naming its id.
    kc::pepper_set other;
    other.add("p9", pepper_bytes('c'));
    const auto unknown = kc::try_verify_stored_key(other, key, current);
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().path == "storedKey");
    CHECK(unknown.error().message.find("\"p2\"") != std::string::npos);
}

namespace {

struct fixture {
    keyhook::permission_policy policy;
    std::vector<std::pair<std::string, keyhook::api_key>> records;  // tenant, record
    std::vector<std::string> keys;

    fixture() {
        policy.groups["g:run"].access[keyhook::resource::all()] = keyhook::access_level::execute;
        policy.groups["g:read"].access[keyhook::resource::folder("F")] = keyhook::access_level::read;
        for (int i = 0; i < 60; ++i) {
            keyhook::api_key r;
            r.id = keyhook::key_id("00000000-0000-4000-8000-0000000000" + std::to_string(10 + i));
            r.name = "key " + std::to_string(i);
            r.status = i % 7 == 0 ? keyhook::key_status::revoked : keyhook::key_status::active;
            r.active_from = keyhook::parse_timestamp(i % 11 == 0 ? "2031-01-01T00:00:00Z" : "2024-01-01T00:00:00Z");
            r.expire_at = keyhook::parse_timestamp(i % 13 == 0 ? "2025-01-01T00:00:00Z" : "2032-01-01T00:00:00Z");
            r.groups = i % 2 ? std::vector<std::string>{"g:run"} : std::vector<std::string>{"g:read"};
            records.emplace_back("tenant-" + std::to_string(i % 3), r);
            keys.push_back("sk_" + std::to_string(i * 7919) + "_key");
        }
    }
};

}  // namespace

TEST_CASE("an index from stored digests authorizes exactly as one from the keys", "[K10][K11]") {
    const fixture f;
    auto peppers = two_peppers();
    auto old_set = peppers;
    old_set.try_make_current("p1").value();

    keyhook::key_index from_keys(std::array<unsigned char, 16>{1});
    keyhook::key_index from_digests(std::array<unsigned char, 16>{2});
    for (std::size_t i = 0; i < f.records.size(); ++i) {
        const auto& [tenant, record] = f.records[i];
        from_keys.add(tenant, record, secret(f.keys[i]), f.policy);
        // A third under the current pepper, a third under the older, a third legacy.
        keyhook::key_fingerprint sha{};
        REQUIRE(kc::detail::pepper_ring().digest(1, f.keys[i], sha));
        const auto stored = i % 3 == 0   ? kc::try_compute_stored_digest(peppers, secret(f.keys[i])).value()
                            : i % 3 == 1 ? kc::try_compute_stored_digest(old_set, secret(f.keys[i])).value()
                                         : kc::try_parse_stored_digest("sha256." + hex(sha)).value();
        REQUIRE(kc::try_add_stored(from_digests, peppers, tenant, record, stored, f.policy));
    }
    CHECK(from_digests.size() == from_keys.size());

    const auto now = keyhook::parse_timestamp("2026-06-01T00:00:00Z");
    std::vector<std::string> presented = f.keys;
    presented.insert(presented.end(), {"", "unknown", "sk_0_key ", "SK_0_KEY"});
    std::size_t allowed = 0;
    for (const auto& key : presented)
        for (const std::string tenant : {"tenant-0", "tenant-1", "tenant-2", "", "tenant-9"})
            for (const auto& family : {keyhook::api_family::execute(), keyhook::api_family::batch()}) {
                const auto resource = keyhook::resource_ref::in_folder("F");
                const auto a =
                    keyhook::authorize(from_keys, key, tenant, family, resource, keyhook::access_level::read, now);
                const auto b =
                    keyhook::authorize(from_digests, key, tenant, family, resource, keyhook::access_level::read, now);
                INFO(key << " " << tenant);
                CHECK(a.reason() == b.reason());
                CHECK(a.key() == b.key());
                CHECK(a.status() == b.status());
                CHECK(a.granted() == b.granted());
                CHECK(a.message() == b.message());
                CHECK_FALSE(a.digest_outdated());
                allowed += a.allowed();
            }
    CHECK(allowed > 10);  // the comparison saw allowed calls, not only denials

    // The rehash answer: only for keys matched under the older pepper or legacy.
    std::size_t rehashed = 0;
    for (std::size_t i = 0; i < f.records.size(); ++i) {
        const auto& [tenant, record] = f.records[i];
        const auto a = keyhook::authorize(from_digests, f.keys[i], tenant, keyhook::api_family::execute(),
                                          keyhook::resource_ref::in_folder("F"), keyhook::access_level::read, now);
        const auto answer = kc::try_rehash_answer(peppers, a, f.keys[i]).value();
        if (!a.allowed()) {
            CHECK_FALSE(answer);
            continue;
        }
        CHECK(a.digest_outdated() == (i % 3 != 0));
        CHECK(answer.has_value() == (i % 3 != 0));
        if (answer) {
            CHECK(*answer == kc::try_compute_stored_digest(peppers, secret(f.keys[i])).value());
            ++rehashed;
        }
    }
    CHECK(rehashed > 5);

    // Removing keys keeps the index consistent with the other.
    for (std::size_t i = 0; i < f.records.size(); i += 2) {
        CHECK(from_keys.remove(f.records[i].second.id));
        CHECK(from_digests.remove(f.records[i].second.id));
    }
    for (std::size_t i = 0; i < f.records.size(); ++i) CHECK((from_digests.find(f.keys[i]) != nullptr) == (i % 2 == 1));
}

// Regression test: a caller presented a stored digest's 32 bytes as the key of a
// call to an index holding plaintext-added keys too, and was let in.
TEST_CASE("a stored digest's bytes presented as a key authorize nothing", "[K10][K11]") {
    const fixture f;
    const auto peppers = two_peppers();
    keyhook::key_index index(std::array<unsigned char, 16>{4});
    // Records 1 and 2 from stored digests (kh1. and legacy), record 3 from its key.
    const auto kh1 = kc::try_compute_stored_digest(peppers, secret(f.keys[1])).value();
    const auto legacy = kc::try_parse_stored_digest("sha256." + std::string(64, 'c')).value();
    REQUIRE(kc::try_add_stored(index, peppers, f.records[1].first, f.records[1].second, kh1, f.policy));
    REQUIRE(kc::try_add_stored(index, peppers, f.records[2].first, f.records[2].second, legacy, f.policy));
    REQUIRE(index.try_add(f.records[3].first, f.records[3].second, secret(f.keys[3]), f.policy));

    const auto now = keyhook::parse_timestamp("2026-06-01T00:00:00Z");
    const auto attempt = [&](const keyhook::key_fingerprint& bytes, const std::string& tenant) {
        const std::string presented(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        return keyhook::authorize(index, presented, tenant, keyhook::api_family::execute(),
                                  keyhook::resource_ref::in_folder("F"), keyhook::access_level::read, now);
    };
    CHECK(attempt(kh1.bytes(), f.records[1].first).reason() == keyhook::denial_reason::unknown_key);
    CHECK(attempt(legacy.bytes(), f.records[2].first).reason() == keyhook::denial_reason::unknown_key);
    // The key itself still works (the entry is there), and so does the plaintext one.
    CHECK(keyhook::authorize(index, f.keys[1], f.records[1].first, keyhook::api_family::execute(),
                             keyhook::resource_ref::in_folder("F"), keyhook::access_level::read, now)
              .allowed());
    CHECK(index.find(f.keys[3]) != nullptr);
    // Adding a digest's bytes as a plaintext key is no oracle: it is another key.
    keyhook::api_key other = f.records[4].second;
    const std::string raw(reinterpret_cast<const char*>(kh1.bytes().data()), kh1.bytes().size());
    CHECK(index.try_add(f.records[4].first, other, secret(raw), f.policy));
}

TEST_CASE("an index from stored digests refuses what it cannot read", "[K11]") {
    const fixture f;
    const auto peppers = two_peppers();
    keyhook::key_index index(std::array<unsigned char, 16>{3});
    const auto& [tenant, record] = f.records[1];
    const auto stored = kc::try_compute_stored_digest(peppers, secret(f.keys[1])).value();

    // A pepper the set does not hold: the error names it.
    kc::pepper_set other;
    other.add("q1", pepper_bytes('q'));
    const auto unknown = kc::try_add_stored(index, other, tenant, record, stored, f.policy);
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().message.find("\"p2\"") != std::string::npos);
    CHECK(index.empty());
    CHECK(kc::try_add_stored(index, kc::pepper_set(), tenant, record, stored, f.policy).error().path == "peppers");

    REQUIRE(kc::try_add_stored(index, peppers, tenant, record, stored, f.policy));
    // The same key again (another id), the same id again.
    auto again = record;
    again.id = keyhook::key_id("00000000-0000-4000-8000-0000000000ff");
    CHECK(kc::try_add_stored(index, peppers, tenant, again, stored, f.policy).error().path == "storedKey");
    const auto other_key = kc::try_compute_stored_digest(peppers, secret("another")).value();
    CHECK(kc::try_add_stored(index, peppers, tenant, record, other_key, f.policy).error().path == "id");
    // Another set (or the same set changed since: its peppers were copied).
    auto changed = peppers;
    changed.add("p3", pepper_bytes('d'));
    CHECK(kc::try_add_stored(index, changed, tenant, again, other_key, f.policy).error().path == "storedKey");
    CHECK(kc::try_add_stored(index, peppers, tenant, again, other_key, f.policy));
    CHECK(index.size() == 2);
}

// Moved-from contracts: every public crypto type's moved-from state keeps every
// function's contract (printing, comparison, copying, assignment, use).
namespace {
template <class T>
T sample();
template <>
kc::public_key sample<kc::public_key>() {
    return kc::generate_asymmetric_signing_key(kc::openssl_random{}).public_key();
}
template <>
kc::asymmetric_signing_key sample<kc::asymmetric_signing_key>() {
    return kc::generate_asymmetric_signing_key(kc::openssl_random{});
}
template <>
kc::signing_secret sample<kc::signing_secret>() {
    return kc::generate_signing_secret(kc::openssl_random{});
}
template <>
kc::pepper_set sample<kc::pepper_set>() {
    return two_peppers();
}
template <>
kc::signing_key_set sample<kc::signing_key_set>() {
    auto set = kc::signing_key_set::make(kc::generate_signing_secret(kc::openssl_random{}));
    set.rotate(kc::generate_signing_secret(kc::openssl_random{}), keyhook::parse_timestamp("2026-01-01T00:00:00Z"));
    return set;
}
template <>
kc::stored_digest sample<kc::stored_digest>() {
    return kc::try_compute_stored_digest(two_peppers(), secret("k")).value();
}
}  // namespace

TEMPLATE_TEST_CASE("a moved-from crypto value keeps every function's contract", "[K11][B5]", kc::public_key,
                   kc::asymmetric_signing_key, kc::signing_secret, kc::pepper_set, kc::stored_digest,
                   kc::signing_key_set) {
    TestType a = sample<TestType>();
    TestType b(std::move(a));
    // NOLINTBEGIN(bugprone-use-after-move): the contract after a move is the subject
    const std::string p = printed(a);
    CHECK(p.size() < 200);
    TestType c = a;  // copyable
    c = std::move(b);
    b = a;
    a = c;
    CHECK(printed(a) == printed(c));
    if constexpr (std::is_same_v<TestType, kc::public_key>) {
        const auto key = kc::generate_asymmetric_signing_key(kc::openssl_random{});
        kc::public_key moved = key.public_key();
        kc::public_key taken(std::move(moved));
        CHECK(moved == taken);
        CHECK(printed(moved) == printed(taken));
        const auto sig = kc::ed25519_sign(key, "message");
        CHECK(kc::ed25519_verify(moved, "message", sig));
        CHECK(moved.to_string() == key.public_key().to_string());
    }
    if constexpr (std::is_same_v<TestType, kc::asymmetric_signing_key>) {
        TestType moved = sample<TestType>();
        TestType taken(std::move(moved));
        CHECK(moved == taken);
        CHECK(printed(moved) == printed(taken));
        const auto at = keyhook::parse_timestamp("2026-01-01T00:00:00Z");
        CHECK(kc::compute_asymmetric_signature(moved, "msg_1", at, "{}") ==
              kc::compute_asymmetric_signature(taken, "msg_1", at, "{}"));
    }
    if constexpr (std::is_same_v<TestType, kc::pepper_set>) {
        TestType moved = sample<TestType>();
        TestType taken(std::move(moved));
        CHECK(moved.empty());
        CHECK_FALSE(kc::try_compute_stored_digest(moved, secret("k")));
        CHECK(kc::try_compute_stored_digest(taken, secret("k")));
    }
    if constexpr (std::is_same_v<TestType, kc::stored_digest>) {
        TestType moved = sample<TestType>();
        TestType taken(std::move(moved));
        CHECK(moved == taken);
    }
    if constexpr (std::is_same_v<TestType, kc::signing_key_set>) {
        // A move copies (B5): the source still signs.
        TestType moved = sample<TestType>();
        TestType taken(std::move(moved));
        CHECK(moved == taken);
        const auto at = keyhook::parse_timestamp("2026-01-01T01:00:00Z");
        const keyhook::http_request r{"POST", "https://hooks.example.com/in", {}, "{}"};
        CHECK(moved.try_sign_request(r, "msg_0123456789abcdef0123456789abcdef", at) ==
              taken.try_sign_request(r, "msg_0123456789abcdef0123456789abcdef", at));
    }
    if constexpr (std::is_same_v<TestType, kc::signing_secret>) {
        TestType moved = sample<TestType>();
        TestType taken(std::move(moved));
        CHECK(printed(moved).find("whsec_") != std::string::npos);
        CHECK_FALSE(moved == taken);  // emptied: its key went to `taken`
    }
    // NOLINTEND(bugprone-use-after-move)
}
