// The try_ contract, crypto part: every try_ function of keyhook::crypto
// returns its error, never throws, when OpenSSL fails or the host's random
// source throws. Prepared keys: a prepared key signs without fetching or
// keying anything, and allocates only what it returns.
//
// This executable interposes the OpenSSL functions keyhook calls (its own
// definitions win over libcrypto's; each forwards to the real one through
// dlsym(RTLD_NEXT)). Armed, the k-th call made from this executable's code
// (keyhook's inline functions, not libcrypto's internal calls) fails as
// OpenSSL reports failure: 0 or NULL. A sweep fails the 1st, 2nd, ... call in
// turn until a run makes fewer calls than the one it would fail. It also
// counts keyhook's allocations with tests/support/counting_allocator.hpp
// (OpenSSL allocates with malloc, which is not counted).
#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/random.hpp"
#include "keyhook/crypto/signed_dispatch.hpp"
#include "keyhook/crypto/signing.hpp"

#include "../support/counting_allocator.hpp"
#include "fixtures.hpp"

#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

using keyhook::errc;
using keyhook::http_headers;
using keyhook::http_request;
using keyhook::timestamp;
namespace kc = keyhook::crypto;

// ------------------------------------------------------------ interposition

namespace fault {

int fail_at = 0;  // the call to fail, counted from 1 while armed; 0: none
int calls = 0;    // calls from this executable's code since armed or counted
const char* failed = nullptr;
bool counting = false;

// The load address of this executable: calls made from it are keyhook's.
const int anchor = 0;
const void* own_base() {
    static const void* base = [] {
        Dl_info info{};
        dladdr(&anchor, &info);
        return info.dli_fbase;
    }();
    return base;
}

bool should_fail(const char* name, const void* return_address) {
    if (fail_at == 0 && !counting) return false;
    Dl_info info{};
    if (dladdr(return_address, &info) == 0 || info.dli_fbase != own_base()) return false;
    if (++calls != fail_at) return false;
    failed = name;
    return true;
}

void arm(int k) {
    fail_at = k;
    calls = 0;
    failed = nullptr;
}
void disarm() { fail_at = 0; }

// The OpenSSL calls keyhook's code makes while `f` runs.
template <class F>
int openssl_calls(F&& f) {
    calls = 0;
    counting = true;
    f();
    counting = false;
    return calls;
}

template <class Fn>
Fn real(const char* name) {
    void* p = dlsym(RTLD_NEXT, name);
    Fn fn = nullptr;
    static_assert(sizeof(fn) == sizeof(p), "function and object pointers differ in size");
    std::memcpy(&fn, &p, sizeof(fn));
    return fn;
}

}  // namespace fault

#define KEYHOOK_INTERPOSE(ret, name, params, args, failure)                         \
    extern "C" __attribute__((noinline)) ret name params {                          \
        if (fault::should_fail(#name, __builtin_return_address(0))) return failure; \
        static const auto forward = fault::real<ret(*) params>(#name);              \
        return forward args;                                                        \
    }

KEYHOOK_INTERPOSE(EVP_MAC*, EVP_MAC_fetch, (OSSL_LIB_CTX * l, const char* a, const char* p), (l, a, p), nullptr)
KEYHOOK_INTERPOSE(EVP_MAC_CTX*, EVP_MAC_CTX_new, (EVP_MAC * m), (m), nullptr)
KEYHOOK_INTERPOSE(EVP_MAC_CTX*, EVP_MAC_CTX_dup, (const EVP_MAC_CTX* c), (c), nullptr)
KEYHOOK_INTERPOSE(int, EVP_MAC_init, (EVP_MAC_CTX * c, const unsigned char* k, size_t n, const OSSL_PARAM p[]),
                  (c, k, n, p), 0)
KEYHOOK_INTERPOSE(int, EVP_MAC_update, (EVP_MAC_CTX * c, const unsigned char* d, size_t n), (c, d, n), 0)
KEYHOOK_INTERPOSE(int, EVP_MAC_final, (EVP_MAC_CTX * c, unsigned char* o, size_t* n, size_t s), (c, o, n, s), 0)
KEYHOOK_INTERPOSE(EVP_PKEY*, EVP_PKEY_new_raw_private_key, (int t, ENGINE* e, const unsigned char* k, size_t n),
                  (t, e, k, n), nullptr)
KEYHOOK_INTERPOSE(EVP_PKEY*, EVP_PKEY_new_raw_public_key, (int t, ENGINE* e, const unsigned char* k, size_t n),
                  (t, e, k, n), nullptr)
KEYHOOK_INTERPOSE(int, EVP_PKEY_get_raw_public_key, (const EVP_PKEY* k, unsigned char* o, size_t* n), (k, o, n), 0)
KEYHOOK_INTERPOSE(EVP_MD_CTX*, EVP_MD_CTX_new, (void), (), nullptr)
KEYHOOK_INTERPOSE(int, EVP_DigestSignInit, (EVP_MD_CTX * c, EVP_PKEY_CTX** p, const EVP_MD* m, ENGINE* e, EVP_PKEY* k),
                  (c, p, m, e, k), 0)
KEYHOOK_INTERPOSE(int, EVP_DigestSign, (EVP_MD_CTX * c, unsigned char* s, size_t* n, const unsigned char* m, size_t l),
                  (c, s, n, m, l), 0)
KEYHOOK_INTERPOSE(int, EVP_DigestVerifyInit,
                  (EVP_MD_CTX * c, EVP_PKEY_CTX** p, const EVP_MD* m, ENGINE* e, EVP_PKEY* k), (c, p, m, e, k), 0)
KEYHOOK_INTERPOSE(int, EVP_DigestVerify,
                  (EVP_MD_CTX * c, const unsigned char* s, size_t n, const unsigned char* m, size_t l), (c, s, n, m, l),
                  -1)
KEYHOOK_INTERPOSE(int, RAND_bytes, (unsigned char* b, int n), (b, n), 0)

// ------------------------------------------------------- counting allocator

namespace {
// Heap allocations (operator new) made while `f` runs.
template <class F>
std::size_t allocations_of(F&& f) {
    const counting_allocator::scope counter;
    f();
    return counter.stop().allocations;
}
}  // namespace

// ------------------------------------------------------------------- sweep

namespace {

// Fails each OpenSSL call `call` makes, one run per call. Every failing run
// must return an error (never throw) whose message names the failed step
// (EVP_DigestVerify's failure reads as "does not match": it cannot be told
// from a bad signature). Returns the calls a run makes when none fails, whose
// result must be a value.
template <class Call>
int sweep(Call&& call) {
    for (int k = 1;; ++k) {
        fault::arm(k);
        bool threw = false, has_value = false;
        std::optional<keyhook::error> error;
        try {
            auto r = call();
            has_value = r.has_value();
            if (!has_value) error = r.error();
        } catch (...) {
            threw = true;
        }
        const int made = fault::calls;
        const std::string name = fault::failed != nullptr ? fault::failed : "";
        fault::disarm();
        INFO("OpenSSL call " << k << " failed: " << name);
        REQUIRE_FALSE(threw);
        if (made < k) {
            CHECK(has_value);
            return k - 1;
        }
        REQUIRE_FALSE(has_value);
        CHECK_FALSE(error->path.empty());
        if (name != "EVP_DigestVerify") CHECK(error->message.find("OpenSSL " + name) != std::string::npos);
    }
}

using crypto_fixtures::kat_body;
using crypto_fixtures::kat_id;
using crypto_fixtures::kat_secret;
constexpr const char* kat_signature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
const timestamp kat_now = crypto_fixtures::unix_time(crypto_fixtures::kat_unix);

const kc::signing_secret& kat() {
    static const auto s = kc::parse_signing_secret(kat_secret);
    return s;
}
const kc::asymmetric_signing_key& ed_key() {
    static const auto k = kc::generate_asymmetric_signing_key(kc::openssl_random{});
    return k;
}
// Both keys are made, and the HMAC key used once (its context is made on
// first use), before any test runs: a sweep must count only the calls of the
// function under test.
bool make_keys() {
    (void)kat();
    (void)ed_key();
    return !kc::compute_signature(kat(), kat_id, kat_now, kat_body).empty();
}
[[maybe_unused]] const bool keys_made = make_keys();

http_headers kat_headers(std::string id = kat_id) {
    return {{"webhook-id", std::move(id), false},
            {"webhook-timestamp", "1614265330", false},
            {"webhook-signature", kat_signature, false}};
}
http_request kat_request() { return http_request{"POST", "https://example.com/hook", kat_headers(), kat_body}; }

keyhook::notification event() { return crypto_fixtures::event(kat_now); }
using crypto_fixtures::hook;

// Random sources that fail in each way a host's may.
struct throws_keyhook_error {
    void operator()(unsigned char*, std::size_t) const {
        throw keyhook::exception(keyhook::error{errc::invalid_value, "random", "entropy pool closed"});
    }
};
struct throws_runtime_error {
    void operator()(unsigned char*, std::size_t) const { throw std::runtime_error("getrandom: EINTR"); }
};
struct throws_int {
    void operator()(unsigned char*, std::size_t) const { throw 42; }
};

template <class Source>
void check_source_failure(Source source, errc expected_code, std::string_view expected_message) {
    const auto secret = kc::try_generate_signing_secret(source);
    REQUIRE_FALSE(secret.has_value());
    CHECK(secret.error().code == expected_code);
    CHECK(secret.error().path == "random");
    CHECK(secret.error().message.find(expected_message) != std::string::npos);
    const auto key = kc::try_generate_asymmetric_signing_key(source);
    REQUIRE_FALSE(key.has_value());
    CHECK(key.error() == secret.error());
}

}  // namespace

// ------------------------------------------------------------------ tests

TEST_CASE("try_ contract: the interposition reaches keyhook's OpenSSL calls", "[B1][try]") {
    // The control of every sweep below: without it they would pass vacuously.
    CHECK(fault::openssl_calls([] { (void)kc::compute_signature(kat(), kat_id, kat_now, kat_body); }) > 0);
    fault::arm(1);
    CHECK_THROWS_AS(kc::compute_signature(kat(), kat_id, kat_now, kat_body), keyhook::exception);
    fault::disarm();
    CHECK(kc::compute_signature(kat(), kat_id, kat_now, kat_body) == kat_signature);
}

TEST_CASE("prepared key: a prepared key signs with no fetch, no new context and no keying", "[B1][B3][try]") {
    // Reading a key makes no OpenSSL call: its context is made on first use,
    // so a long key list costs no OpenSSL memory until its keys are used (J3).
    const auto s = kc::parse_signing_secret(kat_secret);
    CHECK(fault::openssl_calls([] { (void)kc::parse_signing_secret(kat_secret); }) == 0);
    // A first use that fails leaves the key usable.
    fault::arm(1);
    CHECK_THROWS_AS(kc::compute_signature(s, kat_id, kat_now, kat_body), keyhook::exception);
    fault::disarm();
    // First use: fetch HMAC, a context, keying it, the scratch copy; then the
    // signature: re-initialise the scratch context (no key, no parameters),
    // the five parts of id.timestamp.body, final.
    CHECK(fault::openssl_calls([&] { CHECK(kc::compute_signature(s, kat_id, kat_now, kat_body) == kat_signature); }) ==
          4 + 7);
    // Every later signature, by any copy: the seven alone.
    const auto copy = s;
    CHECK(fault::openssl_calls([&] { (void)kc::compute_signature(copy, kat_id, kat_now, kat_body); }) == 7);
    // v1a: the EVP_PKEY was built when the key was; a context, init, sign.
    const auto& key = ed_key();
    CHECK(fault::openssl_calls([&] { (void)kc::compute_asymmetric_signature(key, kat_id, kat_now, kat_body); }) == 3);
}

TEST_CASE("prepared key: with the scratch context in use, a signature duplicates the prepared one", "[B1][try]") {
    const auto s = kc::parse_signing_secret(kat_secret);
    (void)kc::compute_signature(s, kat_id, kat_now, kat_body);  // first use: the contexts made
    auto* prepared = kc::detail::signing_secret_access::prepared(s);
    REQUIRE(prepared != nullptr);
    prepared->busy.store(true);  // as if another thread were signing
    CHECK(sweep([&] { return kc::try_signature_headers(s, kat_id, kat_now, kat_body); }) == 7);
    CHECK(prepared->busy.load());  // not released by a call that did not hold it
    prepared->busy.store(false);
    CHECK(kc::compute_signature(s, kat_id, kat_now, kat_body) == kat_signature);
}

TEST_CASE("prepared key: signing and verifying v1 allocate only what they return", "[B1]") {
    const auto s = kc::parse_signing_secret(kat_secret);
    // The "v1,<base64>" string, 47 characters: one allocation, and no other.
    CHECK(allocations_of([&] { (void)kc::compute_signature(s, kat_id, kat_now, kat_body); }) == 1);
    // An id of at most 15 characters fits verified_webhook's string without an allocation.
    const std::string short_id = "msg_short";
    const auto headers = kc::signature_headers(s, short_id, kat_now, kat_body);
    bool verified = false;  // Catch's assertions allocate: checked outside the count
    CHECK(allocations_of([&] { verified = kc::try_verify_signature(s, headers, kat_body, kat_now).has_value(); }) == 0);
    CHECK(verified);
    // Up to 4 secrets, the expected signatures stay inline; a 5th needs one allocation.
    const std::vector<kc::signing_secret> four(4, s), five(5, s);
    CHECK(allocations_of([&] { verified = kc::try_verify_signature(four, headers, kat_body, kat_now).has_value(); }) ==
          0);
    CHECK(verified);
    verified = false;
    CHECK(allocations_of([&] { verified = kc::try_verify_signature(five, headers, kat_body, kat_now).has_value(); }) ==
          1);
    CHECK(verified);
}

TEST_CASE("try_ contract: try_parse_signing_secret never throws when OpenSSL fails", "[B1][try]") {
    // It calls no OpenSSL function (the context is made on first use).
    CHECK(sweep([] { return kc::try_parse_signing_secret(kat_secret); }) == 0);
    CHECK(sweep([] { return kc::try_parse_signing_secret(keyhook::secret(kat_secret)); }) == 0);
}

TEST_CASE("try_ contract: try_generate_signing_secret never throws, whatever fails", "[B1][try]") {
    CHECK(sweep([] { return kc::try_generate_signing_secret(kc::openssl_random{}); }) == 1);  // RAND_bytes
    check_source_failure(throws_keyhook_error{}, errc::invalid_value, "entropy pool closed");
    check_source_failure(throws_runtime_error{}, errc::host_failure, R"(threw: "getrandom: EINTR")");
    check_source_failure(throws_int{}, errc::host_failure, "threw a non-standard exception");
}

TEST_CASE("try_ contract: try_generate_asymmetric_signing_key never throws, whatever fails", "[B3][try]") {
    // RAND_bytes, then the key built from the seed and its public half read back.
    CHECK(sweep([] { return kc::try_generate_asymmetric_signing_key(kc::openssl_random{}); }) == 3);
    const auto e = kc::try_generate_asymmetric_signing_key(throws_runtime_error{});
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().code == errc::host_failure);
    CHECK(e.error().path == "random");
}

TEST_CASE("try_ contract: try_signature_headers never throws when OpenSSL fails", "[B1][B3][try]") {
    CHECK(sweep([] { return kc::try_signature_headers(kat(), kat_id, kat_now, kat_body); }) == 7);
    // A failure is cleared from OpenSSL's error queue: the host's next call must not see it.
    CHECK(ERR_peek_error() == 0);
    CHECK(
        sweep([] {
            return kc::try_signature_headers(std::vector<kc::signing_secret>{kat(), kat()}, kat_id, kat_now, kat_body);
        }) == 14);
    CHECK(sweep([] {
              return kc::try_signature_headers(kc::signing_keys{{kat()}, {ed_key()}}, kat_id, kat_now, kat_body);
          }) == 10);
}

TEST_CASE("try_ contract: try_sign_request never throws when OpenSSL fails", "[B1][B3][try]") {
    CHECK(sweep([] { return kc::try_sign_request(kat_request(), kat(), kat_id, kat_now); }) == 7);
    CHECK(sweep([] {
              return kc::try_sign_request(kat_request(), std::vector<kc::signing_secret>{kat()}, kat_id, kat_now);
          }) == 7);
    CHECK(sweep([] {
              return kc::try_sign_request(kat_request(), kc::signing_keys{{}, {ed_key()}}, kat_id, kat_now);
          }) == 3);
}

TEST_CASE("try_ contract: try_verify_signature never throws when OpenSSL fails", "[B1][B3][try]") {
    CHECK(sweep([] { return kc::try_verify_signature(kat(), kat_headers(), kat_body, kat_now); }) == 7);
    CHECK(sweep([] {
              return kc::try_verify_signature(std::vector<kc::signing_secret>{kat()}, kat_headers(), kat_body, kat_now);
          }) == 7);
    const auto pk = ed_key().public_key();
    const auto signed_v1a = kc::signature_headers(kc::signing_keys{{}, {ed_key()}}, kat_id, kat_now, kat_body);
    CHECK(sweep([&] { return kc::try_verify_signature(pk, signed_v1a, kat_body, kat_now); }) == 3);
    CHECK(sweep([&] {
              return kc::try_verify_signature(kc::verification_keys{{kat()}, {pk}}, signed_v1a, kat_body, kat_now);
          }) == 10);
}

TEST_CASE("try_ contract: try_verify_request never throws when OpenSSL fails", "[B1][B3][try]") {
    CHECK(sweep([] { return kc::try_verify_request(kat(), kat_request(), kat_now); }) == 7);
    CHECK(sweep([] {
              return kc::try_verify_request(kc::verification_keys{{kat()}, {}}, kat_request(), kat_now);
          }) == 7);
}

TEST_CASE("try_ contract: try_public_key_from_bytes never throws when OpenSSL fails", "[B3][try]") {
    const auto raw = ed_key().public_key().bytes();
    CHECK(sweep([&] { return kc::try_public_key_from_bytes(raw.data(), raw.size()); }) == 1);
}

TEST_CASE("try_ contract: try_parse_public_key never throws when OpenSSL fails", "[B3][try]") {
    const auto text = ed_key().public_key().to_string();
    CHECK(sweep([&] { return kc::try_parse_public_key(text); }) == 1);
}

TEST_CASE("try_ contract: try_asymmetric_signing_key_from_seed never throws when OpenSSL fails", "[B3][try]") {
    const std::array<unsigned char, 32> seed{};
    CHECK(sweep([&] { return kc::try_asymmetric_signing_key_from_seed(seed.data(), seed.size()); }) == 2);
}

TEST_CASE("try_ contract: try_parse_asymmetric_signing_key never throws when OpenSSL fails", "[B3][try]") {
    const std::string text = ed_key().reveal();
    CHECK(sweep([&] { return kc::try_parse_asymmetric_signing_key(text); }) == 2);
    CHECK(sweep([&] { return kc::try_parse_asymmetric_signing_key(keyhook::secret(text)); }) == 2);
}

TEST_CASE("try_ contract: try_parse_signing_keys never throws when OpenSSL fails", "[B1][B3][try]") {
    const std::string text = std::string(kat_secret) + " " + ed_key().reveal();
    CHECK(sweep([&] { return kc::try_parse_signing_keys(text); }) == 2);  // the whsk_ key's EVP_PKEY
    CHECK(sweep([&] { return kc::try_parse_signing_keys(keyhook::secret(text)); }) == 2);
}

TEST_CASE("try_ contract: try_parse_verification_keys never throws when OpenSSL fails", "[B1][B3][try]") {
    const std::string text = std::string(kat_secret) + " " + ed_key().public_key().to_string();
    CHECK(sweep([&] { return kc::try_parse_verification_keys(text); }) == 1);  // the whpk_ key's EVP_PKEY
}

TEST_CASE("try_ contract: try_sign_outbound never throws when OpenSSL fails", "[B1][B3][try][dispatch]") {
    const auto requests = keyhook::dispatch(keyhook::tenant_settings{"acme", true},
                                            keyhook::validate_webhooks({hook("signed", kat_secret)}), event());
    REQUIRE(requests.size() == 1);
    CHECK(sweep([&] { return kc::try_sign_outbound(requests[0], kat(), kat_now); }) == 7);
    // Parsing the configured secret, then its first use and the signature.
    CHECK(sweep([&] { return kc::try_sign_outbound(requests[0], kat_now); }) == 4 + 7);
}

TEST_CASE("try_ contract: try_dispatch_signed never throws when OpenSSL fails", "[B1][B3][try][dispatch]") {
    const keyhook::tenant_settings acme{"acme", true};
    const std::vector<keyhook::webhook> hooks{hook("a", kat_secret), hook("b", ed_key().reveal())};
    // The whsk_ key's EVP_PKEY and the check of its public half, then the whsec_ key's first use and
    // signature, then the v1a one.
    CHECK(sweep([&] { return kc::try_dispatch_signed(acme, hooks, event(), kat_now); }) == 3 + 4 + 7 + 3);
    const auto validated = keyhook::validate_webhooks(hooks);
    CHECK(sweep([&] { return kc::try_dispatch_signed(acme, validated, event(), kat_now); }) == 3 + 4 + 7 + 3);
}

TEST_CASE("try_ contract: openssl_random throws keyhook::exception when RAND_bytes fails", "[K1][try]") {
    std::array<unsigned char, 8> out{};
    fault::arm(1);
    CHECK_THROWS_AS(kc::openssl_random{}(out.data(), out.size()), keyhook::exception);
    fault::disarm();
    CHECK_NOTHROW(kc::openssl_random{}(out.data(), out.size()));
}
