#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "keyhook/authorization.hpp"
#include "keyhook/key_index.hpp"

using namespace keyhook;
using test_support::at;
using test_support::record_with_id;

namespace {

std::array<unsigned char, 16> fixed_hashing_key() {
    std::array<unsigned char, 16> k{};
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<unsigned char>(i);
    return k;
}

std::string hex(const detail::sip_digest& d) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    for (auto word : {d.lo, d.hi})
        for (int i = 0; i < 8; ++i) {
            const auto b = static_cast<unsigned>((word >> (8 * i)) & 0xff);
            s += digits[b >> 4];
            s += digits[b & 0xf];
        }
    return s;
}

}  // namespace

TEST_CASE("K10: SipHash-2-4-128 gives the published vectors (the rounds and loads 1-3 shares)", "[K10][index]") {
    // Key 00 .. 0f, messages 00 .. (n-1): the published 128-bit vectors.
    std::string message;
    for (int i = 0; i < 64; ++i) message += static_cast<char>(i);
    const std::uint64_t k0 = 0x0706050403020100ULL, k1 = 0x0f0e0d0c0b0a0908ULL;
    CHECK(hex(detail::siphash128(k0, k1, message.substr(0, 0))) == "a3817f04ba25a8e66df67214c7550293");
    CHECK(hex(detail::siphash128(k0, k1, message.substr(0, 1))) == "da87c1d86b99af44347659119b22fc45");
    CHECK(hex(detail::siphash128(k0, k1, message.substr(0, 2))) == "8177228da4a45dc7fca38bdef60affe4");
    CHECK(hex(detail::siphash128(k0, k1, message.substr(0, 3))) == "9c70b60c5267a94e5f33b6b02985ed51");
    // Lengths across block boundaries, checked against OpenSSL's SIPHASH MAC (size 16).
    CHECK(hex(detail::siphash128(k0, k1, message.substr(0, 15))) == "5493e99933b0a8117e08ec0f97cfc3d9");
    CHECK(hex(detail::siphash128(k0, k1, message.substr(0, 36))) == "3dc47d1f29c448461e9e76ed904f6711");
    CHECK(hex(detail::siphash128(k0, k1, message.substr(0, 63))) == "5150d1772f50834a503e069a973fbd7c");
}

TEST_CASE("K10: the index's digest is SipHash-1-3-128 (vectors)", "[K10][M3][index]") {
    // No 1-3-128 vectors are published; these come from an implementation in
    // Python written from the reference C code (siphash.c, cROUNDS 1, dROUNDS
    // 3), which reproduces the seven 2-4-128 vectors above.
    std::string message;
    for (int i = 0; i < 64; ++i) message += static_cast<char>(i);
    const std::uint64_t k0 = 0x0706050403020100ULL, k1 = 0x0f0e0d0c0b0a0908ULL;
    CHECK(hex(detail::siphash13_128(k0, k1, message.substr(0, 0))) == "e77ebcb22788a5befd62db6add303001");
    CHECK(hex(detail::siphash13_128(k0, k1, message.substr(0, 1))) == "fc6f370460d3eda85e0573cc2b2ff063");
    CHECK(hex(detail::siphash13_128(k0, k1, message.substr(0, 3))) == "6bc5ccfa1edcf79f4823187712ebd743");
    CHECK(hex(detail::siphash13_128(k0, k1, message.substr(0, 4))) == "0c784e71ac2b285a9f8e92e78fbf2c25");
    CHECK(hex(detail::siphash13_128(k0, k1, message.substr(0, 7))) == "1084b923f2aae0c3a62f2ec80848ab77");
    CHECK(hex(detail::siphash13_128(k0, k1, message.substr(0, 8))) == "aa12fee1d5e3dab4724f16ab35f9c799");
    CHECK(hex(detail::siphash13_128(k0, k1, message.substr(0, 15))) == "c17e5505b2bd526c2921cdec1e7e0109");
    CHECK(hex(detail::siphash13_128(k0, k1, message.substr(0, 16))) == "d0a8d95715518eebb513b0f83d9e1793");
    CHECK(hex(detail::siphash13_128(k0, k1, message.substr(0, 36))) == "37a110f002718edad24b3f9ee453f140");
    CHECK(hex(detail::siphash13_128(k0, k1, message.substr(0, 63))) == "4c5800e34efe426f079f6b0aa75260ad");
    CHECK(hex(detail::siphash13_128(k0, k1, message.substr(0, 64))) == "1253def24b4aa5364ec8a759ba6a66c2");

    // The index stores exactly this digest of the key under its hashing key.
    key_index index(fixed_hashing_key());
    index.add("acme", record_with_id("id-1"), secret(message.substr(0, 36)), permission_policy{});
    const auto* e = index.find(message.substr(0, 36));
    REQUIRE(e);
    CHECK(hex(e->digest) == "37a110f002718edad24b3f9ee453f140");
}

TEST_CASE("K10: the index finds exactly the indexed keys", "[K10][index]") {
    key_index index(fixed_hashing_key());
    const permission_policy policy;
    index.add("acme", record_with_id("id-1"), secret("0123456789abcdef-one"), policy);
    index.add("acme", record_with_id("id-2"), secret("0123456789abcdef-two"), policy);
    CHECK(index.size() == 2);

    const auto* one = index.find("0123456789abcdef-one");
    REQUIRE(one);
    CHECK(index.id_of(*one) == "id-1");
    CHECK(index.tenant_of(*one) == "acme");
    CHECK(index.id_of(*index.find("0123456789abcdef-two")) == "id-2");
    CHECK_FALSE(index.find("0123456789abcdef-on"));    // a prefix
    CHECK_FALSE(index.find("0123456789abcdef-one "));  // one more character
    CHECK_FALSE(index.find("0123456789abcdef-onE"));   // last character differs
    CHECK_FALSE(index.find(""));
    CHECK(index.find_id(key_id("id-2")) == index.find("0123456789abcdef-two"));
}

TEST_CASE("K10: adding refuses empty keys and duplicates", "[K10][index]") {
    key_index index(fixed_hashing_key());
    const permission_policy policy;
    index.add("acme", record_with_id("id-1"), secret("0123456789abcdef"), policy);

    auto r = index.try_add("acme", record_with_id("id-2"), secret("0123456789abcdef"), policy);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_key);
    CHECK(r.error().path == "key");
    CHECK(r.error().what().find("0123456789abcdef") == std::string::npos);

    r = index.try_add("acme", record_with_id("id-1"), secret("fedcba9876543210"), policy);
    REQUIRE_FALSE(r);
    CHECK(r.error().path == "id");

    r = index.try_add("acme", record_with_id("id-3"), secret(""), policy);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_key);
    CHECK(index.size() == 1);
}

TEST_CASE("K10: a random hashing key changes the digests, not the answers", "[K10][index]") {
    test_support::seeded_random random_a(1), random_b(2);
    key_index a(random_a), b(random_b);
    CHECK(random_a.bytes == 16);
    const permission_policy policy;
    a.add("t", record_with_id("x"), secret("0123456789abcdef"), policy);
    b.add("t", record_with_id("x"), secret("0123456789abcdef"), policy);
    CHECK(a.find("0123456789abcdef")->digest.lo != b.find("0123456789abcdef")->digest.lo);
    CHECK(a.id_of(*a.find("0123456789abcdef")) == b.id_of(*b.find("0123456789abcdef")));
}

TEST_CASE("K10: removal and updates keep every other key findable", "[K10][K6][K8][index]") {
    key_index index(fixed_hashing_key());
    const permission_policy policy;
    test_support::seeded_random random(99);
    std::vector<std::string> keys;
    for (int i = 0; i < 3000; ++i) {
        keys.push_back(generate_uuid_v4(random));
        index.add("acme", record_with_id("id-" + std::to_string(i)), secret(keys.back()), policy);
    }
    std::vector<std::size_t> order(keys.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::mt19937 shuffle(5);
    std::shuffle(order.begin(), order.end(), shuffle);
    const std::size_t removed = 2000;
    for (std::size_t n = 0; n < removed; ++n) CHECK(index.remove(key_id("id-" + std::to_string(order[n]))));
    CHECK(index.size() == keys.size() - removed);
    CHECK_FALSE(index.remove(key_id("id-" + std::to_string(order[0]))));

    std::size_t found = 0, missing = 0;
    for (std::size_t n = 0; n < order.size(); ++n) {
        const auto* e = index.find(keys[order[n]]);
        if (n < removed) {
            missing += e == nullptr;
        } else if (e && index.id_of(*e) == "id-" + std::to_string(order[n])) {
            ++found;
        }
    }
    CHECK(missing == removed);
    CHECK(found == keys.size() - removed);

    // A lifecycle change reaches the index through update().
    const auto i = order[removed];
    auto record = record_with_id("id-" + std::to_string(i));
    const auto now = at("2024-06-01T00:00:00Z");
    CHECK(index.find(keys[i])->status_at(now) == key_status::active);
    record.status = key_status::revoked;
    CHECK(index.update("acme", record, policy));
    CHECK(index.find(keys[i])->status_at(now) == key_status::revoked);
    CHECK_FALSE(index.update("acme", record_with_id("id-none"), policy));
}

TEST_CASE("K9: keys with the same groups share one merged permission set", "[K9][K10][index]") {
    key_index index(fixed_hashing_key());
    permission_policy policy;
    policy.groups["user:pf"].access[resource::all()] = access_level::read;
    policy.groups["user:x"].access[resource::all()] = access_level::write;
    auto a = record_with_id("a");
    auto b = record_with_id("b");
    auto c = record_with_id("c");
    c.groups = {"user:pf", "user:x"};
    index.add("t", a, secret("aaaaaaaaaaaaaaaa"), policy);
    index.add("t", b, secret("bbbbbbbbbbbbbbbb"), policy);
    index.add("t", c, secret("cccccccccccccccc"), policy);
    const auto* ea = index.find("aaaaaaaaaaaaaaaa");
    const auto* eb = index.find("bbbbbbbbbbbbbbbb");
    const auto* ec = index.find("cccccccccccccccc");
    CHECK(ea->permissions == eb->permissions);
    CHECK(&index.permissions_of(*ea) == &index.permissions_of(*eb));
    CHECK(ea->permissions != ec->permissions);
    CHECK(index.permissions_of(*ec).access_to(resource_ref::all()) == access_level::write);
}

// ---- key index memory: the index at the memory of a map (ids kept once, in
// chunks; 32-bit slots with 5 tag bits). The byte counts are in allocation_test.cpp.

TEST_CASE("key index: ids of every length are kept once and read back whole", "[K10][index]") {
    key_index index(fixed_hashing_key());
    const permission_policy policy;
    // Each side of the one- and two-byte length prefixes, and of the 64 KiB
    // chunk: 65,533 bytes plus a 3-byte length fill a chunk exactly, 65,534 get their own.
    const std::vector<std::size_t> lengths{0, 1, 127, 128, 16383, 16384, 65533, 65534, 70000};
    std::vector<std::string> ids, keys;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
        ids.push_back(std::string(lengths[i], static_cast<char>('a' + i)));
        keys.push_back("0123456789abcdef-" + std::to_string(i));
        index.add("acme", record_with_id(ids.back()), secret(keys.back()), policy);
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
        INFO("id of " << lengths[i] << " bytes");
        const auto* e = index.find(keys[i]);
        REQUIRE(e);
        CHECK(index.id_of(*e) == ids[i]);
        CHECK(index.find_id(key_id(ids[i])) == e);
    }
    // An id one byte shorter or longer is another id.
    CHECK_FALSE(index.find_id(key_id(std::string(127, 'c').substr(1))));
    CHECK_FALSE(index.find_id(key_id(std::string(129, 'd'))));
    for (std::size_t i = 0; i < ids.size(); i += 2) CHECK(index.remove(key_id(ids[i])));
    for (std::size_t i = 0; i < ids.size(); ++i) {
        INFO("id of " << lengths[i] << " bytes");
        const auto* e = index.find(keys[i]);
        CHECK((e != nullptr) == (i % 2 == 1));
        if (e) CHECK(index.id_of(*e) == ids[i]);
    }
}

TEST_CASE("key index: after most keys are removed the ids are compacted and the rest still found", "[K10][K8][index]") {
    key_index index(fixed_hashing_key());
    const permission_policy policy;
    test_support::seeded_random random(7);
    const std::size_t n = 20000;
    std::vector<std::string> ids, keys;
    for (std::size_t i = 0; i < n; ++i) {
        ids.push_back(generate_uuid_v4(random));
        keys.push_back(generate_uuid_v4(random));
        index.add("acme", record_with_id(ids.back()), secret(keys.back()), policy);
    }
    // 15,000 removed ids (540 KB) outweigh the 5,000 live ones: compaction runs.
    for (std::size_t i = 0; i < n; ++i)
        if (i % 4 != 0) REQUIRE(index.remove(key_id(ids[i])));
    CHECK(index.size() == n / 4);
    for (std::size_t i = 0; i < n; ++i) {
        const auto* e = index.find(keys[i]);
        if (i % 4 != 0) {
            CHECK_FALSE(e);
            CHECK_FALSE(index.find_id(key_id(ids[i])));
            continue;
        }
        REQUIRE(e);
        CHECK(index.id_of(*e) == ids[i]);
        CHECK(index.find_id(key_id(ids[i])) == e);
    }
    // The removed ids can be indexed again.
    for (std::size_t i = 1; i < n; i += 4) index.add("acme", record_with_id(ids[i]), secret(keys[i]), policy);
    for (std::size_t i = 1; i < n; i += 4) CHECK(index.id_of(*index.find(keys[i])) == ids[i]);
}

TEST_CASE("key index: a slot whose tag matches still needs the whole digest", "[K10][index]") {
    // Three keys whose digests start at the same slot of a 16-slot table and
    // carry the same 5 tag bits (the top of the digest's second word).
    const auto k = fixed_hashing_key();
    const std::uint64_t k0 = detail::sip::load_le(k.data(), 8), k1 = detail::sip::load_le(k.data() + 8, 8);
    std::vector<std::string> same;
    const auto first = detail::siphash13_128(k0, k1, "0123456789abcdef-0");
    for (int i = 0; same.size() < 3; ++i) {
        const std::string key = "0123456789abcdef-" + std::to_string(i);
        const auto d = detail::siphash13_128(k0, k1, key);
        if ((d.lo & 15) == (first.lo & 15) && (d.hi >> 59) == (first.hi >> 59)) same.push_back(key);
    }
    key_index index(k);
    const permission_policy policy;
    index.add("acme", record_with_id("first"), secret(same[0]), policy);
    index.add("acme", record_with_id("second"), secret(same[1]), policy);
    REQUIRE(index.find(same[0]));
    REQUIRE(index.find(same[1]));
    CHECK(index.id_of(*index.find(same[0])) == "first");
    CHECK(index.id_of(*index.find(same[1])) == "second");
    CHECK_FALSE(index.find(same[2]));  // same slot and tag, another digest
    CHECK(index.remove(key_id("first")));
    CHECK_FALSE(index.find(same[0]));
    CHECK(index.id_of(*index.find(same[1])) == "second");
}

TEST_CASE("key index: a copy of the index keeps its own ids", "[K10][index]") {
    auto original = std::make_unique<key_index>(fixed_hashing_key());
    const permission_policy policy;
    original->add("acme", record_with_id("id-1"), secret("0123456789abcdef-one"), policy);
    const key_index copy = *original;
    original.reset();
    REQUIRE(copy.find("0123456789abcdef-one"));
    CHECK(copy.id_of(*copy.find("0123456789abcdef-one")) == "id-1");
}

TEST_CASE("key index: authorization::key() is a copy of the found key's id", "[K10][index]") {
    auto index = std::make_unique<key_index>(fixed_hashing_key());
    const permission_policy policy;
    index->add("acme", record_with_id("id-1"), secret("0123456789abcdef-one"), policy);
    const auto now = at("2024-06-01T00:00:00Z");
    const auto found = authorize(*index, "0123456789abcdef-one", "other", api_family::batch(), resource_ref::all(),
                                 access_level::read, now);
    const auto unknown = authorize(*index, "0123456789abcdef-two", "acme", api_family::batch(), resource_ref::all(),
                                   access_level::read, now);
    CHECK(found.reason() == denial_reason::wrong_tenant);
    CHECK(found.message() == "denied: key \"id-1\" does not belong to the tenant named in header x-tenant-name");
    CHECK(unknown.reason() == denial_reason::unknown_key);
    CHECK_FALSE(unknown.key());
    const auto id = found.key();
    index.reset();
    REQUIRE(id);
    CHECK(*id == key_id("id-1"));
}

// ---- key index speed: authorization at most 2x unordered_map::find: the
// SipHash tail without a byte loop, family bits, fewer permission searches.

namespace {

// SipHash-C-D-128 reading the last n % 8 bytes one at a time, as the SipHash
// paper and its reference implementation do; the rounds are those the vectors
// above check.
template <int C, int D>
detail::sip_digest bytewise_siphash(std::uint64_t k0, std::uint64_t k1, const std::string& m) {
    detail::sip::state s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL ^ 0xee, k0 ^ 0x6c7967656e657261ULL,
                         k1 ^ 0x7465646279746573ULL};
    const std::size_t whole = m.size() - m.size() % 8;
    for (std::size_t i = 0; i <= whole; i += 8) {
        std::uint64_t block = 0;
        for (std::size_t j = 0; j < 8 && i + j < m.size(); ++j)
            block |= std::uint64_t{static_cast<unsigned char>(m[i + j])} << (8 * j);
        if (i == whole) block |= std::uint64_t{m.size() & 0xff} << 56;
        s.absorb<C>(block);
    }
    s.v2 ^= 0xee;
    detail::sip_digest d;
    d.lo = s.squeeze<D>();
    s.v1 ^= 0xdd;
    d.hi = s.squeeze<D>();
    return d;
}

}  // namespace

TEST_CASE("key index: the SipHash tail loads give the byte-by-byte result at every length", "[K10][M3][index]") {
    const std::uint64_t k0 = 0x0706050403020100ULL, k1 = 0x0f0e0d0c0b0a0908ULL;
    std::string message;
    for (int i = 0; i < 80; ++i) message += static_cast<char>(0xa5 ^ (i * 37));
    for (std::size_t n = 0; n <= message.size(); ++n) {
        // A copy of exactly n bytes, so that reading past the end would be caught under the sanitizers.
        const std::string m = message.substr(0, n);
        INFO("length " << n);
        const auto got = detail::siphash128(k0, k1, m);
        const auto want = bytewise_siphash<2, 4>(k0, k1, m);
        CHECK((got.lo == want.lo && got.hi == want.hi));
        const auto got13 = detail::siphash13_128(k0, k1, m);
        const auto want13 = bytewise_siphash<1, 3>(k0, k1, m);
        CHECK((got13.lo == want13.lo && got13.hi == want13.hi));
    }
}

TEST_CASE("key index: the index's family bits answer as the merged sets do, past 64 names too", "[K9][K10][index]") {
    key_index index(fixed_hashing_key());
    permission_policy policy;
    // 70 groups, each adding three families of its own: more than 64 names.
    for (int g = 0; g < 70; ++g) {
        auto& grant = policy.groups["user:g" + std::to_string(g)];
        for (int f = 0; f < 3; ++f) grant.families.insert(api_family("F" + std::to_string(g * 3 + f)));
    }
    std::vector<api_family> probes = {api_family::batch(), api_family::execute(), api_family("Reports"), api_family(""),
                                      api_family("Execute ")};
    for (int f = 0; f < 215; ++f) probes.emplace_back("F" + std::to_string(f));
    std::vector<std::string> keys;
    for (int g = 0; g < 70; ++g) {
        auto r = record_with_id("id-" + std::to_string(g));
        r.groups = {"user:g" + std::to_string(g), "user:g" + std::to_string((g * 7) % 70)};
        keys.push_back("0123456789abcdef-" + std::to_string(g));
        index.add("t", r, secret(keys.back()), policy);
        // Below 64 names and past them, the keys answer as their sets do.
        if (g != 10 && g != 69) continue;
        for (const auto& key : keys) {
            const auto* e = index.find(key);
            REQUIRE(e);
            for (const auto& family : probes)
                CHECK(index.allows(*e, family.name()) == index.permissions_of(*e).allows(family));
        }
    }
}

TEST_CASE("key index: access_to searches a map only where a grant could raise the level", "[K9][K10]") {
    SECTION("service grants only: a folder lookup would find nothing, the service one must still run") {
        permission_policy q;
        q.groups["user:a"].access[resource::all()] = access_level::read;
        q.groups["user:a"].access[resource::service("F", "S")] = access_level::admin;
        const auto p = merge_permissions({"user:a"}, q);
        CHECK(p.access_to(resource_ref::of_service("F", "S")) == access_level::admin);
        CHECK(p.access_to(resource_ref::of_service("F", "T")) == access_level::read);
        CHECK(p.access_to(resource_ref::in_folder("F")) == access_level::read);
    }
    SECTION("folder grants only") {
        permission_policy q;
        q.groups["user:a"].access[resource::folder("F")] = access_level::write;
        const auto p = merge_permissions({"user:a"}, q);
        CHECK(p.access_to(resource_ref::of_service("F", "S")) == access_level::write);
        CHECK(p.access_to(resource_ref::in_folder("F")) == access_level::write);
        CHECK(p.access_to(resource_ref::in_folder("G")) == access_level::none);
        CHECK(p.access_to(resource_ref::all()) == access_level::none);
    }
    SECTION("a grant below the wide one is never searched, and never lowers it") {
        permission_policy q;
        q.groups["user:a"].access[resource::all()] = access_level::write;
        q.groups["user:a"].access[resource::folder("F")] = access_level::read;
        q.groups["user:a"].access[resource::service("F", "S")] = access_level::execute;
        const auto p = merge_permissions({"user:a"}, q);
        CHECK(p.access_to(resource_ref::of_service("F", "S")) == access_level::write);
        CHECK(p.access_to(resource_ref::in_folder("F")) == access_level::write);
    }
    SECTION("resource_ref orders as the tuple (kind, folder, service)") {
        const std::vector<resource_ref> refs = {resource_ref::all(),
                                                resource_ref::in_folder(""),
                                                resource_ref::in_folder("F"),
                                                resource_ref::in_folder("FF"),
                                                resource_ref::in_folder("G"),
                                                resource_ref::of_service("F", ""),
                                                resource_ref::of_service("F", "S"),
                                                resource_ref::of_service("F", "T"),
                                                resource_ref::of_service("FF", "A"),
                                                resource_ref::of_service("G", "A")};
        for (const auto& a : refs)
            for (const auto& b : refs) CHECK((a < b) == (a.tie() < b.tie()));
    }
}

TEST_CASE("moved-from: a moved-from key index keeps every function's contract", "[K10][index]") {
    const permission_policy policy;
    for (int how = 0; how < 2; ++how) {
        key_index source(std::array<unsigned char, 16>{9});
        // Enough ids to open a second chunk, so the open chunk's number is not 0.
        for (int i = 0; i < 40; ++i)
            source.add("acme", record_with_id("id-" + std::string(20, 'x') + std::to_string(i)),
                       secret("key-" + std::to_string(i)), policy);
        key_index target(std::array<unsigned char, 16>{8});
        if (how == 0)
            target = std::move(source);
        else
            key_index(std::move(source)).swap(target);
        // NOLINTBEGIN(bugprone-use-after-move): the contract after a move is the subject
        CHECK(source.empty());
        CHECK(source.find("key-1") == nullptr);
        CHECK(source.find_id(key_id("id-1")) == nullptr);
        CHECK_FALSE(source.remove(key_id("id-1")));
        CHECK_FALSE(source.update("acme", record_with_id("id-1"), policy));
        // The reported crash: the next add wrote into a chunk that had moved away.
        for (int i = 0; i < 40; ++i)
            source.add("beta", record_with_id("new-" + std::to_string(i)), secret("new-key-" + std::to_string(i)),
                       policy);
        CHECK(source.size() == 40);
        const auto* e = source.find("new-key-7");
        REQUIRE(e);
        CHECK(source.id_of(*e) == "new-7");
        CHECK(source.tenant_is(*e, "beta"));
        CHECK(authorize(source, "new-key-7", "beta", api_family::execute(), resource_ref::in_folder("F"),
                        access_level::none, at("2026-01-01T00:00:00Z"))
                  .reason() != denial_reason::unknown_key);
        // NOLINTEND(bugprone-use-after-move)
        CHECK(target.size() == 40);
        CHECK(target.find("key-39"));
        CHECK(target.id_of(*target.find("key-0")) == "id-" + std::string(20, 'x') + "0");
    }
}

namespace {

// A digester that counts its work: each scheme is a keyed FNV-1a stretched
// to 32 bytes (not a cryptographic digest: the count is what is tested).
class counting_digester final : public key_digester {
public:
    bool digest(std::uint8_t scheme, std::string_view key, key_fingerprint& out) const noexcept override {
        ++calls;
        std::uint64_t h = 1469598103934665603ULL ^ scheme;
        for (std::size_t i = 0; i < out.size(); ++i) {
            for (const char c : key) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
            h = (h ^ i) * 1099511628211ULL;
            out[i] = static_cast<unsigned char>(h >> 56);
        }
        return true;
    }
    [[nodiscard]] bool outdated(std::uint8_t scheme) const noexcept override { return scheme != 2; }
    mutable std::size_t calls = 0;
};

}  // namespace

TEST_CASE("K16: a key of another tenant costs the same digests as an unknown key, with three schemes in use",
          "[K16][K11][K10][index]") {
    auto digester = std::make_shared<counting_digester>();
    key_index index(fixed_hashing_key());
    const permission_policy policy;
    // Three schemes in use: 1 (as the legacy SHA-256), 2 (the current pepper), 3 (an older one).
    const std::vector<std::pair<std::string, std::uint8_t>> stored = {
        {"globex-legacy-key-0123456789", 1}, {"globex-current-key-0123456789", 2}, {"acme-older-key-0123456789", 3}};
    for (std::size_t i = 0; i < stored.size(); ++i) {
        key_fingerprint f{};
        REQUIRE(digester->digest(stored[i].second, stored[i].first, f));
        const auto tenant = stored[i].first.substr(0, stored[i].first.find('-'));
        REQUIRE(index.try_add_digest(tenant, record_with_id("id-" + std::to_string(i)), f, stored[i].second, digester,
                                     policy));
    }
    const auto now = at("2024-06-01T00:00:00Z");
    const auto digests_for = [&](const std::string& key) {
        digester->calls = 0;
        const auto a =
            authorize(index, key, "acme", api_family::execute(), resource_ref::all(), access_level::read, now);
        CHECK_FALSE(a.allowed());
        return std::make_pair(digester->calls, a.reason());
    };
    const auto unknown = digests_for("never-stored-key-0123456789");
    CHECK(unknown.second == denial_reason::unknown_key);
    CHECK(unknown.first == 3);
    // A key of globex, presented for acme: found under the first scheme tried
    // (1) and under the second (2); the lookup must not stop there.
    for (const auto* other : {"globex-legacy-key-0123456789", "globex-current-key-0123456789"}) {
        INFO(other);
        const auto wrong = digests_for(other);
        CHECK(wrong.second == denial_reason::wrong_tenant);
        CHECK(wrong.first == unknown.first);
    }
    // And the key of acme itself (scheme 3) costs the same, and is found.
    digester->calls = 0;
    CHECK(index.find("acme-older-key-0123456789") != nullptr);
    CHECK(digester->calls == 3);
}
