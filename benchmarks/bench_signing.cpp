// Signing and verifying at the floor (prepared keys), as ratios: keyhook's
// v1 (HMAC-SHA256, with its prepared key) against a bare HMAC with a reused
// OpenSSL context plus base64, and keyhook's v1a (Ed25519, B3) against a bare OpenSSL Ed25519 call
// with a prepared key plus base64, at 200 bytes, 2 KB and 64 KB.
#include <benchmark/benchmark.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <array>
#include <cstddef>
#include <string>

#include "baselines_crypto.hpp"
#include "keyhook/base64.hpp"
#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/signing.hpp"

namespace {

namespace kc = keyhook::crypto;

const kc::signing_secret& secret() {
    static const auto s = kc::parse_signing_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    return s;
}
const kc::asymmetric_signing_key& ed_key() {
    static const auto k = [] {
        std::array<unsigned char, 32> seed{};
        seed.fill(7);
        return kc::try_asymmetric_signing_key_from_seed(seed.data(), seed.size()).value();
    }();
    return k;
}
std::string body_of(benchmark::State& state) { return std::string(static_cast<std::size_t>(state.range(0)), 'b'); }
const keyhook::timestamp now{std::chrono::seconds{1700000000}};
constexpr const char* id = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";

// A bare OpenSSL HMAC-SHA256 keyed with the same secret.
struct bare_hmac : keyhook_bench::bare_hmac {
    bare_hmac() : keyhook_bench::bare_hmac(secret().key().reveal()) {}
    template <class Init>
    void sign(Init init, std::string_view ts, std::string_view body) {
        benchmark::DoNotOptimize(keyhook_bench::bare_hmac::sign(init, id, ts, body));
    }
};

// The floor: the context re-keyed per call (the key and the digest parameter),
// plus base64.
void BM_hmac_floor(benchmark::State& state) {
    const std::string body = body_of(state);
    bare_hmac h;
    for (auto _ : state) h.sign([&] { h.set_key(); }, "1700000000", body);
}

// Information, not a target: the technique of keyhook's prepared key done by
// hand (a context keyed once, re-initialised without key or parameters per
// call), so the table also shows what keyhook adds to the best bare call.
void BM_hmac_prekeyed(benchmark::State& state) {
    const std::string body = body_of(state);
    bare_hmac h;
    h.set_key();
    for (auto _ : state) h.sign([&] { EVP_MAC_init(h.ctx, nullptr, 0, nullptr); }, "1700000000", body);
}

void BM_v1_sign(benchmark::State& state) {
    const std::string body = body_of(state);
    for (auto _ : state) benchmark::DoNotOptimize(kc::compute_signature(secret(), id, now, body));
}

void BM_v1_verify(benchmark::State& state) {
    const std::string body = body_of(state);
    const auto headers = kc::signature_headers(secret(), id, now, body);
    for (auto _ : state) benchmark::DoNotOptimize(kc::try_verify_signature(secret(), headers, body, now));
}

// The floor: the prepared EVP_PKEY, a fresh EVP_MD_CTX per call (Ed25519 in
// OpenSSL 3.0 is one-shot), over a message already joined, plus base64.
void BM_ed25519_sign_floor(benchmark::State& state) {
    const std::string message = std::string(id) + ".1700000000." + body_of(state);
    for (auto _ : state) {
        EVP_MD_CTX* ctx = EVP_MD_CTX_new();
        EVP_DigestSignInit(ctx, nullptr, nullptr, nullptr, ed_key().native_handle());
        std::array<unsigned char, 64> sig{};
        std::size_t n = sig.size();
        EVP_DigestSign(ctx, sig.data(), &n, reinterpret_cast<const unsigned char*>(message.data()), message.size());
        EVP_MD_CTX_free(ctx);
        benchmark::DoNotOptimize(keyhook::base64_encode(sig.data(), n));
    }
}

void BM_v1a_sign(benchmark::State& state) {
    const std::string body = body_of(state);
    for (auto _ : state) benchmark::DoNotOptimize(kc::compute_asymmetric_signature(ed_key(), id, now, body));
}

void BM_ed25519_verify_floor(benchmark::State& state) {
    const std::string message = std::string(id) + ".1700000000." + body_of(state);
    const auto sig = kc::ed25519_sign(ed_key(), message);
    const auto pk = ed_key().public_key();
    for (auto _ : state) {
        EVP_MD_CTX* ctx = EVP_MD_CTX_new();
        EVP_DigestVerifyInit(ctx, nullptr, nullptr, nullptr, pk.native_handle());
        benchmark::DoNotOptimize(EVP_DigestVerify(
            ctx, sig.data(), sig.size(), reinterpret_cast<const unsigned char*>(message.data()), message.size()));
        EVP_MD_CTX_free(ctx);
    }
}

void BM_v1a_verify(benchmark::State& state) {
    const std::string body = body_of(state);
    const kc::verification_keys keys{{}, {ed_key().public_key()}};
    const auto headers = kc::signature_headers(kc::signing_keys{{}, {ed_key()}}, id, now, body);
    for (auto _ : state) benchmark::DoNotOptimize(kc::try_verify_signature(keys, headers, body, now));
}

}  // namespace

#define KEYHOOK_SIGNING_SIZES Arg(200)->Arg(2048)->Arg(65536)
BENCHMARK(BM_hmac_floor)->KEYHOOK_SIGNING_SIZES;
BENCHMARK(BM_hmac_prekeyed)->KEYHOOK_SIGNING_SIZES;
BENCHMARK(BM_v1_sign)->KEYHOOK_SIGNING_SIZES;
BENCHMARK(BM_v1_verify)->KEYHOOK_SIGNING_SIZES;
BENCHMARK(BM_ed25519_sign_floor)->KEYHOOK_SIGNING_SIZES;
BENCHMARK(BM_v1a_sign)->KEYHOOK_SIGNING_SIZES;
BENCHMARK(BM_ed25519_verify_floor)->KEYHOOK_SIGNING_SIZES;
BENCHMARK(BM_v1a_verify)->KEYHOOK_SIGNING_SIZES;
