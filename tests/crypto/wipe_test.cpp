// Wiping key material: key material is wiped when released. This executable
// replaces the global operator delete so that, while a test arms it, every
// block released through it is searched for a marker (the key) before it is
// freed. A plain std::string holding the marker is the control: the search
// finds it, so a search that finds nothing elsewhere means the bytes were gone.
// Runs under the asan preset too (malloc_usable_size is ASan-aware).
#include "keyhook/creation.hpp"
#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/signing.hpp"
#include "keyhook/detail/wipe.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/webhook.hpp"

#include <catch2/catch.hpp>

#include <malloc.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <utility>

namespace {

// What the armed delete looks for, and how often it saw it. Plain globals:
// the tests run on one thread.
const char* marker_data = nullptr;
std::size_t marker_size = 0;
bool armed = false;
int sightings = 0;

void inspect(void* p) noexcept {
    if (!armed || p == nullptr || marker_size == 0) return;
    const std::size_t n = malloc_usable_size(p);
    const auto* block = static_cast<const char*>(p);
    for (std::size_t i = 0; i + marker_size <= n; ++i)
        if (std::memcmp(block + i, marker_data, marker_size) == 0) {
            ++sightings;
            return;
        }
}

// Arms the search for `marker` (owned by the caller, allocated before) for its lifetime.
class released_memory_search {
public:
    // Searches for the marker without its first 8 bytes: clearing a string
    // writes a terminator over its first byte, which must not hide the rest.
    explicit released_memory_search(const std::string& marker) {
        marker_data = marker.data() + 8;
        marker_size = marker.size() - 8;
        sightings = 0;
        armed = true;
    }
    ~released_memory_search() { armed = false; }
    released_memory_search(const released_memory_search&) = delete;
    released_memory_search& operator=(const released_memory_search&) = delete;
    [[nodiscard]] int sightings_so_far() const noexcept { return sightings; }
};

// 40 distinctive bytes: longer than any small-string buffer, so they live on the heap.
std::string make_marker(char tag) {
    std::string m = "keyhook-wipe-marker-";
    for (int i = 0; i < 20; ++i) m += static_cast<char>(tag + i % 7);
    return m;
}

}  // namespace

// Every form, as tests/lifecycle/allocation_test.cpp does, so that no block
// crosses between this allocator and another (ASan checks the pairing).
namespace {
void* allocate(std::size_t n) {
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void* allocate_aligned(std::size_t n, std::align_val_t a) {
    const auto align = static_cast<std::size_t>(a);
    if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align + (n == 0 ? align : 0))) return p;
    throw std::bad_alloc();
}
void release(void* p) noexcept {
    inspect(p);
    std::free(p);
}
}  // namespace

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return allocate(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return allocate(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new(std::size_t n, std::align_val_t a) { return allocate_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocate_aligned(n, a); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }

TEST_CASE("wiping: control: a plain string's released buffer still holds the key", "[wipe]") {
    const std::string marker = make_marker('a');
    released_memory_search search(marker);
    {
        std::string plain(marker);
        CHECK(plain.size() == 40);
    }
    CHECK(search.sightings_so_far() == 1);
}

TEST_CASE("wiping: detail::wipe_string and wiped_string leave zeros behind", "[wipe]") {
    const std::string marker = make_marker('b');
    released_memory_search search(marker);
    {
        std::string s(marker);
        keyhook::detail::wipe_string(s);
        CHECK(s.empty());
    }
    { keyhook::detail::wiped_string w{std::string(marker)}; }
    {
        // A key shortened in place leaves its tail beyond size(): wiped too.
        std::string s(marker);
        s.resize(3);
        keyhook::detail::wipe_string(s);
    }
    CHECK(search.sightings_so_far() == 0);
    std::size_t wiped = 0;
    keyhook::detail::wipe_probe_hook.store(&wiped);
    std::string t(marker);
    keyhook::detail::wipe_string(t);
    keyhook::detail::wipe_probe_hook.store(nullptr);
    CHECK(wiped >= marker.size());
}

TEST_CASE("wiping: a keyhook::secret is wiped when released, moved from or assigned over", "[wipe]") {
    const std::string marker = make_marker('c');
    released_memory_search search(marker);
    { keyhook::secret s{std::string(marker)}; }
    {
        keyhook::secret a{std::string(marker)};
        keyhook::secret b(std::move(a));
        keyhook::secret c(b);
        CHECK(c.reveal() == marker);
    }
    {
        keyhook::secret a{std::string(marker)};
        a = keyhook::secret{std::string(60, 'z')};
        keyhook::secret b{std::string(marker)};
        b = a;
        keyhook::secret c{std::string(marker)};
        keyhook::secret d;
        d = std::move(c);
    }
    {
        std::optional<keyhook::secret> o{keyhook::secret{std::string(marker)}};
        o.reset();
    }
    CHECK(search.sightings_so_far() == 0);
}

TEST_CASE("wiping: a decoded whsec_ signing secret is wiped when released", "[wipe][B1]") {
    const std::string marker = make_marker('d');
    const std::string text = "whsec_" + keyhook::base64_encode(marker);
    released_memory_search search(marker);
    {
        const auto s = keyhook::crypto::parse_signing_secret(text);
        CHECK(s.key().reveal() == marker);
        const auto copy = s;
        (void)keyhook::crypto::compute_signature(copy, "msg_1", keyhook::timestamp{}, "body");
    }
    CHECK(search.sightings_so_far() == 0);
}

TEST_CASE("wiping: an Ed25519 seed is cleansed when its key is released", "[wipe][B3]") {
    std::string seed = make_marker('e').substr(0, 32);
    const auto* raw = reinterpret_cast<const unsigned char*>(seed.data());
    const auto reference = keyhook::crypto::try_asymmetric_signing_key_from_seed(raw, seed.size()).value();
    const std::string text = reference.reveal();
    released_memory_search search(seed);
    {
        const auto parsed = keyhook::crypto::parse_asymmetric_signing_key(text);  // decoded, then cleansed
        const auto from_seed = keyhook::crypto::try_asymmetric_signing_key_from_seed(raw, seed.size()).value();
        CHECK(parsed == from_seed);
        (void)keyhook::crypto::ed25519_sign(parsed, "m");
    }
    CHECK(search.sightings_so_far() == 0);
}

TEST_CASE("wiping: the one-time plaintext of a generated API key is wiped when released", "[wipe]") {
    // The generated key is the UUID of the first 16 bytes drawn: known in advance.
    struct fixed_random {
        unsigned char next = 0x41;
        void operator()(unsigned char* out, std::size_t n) {
            for (std::size_t i = 0; i < n; ++i) out[i] = next++;
        }
    };
    fixed_random preview;
    const std::string plaintext = keyhook::generate_uuid_v4(preview);
    keyhook::key_request request;
    request.name = "wipe";
    request.groups = {"user:pf"};
    request.active_from = keyhook::timestamp{std::chrono::hours{24 * 365 * 50}};
    request.expire_at = request.active_from + std::chrono::hours{24};
    released_memory_search search(plaintext);
    {
        fixed_random random;
        auto created = keyhook::create_key(request, keyhook::tenant_kind::restricted, random, request.active_from);
        auto taken = created.key.take();
        REQUIRE(taken);
        CHECK(taken->reveal() == plaintext);
    }
    CHECK(search.sightings_so_far() == 0);
}

TEST_CASE("wiping, error paths: a whsec_ key refused for its size is wiped (try_decode_signing_secret)", "[wipe][B1]") {
    // 65 bytes: one more than B1 lets keyhook sign with.
    const std::string marker = make_marker('f') + std::string(25, 'x');
    REQUIRE(marker.size() == 65);
    const std::string text = "whsec_" + keyhook::base64_encode(marker);
    released_memory_search search(marker);
    {
        const auto refused = keyhook::detail::try_decode_signing_secret(text, "signingSecret");
        REQUIRE_FALSE(refused.has_value());
        CHECK(refused.error().code == keyhook::errc::out_of_range);
        CHECK(refused.error().path == "signingSecret");
        CHECK_FALSE(keyhook::crypto::try_parse_signing_secret(text, keyhook::crypto::signing_key_use::sign));
    }
    CHECK(search.sightings_so_far() == 0);
    // The other side of the boundary: 64 bytes are accepted, and wiped when released.
    const std::string accepted_marker = marker.substr(0, 64);
    const std::string accepted_text = "whsec_" + keyhook::base64_encode(accepted_marker);
    released_memory_search accepted_search(accepted_marker);
    CHECK(keyhook::crypto::try_parse_signing_secret(accepted_text, keyhook::crypto::signing_key_use::sign));
    CHECK(accepted_search.sightings_so_far() == 0);
}

TEST_CASE("wiping, error paths: base64 that fails after decoding part of a key wipes the part", "[wipe][B1]") {
    // 42 bytes: base64 without padding, so any suffix below is what breaks it.
    const std::string marker = make_marker('g') + "yz";
    const std::string b64 = keyhook::base64_encode(marker);
    REQUIRE(b64.back() != '=');
    released_memory_search search(marker);
    for (const char* suffix : {"!", "A", "AB"}) {  // bad character, impossible length, non-zero bits
        INFO(suffix);
        CHECK_FALSE(keyhook::try_base64_decode(b64 + suffix).has_value());
        CHECK_FALSE(keyhook::crypto::try_parse_signing_secret("whsec_" + b64 + suffix).has_value());
    }
    CHECK(search.sightings_so_far() == 0);
}

TEST_CASE("wiping, error paths: reveal() releases no temporary holding a key's base64", "[wipe][B1][B3]") {
    // `key` revealed is `prefix` + `b64`; no released block may hold `b64`.
    const auto check = [](const auto& key, const std::string& prefix, const std::string& b64) {
        std::string revealed;
        {
            released_memory_search search(b64);
            revealed = key.reveal();
            { const auto as_secret = key.to_secret(); }
            CHECK(search.sightings_so_far() == 0);
        }
        CHECK(revealed == prefix + b64);
        keyhook::detail::wipe_string(revealed);
    };
    const std::string key = make_marker('h') + "yz";  // 42 bytes
    check(keyhook::crypto::parse_signing_secret(keyhook::base64_encode(key)), "whsec_", keyhook::base64_encode(key));

    std::array<unsigned char, 32> seed{};
    for (std::size_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<unsigned char>(0xA0 + i);
    const auto signing = keyhook::crypto::try_asymmetric_signing_key_from_seed(seed.data(), seed.size()).value();
    const auto public_half = signing.public_key().bytes();
    std::string raw(reinterpret_cast<const char*>(seed.data()), seed.size());
    raw.append(reinterpret_cast<const char*>(public_half.data()), public_half.size());
    check(signing, "whsk_", keyhook::base64_encode(raw));
}
